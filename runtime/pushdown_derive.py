"""What `PushdownTable` checks and derives of its rule automata, as kernels linear in the size
of the table: the index and trimmed checks, and the least fixpoints `ends`/`nullable`, `first`
and `follow`/`can_end` (see `PushdownTable._derived`).

The index check and the trimmed check walk the table itself (byte moves and call edges); the
fixpoints walk the call edges (source state, callee rule, next state). Every kernel but the
index check takes tables whose indices are checked to lie in range; bit sets of bytes are
uint64[., 4].
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .csr import csr_order
from .dfa_kernels import moves_reach_and_live


@njit(cache=True, nogil=True)
def byte_bits(transitions, byte_class):  # type: ignore[no-untyped-def]
    """uint64[n, 4]: per state, the set of bytes it has a move on."""
    n, k = transitions.shape
    of_class = np.zeros((k, 4), dtype=np.uint64)
    for b in range(256):
        of_class[byte_class[b], b >> 6] |= np.uint64(1) << np.uint64(b & 63)
    out = np.zeros((n, 4), dtype=np.uint64)
    for s in range(n):
        for c in range(k):
            if transitions[s, c] >= 0:
                for w in range(4):
                    out[s, w] |= of_class[c, w]
    return out


@njit(cache=True, nogil=True)
def index_errors(byte_class, transitions, call_offsets, call_rule, call_next, state_rule,  # type: ignore[no-untyped-def]
                 rule_start):
    """0 when every index of a pushdown table lies in range, else the number (1-7) of the
    first check that fails, in the order of `PushdownTable`'s invariants. Shapes must be
    checked first: byte_class (256,), accepting and state_rule (n,), call_offsets (n + 1,),
    call_next like call_rule."""
    n, k = transitions.shape
    r = len(rule_start)
    for b in range(256):
        if byte_class[b] < 0 or byte_class[b] >= k:
            return 1
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
        if rule_start[x] < 0 or rule_start[x] >= n:
            return 6
    for x in range(r):
        if state_rule[rule_start[x]] != x:
            return 7
    return 0


@njit(cache=True, nogil=True)
def _leaving(transitions, call_offsets, call_next, state_rule):  # type: ignore[no-untyped-def]
    n, k = transitions.shape
    leaving = 0
    for s in range(n):
        for c in range(k):
            t = transitions[s, c]
            if t >= 0 and state_rule[t] != state_rule[s]:
                leaving += 1
        for j in range(call_offsets[s], call_offsets[s + 1]):
            if state_rule[call_next[j]] != state_rule[s]:
                leaving += 1
    return leaving


def table_structure(transitions: np.ndarray, call_offsets: np.ndarray, call_next: np.ndarray,
                    state_rule: np.ndarray, rule_start: np.ndarray, accepting: np.ndarray
                    ) -> tuple[int, int, int]:
    """(moves that leave their rule, states unreachable from every rule start, states that
    cannot reach an accepting state of their rule), counting byte and call moves alike, for a
    table whose indices are already checked to lie in range."""
    reach, live = moves_reach_and_live(transitions, call_offsets, call_next, rule_start,
                                       accepting)
    n = len(reach)
    return (int(_leaving(transitions, call_offsets, call_next, state_rule)),
            n - int(reach.sum()), n - int(live.sum()))


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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
