"""Hopcroft's partition refinement, as a Numba kernel: the minimal DFA of a DFA.

The partial DFA is refined as it is: the states that cannot reach acceptance (the missing
moves' dead state among them) form one block that never splits and is never a splitter, so
the work is bounded by the defined moves, O(m·log n), not by states times classes. The other
states start split by acceptance (and by labels, where a caller must keep states apart), and
every block taken from the work list splits the blocks of its predecessors, per class (the
predecessors are gathered once per splitter and bucketed by class); after a split only the
smaller half needs to go on the list. Blocks live in one array of states (each block a
contiguous range, states marked by moving them to its front), so nothing is allocated while
refining. The dead block is dropped again, so the result is the unique minimal trimmed DFA
(numbered breadth-first from the start by `quotient`): two DFAs accept the same language iff
their minimal tables are equal.
"""
from __future__ import annotations

import numpy as np
from numba.types import boolean, int32, int64

from ...runtime.dfa.table import DFATable
from ...runtime.jit import R, kernel
from .dfa import UncheckedDFA, read_only, trimmed


@kernel(R(int32, 2), R(boolean), R(int64), tiered=True)
def hopcroft_blocks(transitions, accepting, labels):  # type: ignore[no-untyped-def]
    """(block of each state, number of blocks, the block of the states that cannot reach
    acceptance or -1) of the partial DFA `transitions` (int32[n, k], -1: no move): the
    coarsest partition respected by the moves in which the states of a block that can reach
    acceptance agree on acceptance and on `labels` (int64[n], 0 for the plain minimal DFA)."""
    n, k = transitions.shape
    in_off = np.zeros(n + 1, dtype=np.int64)
    for s in range(n):
        for c in range(k):
            t = transitions[s, c]
            if t >= 0:
                in_off[t + 1] += 1
    for q in range(n):
        in_off[q + 1] += in_off[q]
    m = in_off[n]
    in_src = np.empty(m, dtype=np.int64)
    in_cls = np.empty(m, dtype=np.int64)
    fill = in_off[:n].copy()
    for s in range(n):
        for c in range(k):
            t = transitions[s, c]
            if t >= 0:
                in_src[fill[t]] = s
                in_cls[fill[t]] = c
                fill[t] += 1

    live = np.zeros(n, dtype=np.bool_)
    stack = np.empty(n, dtype=np.int64)
    top = 0
    for s in range(n):
        if accepting[s]:
            live[s] = True
            stack[top] = s
            top += 1
    while top:
        top -= 1
        q = stack[top]
        for x in range(in_off[q], in_off[q + 1]):
            p = in_src[x]
            if not live[p]:
                live[p] = True
                stack[top] = p
                top += 1

    elems = np.empty(n, dtype=np.int64)
    pos = np.empty(n, dtype=np.int64)
    block_of = np.zeros(n, dtype=np.int64)
    start = np.zeros(n + 1, dtype=np.int64)
    end = np.zeros(n + 1, dtype=np.int64)
    marked = np.zeros(n + 1, dtype=np.int64)
    in_work = np.zeros(n + 1, dtype=np.bool_)
    work = np.empty(n + 1, dtype=np.int64)
    touched = np.empty(n + 1, dtype=np.int64)
    key = np.empty(n, dtype=np.int64)
    for s in range(n):
        key[s] = 2 * labels[s] + accepting[s] if live[s] else -1
    order = np.argsort(key, kind="mergesort")
    n_blocks = 0
    dead = -1
    i = 0
    while i < n:
        lo = i
        kind = key[order[i]]
        while i < n and key[order[i]] == kind:
            elems[i] = order[i]
            pos[order[i]] = i
            i += 1
        start[n_blocks], end[n_blocks] = lo, i
        for j in range(lo, i):
            block_of[elems[j]] = n_blocks
        if kind < 0:
            dead = n_blocks
        else:
            work[top] = n_blocks
            in_work[n_blocks] = True
            top += 1
        n_blocks += 1

    count = np.zeros(k, dtype=np.int64)
    first = np.zeros(k, dtype=np.int64)
    classes = np.empty(k, dtype=np.int64)
    bucket = np.empty(max(m, 1), dtype=np.int64)
    while top:
        top -= 1
        a = work[top]
        in_work[a] = False
        n_classes = 0
        for j in range(start[a], end[a]):
            q = elems[j]
            for x in range(in_off[q], in_off[q + 1]):
                c = in_cls[x]
                if count[c] == 0:
                    classes[n_classes] = c
                    n_classes += 1
                count[c] += 1
        total = 0
        for ci in range(n_classes):
            c = classes[ci]
            first[c] = total
            total += count[c]
            count[c] = first[c]
        for j in range(start[a], end[a]):
            q = elems[j]
            for x in range(in_off[q], in_off[q + 1]):
                c = in_cls[x]
                bucket[count[c]] = in_src[x]
                count[c] += 1
        for ci in range(n_classes):
            c = classes[ci]
            n_touched = 0
            for x in range(first[c], count[c]):
                p = bucket[x]
                b = block_of[p]
                front = start[b] + marked[b]
                if marked[b] == 0:
                    touched[n_touched] = b
                    n_touched += 1
                other = elems[front]
                elems[front], elems[pos[p]] = p, other
                pos[other] = pos[p]
                pos[p] = front
                marked[b] += 1
            count[c] = 0
            for t in range(n_touched):
                b = touched[t]
                mk = marked[b]
                marked[b] = 0
                if mk == end[b] - start[b]:
                    continue
                nb = n_blocks
                n_blocks += 1
                start[nb], end[nb] = start[b], start[b] + mk
                start[b] = start[b] + mk
                for j in range(start[nb], end[nb]):
                    block_of[elems[j]] = nb
                pick = nb if in_work[b] or end[nb] - start[nb] <= end[b] - start[b] else b
                work[top] = pick
                in_work[pick] = True
                top += 1
    return block_of, n_blocks, dead


def minimize(dfa: DFATable, compact: bool = True) -> DFATable:
    """The minimal DFA accepting the same language as `dfa` (byte classes merged when
    `compact`; rule automata with call columns keep their columns)."""
    if dfa.is_empty_language:
        return dfa
    return minimize_table(dfa.byte_class, dfa.transitions, dfa.accepting, dfa.start, compact)


def minimize_table(byte_class: np.ndarray, transitions: np.ndarray, accepting: np.ndarray,
                   start: int, compact: bool = True, n_calls: int = 0) -> DFATable:
    """The minimal trimmed DFA of the table `transitions` (-1: dead) from `start`, which need
    not be trimmed: states that cannot reach acceptance fall into the dead state's block. With
    `compact`, equal byte columns are merged (not the last `n_calls`, call columns)."""
    return minimal(byte_class, transitions, accepting, start, compact, n_calls).dfa()


def minimal(byte_class: np.ndarray, transitions: np.ndarray, accepting: np.ndarray,
            start: int, compact: bool = True, n_calls: int = 0) -> UncheckedDFA:
    """`minimize_table`'s arrays, unchecked."""
    transitions = read_only(np.ascontiguousarray(transitions, dtype=np.int32))
    accepting = read_only(np.ascontiguousarray(accepting, dtype=np.bool_))
    block, n_blocks, dead = hopcroft_blocks(transitions, accepting,
                                            np.zeros(len(accepting), dtype=np.int64))
    table, acc, _ = quotient(transitions, accepting, block, n_blocks, dead, block[start])
    return trimmed(byte_class, table, acc, compact, n_calls)


@kernel(R(int32, 2), R(boolean), R(int64), int64, int64, int64, tiered=True)
def quotient(transitions, accepting, block, n_blocks, dead, start):  # type: ignore[no-untyped-def]
    """(transitions, accepting, a state of each) of the DFA whose states are the blocks
    reachable from block `start`, numbered breadth-first (columns in order), moves into `dead`
    dropped; no states when `start` is `dead`. Every block but `dead` can reach acceptance, so
    this is trimmed."""
    n, k = transitions.shape
    if start == dead:
        return (np.empty((0, k), dtype=np.int32), np.zeros(0, dtype=np.bool_),
                np.zeros(0, dtype=np.int64))
    member = np.full(n_blocks, -1, dtype=np.int64)
    for s in range(n):
        if member[block[s]] < 0:
            member[block[s]] = s
    new = np.full(n_blocks, -1, dtype=np.int32)
    order = np.empty(n_blocks, dtype=np.int64)
    order[0] = start
    new[start] = 0
    size = 1
    i = 0
    while i < size:
        s = member[order[i]]
        i += 1
        for c in range(k):
            t = transitions[s, c]
            if t >= 0:
                b = block[t]
                if b != dead and new[b] < 0:
                    new[b] = size
                    order[size] = b
                    size += 1
    table = np.empty((size, k), dtype=np.int32)
    acc = np.empty(size, dtype=np.bool_)
    rep = np.empty(size, dtype=np.int64)
    for i in range(size):
        s = member[order[i]]
        rep[i] = s
        acc[i] = accepting[s]
        for c in range(k):
            t = transitions[s, c]
            table[i, c] = new[block[t]] if t >= 0 and block[t] != dead else -1
    return table, acc, rep
