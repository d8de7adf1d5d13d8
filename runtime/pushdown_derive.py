"""What `PushdownTable` derives from its rule automata, as worklist kernels linear in the
size of the table: the trimmed check and the least fixpoints `ends`/`nullable`, `first` and
`follow`/`can_end` (see `PushdownTable._derived`).

The trimmed check walks the table itself (byte moves and call edges); the fixpoints walk the
call edges (source state, callee rule, next state). Kernels take validated
tables only (every index in range); bit sets of bytes are uint64[., 4].
"""
from __future__ import annotations

import numpy as np
from numba import njit

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


def _csr(n: int, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets int64[n + 1], order) grouping the positions of `keys` (in [0, n)) by key."""
    order = np.argsort(keys, kind="stable")
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=offsets[1:])
    return offsets, order


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
    by_next = _csr(n, nxt)
    by_start = _csr(n, rule_start[callee])
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
    offsets, order = _csr(len(values), src)
    return _propagate(np.ascontiguousarray(values, dtype=np.uint64), offsets, order,
                      dst.astype(np.int64))
