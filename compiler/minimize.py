"""Hopcroft's partition refinement, as a Numba kernel: the minimal DFA of a trimmed DFA.

The partial DFA is completed with an explicit dead state, states start split by acceptance,
and every block taken from the work list splits the blocks of its predecessors, per class;
after a split only the smaller half needs to go on the list, which bounds the work by
O(k·n·log n). Blocks live in one array of states (each block a contiguous range, states marked
by moving them to its front), so nothing is allocated while refining. The dead state's block
is dropped again, so the result is the unique minimal trimmed DFA (up to the breadth-first
numbering that `trim` fixes): two DFAs accept the same language iff their minimal tables are
equal.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..runtime.dfa_table import DFATable
from .dfa import trim


@njit(cache=True, nogil=True)
def hopcroft_blocks(total, accepting):  # type: ignore[no-untyped-def]
    """The block of each state of the complete DFA `total` (int[n, k], no -1 entries)."""
    n, k = total.shape
    inv_off = np.zeros((k, n + 1), dtype=np.int64)
    for s in range(n):
        for c in range(k):
            inv_off[c, total[s, c] + 1] += 1
    for c in range(k):
        for q in range(n):
            inv_off[c, q + 1] += inv_off[c, q]
    inv = np.empty((k, n), dtype=np.int64)
    fill = inv_off[:, :n].copy()
    for s in range(n):
        for c in range(k):
            q = total[s, c]
            inv[c, fill[c, q]] = s
            fill[c, q] += 1

    elems = np.empty(n, dtype=np.int64)
    pos = np.empty(n, dtype=np.int64)
    block_of = np.zeros(n, dtype=np.int64)
    start = np.zeros(n + 1, dtype=np.int64)
    end = np.zeros(n + 1, dtype=np.int64)
    marked = np.zeros(n + 1, dtype=np.int64)
    in_work = np.zeros(n + 1, dtype=np.bool_)
    work = np.empty(n + 1, dtype=np.int64)
    touched = np.empty(n + 1, dtype=np.int64)
    splitter = np.empty(n, dtype=np.int64)
    i = 0
    for want in (True, False):
        for s in range(n):
            if accepting[s] == want:
                elems[i] = s
                pos[s] = i
                i += 1
    n_acc = 0
    for s in range(n):
        if accepting[s]:
            n_acc += 1
    n_blocks = 0
    top = 0
    for lo, hi in ((0, n_acc), (n_acc, n)):
        if hi > lo:
            start[n_blocks], end[n_blocks] = lo, hi
            for j in range(lo, hi):
                block_of[elems[j]] = n_blocks
            work[top] = n_blocks
            in_work[n_blocks] = True
            top += 1
            n_blocks += 1

    while top:
        top -= 1
        a = work[top]
        in_work[a] = False
        size = end[a] - start[a]
        for j in range(size):
            splitter[j] = elems[start[a] + j]
        for c in range(k):
            n_touched = 0
            for j in range(size):
                q = splitter[j]
                for x in range(inv_off[c, q], inv_off[c, q + 1]):
                    p = inv[c, x]
                    b = block_of[p]
                    front = start[b] + marked[b]
                    if pos[p] < front:
                        continue
                    if marked[b] == 0:
                        touched[n_touched] = b
                        n_touched += 1
                    other = elems[front]
                    elems[front], elems[pos[p]] = p, other
                    pos[other] = pos[p]
                    pos[p] = front
                    marked[b] += 1
            for t in range(n_touched):
                b = touched[t]
                m = marked[b]
                marked[b] = 0
                if m == end[b] - start[b]:
                    continue
                nb = n_blocks
                n_blocks += 1
                start[nb], end[nb] = start[b], start[b] + m
                start[b] = start[b] + m
                for j in range(start[nb], end[nb]):
                    block_of[elems[j]] = nb
                pick = nb if in_work[b] or end[nb] - start[nb] <= end[b] - start[b] else b
                work[top] = pick
                in_work[pick] = True
                top += 1
    return block_of, n_blocks


def minimize(dfa: DFATable, compact: bool = True) -> DFATable:
    """The minimal DFA accepting the same language as `dfa` (byte classes merged when
    `compact`; rule automata with call columns keep their columns)."""
    if dfa.is_empty_language:
        return dfa
    return minimize_table(dfa.byte_class, dfa.transitions, dfa.accepting, dfa.start, compact)


def minimize_table(byte_class: np.ndarray, transitions: np.ndarray, accepting: np.ndarray,
                   start: int, compact: bool = True) -> DFATable:
    """The minimal trimmed DFA of the table `transitions` (-1: dead) from `start`, which need
    not be trimmed: states that cannot reach acceptance fall into the dead state's block."""
    n, k = transitions.shape
    dead = n
    total = np.full((n + 1, k), dead, dtype=np.int64)
    np.copyto(total[:n], transitions, where=transitions >= 0)
    accepting = np.append(accepting, False)
    block, n_blocks = hopcroft_blocks(total, accepting)
    reps = np.zeros(n_blocks, dtype=np.int64)
    reps[block[::-1]] = np.arange(n, -1, -1)
    quotient = block[total[reps]]
    dead_block = block[dead]
    quotient = np.where(quotient == dead_block, -1, quotient).astype(np.int32)
    quotient[dead_block, :] = -1
    return trim(byte_class, quotient, accepting[reps], int(block[start]), compact=compact)
