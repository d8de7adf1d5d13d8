"""Subset construction as a Numba kernel, over an NFA flattened to arrays.

Input: per NFA state, its edges as inclusive column ranges [lo, hi] with a target (columns are
byte classes, then call symbols) in CSR form, and its epsilon targets in CSR form. Output: the
transition table over the columns and the accepting flags of the DFA whose states are the
epsilon-closed sets of NFA states reachable from the start's closure, numbered in discovery
order (column by column, breadth-first). The columns of a DFA state are split into segments at
the ends of its NFA states' edges (found from the edges alone, not by scanning the columns);
every column of a segment has the same successor, so each closure is computed once per segment
rather than once per column, and the DFA state reached from a single NFA state is remembered
(-2: none), so it is computed once. A set is identified by its important states (those with
edges, and the accept state): two closures that agree on them have the same moves and
acceptance, so they are one DFA state; a closure without any is the dead state (-1).

A DFA state's NFA states are kept sorted in one flat pool; an open-addressing hash table maps
a set to its DFA state. The kernel processes the DFA states in bounded chunks, so that the
compile deadline is checked between chunks; it reports -1 as the state count when the DFA would
exceed `max_states` (the caller raises `BudgetExceeded`).
"""
from __future__ import annotations

import time

import numpy as np
from numba.types import boolean, int32, int64

from ...runtime.jit import A, R, kernel
from ..support import deadline
from .hashing import FNV_OFFSET, hash_step


@kernel(R(int32), int64, int64, R(int64), R(int32), R(boolean), A(int64), int64, A(int32),
        A(int32), tiered=True)
def _closure(seeds, begin, end, eps_off, eps_to, important, mark, gen, stack, out):  # type: ignore[no-untyped-def]
    """Write the sorted important states of the epsilon closure of seeds[begin:end] into
    `out`; return how many."""
    n = 0
    top = 0
    for i in range(begin, end):
        s = seeds[i]
        if mark[s] != gen:
            mark[s] = gen
            stack[top] = s
            top += 1
    while top:
        top -= 1
        s = stack[top]
        if important[s]:
            out[n] = s
            n += 1
        for j in range(eps_off[s], eps_off[s + 1]):
            t = eps_to[j]
            if mark[t] != gen:
                mark[t] = gen
                stack[top] = t
                top += 1
    _sort(out, n)
    return n


@kernel(A(int32), int64, also=((A(int64), int64),), tiered=True)
def _sort(values, n):  # type: ignore[no-untyped-def]
    """Sort values[:n] in place (insertion sort while short)."""
    if n > 16:
        values[:n].sort()
        return
    for i in range(1, n):
        v = values[i]
        j = i - 1
        while j >= 0 and values[j] > v:
            values[j + 1] = values[j]
            j -= 1
        values[j + 1] = v


@kernel(R(int32), int64, int64, tiered=True)
def _hash(values, begin, end):  # type: ignore[no-untyped-def]
    h = FNV_OFFSET
    for i in range(begin, end):
        h = hash_step(h, values[i])
    return h


@kernel(R(int64), R(int64), R(int32), int64, int64, int64, tiered=True)
def _subset_start(e_off, eps_off, eps_to, start, accept, k):  # type: ignore[no-untyped-def]
    """The state of a subset construction with only the start's closure discovered:
    (important, pool, pool_off, trans, table, single, mark, stack, buf, seeds)."""
    n = len(eps_off) - 1
    mark = np.zeros(n, dtype=np.int64)
    stack = np.empty(n, dtype=np.int32)
    buf = np.empty(n, dtype=np.int32)
    pool = np.empty(max(16, 4 * n), dtype=np.int32)
    pool_off = np.zeros(64, dtype=np.int64)
    trans = np.full((64, k), -1, dtype=np.int32)
    table = np.full(256, -1, dtype=np.int64)
    seeds = np.empty(max(16, n), dtype=np.int32)
    single = np.full(n, -1, dtype=np.int64)
    important = np.zeros(n, dtype=np.bool_)
    for s in range(n):
        important[s] = e_off[s + 1] > e_off[s] or s == accept
    first = np.empty(1, dtype=np.int32)
    first[0] = start
    size = _closure(first, 0, 1, eps_off, eps_to, important, mark, 1, stack, buf)
    pool[:size] = buf[:size]
    pool_off[1] = size
    h = _hash(buf, 0, size)
    table[h & (len(table) - 1)] = 0
    return important, pool, pool_off, trans, table, single, mark, stack, buf, seeds


@kernel(R(int64), R(int32), R(int32), R(int32), R(int64), R(int32), int64, int64, R(boolean),
        A(int32), A(int64), A(int32, 2), A(int64), A(int64), A(int64), A(int32), A(int32),
        A(int32), int64, int64, int64, int64, tiered=True)
def _subset_steps(e_off, e_lo, e_hi, e_to, eps_off, eps_to, k, max_states, important, pool,  # type: ignore[no-untyped-def]
                  pool_off, trans, table, single, mark, stack, buf, seeds, gen, m, d, d_stop):
    """Process DFA states d .. min(m, d_stop) - 1 (discovering new ones); return the grown
    arrays and counters (pool, pool_off, trans, table, seeds, gen, m, d), m = -1 past
    `max_states`."""
    cut = np.zeros(k + 1, dtype=np.bool_)
    bounds = np.empty(k + 1, dtype=np.int64)
    seg_of = np.empty(k + 1, dtype=np.int64)
    counts = np.zeros(k + 2, dtype=np.int64)
    fill = np.zeros(k + 1, dtype=np.int64)
    while d < m and d < d_stop:
        lo_d, hi_d = pool_off[d], pool_off[d + 1]
        n_seg = 0
        for i in range(lo_d, hi_d):
            s = pool[i]
            for j in range(e_off[s], e_off[s + 1]):
                for end in range(2):
                    c = np.int64(e_lo[j]) if end == 0 else np.int64(e_hi[j]) + 1
                    if not cut[c]:
                        cut[c] = True
                        bounds[n_seg] = c
                        n_seg += 1
        _sort(bounds, n_seg)
        for x in range(n_seg):
            cut[bounds[x]] = False
            seg_of[bounds[x]] = x
        n_seg = max(n_seg - 1, 0)
        for g in range(n_seg + 1):
            counts[g] = 0
        for i in range(lo_d, hi_d):
            s = pool[i]
            for j in range(e_off[s], e_off[s + 1]):
                for g in range(seg_of[e_lo[j]], seg_of[e_hi[j] + 1]):
                    counts[g + 1] += 1
        for g in range(n_seg):
            counts[g + 1] += counts[g]
        total = counts[n_seg]
        if total > len(seeds):
            seeds = np.empty(2 * total, dtype=np.int32)
        for g in range(n_seg):
            fill[g] = counts[g]
        for i in range(lo_d, hi_d):
            s = pool[i]
            for j in range(e_off[s], e_off[s + 1]):
                for g in range(seg_of[e_lo[j]], seg_of[e_hi[j] + 1]):
                    seeds[fill[g]] = e_to[j]
                    fill[g] += 1
        for g in range(n_seg):
            a, b = counts[g], counts[g + 1]
            if a == b:
                continue
            if b - a == 1 and single[seeds[a]] != -1:
                found = single[seeds[a]]
                if found >= 0:
                    for c in range(bounds[g], bounds[g + 1]):
                        trans[d, c] = found
                continue
            gen += 1
            size = _closure(seeds, a, b, eps_off, eps_to, important, mark, gen, stack, buf)
            if size == 0:
                if b - a == 1:
                    single[seeds[a]] = -2
                continue
            h = _hash(buf, 0, size)
            mask = len(table) - 1
            slot = h & mask
            found = -1
            while table[slot] >= 0:
                t = table[slot]
                p, q = pool_off[t], pool_off[t + 1]
                if q - p == size:
                    same = True
                    for x in range(size):
                        if pool[p + x] != buf[x]:
                            same = False
                            break
                    if same:
                        found = t
                        break
                slot = (slot + 1) & mask
            if found < 0:
                if m >= max_states:
                    return pool, pool_off, trans, table, seeds, gen, -1, d
                found = m
                if m + 1 >= len(pool_off):
                    grown = np.zeros(2 * len(pool_off), dtype=np.int64)
                    grown[:len(pool_off)] = pool_off
                    pool_off = grown
                    t2 = np.full((2 * trans.shape[0], k), -1, dtype=np.int32)
                    t2[:trans.shape[0]] = trans
                    trans = t2
                end = pool_off[m] + size
                if end > len(pool):
                    p2 = np.empty(2 * end, dtype=np.int32)
                    p2[:pool_off[m]] = pool[:pool_off[m]]
                    pool = p2
                pool[pool_off[m]:end] = buf[:size]
                pool_off[m + 1] = end
                table[slot] = m
                m += 1
                if 2 * m > len(table):
                    table = np.full(2 * len(table), -1, dtype=np.int64)
                    mask = len(table) - 1
                    for t in range(m):
                        hh = _hash(pool, pool_off[t], pool_off[t + 1])
                        sl = hh & mask
                        while table[sl] >= 0:
                            sl = (sl + 1) & mask
                        table[sl] = t
            if b - a == 1:
                single[seeds[a]] = found
            for c in range(bounds[g], bounds[g + 1]):
                trans[d, c] = found
        d += 1
    return pool, pool_off, trans, table, seeds, gen, m, d


@kernel(R(int32), R(int64), int64, int64, tiered=True)
def _subset_accepting(pool, pool_off, m, accept):  # type: ignore[no-untyped-def]
    accepting = np.zeros(m, dtype=np.bool_)
    for t in range(m):
        for i in range(pool_off[t], pool_off[t + 1]):
            if pool[i] == accept:
                accepting[t] = True
                break
    return accepting


def subset_construction(e_off: np.ndarray, e_lo: np.ndarray, e_hi: np.ndarray,
                        e_to: np.ndarray, eps_off: np.ndarray, eps_to: np.ndarray, start: int,
                        accept: int, k: int, max_states: int
                        ) -> tuple[np.ndarray, np.ndarray, int, np.ndarray, np.ndarray]:
    """(transitions int32[m, k], accepting bool[m], m, pool, pool_off) of the subset DFA:
    the important NFA states of DFA state d are pool[pool_off[d]:pool_off[d + 1]], sorted;
    m = -1 past `max_states`. Raises `BudgetExceeded` when the compile deadline passes."""
    important, pool, pool_off, trans, table, single, mark, stack, buf, seeds = _subset_start(
        e_off, eps_off, eps_to, start, accept, k)
    gen, m, d, chunk = 1, 1, 0, 1024
    while d < m:
        began = time.monotonic()
        pool, pool_off, trans, table, seeds, gen, m, d = _subset_steps(
            e_off, e_lo, e_hi, e_to, eps_off, eps_to, k, max_states, important, pool,
            pool_off, trans, table, single, mark, stack, buf, seeds, gen, m, d, d + chunk)
        if m < 0:
            return trans[:0], np.zeros(0, dtype=np.bool_), -1, pool[:0], pool_off[:1]
        deadline.check()
        # Chunks of about 10 ms keep the deadline within reach and the calls few.
        took = time.monotonic() - began
        chunk = chunk * 2 if took < 0.005 else max(1, chunk // 2) if took > 0.02 else chunk
    return (trans[:m].copy(), _subset_accepting(pool, pool_off, m, accept), m,
            pool[:pool_off[m]], pool_off[:m + 1])
