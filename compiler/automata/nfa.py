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
- A composite sub-expression that occurs several times in the expression DAG (the same
  object) and leads to the same end state is built once and entered by epsilon edges from
  each use: shared suffixes, such as the rest of an object after any of its optional members,
  stay linear in size.
- A separated list X (S X)* (S may be empty; X one node or several items of a sequence) has
  one copy of X, which S leads back to; every other use of that (S X)* object with the same
  end state enters the same loop. Object members and array elements are such lists, so their
  subset construction meets no two copies of an element to merge away.
- The number of states never exceeds `Limits.max_nfa_states`.
The construction itself is the kernel of `thompson.py`, over the arrays of `flat_ir.FlatIR`;
`start` is 0 and `accept` 1.
"""
from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...runtime.csr import csr_order
from ..ir.nodes import Node
from ..support import deadline
from ..support.limits import DEFAULT_LIMITS, Limits
from .flat_ir import NO_INLINE, FlatIR, flatten
from .thompson import thompson


def _csr(n: int, src: np.ndarray, *columns: np.ndarray) -> tuple[np.ndarray, ...]:
    """(offsets int64[n + 1], the columns ordered by source state)."""
    off, order = csr_order(n, src)
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
        edge_off, lo, hi, to = _csr(n, np.ascontiguousarray(src, dtype=np.int64),
                                    np.asarray(lo), np.asarray(hi), np.asarray(to))
        eps_off, eps_to = _csr(n, np.ascontiguousarray(eps_src, dtype=np.int64),
                               np.asarray(eps_to))
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


def build_nfa(node: Node, limits: Limits = DEFAULT_LIMITS,
              calls: dict[str, int] | None = None,
              inline: Mapping[str, Node] = NO_INLINE) -> NFA:
    """The Thompson NFA of an IR expression (fullmatch semantics); references to the rules
    named in `calls` become call edges (CALL + index), those to the rules of `inline` stand
    for their bodies, any other reference is an error."""
    return _built(flatten(node, limits, calls or {}, inline), limits)[0]


def build_rule_nfa(flat: FlatIR, limits: Limits = DEFAULT_LIMITS) -> NFA:
    """The NFA of a rule body flattened with every reference a call (`flatten` with `calls`
    None): call edge CALL + i calls the rule `flat.called[i]`."""
    return _built(flat, limits)[0]


def build_counted_nfa(flat: FlatIR, limits: Limits, counted_from: int
                      ) -> tuple[NFA, np.ndarray]:
    """`build_rule_nfa`, but with every repetition `c{m,n}` of a one-byte class, n - m >=
    `counted_from`, built as m copies and a counted loop: (NFA, int64[q, 2] (loop state,
    bound n - m)). The NFA alone repeats the loop without bound; `counted.py` adds the
    counts."""
    return _built(flat, limits, counted_from)


def _built(flat: FlatIR, limits: Limits, counted_from: int = 0) -> tuple[NFA, np.ndarray]:
    n, edges, eps, counted = thompson(
        flat.kind, flat.kid_off, flat.kids, flat.arg, flat.shared, flat.list_off, flat.lists,
        flat.data, flat.edges, flat.accepting, limits.max_nfa_states, counted_from)
    if n < 0:
        raise limits.exceeded("max_nfa_states", limits.max_nfa_states + 1, "NFA states")
    deadline.check()
    nfa = NFA.from_arrays(n, edges[:, 0], edges[:, 1], edges[:, 2], edges[:, 3], eps[:, 0],
                          eps[:, 1], 0, 1)
    return nfa, counted
