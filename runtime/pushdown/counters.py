"""The layout of a recognizer's `counters` (int64[9] of `earley.EarleyArrays`), shared by every
kernel that steps or fills it.

`N_SETS`: number of sets; `GEN`: generation of the set being built (deduplication stamps);
`N_ITEMS`: items in use while building; `MARK`: generation for marking kernel states in fills;
`WORK` and `WORK_LIMIT`: the Earley operations of the current step and their bound (past it a
kernel stops with OVERFLOW, changing nothing; `UNBOUNDED` by default); `SCANNED`: the items the
last set got by scanning (the first ones of the set; the closure adds the rest); `NEEDED`: the
unbuilt rule that stopped the last step (-1: none); `TOKEN`: the index of the token whose bytes
are being scanned (token bounds, `earley.py`).
"""
from __future__ import annotations

N_SETS, GEN, N_ITEMS, MARK, WORK, WORK_LIMIT, SCANNED, NEEDED, TOKEN = range(9)
UNBOUNDED = 1 << 62
