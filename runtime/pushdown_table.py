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
  rule of its source state; `rule_start[r]` is a state of rule r; `start_rule` is a rule.
- Trimmed: every state is reachable from its rule's start and can reach an accepting state of
  its rule, counting calls as passable; every rule accepts some string. With these, every
  configuration the Earley recognizer keeps is a viable prefix.
Derived here (not trusted from the caller): `nullable` per rule; `ends` per state (its rule can
finish from it without another byte); `follow`, the bytes that can come right after a completed
rule (bool[n_rules, 256]) with `can_end` (the rule may end the text).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .dfa_table import _frozen


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
    nullable: np.ndarray = field(init=False)
    ends: np.ndarray = field(init=False)
    follow: np.ndarray = field(init=False)
    can_end: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        for name, dtype in (("byte_class", np.int32), ("transitions", np.int32),
                            ("accepting", np.bool_), ("call_offsets", np.int32),
                            ("call_rule", np.int32), ("call_next", np.int32),
                            ("state_rule", np.int32), ("rule_start", np.int32)):
            object.__setattr__(self, name, _frozen(getattr(self, name), dtype, name))
        self._check_shapes()
        self._check_trimmed()
        nullable = self._nullable()
        first, ends = self._first_of_state(nullable)
        follow, can_end = self._follow(first, ends)
        for name, a in (("nullable", nullable), ("ends", ends), ("follow", follow),
                        ("can_end", can_end)):
            a.flags.writeable = False
            object.__setattr__(self, name, a)

    @property
    def n_states(self) -> int:
        return int(self.transitions.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.transitions.shape[1])

    @property
    def n_rules(self) -> int:
        return int(self.rule_start.shape[0])

    def calls_of(self, state: int) -> list[tuple[int, int]]:
        """(called rule, state after the call) for each call edge of `state`."""
        lo, hi = int(self.call_offsets[state]), int(self.call_offsets[state + 1])
        return list(zip(self.call_rule[lo:hi].tolist(), self.call_next[lo:hi].tolist()))

    def nbytes(self) -> int:
        """Memory held by the tables."""
        return int(sum(getattr(self, f).nbytes for f in (
            "byte_class", "transitions", "accepting", "call_offsets", "call_rule", "call_next",
            "state_rule", "rule_start", "nullable", "ends", "follow", "can_end")))

    def _check_shapes(self) -> None:
        bc, tr = self.byte_class, self.transitions
        if bc.shape != (256,):
            raise ValueError(f"byte_class must have shape (256,), got {bc.shape}")
        if tr.ndim != 2 or tr.shape[0] < 1 or tr.shape[1] < 1:
            raise ValueError(f"transitions must be 2-D and non-empty, got shape {tr.shape}")
        n, k = tr.shape
        r = self.rule_start.shape[0]
        if r < 1 or self.rule_start.ndim != 1 or len(self.rule_names) != r:
            raise ValueError("rule_start and rule_names must name the same, non-zero rules")
        if bc.min() < 0 or bc.max() >= k:
            raise ValueError(f"byte_class values must lie in [0, {k})")
        if tr.min() < -1 or tr.max() >= n:
            raise ValueError(f"transitions must lie in [-1, {n})")
        if self.accepting.shape != (n,) or self.state_rule.shape != (n,):
            raise ValueError(f"accepting and state_rule must have shape ({n},)")
        off = self.call_offsets
        m = self.call_rule.shape[0]
        if (off.shape != (n + 1,) or off[0] != 0 or off[-1] != m or (np.diff(off) < 0).any()
                or self.call_next.shape != (m,)):
            raise ValueError("call_offsets must run from 0 to len(call_rule), non-decreasing")
        if m and (self.call_rule.min() < 0 or self.call_rule.max() >= r
                  or self.call_next.min() < 0 or self.call_next.max() >= n):
            raise ValueError("call_rule or call_next out of range")
        if self.state_rule.min() < 0 or self.state_rule.max() >= r:
            raise ValueError(f"state_rule must lie in [0, {r})")
        if self.rule_start.min() < 0 or self.rule_start.max() >= n:
            raise ValueError(f"rule_start must lie in [0, {n})")
        if (self.state_rule[self.rule_start] != np.arange(r)).any():
            raise ValueError("rule_start[r] must be a state of rule r")
        if not isinstance(self.start_rule, (int, np.integer)) or not 0 <= self.start_rule < r:
            raise ValueError(f"start_rule must be a rule in [0, {r})")
        object.__setattr__(self, "start_rule", int(self.start_rule))
        src = np.repeat(np.arange(n), k).reshape(n, k)
        moved = tr >= 0
        if (self.state_rule[tr[moved]] != self.state_rule[src[moved]]).any():
            raise ValueError("a byte transition leaves its rule")
        call_src = np.repeat(np.arange(n), np.diff(off))
        if (self.state_rule[self.call_next] != self.state_rule[call_src]).any():
            raise ValueError("a call edge leaves its rule")

    def _edges(self) -> list[list[int]]:
        out: list[list[int]] = []
        tr = self.transitions.tolist()
        for s in range(self.n_states):
            lo, hi = int(self.call_offsets[s]), int(self.call_offsets[s + 1])
            out.append(sorted({t for t in tr[s] if t >= 0} | set(self.call_next[lo:hi].tolist())))
        return out

    def _check_trimmed(self) -> None:
        edges = self._edges()
        reach = np.zeros(self.n_states, dtype=bool)
        stack = self.rule_start.tolist()
        reach[stack] = True
        while stack:
            for t in edges[stack.pop()]:
                if not reach[t]:
                    reach[t] = True
                    stack.append(t)
        preds: list[list[int]] = [[] for _ in range(self.n_states)]
        for s, ts in enumerate(edges):
            for t in ts:
                preds[t].append(s)
        live = self.accepting.copy()
        stack = np.flatnonzero(live).tolist()
        while stack:
            for p in preds[stack.pop()]:
                if not live[p]:
                    live[p] = True
                    stack.append(p)
        if not reach.all():
            raise ValueError(f"not trimmed: {int((~reach).sum())} states unreachable")
        if not live.all():
            raise ValueError(f"not trimmed: {int((~live).sum())} states cannot reach acceptance")

    def _nullable(self) -> np.ndarray:
        """Rules that derive the empty string: their start reaches acceptance by calls of
        nullable rules alone (least fixpoint)."""
        nullable = np.zeros(self.n_rules, dtype=bool)
        changed = True
        while changed:
            changed = False
            for r in range(self.n_rules):
                if nullable[r]:
                    continue
                seen = {int(self.rule_start[r])}
                stack = list(seen)
                while stack and not nullable[r]:
                    s = stack.pop()
                    if self.accepting[s]:
                        nullable[r] = changed = True
                    for callee, t in self.calls_of(s):
                        if nullable[callee] and t not in seen:
                            seen.add(t)
                            stack.append(t)
        return nullable

    def _first_of_state(self, nullable: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per state: the bytes that can come next inside its rule (descending into calls),
        and whether the rule can end with no more bytes (calls of nullable rules skipped)."""
        n = self.n_states
        class_bytes = np.zeros((self.n_classes, 256), dtype=bool)
        class_bytes[self.byte_class, np.arange(256)] = True
        direct = (self.transitions >= 0).astype(np.uint8) @ class_bytes.astype(np.uint8) > 0
        first = direct.copy()
        ends = self.accepting.copy()
        changed = True
        while changed:
            changed = False
            for s in range(n):
                for callee, t in self.calls_of(s):
                    new = first[s] | first[int(self.rule_start[callee])]
                    if nullable[callee]:
                        new |= first[t]
                        if ends[t] and not ends[s]:
                            ends[s] = changed = True
                    if (new != first[s]).any():
                        first[s] = new
                        changed = True
        return first, ends

    def _follow(self, first: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        follow = np.zeros((self.n_rules, 256), dtype=bool)
        can_end = np.zeros(self.n_rules, dtype=bool)
        can_end[self.start_rule] = True
        changed = True
        while changed:
            changed = False
            for s in range(self.n_states):
                caller = int(self.state_rule[s])
                for callee, t in self.calls_of(s):
                    new = follow[callee] | first[t]
                    end = bool(can_end[callee])
                    if ends[t]:
                        new |= follow[caller]
                        end = end or bool(can_end[caller])
                    if end != can_end[callee] or (new != follow[callee]).any():
                        follow[callee] = new
                        can_end[callee] = end
                        changed = True
        return follow, can_end
