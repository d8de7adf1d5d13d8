"""Thompson's construction as a Numba kernel, over the IR flattened to arrays.

`flatten` numbers the distinct node objects of an expression DAG and lays them out as arrays
(`FlatIR`); `thompson` builds the NFA's edges from them. The construction (see `nfa.py` for the
NFA's invariants):
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
States are numbered in the order the kernel allocates them; the kernel stops with -1 past
`max_states`. Flattening checks `Limits.max_repeat`, rejects references outside `calls`, and
checks the compile deadline every 4096 nodes.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..runtime.dfa_table import DFATable
from . import deadline
from .errors import GrammarError
from .ir import Automaton, CharClass, Choice, Literal, Node, Repeat, RuleRef, Seq
from .limits import Limits
from .utf8 import utf8_sequences

CALL = 256
"""Edge symbols from CALL up are rule calls: CALL + r calls rule r."""

SEQ, CHOICE, REPEAT, LITERAL, CLASS, AUTOMATON, REF = range(7)


@functools.lru_cache(maxsize=1024)
def class_edges(ranges: tuple[tuple[int, int], ...]) -> tuple[int, np.ndarray]:
    """(inner states, edges int64[m, 4] (from, lo, hi, to)) of a character class's byte trie,
    in local numbering: 0 entry, 1 exit, 2.. inner."""
    prefix_state: dict[tuple[tuple[int, int], ...], int] = {}
    edges: list[tuple[int, int, int, int]] = []
    for lo, hi in ranges:
        for seq in utf8_sequences(lo, hi):
            cur = 0
            for i, (blo, bhi) in enumerate(seq):
                if i == len(seq) - 1:
                    edges.append((cur, blo, bhi, 1))
                    break
                key = seq[: i + 1]
                nxt = prefix_state.get(key)
                if nxt is None:
                    nxt = 2 + len(prefix_state)
                    prefix_state[key] = nxt
                    edges.append((cur, blo, bhi, nxt))
                cur = nxt
    return len(prefix_state), np.array(edges, dtype=np.int64).reshape(-1, 4)


@functools.lru_cache(maxsize=256)
def automaton_edges(dfa: DFATable) -> tuple[np.ndarray, np.ndarray]:
    """(edges int64[m, 4] (from, lo, hi, to) over runs of equal class, accepting states) of
    `dfa`."""
    bc = dfa.byte_class
    starts = np.flatnonzero(np.concatenate(([True], bc[1:] != bc[:-1])))
    ends = np.concatenate((starts[1:], [256])) - 1
    targets = dfa.transitions[:, bc[starts]]
    q, r = np.nonzero(targets >= 0)
    edges = np.stack([q, starts[r], ends[r], targets[q, r]], axis=1).astype(np.int64)
    return edges.reshape(-1, 4), np.flatnonzero(dfa.accepting).astype(np.int64)


def _same(a: Node, b: Node) -> bool:
    """Whether two nodes are one sub-expression: the same object, or equal leaves."""
    return a is b or (type(a) is type(b) and type(a) in (Literal, CharClass, RuleRef) and a == b)


def _loop_items(node: Repeat) -> tuple[Node, ...]:
    item = node.item
    return item.items if type(item) is Seq else (item,)


def separated_lists(items: tuple[Node, ...]) -> list[tuple[int, int]]:
    """The places (j, k) where items[j - k:j] are the last k items of the body of
    items[j] = (S X)* (unbounded, may be absent), k as large as possible."""
    found: list[tuple[int, int]] = []
    taken = 0
    for j in range(1, len(items)):
        node = items[j]
        if type(node) is not Repeat or node.min != 0 or node.max is not None:
            continue
        loop = _loop_items(node)
        k = 0
        while (k < min(len(loop), j - taken) and
               _same(items[j - k - 1], loop[len(loop) - k - 1])):
            k += 1
        if k:
            found.append((j, k))
            taken = j + 1
    return found


@dataclass(frozen=True, eq=False)
class FlatIR:
    """An expression DAG as arrays; node 0 is the root. Per node: `kind`, children
    `kids[kid_off[i]:kid_off[i + 1]]`, and `arg` (LITERAL: offset into `data` and length;
    CLASS: (inner states, offset into `edges`, edge count); AUTOMATON: (states, start, offset
    into `edges`, edge count, offset into `accepting`, count); REPEAT: (min, max or -1,
    split k or 0); REF: symbol). `shared` marks composite nodes with several parents;
    `lists[list_off[i]:list_off[i + 1]]` are a sequence's separated lists (j, k); `called`
    names the rules of the call symbols CALL + 0, CALL + 1, ..."""

    kind: np.ndarray
    kid_off: np.ndarray
    kids: np.ndarray
    arg: np.ndarray
    shared: np.ndarray
    list_off: np.ndarray
    lists: np.ndarray
    data: np.ndarray
    edges: np.ndarray
    accepting: np.ndarray
    called: tuple[str, ...]


def flatten(root: Node, limits: Limits, calls: dict[str, int] | None) -> FlatIR:
    """The arrays of `root` for `thompson`; GrammarError for a reference outside `calls`,
    BudgetExceeded for a repetition bound above `Limits.max_repeat`. With `calls` None, every
    referenced rule is called, numbered in name order (`FlatIR.called`)."""
    index: dict[int, int] = {id(root): 0}
    nodes: list[Node] = [root]
    parents = [0]
    i = 0
    while i < len(nodes):
        if not i & 4095:
            deadline.check()
        n = nodes[i]
        kind = type(n)
        kids = (n.items if kind is Seq else n.alternatives if kind is Choice  # type: ignore[union-attr]
                else (n.item,) if kind is Repeat else ())  # type: ignore[union-attr]
        for k in kids:
            j = index.get(id(k))
            if j is None:
                index[id(k)] = len(nodes)
                nodes.append(k)
                parents.append(1)
            else:
                parents[j] += 1
        i += 1
    kind_of: list[int] = []
    arg: list[tuple[int, ...]] = []
    kid_off, kid_list = [0], []
    list_off: list[int] = [0]
    list_pairs: list[tuple[int, int]] = []
    splits: dict[int, int] = {}
    data = bytearray()
    blocks: list[np.ndarray] = []
    accepting_blocks: list[np.ndarray] = []
    n_edges = n_accepting = 0
    for n in nodes:
        kind = type(n)
        if kind is Seq:
            kind_of.append(SEQ)
            arg.append(())
            kid_list += [index[id(k)] for k in n.items]  # type: ignore[union-attr]
            for j, k in separated_lists(n.items):  # type: ignore[union-attr]
                loop = index[id(n.items[j])]  # type: ignore[union-attr]
                if splits.setdefault(loop, k) == k:
                    list_pairs.append((j, k))
        elif kind is Choice:
            kind_of.append(CHOICE)
            arg.append(())
            kid_list += [index[id(k)] for k in n.alternatives]  # type: ignore[union-attr]
        elif kind is Repeat:
            if n.min > limits.max_repeat or (n.max or 0) > limits.max_repeat:  # type: ignore[union-attr]
                raise limits.exceeded("max_repeat", max(n.min, n.max or 0),  # type: ignore[union-attr]
                                      "repetition count")
            kind_of.append(REPEAT)
            arg.append((n.min, -1 if n.max is None else n.max))  # type: ignore[union-attr]
            kid_list.append(index[id(n.item)])  # type: ignore[union-attr]
        elif kind is Literal:
            kind_of.append(LITERAL)
            arg.append((len(data), len(n.data)))  # type: ignore[union-attr]
            data += n.data  # type: ignore[union-attr]
        elif kind is CharClass:
            inner, edges = class_edges(n.ranges)  # type: ignore[union-attr]
            kind_of.append(CLASS)
            arg.append((inner, n_edges, len(edges)))
            blocks.append(edges)
            n_edges += len(edges)
        elif kind is Automaton:
            dfa = n.dfa  # type: ignore[union-attr]
            edges, acc = automaton_edges(dfa)
            kind_of.append(AUTOMATON)
            arg.append((dfa.n_states, dfa.start, n_edges, len(edges), n_accepting, len(acc)))
            blocks.append(edges)
            accepting_blocks.append(acc)
            n_edges += len(edges)
            n_accepting += len(acc)
        elif kind is RuleRef and (calls is None or n.name in calls):  # type: ignore[union-attr]
            kind_of.append(REF)
            arg.append((n.name,) if calls is None else (CALL + calls[n.name],))  # type: ignore[union-attr]
        else:
            raise GrammarError(f"cannot lower IR node {kind.__name__} to an NFA")
        kid_off.append(len(kid_list))
        list_off.append(len(list_pairs))
    called = tuple(sorted({a[0] for k, a in zip(kind_of, arg) if k == REF})) \
        if calls is None else tuple(calls)
    symbol = {name: CALL + i for i, name in enumerate(called)}
    args = np.zeros((len(nodes), 6), dtype=np.int64)
    for i, a in enumerate(arg):
        if a:
            args[i, :len(a)] = (symbol[a[0]],) if calls is None and kind_of[i] == REF else a
    for loop, k in splits.items():
        args[loop, 2] = k
    kinds = np.array(kind_of, dtype=np.int64)
    composite = (kinds == SEQ) | (kinds == CHOICE) | (kinds == REPEAT) | (kinds == AUTOMATON)
    return FlatIR(
        kind=kinds, kid_off=np.array(kid_off, dtype=np.int64),
        kids=np.array(kid_list, dtype=np.int64), arg=args,
        shared=composite & (np.array(parents) > 1), list_off=np.array(list_off, dtype=np.int64),
        lists=np.array(list_pairs, dtype=np.int64).reshape(-1, 2),
        data=np.frombuffer(bytes(data), dtype=np.uint8),
        edges=np.concatenate(blocks) if blocks else np.zeros((0, 4), np.int64),
        accepting=(np.concatenate(accepting_blocks) if accepting_blocks
                   else np.zeros(0, np.int64)),
        called=called)


N, EPS, TOP, KEYS = range(4)
"""Counters shared with `_loop`: states, epsilon edges, work items, keys in the table."""


@njit(cache=True, nogil=True)
def _grow(a, need):  # type: ignore[no-untyped-def]
    if need <= a.shape[0]:
        return a
    out = np.empty((max(need, 2 * a.shape[0]),) + a.shape[1:], dtype=a.dtype)
    out[:a.shape[0]] = a
    return out


@njit(cache=True, nogil=True)
def _slot(keys, key):  # type: ignore[no-untyped-def]
    """The slot of `key` in the open-addressing table `keys` (-1: empty), or the empty slot
    where it goes."""
    mask = keys.shape[0] - 1
    i = np.int64((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32)) & mask
    while keys[i] != -1 and keys[i] != key:
        i = (i + 1) & mask
    return i


@njit(cache=True, nogil=True)
def _rehashed(keys, values):  # type: ignore[no-untyped-def]
    grown = np.full(2 * keys.shape[0], -1, dtype=np.int64)
    moved = np.empty((2 * keys.shape[0], 2), dtype=np.int64)
    for i in range(keys.shape[0]):
        if keys[i] != -1:
            j = _slot(grown, keys[i])
            grown[j] = keys[i]
            moved[j, 0], moved[j, 1] = values[i, 0], values[i, 1]
    return grown, moved


@njit(cache=True, nogil=True)
def _loop_length(node, kind, kid_off, kids):  # type: ignore[no-untyped-def]
    body = kids[kid_off[node]]
    return kid_off[body + 1] - kid_off[body] if kind[body] == SEQ else 1


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def thompson(kind, kid_off, kids, arg, shared, list_off, lists, data, edges, accepting,  # type: ignore[no-untyped-def]
             max_states):
    """(n states, edges int64[m, 4] (from, lo, hi, to), epsilon edges int64[p, 2]) of the NFA
    of the flattened root from state 0 to state 1; n = -1 past `max_states`.

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
    n, n_out, n_eps = 2, 0, 0
    work[0, 0], work[0, 1], work[0, 2] = 0, 0, 1
    top = 1
    while top:
        if n > max_states:
            return -1, out[:0], eps[:0]
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
        return -1, out[:0], eps[:0]
    return n, out[:n_out], eps[:n_eps]
