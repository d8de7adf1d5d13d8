"""The compiled form of a context-free grammar: one byte-level automaton per rule, with calls.

States of all rule automata share one numbering and one byte-class partition. A state moves on
a byte class to another state of the same rule (`transitions`, -1: no move), and on a call of a
rule to another state of the same rule once that rule has derived a string (`calls`, CSR).

Invariants (checked once in `__post_init__`, trusted by the Numba kernels afterwards):
- `byte_class` is int32[256] with values in [0, n_classes); `transitions` is C-contiguous
  int32[n_states, n_classes] with values in [-1, n_states).
- `call_offsets` is int32[n_states + 1], non-decreasing from 0 to len(call_rule);
  `call_rule` lies in [0, n_rules) and `call_next` in [0, n_states).
- `state_rule` is int32[n_states] in [0, n_rules); every move (byte or call) stays within the
  rule of its source state; `rule_start[r]` is a state of rule r (or -1, below); `start_rule`
  is a built rule.
- Trimmed: every state is reachable from its rule's start and can reach an accepting state of
  its rule, counting calls as passable; and, once every rule is built, by bytes and calls of
  rules that can themselves finish (every rule derives a finite string). With these, every
  configuration the Earley recognizer keeps is a viable prefix.
- Every array is C-contiguous and immutable (see `DFATable`); `rule_names` is a tuple of str.
- Token bounds: `rule_tokens` is int32[n_rules], -1 for a rule without one, else the most
  tokens that may begin inside an occurrence of the rule (`max_tokens`, see `earley.py`); a
  bounded rule calls no rule. `relax` is int32[n_states]: -1, or for a state of a bounded
  rule its *relaxed* copy, a state of the same rule (whose own `relax` is -1) that moves as
  it does but to copies, and not at all where accepting: where an occurrence has used its
  tokens, its items walk the copies, so the occurrence ends where it first can. Copies are reached
  only that way (they count as reachable for trimming).
- A rule may be not built yet (`rule_start` -1: no state is its; `assembly.py` builds rules as
  the recognizer reaches them). The table then carries the `source` that builds them, and the
  grammar-level facts below come from the compiler, which has the whole grammar.
Derived here when every rule is built (and then checked equal to the caller's, if given):
`nullable` per rule; `follow`, the bytes that can come right after a completed rule
(bool[n_rules, 256]) with `can_end` (the rule may end the text).

A table made as an extension of a checked one (`prior`, the lazy tables of `assembly.py`) is
checked in time linear in the states it appends (`_extends`): an extension costs its new
rules, not the whole table. Its facts stay the compiler's even when it builds the last rule;
`tests/runtime/test_lazy_rules.py` checks them equal to the derived ones.
"""
from __future__ import annotations

from dataclasses import InitVar, dataclass, field
from typing import Optional, Protocol

import numpy as np

from ..arrays import checked_array, immutable, same_prefix
from ..dfa.kernels import reach_and_live
from ..dfa.table import checked_state
from .derive import checked_moves, ends_fixpoint, propagate_or

_NO_RELAX = immutable(np.zeros(0, dtype=np.int32))


def _unpack(bits: np.ndarray) -> np.ndarray:
    return np.unpackbits(np.ascontiguousarray(bits).view(np.uint8), axis=1,
                         bitorder="little").astype(bool)


class RuleSource(Protocol):
    """What builds the rules of a table that has not built them all (`assembly.py`)."""

    def build(self, rule: int, ahead: bool = False) -> object:
        """Rule `rule`'s automaton, an `assembly.RuleAutomaton`; `ahead`: built ahead of need
        (a source may refuse those, raising)."""

    def byte_partition(self) -> np.ndarray | None:
        """int32[256], a partition of the bytes refining the byte classes of every rule this
        source builds, or None: an extension refines the table by it once, so later rules
        fit the table's classes (`assembly.py`). Only a hint: a rule that does not fit
        refines the table all the same."""


@dataclass(frozen=True, eq=False)
class PushdownTable:
    """Rule automata with calls: the tables the Earley kernels walk."""

    byte_class: np.ndarray
    transitions: np.ndarray
    accepting: np.ndarray
    call_offsets: np.ndarray
    call_rule: np.ndarray
    call_next: np.ndarray
    state_rule: np.ndarray
    rule_start: np.ndarray
    start_rule: int
    rule_names: tuple[str, ...]
    rule_tokens: np.ndarray | None = None
    relax: np.ndarray | None = None
    nullable: np.ndarray | None = None
    follow: np.ndarray | None = None
    can_end: np.ndarray | None = None
    source: RuleSource | None = field(default=None, repr=False)
    prior: InitVar[Optional["PushdownTable"]] = None

    def __post_init__(self, prior: PushdownTable | None = None) -> None:
        for name, dtype, ndim in (("byte_class", np.int32, 1), ("transitions", np.int32, 2),
                                  ("accepting", np.bool_, 1), ("call_offsets", np.int32, 1),
                                  ("call_rule", np.int32, 1), ("call_next", np.int32, 1),
                                  ("state_rule", np.int32, 1), ("rule_start", np.int32, 1)):
            object.__setattr__(self, name, checked_array(getattr(self, name), dtype, name, ndim))
        self._check_shapes()
        given = self._given_facts()
        if prior is not None and given is not None and self._extends(prior, given):
            return
        bits = self._check_moves()
        if self.complete:
            self._check_productive()
            derived = self._derived(bits)
            if given is not None and not all(np.array_equal(a, b) for a, b in zip(given, derived)):
                raise ValueError("nullable, follow and can_end differ from the rule automata's")
            given = derived
        elif given is None or self.source is None:
            raise ValueError("a table with rules not built needs nullable, follow, can_end "
                             "and the source that builds them")
        for name, a in zip(("nullable", "follow", "can_end"), given):
            object.__setattr__(self, name, immutable(a))

    def __reduce__(self) -> tuple:
        # Unpickling goes through the constructor: a loaded table is validated and re-derived.
        if not self.complete:
            raise TypeError("a table with rules not built cannot be pickled: build them first")
        return (PushdownTable, (self.byte_class, self.transitions, self.accepting,
                                self.call_offsets, self.call_rule, self.call_next,
                                self.state_rule, self.rule_start, self.start_rule,
                                self.rule_names, self.rule_tokens, self.relax))

    @property
    def complete(self) -> bool:
        """Whether every rule is built."""
        return bool((self.rule_start >= 0).all())

    def _given_facts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        if self.nullable is None and self.follow is None and self.can_end is None:
            return None
        r = self.n_rules
        facts = (checked_array(self.nullable, np.bool_, "nullable", 1),
                 checked_array(self.follow, np.bool_, "follow", 2),
                 checked_array(self.can_end, np.bool_, "can_end", 1))
        if facts[0].shape != (r,) or facts[1].shape != (r, 256) or facts[2].shape != (r,):
            raise ValueError(f"nullable, follow and can_end must have shapes ({r},), "
                             f"({r}, 256), ({r},)")
        return facts

    def _extends(self, prior: PushdownTable, given: tuple[np.ndarray, ...]) -> bool:
        """Whether this table is `prior` with states (of rules `prior` has not built) appended,
        checked in time linear in those states: `prior`'s rows, calls and facts first (at once
        for arrays that are `prior`'s own rows, `RowArena`), and the appended rows valid on
        their own, as the table of the rules they build (moves stay inside their rule, so
        the two parts cannot reach each other). The facts stay the compiler's, also once the
        extension builds the last rule (the tests check them against the derived ones).
        False: not such an extension (nothing set)."""
        if not isinstance(prior, PushdownTable) or prior.source is None or (
                self.source is None and not self.complete):
            return False
        n0, m0, n = prior.n_states, len(prior.call_rule), self.n_states
        tokens = None if self.rule_tokens is None else \
            checked_array(self.rule_tokens, np.int32, "rule_tokens", 1)
        relax = None if self.relax is None else checked_array(self.relax, np.int32, "relax", 1)
        built = prior.rule_start >= 0
        if n <= n0 or tokens is None or relax is None or relax.shape != (n,) or not (
                self.rule_names == prior.rule_names and self.start_rule == prior.start_rule
                and np.array_equal(self.byte_class, prior.byte_class)
                and np.array_equal(tokens, prior.rule_tokens)
                and all(same_prefix(a, b) for a, b in zip(given, (
                    prior.nullable, prior.follow, prior.can_end)))
                and all(same_prefix(getattr(self, f), getattr(prior, f)) for f in (
                    "transitions", "accepting", "state_rule", "call_offsets", "call_rule",
                    "call_next"))
                and same_prefix(relax, prior.relax)
                and np.array_equal(self.rule_start[built], prior.rule_start[built])
                and ((self.rule_start[~built] < 0) | (self.rule_start[~built] >= n0)).all()):
            return False
        new = np.flatnonzero(self.rule_start >= n0)

        def shifted(a: np.ndarray) -> np.ndarray:
            # Indices of appended states from 0; one into `prior`'s states out of range.
            return np.where(a < 0, a, np.where(a >= n0, a - n0, n - n0)).astype(np.int32)

        PushdownTable(  # raises ValueError where the appended rows break an invariant
            self.byte_class, shifted(self.transitions[n0:]), self.accepting[n0:],
            self.call_offsets[n0:] - np.int32(m0), self.call_rule[m0:],
            shifted(self.call_next[m0:]), self.state_rule[n0:],
            np.where(self.rule_start >= n0, self.rule_start - n0, -1).astype(np.int32),
            int(new[0]), self.rule_names, tokens, shifted(relax[n0:]),
            given[0], given[1], given[2], prior.source)
        for name, a in zip(("nullable", "follow", "can_end"), given):
            object.__setattr__(self, name, immutable(a))
        object.__setattr__(self, "rule_tokens", tokens)
        object.__setattr__(self, "relax", relax)
        return True

    def kernel_args(self) -> tuple[np.ndarray, ...]:
        """`g`, the table's arrays as the Earley kernels take them (`earley.py`); `relax`
        empty when no rule has a token bound, which `earley.live_state` tests first."""
        relax = self.relax if (self.rule_tokens >= 0).any() else _NO_RELAX
        return (self.transitions, self.byte_class, self.accepting, self.call_offsets,
                self.call_rule, self.call_next, self.state_rule, self.rule_start, self.nullable,
                relax, self.rule_tokens)

    @property
    def n_states(self) -> int:
        return int(self.transitions.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.transitions.shape[1])

    @property
    def n_rules(self) -> int:
        return int(self.rule_start.shape[0])

    def nbytes(self) -> int:
        """Memory held by the tables."""
        return int(sum(getattr(self, f).nbytes for f in (
            "byte_class", "transitions", "accepting", "call_offsets", "call_rule", "call_next",
            "state_rule", "rule_start", "rule_tokens", "relax", "nullable", "follow",
            "can_end")))

    def _check_shapes(self) -> None:
        bc, tr = self.byte_class, self.transitions
        if bc.shape != (256,):
            raise ValueError(f"byte_class must have shape (256,), got {bc.shape}")
        if tr.shape[0] < 1 or tr.shape[1] < 1:
            raise ValueError(f"transitions must be 2-D and non-empty, got shape {tr.shape}")
        n, k = tr.shape
        r = self.rule_start.shape[0]
        names = self.rule_names
        if not isinstance(names, tuple) or not all(isinstance(x, str) for x in names):
            raise TypeError("rule_names must be a tuple of str")
        if r < 1 or len(names) != r:
            raise ValueError("rule_start and rule_names must name the same, non-zero rules")
        if self.accepting.shape != (n,) or self.state_rule.shape != (n,):
            raise ValueError(f"accepting and state_rule must have shape ({n},)")
        m = self.call_rule.shape[0]
        if self.call_offsets.shape != (n + 1,) or self.call_next.shape != (m,):
            raise ValueError("call_offsets must run from 0 to len(call_rule), non-decreasing")
        object.__setattr__(self, "start_rule", checked_state(self.start_rule, r, "start_rule"))
        if self.rule_start[self.start_rule] < 0:
            raise ValueError("start_rule must be built")

    def _check_bounds(self) -> None:
        """`rule_tokens` and `relax` (None: no bounds) against the invariants above."""
        n, r = self.n_states, self.n_rules
        tokens = (np.full(r, -1, np.int32) if self.rule_tokens is None
                  else checked_array(self.rule_tokens, np.int32, "rule_tokens", 1))
        relax = (np.full(n, -1, np.int32) if self.relax is None
                 else checked_array(self.relax, np.int32, "relax", 1))
        if tokens.shape != (r,) or relax.shape != (n,):
            raise ValueError(f"rule_tokens and relax must have shapes ({r},) and ({n},)")
        if r and int(tokens.min()) < -1:
            raise ValueError("rule_tokens must be -1 or a count of tokens")
        if int(relax.min()) < -1 or int(relax.max()) >= n:
            raise ValueError(f"relax must lie in [-1, {n})")
        bounded = tokens[self.state_rule] >= 0
        has = relax >= 0
        to = relax[has]
        if (has & ~bounded).any() or (self.state_rule[to] != self.state_rule[has]).any() \
                or (relax[to] >= 0).any():
            raise ValueError("relax must map states of bounded rules to unrelaxed states of "
                             "the same rule")
        src = np.flatnonzero(has)
        moves = self.transitions[src]
        moves = np.where(self.accepting[src, None] | (moves < 0), -1, relax[moves])
        if not (np.array_equal(self.transitions[to], moves)
                and np.array_equal(self.accepting[to], self.accepting[src])):
            raise ValueError("a relaxed copy must move as its state does, to copies, and not "
                             "at all where accepting")
        if (np.diff(self.call_offsets)[bounded] > 0).any():
            raise ValueError("a rule with a token bound must call no rule")
        object.__setattr__(self, "rule_tokens", immutable(tokens))
        object.__setattr__(self, "relax", immutable(relax))

    def _call_sources(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_states), np.diff(self.call_offsets))

    def _check_moves(self) -> np.ndarray:
        """The bytes each state has a move on (uint64[n, 4]), after the index and trimmed
        checks."""
        n, k, r = self.n_states, self.n_classes, self.n_rules
        failed, leaving, off, to, bits = checked_moves(
            self.byte_class, self.transitions, self.call_offsets, self.call_rule,
            self.call_next, self.state_rule, self.rule_start)
        if failed:
            raise ValueError((
                f"byte_class values must lie in [0, {k})",
                f"transitions must lie in [-1, {n})",
                "call_offsets must run from 0 to len(call_rule), non-decreasing",
                "call_rule or call_next out of range",
                f"state_rule must lie in [0, {r})",
                f"rule_start must lie in [-1, {n})",
                "rule_start[r] must be a state of rule r, and every state's rule built")[failed - 1])
        if leaving:
            raise ValueError(f"{leaving} moves (byte or call) leave their rule")
        self._check_bounds()
        starts = np.concatenate([self.rule_start[self.rule_start >= 0],
                                 self.relax[self.relax >= 0]]).astype(np.int64)
        reach, live = reach_and_live(off, to, starts, self.accepting)
        if not reach.all():
            raise ValueError(f"not trimmed: {n - int(reach.sum())} states unreachable")
        if not live.all():
            raise ValueError(f"not trimmed: {n - int(live.sum())} states cannot reach acceptance")
        return bits

    def _check_productive(self) -> None:
        """Every state of a complete table can finish its rule by bytes and calls of rules
        that can finish: `ends_fixpoint` with each byte move a call of a rule that ends at
        once (one more state, accepting, as its start)."""
        n = self.n_states
        src, cls = np.nonzero(self.transitions >= 0)
        to = self.transitions[src, cls]
        sources = np.concatenate([self._call_sources(), src]).astype(np.int64)
        callee = np.concatenate([self.call_rule, np.full(len(src), self.n_rules, np.int32)])
        ends = ends_fixpoint(np.append(self.accepting, True), sources, callee,
                             np.concatenate([self.call_next, to]).astype(np.int32),
                             np.append(self.rule_start, np.int32(n)))
        if not ends[:n].all():
            rule = int(self.state_rule[np.flatnonzero(~ends[:n])[0]])
            raise ValueError(f"rule {self.rule_names[rule]!r} has states from which it cannot "
                             f"finish: a call it cannot return from (a rule that derives no "
                             f"finite string)")

    def _derived(self, bits: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(nullable, follow, can_end) of a complete table as least fixpoints over the call edges, from
        `bits`, the bytes each state has a move on.

        `ends[s]`: the rule can finish from s by calls of nullable rules alone, and a rule is
        nullable when its start ends; `first[s]`: the bytes that can come next from s inside
        its rule (descending into calls, skipping nullable ones); `follow[r]`: the bytes that
        can come right after rule r, and `can_end[r]` when the text may end after it.
        """
        src, callee, nxt = self._call_sources(), self.call_rule, self.call_next
        rstart = self.rule_start
        ends = ends_fixpoint(self.accepting, src, callee, nxt, rstart)
        nullable = ends[rstart]
        skips = nullable[callee]
        first = propagate_or(bits,
                             np.concatenate([rstart[callee], nxt[skips]]),
                             np.concatenate([src, src[skips]]))
        follow = np.zeros((self.n_rules, 4), dtype=np.uint64)
        np.bitwise_or.at(follow, callee, first[nxt])
        tail = ends[nxt]
        caller, called = self.state_rule[src][tail], callee[tail]
        follow = propagate_or(follow, caller, called)
        can_end = np.zeros((self.n_rules, 1), dtype=np.uint64)
        can_end[self.start_rule] = 1
        can_end = propagate_or(can_end, caller, called)[:, 0] != 0
        return nullable, _unpack(follow), can_end
