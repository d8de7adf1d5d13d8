"""Numba kernels that walk a `DFATable` over bytes and over a `TokenTrie`.

Callers pass arrays of a validated `DFATable`, `TokenTrie` or `Vocabulary`; the kernels do no
bounds checks of their own, so every index they read is guaranteed by those invariants.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def walk_bytes(transitions, byte_class, data, begin, end, state):  # type: ignore[no-untyped-def]
    """The state after data[begin:end] from `state`, or -1 once dead."""
    s = state
    for p in range(begin, end):
        s = transitions[s, byte_class[data[p]]]
        if s < 0:
            return -1
    return s


@njit(cache=True, nogil=True)
def trie_viable(transitions, byte_class, state, data, offsets, lcp, max_len):  # type: ignore[no-untyped-def]
    """bool per trie token: whether its bytes walk from `state` without dying.

    A depth-first walk of the sorted trie: states of the shared prefix are reused, and a token
    extending a prefix that already died is rejected without reading its bytes.
    """
    m = len(lcp)
    out = np.zeros(m, dtype=np.bool_)
    stack = np.empty(max_len + 1, dtype=np.int32)
    stack[0] = state
    good = 0
    for i in range(m):
        p = lcp[i]
        if p > good:
            continue
        begin = offsets[i]
        length = offsets[i + 1] - begin
        s = stack[p]
        while p < length:
            s = transitions[s, byte_class[data[begin + p]]]
            if s < 0:
                break
            p += 1
            stack[p] = s
        good = p
        out[i] = p == length
    return out
