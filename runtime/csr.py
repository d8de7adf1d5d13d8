"""Grouping by key, compressed-sparse-row style: which positions of an array hold each key.

The call edges of a pushdown table and the edges of an NFA are stored or walked grouped by a
state; `csr_order` groups them in one counting pass (stable: positions with one key stay in
order), where argsort, bincount and cumsum would take four numpy calls.
"""
from __future__ import annotations

import numpy as np
from numba.types import int32, int64

from .jit import R, kernel


@kernel(int64, R(int64), also=((int64, R(int32)),), tiered=True)
def csr_order(n, keys):  # type: ignore[no-untyped-def]
    """(offsets int64[n + 1], order) grouping the positions of `keys` by key, in order within
    each key; ValueError unless every key lies in [0, n)."""
    offsets = np.zeros(n + 1, dtype=np.int64)
    for j in range(len(keys)):
        if keys[j] < 0 or keys[j] >= n:
            raise ValueError("csr_order: a key lies outside [0, n)")
        offsets[keys[j] + 1] += 1
    for x in range(n):
        offsets[x + 1] += offsets[x]
    fill = offsets[:n].copy()
    order = np.empty(len(keys), dtype=np.int64)
    for j in range(len(keys)):
        order[fill[keys[j]]] = j
        fill[keys[j]] += 1
    return offsets, order
