"""Numba kernels over stored token-set rows: how a row differs from a default, and hashes.

A row is a uint32 (or int32) bitmask row of one state's tokens; the stores keep it as a default
row plus patches (the differing words) or as a row of its own, and share equal rows and equal
uncertain-token lists by hash. These kernels do in one pass what numpy needs several for.
Callers pass rows of equal length.
"""
from __future__ import annotations

import numpy as np
from numba.types import boolean, int64, uint32

from .jit import A, R, kernel


@kernel(R(uint32), R(uint32))
def differing_words(words, base):  # type: ignore[no-untyped-def]
    """(words that are not zero, words that differ from `base`)."""
    n_zero = 0
    n_base = 0
    for i in range(len(words)):
        if words[i] != 0:
            n_zero += 1
        if words[i] != base[i]:
            n_base += 1
    return n_zero, n_base


@kernel(R(uint32), R(uint32), int64)
def row_patch(words, base, most):  # type: ignore[no-untyped-def]
    """`words` as a default row and patches, in one pass per array made: (default, index,
    value) with default 0 (the zero row) or 1 (`base`), whichever `words` differs from in
    fewer words, and index (int64, ascending) and value (uint32) the words that differ; or
    (2, empty, empty) when that is more than `most` words (a row of its own pays then)."""
    n_zero, n_base = differing_words(words, base)
    against_base = n_base < n_zero
    n = n_base if against_base else n_zero
    if n > most:
        return 2, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint32)
    index = np.empty(n, dtype=np.int64)
    value = np.empty(n, dtype=np.uint32)
    k = 0
    for i in range(len(words)):
        if words[i] != (base[i] if against_base else np.uint32(0)):
            index[k] = i
            value[k] = words[i]
            k += 1
    return 1 if against_base else 0, index, value


@kernel(R(uint32), R(uint32), boolean, A(uint32, 2), int64)
def write_patches(words, base, against_base, patches, at):  # type: ignore[no-untyped-def]
    """Write (index, value) of each word of `words` that differs from `base` (from zero unless
    `against_base`) into patches[at:], in index order; return how many."""
    n = 0
    for i in range(len(words)):
        default = base[i] if against_base else 0
        if words[i] != default:
            patches[at + n, 0] = i
            patches[at + n, 1] = words[i]
            n += 1
    return n


@kernel(R(uint32))
def array_hash(values):  # type: ignore[no-untyped-def]
    """A 64-bit hash of the elements of `values` (equal arrays, equal hashes): FNV-1a over four
    interleaved lanes, so the multiplications do not wait on each other."""
    prime = np.uint64(1099511628211)
    h0 = np.uint64(1469598103934665603)
    h1, h2, h3 = h0 ^ np.uint64(1), h0 ^ np.uint64(2), h0 ^ np.uint64(3)
    n = len(values)
    i = 0
    while i + 4 <= n:
        h0 = (h0 ^ np.uint64(np.uint32(values[i]))) * prime
        h1 = (h1 ^ np.uint64(np.uint32(values[i + 1]))) * prime
        h2 = (h2 ^ np.uint64(np.uint32(values[i + 2]))) * prime
        h3 = (h3 ^ np.uint64(np.uint32(values[i + 3]))) * prime
        i += 4
    while i < n:
        h0 = (h0 ^ np.uint64(np.uint32(values[i]))) * prime
        i += 1
    return ((h0 * prime ^ h1) * prime ^ h2) * prime ^ h3 ^ np.uint64(n)
