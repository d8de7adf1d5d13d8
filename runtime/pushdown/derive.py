"""What `PushdownTable` checks and derives of its rule automata, as kernels linear in the size
of the table: the index and trimmed checks, and the least fixpoints `ends`/`nullable`, `first`
and `follow`/`can_end` (see `PushdownTable._derived`).

One pass over the table (`checked_moves`) checks its indices and reads its moves (byte and
call) and the bytes of each state's moves; the trimmed check searches those moves
(`reach_and_live`), and the fixpoints walk the call edges (source state, callee rule, next
state). Every kernel but `checked_moves` takes tables whose indices are checked to lie in
range; bit sets of bytes are uint64[., 4].
"""
from __future__ import annotations

import numpy as np
from numba.types import boolean, int32, int64, uint64

from ..csr import csr_order
from ..jit import A, R, kernel


@kernel(R(int32), R(int32, 2), R(int32), R(int32), R(int32), R(int32), R(int32), boolean,
        tiered=True)
def _index_errors(byte_class, transitions, call_offsets, call_rule, call_next, state_rule,  # type: ignore[no-untyped-def]
                  rule_start, scan_transitions):
    """The number (1-7) of the first index check that fails, in the order of
    `PushdownTable`'s invariants, or 0; the transitions (check 2) only when
    `scan_transitions`."""
    n, k = transitions.shape
    r = len(rule_start)
    for b in range(256):
        if byte_class[b] < 0 or byte_class[b] >= k:
            return 1
    if scan_transitions:
        for s in range(n):
            for c in range(k):
                if transitions[s, c] < -1 or transitions[s, c] >= n:
                    return 2
    if call_offsets[0] != 0 or call_offsets[n] != len(call_rule):
        return 3
    for s in range(n):
        if call_offsets[s + 1] < call_offsets[s]:
            return 3
    for j in range(len(call_rule)):
        if call_rule[j] < 0 or call_rule[j] >= r or call_next[j] < 0 or call_next[j] >= n:
            return 4
    for s in range(n):
        if state_rule[s] < 0 or state_rule[s] >= r:
            return 5
    for x in range(r):
        if rule_start[x] < -1 or rule_start[x] >= n:
            return 6
    for x in range(r):
        if rule_start[x] >= 0 and state_rule[rule_start[x]] != x:
            return 7
    for s in range(n):
        if rule_start[state_rule[s]] < 0:
            return 7
    return 0


@kernel(R(int32), R(int32, 2), R(int32), R(int32), R(int32), R(int32), R(int32), tiered=True)
def checked_moves(byte_class, transitions, call_offsets, call_rule, call_next, state_rule,  # type: ignore[no-untyped-def]
                  rule_start):
    """(failed, leaving, off, to, bits) of a pushdown table, in one pass over `transitions`:
    `failed` the number (1-7) of the first index check that fails, in the order of
    `PushdownTable`'s invariants, or 0; when 0, `leaving` the moves (byte or call) that leave
    their rule, the moves of each state s as to[off[s]:off[s + 1]] (`table_moves`), and
    `bits` (uint64[n, 4]) the bytes each state has a move on. Shapes must be checked first:
    byte_class (256,), state_rule (n,), call_offsets (n + 1,), call_next like call_rule."""
    n, k = transitions.shape
    off = np.zeros(n + 1, dtype=np.int64)
    to = np.empty(0, dtype=np.int32)
    bits = np.zeros((n, 4), dtype=np.uint64)
    failed = _index_errors(byte_class, transitions, call_offsets, call_rule, call_next,
                           state_rule, rule_start, False)
    if failed:
        if failed > 2 and _index_errors(byte_class, transitions, call_offsets, call_rule,
                                        call_next, state_rule, rule_start, True) == 2:
            failed = 2
        return failed, 0, off, to, bits
    of_class = np.zeros((k, 4), dtype=np.uint64)
    for b in range(256):
        of_class[byte_class[b], b >> 6] |= np.uint64(1) << np.uint64(b & 63)
    to = np.empty(4 * n + len(call_next), dtype=np.int32)
    m = 0
    leaving = 0
    for s in range(n):
        rule = state_rule[s]
        if m + k + call_offsets[s + 1] - call_offsets[s] > len(to):
            grown = np.empty(2 * len(to) + k + call_offsets[s + 1] - call_offsets[s],
                             dtype=np.int32)
            grown[:m] = to[:m]
            to = grown
        for c in range(k):
            t = transitions[s, c]
            if t >= 0:
                if t >= n:
                    return 2, 0, off, to[:0], bits
                to[m] = t
                m += 1
                if state_rule[t] != rule:
                    leaving += 1
                for w in range(4):
                    bits[s, w] |= of_class[c, w]
            elif t != -1:
                return 2, 0, off, to[:0], bits
        for j in range(call_offsets[s], call_offsets[s + 1]):
            to[m] = call_next[j]
            m += 1
            if state_rule[call_next[j]] != rule:
                leaving += 1
        off[s + 1] = m
    return 0, leaving, off, to[:m], bits


@kernel(A(boolean), R(int64), R(int32), R(int32), R(int32), R(int64), R(int64), R(int64), R(int64),
        tiered=True)
def _ends(ends, src, callee, nxt, rstart, by_next, next_order, by_start, start_order):  # type: ignore[no-untyped-def]
    """Close `ends` under: ends[src[e]] if ends[nxt[e]] and ends[rstart[callee[e]]]."""
    n = len(ends)
    stack = np.empty(n, dtype=np.int64)
    top = 0
    for s in range(n):
        if ends[s]:
            stack[top] = s
            top += 1
    while top:
        top -= 1
        x = stack[top]
        for side in range(2):
            offsets, order = (by_next, next_order) if side == 0 else (by_start, start_order)
            for j in range(offsets[x], offsets[x + 1]):
                e = order[j]
                s = src[e]
                if not ends[s] and ends[nxt[e]] and ends[rstart[callee[e]]]:
                    ends[s] = True
                    stack[top] = s
                    top += 1
    return ends


def ends_fixpoint(accepting: np.ndarray, src: np.ndarray, callee: np.ndarray, nxt: np.ndarray,
                  rule_start: np.ndarray) -> np.ndarray:
    """The states from which their rule can finish by calls of nullable rules alone."""
    n = len(accepting)
    by_next = csr_order(n, nxt)
    by_start = csr_order(n, rule_start[callee])
    return _ends(accepting.copy(), src, callee, nxt, rule_start, by_next[0], by_next[1],
                 by_start[0], by_start[1])


@kernel(A(uint64, 2), R(int64), R(int64), R(int64), tiered=True)
def _propagate(values, offsets, order, targets):  # type: ignore[no-untyped-def]
    n, w = values.shape
    queued = np.ones(n, dtype=np.bool_)
    queue = np.arange(n)
    head = 0
    size = n
    while size:
        x = queue[head]
        head = (head + 1) % n
        size -= 1
        queued[x] = False
        for j in range(offsets[x], offsets[x + 1]):
            t = targets[order[j]]
            changed = False
            for c in range(w):
                v = values[t, c] | values[x, c]
                if v != values[t, c]:
                    values[t, c] = v
                    changed = True
            if changed and not queued[t]:
                queued[t] = True
                queue[(head + size) % n] = t
                size += 1
    return values


def propagate_or(values: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The least `values` (uint64[n, w] bit sets, at least the given ones) with
    values[dst[e]] ⊇ values[src[e]] for every edge e."""
    offsets, order = csr_order(len(values), src)
    return _propagate(np.ascontiguousarray(values, dtype=np.uint64), offsets, order,
                      dst.astype(np.int64))
