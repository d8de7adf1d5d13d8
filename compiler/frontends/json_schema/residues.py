"""Residue automata: the exponent-free JSON number texts whose value is a multiple of p / 10**s.

A text with value N / 10**k (k fraction digits) is a multiple of p / 10**s iff its fraction
digits after the s-th are zeros and the integer of its digits up to the s-th fraction digit is
divisible by p (`numbers.py` reduces every `multipleOf` to such a step).

Layout, before trimming and minimization: byte classes 0 (other), 1 (`-`), 2 (`.`) and 3 + d
for digit d; states `start`, `neg` (after `-`), `zero` (integer part `0`), then p states per
phase, indexed by the residue so far: the integer part (`whole`), just after the point
(`point`), and after k = 1 .. s + 1 fraction digits (`frac`, the last one reading only zeros).
A state accepts when the digits read, padded to s fraction digits, are divisible by p. About
p * (s + 3) states: the caller bounds that by `Limits.max_dfa_states` before building.
"""
from __future__ import annotations

import numpy as np

from ....runtime.dfa.table import DFATable
from ...automata.dfa import trim
from ...automata.minimize import minimize


def residue_dfa(p: int, s: int) -> DFATable:
    """Exponent-free texts whose value is a multiple of p / 10**s."""
    # byte classes: 0 other, 1 '-', 2 '.', 3 + d digit d
    byte_class = np.zeros(256, dtype=np.int32)
    byte_class[ord("-")], byte_class[ord(".")] = 1, 2
    byte_class[ord("0"):ord("9") + 1] = np.arange(3, 13)
    start, neg, zero = 0, 1, 2

    def whole(r: int) -> int:
        return 3 + r

    def point(r: int) -> int:
        return 3 + p + r

    def frac(k: int, r: int) -> int:
        return 3 + (1 + k) * p + r

    n = 3 + (3 + s) * p
    table = np.full((n, 13), -1, dtype=np.int32)
    accepting = np.zeros(n, dtype=bool)
    table[start, 1] = neg
    for q in (start, neg):
        table[q, 3] = zero
        table[q, 4:13] = [whole(d % p) for d in range(1, 10)]
    table[zero, 2] = point(0)
    accepting[zero] = True
    for r in range(p):
        table[whole(r), 3:13] = [whole((10 * r + d) % p) for d in range(10)]
        table[whole(r), 2] = point(r)
        accepting[whole(r)] = r * 10 ** s % p == 0
        if s:
            table[point(r), 3:13] = [frac(1, (10 * r + d) % p) for d in range(10)]
        else:
            table[point(r), 3] = frac(1, r)
        for k in range(1, s + 2):
            q = frac(k, r)
            accepting[q] = r * 10 ** max(s - k, 0) % p == 0
            if k < s:
                table[q, 3:13] = [frac(k + 1, (10 * r + d) % p) for d in range(10)]
            else:
                table[q, 3] = frac(s + 1, r)
    return minimize(trim(byte_class, table, accepting, start))


__all__ = ["residue_dfa"]
