"""Hashing for the automata kernels' open-addressing tables, in int64 arithmetic that never
overflows.

Invariant: every intermediate value stays below 2**63, so a kernel computes the same hash
compiled (Numba wraps integers silently) and run as Python (numpy raises on overflow, see
`runtime/jit.py`). `hash_step` is FNV-1a over 32-bit words; `key_slot` is Fibonacci hashing of
a non-negative int64 key, its two 31-bit halves mixed.
"""
from __future__ import annotations

import numpy as np
from numba.types import int64

from ...runtime.jit import kernel

__all__ = ["FNV_OFFSET", "hash_step", "key_slot"]

FNV_OFFSET = 2166136261
_FNV_PRIME = 16777619
_LOW32 = 0xFFFFFFFF


@kernel(int64, int64, tiered=True)
def hash_step(h, v):  # type: ignore[no-untyped-def]
    """One FNV-1a step: `h` (below 2**32) with the low 32 bits of `v`."""
    return ((h ^ (np.int64(v) & _LOW32)) * _FNV_PRIME) & _LOW32


@kernel(int64, int64, tiered=True)
def key_slot(key, mask):  # type: ignore[no-untyped-def]
    """The home slot of the non-negative `key` in a table of `mask + 1` slots (a power of 2)."""
    key = np.int64(key)
    return ((((key & 0x7FFFFFFF) * 2654435761) ^ (key >> 31)) >> 16) & mask
