"""Thompson NFA over bytes, built from the grammar IR.

Invariants:
- State 0..n-1; `start` and the single `accept` state are valid indices; `accept` has no
  outgoing edges.
- `edges[s]` holds (lo, hi, target) byte ranges with 0 <= lo <= hi <= 255, or call edges
  (CALL + r, CALL + r, target) that match one whole derivation of rule r (only in the rule
  automata of the pushdown path, built with `calls`); `eps[s]` holds epsilon targets. Character classes are expanded to their UTF-8 byte sequences, so the NFA
  matches byte strings, and only valid UTF-8 for every class and literal that came from text.
- Every fragment is entered through a state of its own, so a composite sub-expression that
  occurs several times in the expression DAG (the same object) and leads to the same end state
  is built once and entered by epsilon edges from each use: shared suffixes, such as the rest of
  an object after any of its optional members, stay linear in size.
- The number of states never exceeds `Limits.max_nfa_states` (checked while building).
"""
from __future__ import annotations

import functools
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
from .limits import DEFAULT_LIMITS, Limits
from .utf8 import utf8_sequences

CALL = 256
"""Edge symbols from CALL up are rule calls: CALL + r calls rule r."""


@dataclass(frozen=True)
class NFA:
    """A byte-level NFA: per-state byte-range edges and epsilon edges, one start, one accept."""

    edges: tuple[tuple[tuple[int, int, int], ...], ...]
    eps: tuple[tuple[int, ...], ...]
    start: int
    accept: int

    @property
    def n_states(self) -> int:
        return len(self.edges)

    def epsilon_closure(self, states: frozenset[int] | set[int]) -> frozenset[int]:
        """All states reachable from `states` by epsilon edges alone."""
        seen = set(states)
        stack = list(states)
        while stack:
            for t in self.eps[stack.pop()]:
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
        return frozenset(seen)

    def matches(self, data: bytes) -> bool:
        """Whether the NFA accepts exactly `data` (a direct simulation, for tests and oracles)."""
        current = self.epsilon_closure({self.start})
        for byte in data:
            nxt = {t for s in current for lo, hi, t in self.edges[s] if lo <= byte <= hi}
            if not nxt:
                return False
            current = self.epsilon_closure(nxt)
        return self.accept in current


@functools.lru_cache(maxsize=1024)
def _class_template(ranges: tuple[tuple[int, int], ...]) -> tuple[int, tuple[tuple[int, int, int, int], ...]]:
    """The states and edges that match a character class between states 0 and 1: (number of
    inner states, numbered from 2; edges (source, lo, hi, target)). Sequences sharing a leading
    byte range share the state after it, keeping `.` small."""
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
    return len(prefix_state), tuple(edges)


@functools.lru_cache(maxsize=256)
def _automaton_edges(dfa: DFATable) -> tuple[tuple[tuple[int, int, int], ...], ...]:
    """Per state of `dfa`, its byte-range edges (lo, hi, target) over runs of equal class."""
    bc = dfa.byte_class
    starts = np.flatnonzero(np.concatenate(([True], bc[1:] != bc[:-1])))
    ends = np.concatenate((starts[1:], [256])) - 1
    targets = dfa.transitions[:, bc[starts]]
    q, r = np.nonzero(targets >= 0)
    flat = list(zip(starts[r].tolist(), ends[r].tolist(), targets[q, r].tolist()))
    cuts = np.searchsorted(q, np.arange(dfa.n_states + 1)).tolist()
    return tuple(tuple(flat[cuts[i]:cuts[i + 1]]) for i in range(dfa.n_states))


def _shared(root: Node) -> set[int]:
    """The composite sub-expressions that occur more than once in `root` (a DAG)."""
    seen: set[int] = set()
    shared: set[int] = set()
    stack = [root]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            if isinstance(n, (Seq, Choice, Repeat, Automaton)):
                shared.add(id(n))
            continue
        seen.add(id(n))
        stack.extend(children(n))
    return shared


class _Builder:
    def __init__(self, limits: Limits, calls: dict[str, int] | None) -> None:
        self.edges: list[list[tuple[int, int, int]]] = []
        self.eps: list[list[int]] = []
        self.limits = limits
        self.calls = calls or {}

    def state(self) -> int:
        if len(self.edges) >= self.limits.max_nfa_states:
            raise self.limits.exceeded("max_nfa_states", len(self.edges) + 1, "NFA states")
        self.edges.append([])
        self.eps.append([])
        return len(self.edges) - 1

    def build(self, node: Node, start: int, end: int) -> None:
        """Add states so that the language of `node` leads from `start` to `end`.

        An explicit work stack rather than recursion, so nesting depth is bounded by memory only.
        """
        shared = _shared(node)
        entries: dict[tuple[int, int], int] = {}
        work: list[tuple[Node, int, int]] = [(node, start, end)]
        while work:
            node, s, e = work.pop()
            if id(node) in shared:
                entry = entries.get((id(node), e))
                if entry is not None:
                    self.eps[s].append(entry)
                    continue
                entry = entries[(id(node), e)] = self.state()
                self.eps[s].append(entry)
                s = entry
            if isinstance(node, Literal):
                cur = s
                for i, b in enumerate(node.data):
                    nxt = e if i == len(node.data) - 1 else self.state()
                    self.edges[cur].append((b, b, nxt))
                    cur = nxt
            elif isinstance(node, CharClass):
                self._char_class(node, s, e)
            elif isinstance(node, Seq):
                if not node.items:
                    self.eps[s].append(e)
                    continue
                cur = s
                for i, item in enumerate(node.items):
                    nxt = e if i == len(node.items) - 1 else self.state()
                    work.append((item, cur, nxt))
                    cur = nxt
            elif isinstance(node, Choice):
                for alt in node.alternatives:
                    a = self.state()
                    self.eps[s].append(a)
                    work.append((alt, a, e))
            elif isinstance(node, Repeat):
                self._repeat(node, s, e, work)
            elif isinstance(node, Automaton):
                self._automaton(node, s, e)
            elif isinstance(node, RuleRef) and node.name in self.calls:
                symbol = CALL + self.calls[node.name]
                self.edges[s].append((symbol, symbol, e))
            else:
                raise GrammarError(f"cannot lower IR node {type(node).__name__} to an NFA")

    def states(self, n: int) -> int:
        """Add `n` states; the first one's index."""
        first = len(self.edges)
        if first + n > self.limits.max_nfa_states:
            raise self.limits.exceeded("max_nfa_states", self.limits.max_nfa_states + 1,
                                       "NFA states")
        self.edges.extend([] for _ in range(n))
        self.eps.extend([] for _ in range(n))
        return first

    def _char_class(self, node: CharClass, s: int, e: int) -> None:
        n, template = _class_template(node.ranges)
        local = [s, e, *range(self.states(n), len(self.edges))] if n else [s, e]
        for src, lo, hi, dst in template:
            self.edges[local[src]].append((lo, hi, local[dst]))

    def _automaton(self, node: Automaton, s: int, e: int) -> None:
        dfa = node.dfa
        edges = _automaton_edges(dfa)
        base = self.states(dfa.n_states)
        self.eps[s].append(base + dfa.start)
        for q, rows in enumerate(edges):
            if rows:
                self.edges[base + q] = [(lo, hi, base + t) for lo, hi, t in rows]
        for q in np.flatnonzero(dfa.accepting).tolist():
            self.eps[base + q].append(e)

    def _repeat(self, node: Repeat, s: int, e: int, work: list[tuple[Node, int, int]]) -> None:
        if node.min > self.limits.max_repeat or (node.max or 0) > self.limits.max_repeat:
            raise self.limits.exceeded(
                "max_repeat", max(node.min, node.max or 0), "repetition count"
            )
        cur = s
        for _ in range(node.min):
            nxt = self.state()
            work.append((node.item, cur, nxt))
            cur = nxt
        if node.max is None:
            loop_in, loop_out = self.state(), self.state()
            self.eps[cur].append(loop_in)
            self.eps[loop_in].append(e)
            work.append((node.item, loop_in, loop_out))
            self.eps[loop_out].append(loop_in)
            return
        for _ in range(node.max - node.min):
            nxt = self.state()
            self.eps[cur].append(e)
            work.append((node.item, cur, nxt))
            cur = nxt
        self.eps[cur].append(e)


def build_nfa(node: Node, limits: Limits = DEFAULT_LIMITS,
              calls: dict[str, int] | None = None) -> NFA:
    """The Thompson NFA of an IR expression (fullmatch semantics); references to the rules
    named in `calls` become call edges (CALL + index), any other reference is an error."""
    b = _Builder(limits, calls)
    start, accept = b.state(), b.state()
    b.build(node, start, accept)
    return NFA(
        edges=tuple(tuple(es) for es in b.edges),
        eps=tuple(tuple(es) for es in b.eps),
        start=start,
        accept=accept,
    )
