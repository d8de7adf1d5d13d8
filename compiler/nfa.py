"""Thompson NFA over bytes, built from the grammar IR, stored as flat arrays.

Invariants:
- States 0..n-1; `start` and the single `accept` state are valid indices; `accept` has no
  outgoing edges.
- The edges of state s are `edge_lo/edge_hi/edge_to[edge_off[s]:edge_off[s + 1]]`: byte ranges
  (lo, hi, target) with 0 <= lo <= hi <= 255, or call edges (CALL + r, CALL + r, target) that
  match one whole derivation of rule r (only in the rule automata of the pushdown path, built
  with `calls`); its epsilon targets are `eps_to[eps_off[s]:eps_off[s + 1]]`. `edges` and `eps`
  give the same as per-state tuples. Character classes are expanded to their UTF-8 byte
  sequences, so the NFA matches byte strings, and only valid UTF-8 for every class and literal
  that came from text.
- Every fragment is entered through a state of its own, so a composite sub-expression that
  occurs several times in the expression DAG (the same object) and leads to the same end state
  is built once and entered by epsilon edges from each use: shared suffixes, such as the rest of
  an object after any of its optional members, stay linear in size.
- A sub-expression that is used more than once (shared, or repeated) and shares nothing with
  the rest of the expression is built once as a fragment (cached per object and `Limits`) and
  copied, renumbered, to each use: the same states and edges as building it there.
- A separated list X (S X)* (S may be empty; X one node or several items of a sequence) has
  one copy of X, which S leads back to; every other use of that (S X)* object with the same
  end state enters the same loop. Object members and array elements are such lists, so their
  subset construction meets no two copies of an element to merge away.
- The number of states never exceeds `Limits.max_nfa_states` (checked while building).
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..runtime.dfa_table import DFATable
from .errors import GrammarError
from .ir import (
    Automaton,
    CharClass,
    Choice,
    Literal,
    Node,
    Repeat,
    RuleRef,
    Seq,
    children,
)
from . import deadline
from .limits import DEFAULT_LIMITS, Limits
from .utf8 import utf8_sequences

CALL = 256
"""Edge symbols from CALL up are rule calls: CALL + r calls rule r."""


def _csr(n: int, src: np.ndarray, *columns: np.ndarray) -> tuple[np.ndarray, ...]:
    """(offsets int64[n + 1], the columns ordered by source state)."""
    order = np.argsort(src, kind="stable")
    off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=off[1:])
    return (off, *(np.ascontiguousarray(c[order], dtype=np.int32) for c in columns))


@dataclass(frozen=True, eq=False)
class NFA:
    """A byte-level NFA: per-state byte-range edges and epsilon edges (CSR arrays), one start,
    one accept."""

    edge_off: np.ndarray
    edge_lo: np.ndarray
    edge_hi: np.ndarray
    edge_to: np.ndarray
    eps_off: np.ndarray
    eps_to: np.ndarray
    start: int
    accept: int

    @classmethod
    def from_arrays(cls, n: int, src: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                    to: np.ndarray, eps_src: np.ndarray, eps_to: np.ndarray, start: int,
                    accept: int) -> NFA:
        """The NFA with `n` states, edges (src, lo, hi, to) and epsilon edges (eps_src, eps_to)
        in any order."""
        edge_off, lo, hi, to = _csr(n, np.asarray(src, dtype=np.int64), np.asarray(lo),
                                    np.asarray(hi), np.asarray(to))
        eps_off, eps_to = _csr(n, np.asarray(eps_src, dtype=np.int64), np.asarray(eps_to))
        return cls(edge_off, lo, hi, to, eps_off, eps_to, start, accept)

    @classmethod
    def from_lists(cls, edges: Sequence[Sequence[tuple[int, int, int]]],
                   eps: Sequence[Sequence[int]], start: int, accept: int) -> NFA:
        """The NFA with `edges[s]` as the (lo, hi, target) edges and `eps[s]` as the epsilon
        targets of state s."""
        flat = [(s, *e) for s, es in enumerate(edges) for e in es]
        table = np.array(flat, dtype=np.int64).reshape(-1, 4)
        pairs = np.array([(s, t) for s, ts in enumerate(eps) for t in ts],
                         dtype=np.int64).reshape(-1, 2)
        return cls.from_arrays(len(edges), table[:, 0], table[:, 1], table[:, 2], table[:, 3],
                               pairs[:, 0], pairs[:, 1], start, accept)

    @property
    def n_states(self) -> int:
        return len(self.edge_off) - 1

    @functools.cached_property
    def edges(self) -> tuple[tuple[tuple[int, int, int], ...], ...]:
        """Per state, its edges (lo, hi, target)."""
        flat = list(zip(self.edge_lo.tolist(), self.edge_hi.tolist(), self.edge_to.tolist()))
        off = self.edge_off.tolist()
        return tuple(tuple(flat[off[s]:off[s + 1]]) for s in range(self.n_states))

    @functools.cached_property
    def eps(self) -> tuple[tuple[int, ...], ...]:
        """Per state, its epsilon targets."""
        to = self.eps_to.tolist()
        off = self.eps_off.tolist()
        return tuple(tuple(to[off[s]:off[s + 1]]) for s in range(self.n_states))

    def epsilon_closure(self, states: frozenset[int] | set[int]) -> frozenset[int]:
        """All states reachable from `states` by epsilon edges alone."""
        off, to = self.eps_off, self.eps_to
        seen = set(states)
        stack = list(states)
        while stack:
            s = stack.pop()
            for t in to[off[s]:off[s + 1]].tolist():
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
        return frozenset(seen)

    def matches(self, data: bytes) -> bool:
        """Whether the NFA accepts exactly `data` (a direct simulation, for tests and oracles)."""
        edges = self.edges
        current = self.epsilon_closure({self.start})
        for byte in data:
            nxt = {t for s in current for lo, hi, t in edges[s] if lo <= byte <= hi}
            if not nxt:
                return False
            current = self.epsilon_closure(nxt)
        return self.accept in current


@dataclass(frozen=True, eq=False)
class _Fragment:
    """The states and edges of one sub-expression between local states 0 (entry) and 1 (exit);
    its inner states are local 2 .. 2 + n_inner - 1. Placed by renumbering."""

    n_inner: int
    src: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    to: np.ndarray
    eps_src: np.ndarray
    eps_to: np.ndarray

    @classmethod
    def of_edges(cls, n_inner: int, edges: list[tuple[int, int, int, int]]) -> _Fragment:
        table = np.array(edges, dtype=np.int64).reshape(-1, 4)
        none = np.zeros(0, dtype=np.int64)
        return cls(n_inner, table[:, 0], table[:, 1], table[:, 2], table[:, 3], none, none)


@functools.lru_cache(maxsize=1024)
def _class_fragment(ranges: tuple[tuple[int, int], ...]) -> _Fragment:
    """The fragment of a character class. Sequences sharing a leading byte range share the
    state after it, keeping `.` small."""
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
    return _Fragment.of_edges(len(prefix_state), edges)


@functools.lru_cache(maxsize=1024)
def _literal_fragment(data: bytes) -> _Fragment:
    """The fragment of a literal: a chain of one state per inner byte boundary."""
    chain = [0, *range(2, len(data) + 1), 1]
    return _Fragment.of_edges(len(data) - 1,
                              [(chain[i], b, b, chain[i + 1]) for i, b in enumerate(data)])


class IdentityKey:
    """A cache key that compares its node by identity (and keeps it alive, so its id is not
    reused while cached): for caches of results derived from one IR object."""

    __slots__ = ("node",)

    def __init__(self, node: Node) -> None:
        self.node = node

    def __hash__(self) -> int:
        return id(self.node)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IdentityKey) and other.node is self.node


@functools.lru_cache(maxsize=512)
def _composite_fragment(key: IdentityKey, limits: Limits, depth: int) -> _Fragment:
    """The fragment of a closed sub-expression, built once and placed at each use."""
    b = _Builder(limits, None, depth)
    b.states(2)
    b.build(key.node, 0, 1)
    src, lo, hi, to, eps_src, eps_to = b.arrays()
    return _Fragment(b.n - 2, src, lo, hi, to, eps_src, eps_to)


_MAX_NESTING = 32
"""Fragments nest (a fragment's sub-expressions have fragments of their own) this deep at
most, so that building them never recurses far."""


@functools.lru_cache(maxsize=256)
def _automaton_edges(dfa: DFATable) -> tuple[np.ndarray, ...]:
    """The byte-range edges (source, lo, hi, target) of `dfa` over runs of equal class, and
    its accepting states."""
    bc = dfa.byte_class
    starts = np.flatnonzero(np.concatenate(([True], bc[1:] != bc[:-1])))
    ends = np.concatenate((starts[1:], [256])) - 1
    targets = dfa.transitions[:, bc[starts]]
    q, r = np.nonzero(targets >= 0)
    return q, starts[r], ends[r], targets[q, r].astype(np.int64), np.flatnonzero(dfa.accepting)


def _same(a: Node, b: Node) -> bool:
    """Whether two nodes are one sub-expression: the same object, or equal leaves."""
    return a is b or (type(a) is type(b) and type(a) in (Literal, CharClass, RuleRef) and a == b)


def _repeated_items(node: Node) -> tuple[Node, ...]:
    item = node.item  # type: ignore[union-attr]
    return item.items if type(item) is Seq else (item,)  # type: ignore[union-attr]


def _separated_lists(items: tuple[Node, ...]) -> list[tuple[int, int]]:
    """The places (j, k) where items[j - k:j] are the last k items of the body of
    items[j] = (S X)* (unbounded, may be absent), k as large as possible: there X (S X)* is
    built with one copy of X, which S leads back to, so the automaton of a separated list
    (object members, array elements) has no second copy of an element to merge away."""
    found: list[tuple[int, int]] = []
    taken = 0
    for j in range(1, len(items)):
        node = items[j]
        if type(node) is not Repeat or node.min != 0 or node.max is not None:
            continue
        loop = _repeated_items(node)
        k = 0
        while (k < min(len(loop), j - taken) and
               _same(items[j - k - 1], loop[len(loop) - k - 1])):
            k += 1
        if k:
            found.append((j, k))
            taken = j + 1
    return found


def _shared(root: Node) -> tuple[set[int], dict[int, int]]:
    """The composite sub-expressions that occur more than once in `root` (a DAG), by id; and
    per repetition (S X)* that follows an X somewhere (`_separated_lists`), the length of X."""
    seen: set[int] = set()
    shared: set[int] = set()
    splits: dict[int, int] = {}
    stack = [root]
    while stack:
        n = stack.pop()
        kind = type(n)
        if kind is not Seq and kind is not Choice and kind is not Repeat and kind is not Automaton:
            continue
        if id(n) in seen:
            shared.add(id(n))
            continue
        seen.add(id(n))
        if not len(seen) & 4095:
            deadline.check()
        if kind is Seq:
            stack.extend(n.items)  # type: ignore[union-attr]
            for j, k in _separated_lists(n.items):  # type: ignore[union-attr]
                splits.setdefault(id(n.items[j]), k)  # type: ignore[union-attr]
        elif kind is Choice:
            stack.extend(n.alternatives)  # type: ignore[union-attr]
        elif kind is Repeat:
            stack.append(n.item)  # type: ignore[union-attr]
    return shared, splits


def _closed(node: Node, shared: set[int], memo: dict[int, bool]) -> bool:
    """Whether `node` contains no rule reference and no composite sub-expression of `shared`
    (`memo` keeps the answers by id): then a fragment of it builds exactly what building it in
    place would, since nothing inside it is shared with the rest of the expression."""
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        n, ready = stack.pop()
        if id(n) in memo:
            continue
        kids = children(n)
        if ready:
            memo[id(n)] = all(memo[id(k)] and id(k) not in shared for k in kids)
        elif not kids:
            memo[id(n)] = type(n) is not RuleRef
        else:
            stack.append((n, True))
            stack.extend((k, False) for k in kids)
    return memo[id(node)]


class _Builder:
    """Edges accumulate as Python lists of single edges plus numpy blocks of many. A closed
    sub-expression (see `_closed`) that is used more than once (shared, or the item of a
    repetition) is built once as a fragment and placed at each use: its states are numbered
    there, and `arrays` renumbers the edges of all copies of one fragment in one block
    (`placed`: per fragment, its single copies' entry, exit and first inner state, and the
    arrays of those of repetitions)."""

    def __init__(self, limits: Limits, calls: dict[str, int] | None, depth: int = 0) -> None:
        self.depth = depth
        self.n = 0
        self.src: list[int] = []
        self.lo: list[int] = []
        self.hi: list[int] = []
        self.to: list[int] = []
        self.eps_src: list[int] = []
        self.eps_to: list[int] = []
        self.blocks: list[tuple[np.ndarray, ...]] = []
        self.eps_blocks: list[tuple[np.ndarray, np.ndarray]] = []
        self.limits = limits
        self.calls = calls or {}
        self.closed: dict[int, bool] = {}
        self.shared: set[int] = set()
        self.splits: dict[int, int] = {}
        self.loops: dict[tuple[int, int], tuple[int, int]] = {}
        self.placed: dict[int, tuple[_Fragment, list[int], list[int], list[int],
                                     list[tuple[np.ndarray, ...]]]] = {}

    def states(self, n: int) -> int:
        """Add `n` states; the first one's index."""
        first = self.n
        if first + n > self.limits.max_nfa_states:
            raise self.limits.exceeded("max_nfa_states", self.limits.max_nfa_states + 1,
                                       "NFA states")
        self.n = first + n
        return first

    def eps(self, s: int, t: int) -> None:
        self.eps_src.append(s)
        self.eps_to.append(t)

    def build(self, node: Node, start: int, end: int) -> None:
        """Add states so that the language of `node` leads from `start` to `end`.

        An explicit work stack rather than recursion, so nesting depth is bounded by memory only.
        """
        shared, self.splits = _shared(node)
        self.shared = shared
        entries: dict[tuple[int, int], int] = {}
        work: list[tuple[Node, int, int]] = [(node, start, end)]
        while work:
            deadline.check()
            node, s, e = work.pop()
            kind = type(node)
            if kind is Repeat and id(node) in self.splits:
                self.eps(s, self._loop(node, e, work)[0])  # type: ignore[arg-type]
                continue
            if id(node) in shared:
                entry = entries.get((id(node), e))
                if entry is not None:
                    self.eps(s, entry)
                    continue
                entry = entries[(id(node), e)] = self.states(1)
                self.eps(s, entry)
                s = entry
                if self._reusable(node):
                    self._place(self._fragment(node), [s], [e])
                    continue
            if kind is Literal or kind is CharClass:
                self._leaf(node, s, e)  # type: ignore[arg-type]
            elif kind is Seq:
                items = node.items  # type: ignore[union-attr]
                if not items:
                    self.eps(s, e)
                    continue
                first = self.states(len(items) - 1)
                points = [s, *range(first, first + len(items) - 1), e]
                skipped = 0
                for j, k in _separated_lists(items):
                    if self.splits.get(id(items[j])) == k:
                        # X (S X)* is the loop's X entry.
                        self.eps(points[j - k], self._loop(items[j], points[j + 1], work)[1])
                        skipped |= ((1 << (k + 1)) - 1) << (j - k)
                for i, item in enumerate(items):
                    if not skipped >> i & 1:
                        work.append((item, points[i], points[i + 1]))
            elif kind is Choice:
                alts = node.alternatives  # type: ignore[union-attr]
                first = self.states(len(alts))
                for i, alt in enumerate(alts):
                    self.eps(s, first + i)
                    work.append((alt, first + i, e))
            elif kind is Repeat:
                self._repeat(node, s, e, work)  # type: ignore[arg-type]
            elif kind is Automaton:
                self._automaton(node, s, e)  # type: ignore[arg-type]
            elif kind is RuleRef and node.name in self.calls:  # type: ignore[union-attr]
                symbol = CALL + self.calls[node.name]  # type: ignore[union-attr]
                self.src.append(s)
                self.lo.append(symbol)
                self.hi.append(symbol)
                self.to.append(e)
            else:
                raise GrammarError(f"cannot lower IR node {type(node).__name__} to an NFA")

    def _loop(self, node: Repeat, e: int, work: list[tuple[Node, int, int]]) -> tuple[int, int]:
        """(head, X entry) of the loop of (S X)* = `node` ending at e, built on first use: the
        head leads to e and through S to X, whose end is the head."""
        key = (id(node), e)
        if key not in self.loops:
            items = _repeated_items(node)
            cut = len(items) - self.splits[id(node)]
            head, entry = self.states(2), self.n - 1
            self.eps(head, e)
            self._chain(items[:cut], head, entry, work)
            self._chain(items[cut:], entry, head, work)
            self.loops[key] = (head, entry)
        return self.loops[key]

    def _chain(self, items: Sequence[Node], s: int, e: int,
               work: list[tuple[Node, int, int]]) -> None:
        """Queue `items` in sequence from s to e."""
        if not items:
            self.eps(s, e)
            return
        first = self.states(len(items) - 1)
        points = [s, *range(first, first + len(items) - 1), e]
        work.extend((item, points[i], points[i + 1]) for i, item in enumerate(items))

    def _leaf(self, node: Literal | CharClass, s: int, e: int) -> None:
        if type(node) is Literal:
            data = node.data  # type: ignore[union-attr]
            if len(data) == 1:
                self.src.append(s)
                self.lo.append(data[0])
                self.hi.append(data[0])
                self.to.append(e)
                return
            inner = range(self.states(len(data) - 1), self.n)
            self.src.append(s)
            self.src.extend(inner)
            self.to.extend(inner)
            self.to.append(e)
            self.lo.extend(data)
            self.hi.extend(data)
            return
        self._place(_class_fragment(node.ranges), [s], [e])  # type: ignore[union-attr]

    def _reusable(self, node: Node) -> bool:
        """Whether a composite sub-expression is built once as a fragment and placed at each
        use: it is closed and not an automaton (already spliced as a block)."""
        return (type(node) is not Automaton and self.depth < _MAX_NESTING
                and _closed(node, self.shared, self.closed))

    def _fragment(self, node: Node) -> _Fragment:
        if type(node) is Literal:
            return _literal_fragment(node.data)  # type: ignore[union-attr]
        if type(node) is CharClass:
            return _class_fragment(node.ranges)  # type: ignore[union-attr]
        return _composite_fragment(IdentityKey(node), self.limits, self.depth + 1)

    def _place(self, fragment: _Fragment, starts: Sequence[int] | np.ndarray,
               ends: Sequence[int] | np.ndarray) -> None:
        """Copies of a fragment, the i-th from starts[i] to ends[i]: their states now, their
        edges when `arrays` renumbers all copies of the fragment at once."""
        copies, n_inner = len(starts), fragment.n_inner
        base = self.states(n_inner * copies)
        if id(fragment) not in self.placed:
            self.placed[id(fragment)] = (fragment, [], [], [], [])
        _, entries, exits, firsts, repeated = self.placed[id(fragment)]
        if copies == 1:
            entries.append(int(starts[0]))
            exits.append(int(ends[0]))
            firsts.append(base)
        else:
            repeated.append((np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64),
                             base + n_inner * np.arange(copies, dtype=np.int64)))

    def _placed_blocks(self) -> None:
        """The edges of every placed fragment copy, one block per fragment."""
        for fragment, entries, exits, firsts, repeated in self.placed.values():
            columns = [np.array(c, dtype=np.int64) for c in (entries, exits, firsts)]
            if repeated:
                columns = [np.concatenate([c, *(r[i] for r in repeated)])
                           for i, c in enumerate(columns)]
            table = np.empty((len(columns[0]), fragment.n_inner + 2), dtype=np.int64)
            table[:, 0], table[:, 1] = columns[0], columns[1]
            table[:, 2:] = columns[2][:, None] + np.arange(fragment.n_inner, dtype=np.int64)
            copies = len(table)
            self.blocks.append((table[:, fragment.src].ravel(), np.tile(fragment.lo, copies),
                                np.tile(fragment.hi, copies), table[:, fragment.to].ravel()))
            if len(fragment.eps_src):
                self.eps_blocks.append((table[:, fragment.eps_src].ravel(),
                                        table[:, fragment.eps_to].ravel()))
        self.placed.clear()

    def _automaton(self, node: Automaton, s: int, e: int) -> None:
        dfa = node.dfa
        q, lo, hi, t, accepting = _automaton_edges(dfa)
        base = self.states(dfa.n_states)
        self.eps(s, base + dfa.start)
        self.blocks.append((q + base, lo, hi, t + base))
        self.eps_blocks.append((accepting + base, np.full(len(accepting), e, dtype=np.int64)))

    def _repeat(self, node: Repeat, s: int, e: int, work: list[tuple[Node, int, int]]) -> None:
        if node.min > self.limits.max_repeat or (node.max or 0) > self.limits.max_repeat:
            raise self.limits.exceeded(
                "max_repeat", max(node.min, node.max or 0), "repetition count"
            )
        unbounded = node.max is None
        n_points = node.min + 1 if unbounded else node.max + 1  # type: ignore[operator]
        first = self.states(n_points - 1 + (2 if unbounded else 0))
        # Point 0 is s and point i > 0 is first + i - 1; copy i leads from point i to i + 1.
        points = [s, *range(first, first + n_points - 1)]
        starts, ends = points[:-1], points[1:]
        if unbounded:
            loop_in, loop_out = first + n_points - 1, first + n_points
            self.eps(points[-1], loop_in)
            self.eps(loop_in, e)
            self.eps(loop_out, loop_in)
            starts.append(loop_in)
            ends.append(loop_out)
        else:
            exits = points[node.min:]
            self.eps_src.extend(exits)
            self.eps_to.extend([e] * len(exits))
        item = node.item
        if len(starts) > 1 and (type(item) in (Literal, CharClass) or self._reusable(item)):
            self._place(self._fragment(item), starts, ends)
            return
        work.extend(zip([item] * len(starts), starts, ends))

    def arrays(self) -> tuple[np.ndarray, ...]:
        """(src, lo, hi, to, eps_src, eps_to) of every edge added."""
        self._placed_blocks()
        blocks = [(np.array(self.src, dtype=np.int64), np.array(self.lo, dtype=np.int64),
                   np.array(self.hi, dtype=np.int64), np.array(self.to, dtype=np.int64)),
                  *self.blocks]
        eps_blocks = [(np.array(self.eps_src, dtype=np.int64),
                       np.array(self.eps_to, dtype=np.int64)), *self.eps_blocks]
        return (*(np.concatenate(c) for c in zip(*blocks)),
                *(np.concatenate(c) for c in zip(*eps_blocks)))


def build_nfa(node: Node, limits: Limits = DEFAULT_LIMITS,
              calls: dict[str, int] | None = None) -> NFA:
    """The Thompson NFA of an IR expression (fullmatch semantics); references to the rules
    named in `calls` become call edges (CALL + index), any other reference is an error."""
    b = _Builder(limits, calls)
    start = b.states(2)
    b.build(node, start, start + 1)
    src, lo, hi, to, eps_src, eps_to = b.arrays()
    return NFA.from_arrays(b.n, src, lo, hi, to, eps_src, eps_to, start, start + 1)
