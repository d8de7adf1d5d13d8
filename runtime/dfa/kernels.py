"""Numba kernels that walk a `DFATable` over bytes and over a `TokenTrie`.

Callers pass arrays of a validated `DFATable`, `TokenTrie` or `Vocabulary`; the kernels do no
bounds checks of their own, so every index they read is guaranteed by those invariants:
states from `transitions` or a checked `start` lie in [0, n_states) (a -1 is tested before use),
`byte_class` has 256 entries in [0, n_classes) and bytes are uint8.
"""
from __future__ import annotations

import numpy as np
from numba import carray, prange
from numba.types import boolean, int32, int64, uint8, uint32

from ..jit import A, R, address, kernel


@kernel(R(int32, 2), R(int32), R(uint8), int64, int64, int64)
def walk_bytes(transitions, byte_class, data, begin, end, state):  # type: ignore[no-untyped-def]
    """The state after data[begin:end] from `state`, or -1 once dead."""
    s = state
    for p in range(begin, end):
        s = transitions[s, byte_class[data[p]]]
        if s < 0:
            return -1
    return s


@kernel(R(int32, 2), R(int32), R(boolean), int32, R(uint8), int64, tiered=True)
def longest_match(transitions, byte_class, accepting, start, data, begin):  # type: ignore[no-untyped-def]
    """The end of the longest non-empty match from data[begin] (the last position after which
    the walk from `start` is in an accepting state, before it dies or the data ends), or -1."""
    s = start
    last = -1
    for p in range(begin, len(data)):
        s = transitions[s, byte_class[data[p]]]
        if s < 0:
            break
        if accepting[s]:
            last = p + 1
    return last


@kernel(R(int32, 2), R(int32), int32, R(uint8), R(int64), R(int32), R(int32), R(int64), R(int32),
        int64, int64, int64, R(int64), int64, A(uint32))
def trie_token_row(transitions, byte_class, state, data, offsets, lcp, skip, byte_start, ids,  # type: ignore[no-untyped-def]
                   first, end, max_len, cost, bound, row):
    """Set in `row` (uint32 bitmask words) the bit of every trie token first..end-1 whose
    bytes walk from `state` without dying, to a state s with cost[s] <= bound when `bound` >=
    0 (a token budget: `completion.py`; `cost` is then one per state); return how many were
    set.

    A depth-first walk of the sorted trie, one run of tokens with the same first byte after
    the other (`byte_start`), skipping the runs whose first byte dies at once: states of the
    shared prefix are reused, and the tokens that extend a prefix that already died are
    skipped together (`skip` is `next_shorter_prefix` of lcp: tokens i..skip[i]-1 share the
    first lcp[i] bytes of token i - 1). So a state that allows few tokens costs about the
    bytes of those, not a step per token. Relies on the `TokenTrie` invariants (`lcp[i]` and
    every length at most `max_len`, offsets within `data`, skip[i] > i) and `trie_index`'s,
    first <= end <= the token count, and on `row` covering every id (`TokenTrie.check_ids`).
    """
    stack = np.empty(max_len + 1, dtype=np.int32)
    stack[0] = state
    count = 0
    if first >= end:
        return 0
    for b in range(data[offsets[first]], 256):
        if byte_start[b] >= end:
            break
        i = max(byte_start[b], first)
        run_end = min(byte_start[b + 1], end)
        if i >= run_end or transitions[state, byte_class[b]] < 0:
            continue
        good = 0
        run_start = i
        while i < run_end:
            p = lcp[i] if i > run_start else 0
            if p > good:
                i = min(skip[i], run_end)
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
            if p == length and (bound < 0 or cost[s] <= bound):
                t = ids[i]
                row[t >> 5] |= np.uint32(1) << np.uint32(t & 31)
                count += 1
            i += 1
    return count


@kernel(R(int64), A(int32, 2), int64, inline=True)
def _copy_at(h, rows, row):  # type: ignore[no-untyped-def]
    """Write the stored row of header `h` (`DFATokenSets.headers`) into rows[row]: 0, or 1
    when the state has none yet."""
    if h[0] == 0:
        return 1
    out = rows[row]
    default = carray(address(h[0]), (out.shape[0],), np.int32)
    for w in range(out.shape[0]):
        out[w] = default[w]
    index = carray(address(h[1]), (h[3],), np.int64)
    value = carray(address(h[2]), (h[3],), np.int32)
    for j in range(h[3]):
        out[index[j]] = value[j]
    return 0


# `copy_rows` and `copy_rows_parallel` fill many DFA matchers of one grammar in one call (a
# batch, `runtime/batch.py`): the stored row of state states[i] into row row_ids[i] of `rows`,
# results[i] 1 where that state has no stored row yet. They rely on their caller for states in
# range, distinct row ids in range and rows of the store's width.
@kernel(R(int64, 2), R(int64), A(int32, 2), R(int64), A(int64))
def copy_rows(headers, states, rows, row_ids, results):  # type: ignore[no-untyped-def]
    """The batch on the calling thread."""
    for i in range(len(states)):
        results[i] = _copy_at(headers[states[i]], rows, row_ids[i])


@kernel(R(int64, 2), R(int64), A(int32, 2), R(int64), A(int64), parallel=True)
def copy_rows_parallel(headers, states, rows, row_ids, results):  # type: ignore[no-untyped-def]
    """The batch on Numba's threads."""
    for i in prange(len(states)):
        results[i] = _copy_at(headers[states[i]], rows, row_ids[i])


@kernel(R(int32, 2), R(int64), R(int64), tiered=True)
def table_moves(transitions, extra_offsets, extra_to):  # type: ignore[no-untyped-def]
    """(off, to): the moves of state s are to[off[s]:off[s + 1]], its defined entries of
    `transitions` (-1 skipped, columns in order), then the states
    extra_to[extra_offsets[s]:extra_offsets[s + 1]] (the call edges of rule automata)."""
    n, k = transitions.shape
    off = np.zeros(n + 1, dtype=np.int64)
    for s in range(n):
        moves = extra_offsets[s + 1] - extra_offsets[s]
        for c in range(k):
            if transitions[s, c] >= 0:
                moves += 1
        off[s + 1] = off[s] + moves
    to = np.empty(off[n], dtype=np.int32)
    for s in range(n):
        j = off[s]
        for c in range(k):
            t = transitions[s, c]
            if t >= 0:
                to[j] = t
                j += 1
        for e in range(extra_offsets[s], extra_offsets[s + 1]):
            to[j] = extra_to[e]
            j += 1
    return off, to


@kernel(R(int64), R(int32), R(int64), R(boolean), tiered=True)
def reach_and_live(off, to, starts, accepting):  # type: ignore[no-untyped-def]
    """(reachable from some state of `starts`, can reach an accepting state) per state, along
    the moves to[off[s]:off[s + 1]] of each state s (`table_moves`)."""
    n = len(off) - 1
    m = off[n]
    counts = np.zeros(n + 1, dtype=np.int64)
    for j in range(m):
        counts[to[j] + 1] += 1
    for s in range(n):
        counts[s + 1] += counts[s]
    preds = np.empty(m, dtype=np.int32)
    fill = counts[:n].copy()
    for s in range(n):
        for j in range(off[s], off[s + 1]):
            t = to[j]
            preds[fill[t]] = s
            fill[t] += 1
    stack = np.empty(n, dtype=np.int64)
    reach = np.zeros(n, dtype=np.bool_)
    top = 0
    for s in starts:
        if not reach[s]:
            reach[s] = True
            stack[top] = s
            top += 1
    while top:
        top -= 1
        s = stack[top]
        for j in range(off[s], off[s + 1]):
            t = to[j]
            if not reach[t]:
                reach[t] = True
                stack[top] = t
                top += 1
    live = np.zeros(n, dtype=np.bool_)
    for s in range(n):
        if accepting[s]:
            live[s] = True
            stack[top] = s
            top += 1
    while top:
        top -= 1
        s = stack[top]
        for j in range(counts[s], counts[s + 1]):
            p = preds[j]
            if not live[p]:
                live[p] = True
                stack[top] = p
                top += 1
    return reach, live


@kernel(R(int32, 2), R(boolean), int64, tiered=True)
def reachable_and_live(transitions, accepting, start):  # type: ignore[no-untyped-def]
    """(reachable from start, can reach an accepting state) per state; -1 entries are skipped."""
    n = transitions.shape[0]
    off, to = table_moves(transitions, np.zeros(n + 1, dtype=np.int64),
                          np.zeros(0, dtype=np.int64))
    return reach_and_live(off, to, np.full(1, start, dtype=np.int64), accepting)


@kernel(R(int32, 2), R(boolean), int64, tiered=True)
def breadth_first_order(transitions, live, start):  # type: ignore[no-untyped-def]
    """The live states reachable from `start` through live states, in breadth-first order
    (columns in order); int64 array of old state numbers."""
    n, k = transitions.shape
    seen = np.zeros(n, dtype=np.bool_)
    order = np.empty(n, dtype=np.int64)
    order[0] = start
    seen[start] = True
    size = 1
    i = 0
    while i < size:
        s = order[i]
        i += 1
        for c in range(k):
            t = transitions[s, c]
            if t >= 0 and live[t] and not seen[t]:
                seen[t] = True
                order[size] = t
                size += 1
    return order[:size].copy()
