"""Explicit, configurable bounds on compilation, reported by name when exceeded."""
from __future__ import annotations

from dataclasses import dataclass, fields

from .errors import BudgetExceeded


@dataclass(frozen=True)
class Limits:
    """Bounds for one compilation. Every field is a hard limit; exceeding one raises
    `BudgetExceeded` naming the field, its value and the measured size."""

    max_pattern_length: int = 1_000_000
    max_repeat: int = 10_000
    max_nfa_states: int = 1_000_000
    max_dfa_states: int = 20_000
    max_schema_depth: int = 2_000
    max_schema_rules: int = 20_000

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Limits.{f.name} must be a positive int, got {value!r}")

    def exceeded(self, name: str, measured: int | str, what: str) -> BudgetExceeded:
        """The error for `what` exceeding the bound `name` (a field of Limits)."""
        value = getattr(self, name)
        return BudgetExceeded(
            f"{what}: {measured} exceeds the budget Limits.{name}={value}; "
            f"raise it with limits=Limits({name}=...) (CLI: --limit {name}=...)",
            code="budget",
        )


DEFAULT_LIMITS = Limits()
