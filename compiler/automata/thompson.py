"""Thompson's construction as a Numba kernel, over the IR flattened to arrays.

`thompson` builds an NFA's edges from the arrays of an expression DAG (`flat_ir.FlatIR`). The
construction (see `nfa.py` for the NFA's invariants):
- a sequence of n items gets n - 1 inner states; a choice one entry state per alternative;
  a literal one state per inner byte boundary; a character class the states of its UTF-8
  byte trie (sequences sharing a leading byte range share the state after it); an automaton
  its DFA's states, entered from its start and left from its accepting states by epsilon
  edges; a rule call one edge (CALL + r);
- `item{m,n}` is n copies of the item with exits after the m-th, `item{m,}` m copies then a
  loop (entry, loop-back), each copy built in place;
- a composite node used more than once (`shared`: Seq, Choice, Repeat or Automaton with
  several parents) is entered through a state of its own, built once per end state and
  entered by an epsilon edge from every further use with that end;
- a separated list X (S X)* (`split`: the repetition follows the last k items of its body
  somewhere in a sequence) is one loop whose head leads to the end and through S to the
  entry of X, whose end is the head; the sequence's X enters the loop at X, a use of the
  repetition alone enters at the head.
- with `counted_from`, a bounded repetition of a one-byte class is a counted loop: one state
  whose class edges lead back to itself, entered after the required copies and left by an
  epsilon edge, reported with its bound (`counted.py` turns its DFA states into counters).
States are numbered in the order the kernel allocates them; the kernel stops with -1 past
`max_states`.
"""
from __future__ import annotations

import numpy as np
from numba.types import boolean, int64, uint8

from ...runtime.jit import A, R, kernel
from .flat_ir import AUTOMATON, CHOICE, CLASS, LITERAL, REPEAT, SEQ
from .hashing import key_slot

N, EPS, TOP, KEYS = range(4)
"""Counters shared with `_loop`: states, epsilon edges, work items, keys in the table."""


@kernel(A(int64, 2), int64, also=((A(int64), int64), (A(boolean), int64)), tiered=True)
def _grow(a, need):  # type: ignore[no-untyped-def]
    if need <= a.shape[0]:
        return a
    out = np.empty((max(need, 2 * a.shape[0]),) + a.shape[1:], dtype=a.dtype)
    # Element by element: a slice assignment would compile numpy's broadcasting and its
    # error message formatting into this kernel (most of its cold compile time).
    old, new = a.reshape(a.size), out.reshape(out.size)
    for i in range(a.size):
        new[i] = old[i]
    return out


@kernel(R(int64), int64, tiered=True)
def _slot(keys, key):  # type: ignore[no-untyped-def]
    """The slot of `key` in the open-addressing table `keys` (-1: empty), or the empty slot
    where it goes."""
    mask = keys.shape[0] - 1
    i = key_slot(key, mask)
    while keys[i] != -1 and keys[i] != key:
        i = (i + 1) & mask
    return i


@kernel(R(int64), R(int64, 2), tiered=True)
def _rehashed(keys, values):  # type: ignore[no-untyped-def]
    grown = np.full(2 * keys.shape[0], -1, dtype=np.int64)
    moved = np.empty((2 * keys.shape[0], 2), dtype=np.int64)
    for i in range(keys.shape[0]):
        if keys[i] != -1:
            j = _slot(grown, keys[i])
            grown[j] = keys[i]
            moved[j, 0], moved[j, 1] = values[i, 0], values[i, 1]
    return grown, moved


@kernel(int64, R(int64), R(int64), R(int64), tiered=True)
def _loop_length(node, kind, kid_off, kids):  # type: ignore[no-untyped-def]
    body = kids[kid_off[node]]
    return kid_off[body + 1] - kid_off[body] if kind[body] == SEQ else 1


@kernel(int64, int64, R(int64), R(int64), R(int64), R(int64, 2), A(int64), A(int64, 2), A(int64,
        2), A(int64, 2), A(int64), tiered=True)
def _loop(node, e, kind, kid_off, kids, arg, keys, values, work, eps, cnt):  # type: ignore[no-untyped-def]
    """(head, X entry) of the loop of the separated list (S X)* = `node` ending at e, its
    items queued on first use: head -> e, head -S-> entry -X-> head. Counters in `cnt`; the
    caller has made room for the items, two epsilon edges and a key (loops are keyed
    2 * (node, e) + 1 in the table, entries of shared nodes 2 * (node, e))."""
    key = (node * 4294967296 + e) * 2 + 1
    slot = _slot(keys, key)
    if keys[slot] == key:
        return values[slot, 0], values[slot, 1]
    head = cnt[N]
    entry = head + 1
    cnt[N] += 2
    eps[cnt[EPS], 0], eps[cnt[EPS], 1] = head, e
    cnt[EPS] += 1
    body = kids[kid_off[node]]
    is_seq = kind[body] == SEQ
    m = _loop_length(node, kind, kid_off, kids)
    cut = m - arg[node, 2]
    if cut == 0:
        eps[cnt[EPS], 0], eps[cnt[EPS], 1] = head, entry
        cnt[EPS] += 1
    a = entry if cut == 0 else head
    for i in range(m):
        if i + 1 == cut:
            b = entry
        elif i == m - 1:
            b = head
        else:
            b = cnt[N]
            cnt[N] += 1
        top = cnt[TOP]
        work[top, 0], work[top, 1], work[top, 2] = kids[kid_off[body] + i] if is_seq else body, a, b
        cnt[TOP] += 1
        a = b
    keys[slot] = key
    values[slot, 0], values[slot, 1] = head, entry
    cnt[KEYS] += 1
    return head, entry


@kernel(R(int64), R(int64), R(int64), R(int64, 2), R(boolean), R(int64), R(int64, 2), R(uint8),
        R(int64, 2), R(int64), int64, int64, tiered=True)
def thompson(kind, kid_off, kids, arg, shared, list_off, lists, data, edges, accepting,  # type: ignore[no-untyped-def]
             max_states, counted_from):
    """(n states, edges int64[m, 4] (from, lo, hi, to), epsilon edges int64[p, 2], counted
    loops int64[q, 2] (state, bound)) of the NFA of the flattened root from state 0 to state 1;
    n = -1 past `max_states`. With `counted_from` > 0, `c{m,n}` of a one-byte class `c` with
    n - m >= counted_from is m copies then a counted loop (see `counted.py`), not n copies.

    The counters live in locals (`cnt` only around `_loop`): helpers taking arrays cost
    reference counting per call, which dominated this loop."""
    out = np.empty((256, 4), dtype=np.int64)
    eps = np.empty((256, 2), dtype=np.int64)
    work = np.empty((64, 3), dtype=np.int64)
    points = np.empty(16, dtype=np.int64)
    skip = np.zeros(16, dtype=np.bool_)
    cnt = np.zeros(4, dtype=np.int64)
    keys = np.full(64, -1, dtype=np.int64)
    values = np.empty((64, 2), dtype=np.int64)
    counted = np.empty((16, 2), dtype=np.int64)
    n, n_out, n_eps, n_counted = 2, 0, 0, 0
    work[0, 0], work[0, 1], work[0, 2] = 0, 0, 1
    top = 1
    while top:
        if n > max_states:
            return -1, out[:0], eps[:0], counted[:0]
        top -= 1
        node, s, e = work[top, 0], work[top, 1], work[top, 2]
        k = kind[node]
        c = kid_off[node + 1] - kid_off[node]
        more_out, more_eps, more_work = 1, c + 4, c + 1
        looped = k == REPEAT and arg[node, 2] > 0
        if looped:
            more_work += _loop_length(node, kind, kid_off, kids)
        elif k == REPEAT:
            count = arg[node, 0] + 1 if arg[node, 1] < 0 else arg[node, 1] + 1
            more_eps += count + 3
            more_work += count + 1
            item = kids[kid_off[node]]
            if kind[item] == CLASS:
                more_out += arg[item, 2]
        elif k == SEQ:
            for x in range(list_off[node], list_off[node + 1]):
                more_work += _loop_length(kids[kid_off[node] + lists[x, 0]], kind, kid_off,
                                          kids)
                more_eps += 3
        elif k == LITERAL:
            more_out = arg[node, 1]
        elif k == CLASS:
            more_out = arg[node, 2]
        elif k == AUTOMATON:
            more_out = arg[node, 3]
            more_eps += arg[node, 5]
        if n_out + more_out > out.shape[0]:
            out = _grow(out, n_out + more_out)
        if n_eps + more_eps > eps.shape[0]:
            eps = _grow(eps, n_eps + more_eps)
        if top + more_work > work.shape[0]:
            work = _grow(work, top + more_work)
        while 2 * (cnt[KEYS] + list_off[node + 1] - list_off[node] + 1) > keys.shape[0]:
            keys, values = _rehashed(keys, values)
        if looped:
            cnt[N], cnt[EPS], cnt[TOP] = n, n_eps, top
            head = _loop(node, e, kind, kid_off, kids, arg, keys, values, work, eps, cnt)[0]
            n, n_eps, top = cnt[N], cnt[EPS], cnt[TOP]
            eps[n_eps, 0], eps[n_eps, 1] = s, head
            n_eps += 1
            continue
        if shared[node]:
            key = (node * 4294967296 + e) * 2
            slot = _slot(keys, key)
            if keys[slot] == key:
                eps[n_eps, 0], eps[n_eps, 1] = s, values[slot, 0]
                n_eps += 1
                continue
            keys[slot] = key
            values[slot, 0] = n
            cnt[KEYS] += 1
            eps[n_eps, 0], eps[n_eps, 1] = s, n
            n_eps += 1
            s = n
            n += 1
        if k == SEQ:
            lo = kid_off[node]
            if c == 0:
                eps[n_eps, 0], eps[n_eps, 1] = s, e
                n_eps += 1
                continue
            if c + 1 > points.shape[0]:
                points = _grow(points, c + 1)
                skip = _grow(skip, c + 1)
            points[0], points[c] = s, e
            for i in range(1, c):
                points[i] = n
                n += 1
            skip[:c] = False
            if list_off[node + 1] > list_off[node]:
                cnt[N], cnt[EPS], cnt[TOP] = n, n_eps, top
                for x in range(list_off[node], list_off[node + 1]):
                    j, kk = lists[x, 0], lists[x, 1]
                    entry = _loop(kids[lo + j], points[j + 1], kind, kid_off, kids, arg, keys,
                                  values, work, eps, cnt)[1]
                    eps[cnt[EPS], 0], eps[cnt[EPS], 1] = points[j - kk], entry
                    cnt[EPS] += 1
                    skip[j - kk:j + 1] = True
                n, n_eps, top = cnt[N], cnt[EPS], cnt[TOP]
            for i in range(c - 1, -1, -1):
                if not skip[i]:
                    work[top, 0], work[top, 1], work[top, 2] = kids[lo + i], points[i], points[i + 1]
                    top += 1
        elif k == CHOICE:
            lo = kid_off[node]
            for i in range(c - 1, -1, -1):
                eps[n_eps, 0], eps[n_eps, 1] = s, n + i
                n_eps += 1
                work[top, 0], work[top, 1], work[top, 2] = kids[lo + i], n + i, e
                top += 1
            n += c
        elif k == REPEAT and counted_from > 0 and arg[node, 1] - arg[node, 0] >= counted_from \
                and kind[kids[kid_off[node]]] == CLASS and arg[kids[kid_off[node]], 0] == 0:
            least, item = arg[node, 0], kids[kid_off[node]]
            # Point 0 is s, point i > 0 is first + i - 1, and the loop state follows them.
            first = n
            loop = first + least
            n += least + 1
            for i in range(least):
                work[top, 0], work[top, 1], work[top, 2] = item, s if i == 0 else first + i - 1, first + i
                top += 1
            eps[n_eps, 0], eps[n_eps, 1] = s if least == 0 else first + least - 1, loop
            eps[n_eps + 1, 0], eps[n_eps + 1, 1] = loop, e
            n_eps += 2
            for i in range(arg[item, 1], arg[item, 1] + arg[item, 2]):
                out[n_out, 0], out[n_out, 1], out[n_out, 2], out[n_out, 3] = (
                    loop, edges[i, 1], edges[i, 2], loop)
                n_out += 1
            if n_counted == counted.shape[0]:
                counted = _grow(counted, n_counted + 1)
            counted[n_counted, 0], counted[n_counted, 1] = loop, arg[node, 1] - least
            n_counted += 1
        elif k == REPEAT:
            least, most = arg[node, 0], arg[node, 1]
            unbounded = most < 0
            n_points = least + 1 if unbounded else most + 1
            first = n
            n += n_points - 1 + (2 if unbounded else 0)
            item = kids[kid_off[node]]
            # Point 0 is s and point i > 0 is first + i - 1; copy i leads from i to i + 1.
            for i in range(n_points - 1):
                work[top, 0], work[top, 1], work[top, 2] = item, s if i == 0 else first + i - 1, first + i
                top += 1
            if unbounded:
                loop_in, loop_out = first + n_points - 1, first + n_points
                eps[n_eps, 0], eps[n_eps, 1] = s if n_points == 1 else first + n_points - 2, loop_in
                eps[n_eps + 1, 0], eps[n_eps + 1, 1] = loop_in, e
                eps[n_eps + 2, 0], eps[n_eps + 2, 1] = loop_out, loop_in
                n_eps += 3
                work[top, 0], work[top, 1], work[top, 2] = item, loop_in, loop_out
                top += 1
            else:
                for i in range(least, n_points):
                    eps[n_eps, 0], eps[n_eps, 1] = s if i == 0 else first + i - 1, e
                    n_eps += 1
        elif k == LITERAL:
            off, length = arg[node, 0], arg[node, 1]
            for i in range(length):
                out[n_out, 0] = s if i == 0 else n + i - 1
                out[n_out, 1] = out[n_out, 2] = data[off + i]
                out[n_out, 3] = e if i == length - 1 else n + i
                n_out += 1
            n += length - 1
        elif k == CLASS:
            inner, off, m = arg[node, 0], arg[node, 1], arg[node, 2]
            for i in range(off, off + m):
                a, b = edges[i, 0], edges[i, 3]
                out[n_out, 0] = s if a == 0 else e if a == 1 else n + a - 2
                out[n_out, 1], out[n_out, 2] = edges[i, 1], edges[i, 2]
                out[n_out, 3] = s if b == 0 else e if b == 1 else n + b - 2
                n_out += 1
            n += inner
        elif k == AUTOMATON:
            off, m = arg[node, 2], arg[node, 3]
            for i in range(off, off + m):
                out[n_out, 0], out[n_out, 1] = edges[i, 0] + n, edges[i, 1]
                out[n_out, 2], out[n_out, 3] = edges[i, 2], edges[i, 3] + n
                n_out += 1
            eps[n_eps, 0], eps[n_eps, 1] = s, n + arg[node, 1]
            n_eps += 1
            for i in range(arg[node, 4], arg[node, 4] + arg[node, 5]):
                eps[n_eps, 0], eps[n_eps, 1] = accepting[i] + n, e
                n_eps += 1
            n += arg[node, 0]
        else:
            out[n_out, 0], out[n_out, 1], out[n_out, 2], out[n_out, 3] = (
                s, arg[node, 0], arg[node, 0], e)
            n_out += 1
    if n > max_states:
        return -1, out[:0], eps[:0], counted[:0]
    return n, out[:n_out], eps[:n_eps], counted[:n_counted]
