"""Bounds on the work and memory of one matcher, so that no grammar and no output can make a
step hang or a sequence exhaust memory.

A DFA step is constant work whatever the grammar, so these bound pushdown grammars: each step
(one `accept_token`, `accept_string` or `fill_next_token_bitmask`, one jump-forward byte)
counts its Earley operations (an item added or found already there, a caller looked at while
completing a rule), and the recognizer's arrays hold a bounded number of items. Going past
either raises `MatcherBudgetExceeded` and changes nothing. The compiler's `Limits` has the
same two fields, whose values a compiled grammar carries; `Matcher(compiled, limits=...)`
overrides them per sequence.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from .errors import MatcherBudgetExceeded


@dataclass(frozen=True)
class RuntimeLimits:
    """`max_step_work`: Earley operations in one step (about 2-5 ns each; JSON grammars use
    tens to thousands). `max_earley_items`: items the recognizer may hold, 12 bytes each
    (a sequence keeps its sets for as long as it runs: about one to ten items per byte on
    JSON)."""

    max_step_work: int = 20_000_000
    max_earley_items: int = 1 << 24

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"RuntimeLimits.{f.name} must be a positive int, got {value!r}")

    def exceeded(self, name: str, what: str) -> MatcherBudgetExceeded:
        """The error for `what` going past the bound `name`."""
        value = getattr(self, name)
        return MatcherBudgetExceeded(
            f"{what} exceeds the budget {name}={value}; raise it with Limits({name}=...) when "
            f"compiling or Matcher(compiled, limits=RuntimeLimits({name}=...)) "
            f"(CLI: --limit {name}=...); the matcher is unchanged", name, value)


DEFAULT_RUNTIME_LIMITS = RuntimeLimits()
