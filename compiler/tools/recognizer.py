"""One compiled language run over bytes from any position: the walks `extract` and `diff` share.

`Recognizer(automaton, limits)` wraps a DFA or rule automata. `first_bytes()` marks the bytes a
match can begin with; `longest(data, p)` is the end of the longest non-empty match starting at
p (-1: none), walking until no continuation is viable; `prefix(data)` how many bytes of `data`
are a viable prefix and whether the whole is a match.

A DFA walks its transitions (`dfa.kernels.longest_match`, `walk_bytes`); rule automata run
the runtime's Earley recognizer (a table whose rules are built lazily is completed first),
one byte per step, each within `RuntimeLimits` (`MatcherBudgetExceeded` past them).
"""
from __future__ import annotations

from typing import TypeAlias

import numpy as np

from ...runtime.compiled import CompiledGrammar
from ...runtime.dfa.kernels import longest_match
from ...runtime.dfa.table import DFATable
from ...runtime.pushdown.assembly import complete
from ...runtime.pushdown.earley import EarleyArrays, earley_start, next_bytes, push_bytes
from ...runtime.pushdown.table import PushdownTable
from ...runtime.run_limits import DEFAULT_RUNTIME_LIMITS, RuntimeLimits

__all__ = ["Automaton", "Recognizer"]

Automaton: TypeAlias = DFATable | PushdownTable


class Recognizer:
    """A compiled language, walked from any byte of a text (module docstring)."""

    def __init__(self, compiled: CompiledGrammar | Automaton,
                 limits: RuntimeLimits | None = None) -> None:
        automaton = compiled.automaton if isinstance(compiled, CompiledGrammar) else compiled
        if not isinstance(automaton, (DFATable, PushdownTable)):
            raise TypeError(f"expected a compiled grammar or its automaton, got "
                            f"{type(compiled).__name__}")
        if limits is None:
            limits = compiled.runtime_limits if isinstance(compiled, CompiledGrammar) \
                else DEFAULT_RUNTIME_LIMITS
        self.limits = limits
        self.dfa = automaton if isinstance(automaton, DFATable) else None
        if isinstance(automaton, PushdownTable):
            t = complete(automaton)
            self.g = t.kernel_args()
            self.n_states = t.n_states
            self.start = np.int32(t.rule_start[t.start_rule])

    def _begin(self) -> EarleyArrays:
        e = EarleyArrays.empty(self.n_states)
        e.limit(self.limits)
        e.run(self.limits, "the start", earley_start, self.g, self.start)
        return e

    def _push(self, e: EarleyArrays, arr: np.ndarray, q: int) -> bool:
        return bool(e.run(self.limits, f"byte {q}", push_bytes, self.g, arr, q, q + 1, 0)
                    == 1)

    def first_bytes(self) -> np.ndarray:
        """bool[256]: the bytes a non-empty match can begin with."""
        if self.dfa is not None:
            return self.dfa.transitions[self.dfa.start][self.dfa.byte_class] >= 0
        out = np.zeros(256, dtype=np.bool_)
        next_bytes(self.g, self._begin().kernel_args(), out)
        return out

    def longest(self, arr: np.ndarray, p: int) -> int:
        """The end of the longest non-empty match of arr[p:...], or -1."""
        if self.dfa is not None:
            d = self.dfa
            return int(longest_match(d.transitions, d.byte_class, d.accepting,
                                     np.int32(d.start), arr, p))
        e = self._begin()
        last = -1
        for q in range(p, len(arr)):
            if not self._push(e, arr, q):
                break
            if e.sets[e.n_sets - 1, 1] == 1:
                last = q + 1
        return last

    def prefix(self, data: bytes) -> tuple[int, bool]:
        """(how many bytes of `data` are a viable prefix, whether `data` is a match)."""
        arr = np.frombuffer(data, dtype=np.uint8)
        if self.dfa is not None:
            d, s = self.dfa, self.dfa.start
            for q in range(len(arr)):
                s = int(d.transitions[s, d.byte_class[arr[q]]])
                if s < 0:
                    return q, False
            return len(arr), bool(d.accepting[s])
        e = self._begin()
        for q in range(len(arr)):
            if not self._push(e, arr, q):
                return q, False
        return len(arr), bool(e.sets[e.n_sets - 1, 1] == 1)
