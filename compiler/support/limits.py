"""Explicit, configurable bounds on compilation, reported by name when exceeded."""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

from ...runtime.run_limits import RuntimeLimits
from .errors import BudgetExceeded


@dataclass(frozen=True)
class Limits:
    """Bounds for one compilation. Every field is a hard limit; exceeding one raises
    `BudgetExceeded` naming the field, its value and the measured size (see specs/limits.md).

    `max_pattern_length` bounds the text of every input (regex, GBNF, Lark, JSON Schema), in
    characters; `max_rules` the rules of a grammar; `max_dfa_states` each automaton (a DFA,
    one rule's automaton, one product); `max_inline_states` a first attempt that has a cheaper
    fallback (a grammar's single DFA, a rule with other rules inlined into it), past which every
    rule but the small leaf rules is kept as a rule instead; `max_pushdown_states` all the rule automata of a
    recursive grammar together; `max_compile_seconds` (a float) the wall time of one compile;
    `max_table_bytes` the memory of the compiled tables (automata and precomputed token sets);
    `max_named_tokens` the text tokens a grammar's token references name;
    `max_unordered_properties` the listed properties of one JSON object read in any order
    (`property_order="any"`: a state per subset of them); `max_unique_values` the values the
    items of a `uniqueItems` array may take (a state per subset of them);
    `max_anyof_subsets` the branches of an `anyOf` beside an unevaluated keyword that may hold
    together (a conjunction per set of them).
    `max_step_work` and `max_earley_items` bound the matchers of the compiled grammar (see
    `RuntimeLimits`): the Earley work of one step and the items a recognizer holds.
    """

    max_pattern_length: int = 1_000_000
    max_repeat: int = 10_000
    max_nfa_states: int = 1_000_000
    max_dfa_states: int = 20_000
    max_inline_states: int = 4_096
    max_pushdown_states: int = 200_000
    max_schema_depth: int = 2_000
    max_schema_rules: int = 20_000
    max_rules: int = 100_000
    max_compile_seconds: float = 60.0
    max_table_bytes: int = 2**30
    max_named_tokens: int = 4_096
    max_unordered_properties: int = 10
    max_unique_values: int = 10
    max_anyof_subsets: int = 4
    max_step_work: int = RuntimeLimits.max_step_work
    max_earley_items: int = RuntimeLimits.max_earley_items

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "max_compile_seconds":
                if isinstance(value, bool) or not isinstance(value, (int, float)) \
                        or not math.isfinite(value) or value <= 0:
                    raise ValueError(f"Limits.{f.name} must be a positive number of seconds, "
                                     f"got {value!r}")
            elif not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Limits.{f.name} must be a positive int, got {value!r}")

    def runtime(self) -> RuntimeLimits:
        """The bounds a compiled grammar gives its matchers."""
        return RuntimeLimits(self.max_step_work, self.max_earley_items)

    def exceeded(self, name: str, measured: int | float | str, what: str, *,
                 shown: str | None = None) -> BudgetExceeded:
        """The error for `what` exceeding the bound `name` (a field of Limits), carrying `name`,
        the bound and `measured` as fields; `shown` is how the message writes `measured` (by
        default as it is: a number, or a text such as "more than 100" where no exact count is
        known)."""
        value = getattr(self, name)
        return BudgetExceeded(
            f"{what}: {measured if shown is None else shown} exceeds the budget "
            f"Limits.{name}={value}; "
            f"raise it with limits=Limits({name}=...) (CLI: --limit {name}=...)",
            code="budget",
            limit=name,
            value=value,
            measured=measured,
        )


DEFAULT_LIMITS = Limits()
