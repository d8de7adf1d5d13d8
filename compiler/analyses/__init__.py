"""Analyses of the grammar IR: each takes a `Grammar` and `Limits` and returns diagnostics with
a stable code (see `grammask/specs/diagnostics.md`) and the span of the rule or node concerned.

`lint_grammar` runs them all and returns the findings sorted by position (findings without a
position last).
"""
from __future__ import annotations

from collections.abc import Callable

from ..ir.nodes import Grammar
from ..ir.summaries import nullable_rules, productive_rules
from ..support.diagnostics import SEVERITIES, Diagnostic
from ..support.limits import DEFAULT_LIMITS, Limits
from .ambiguity import analyse_identical_alternatives, analyse_overlapping_literals
from .common import CODES
from .loops import analyse_nullable_loops, analyse_repeat_limits
from .productivity import analyse_productivity
from .recursion import analyse_left_recursion, analyse_regularity
from .references import analyse_references, analyse_start, analyse_unused
from .size import analyse_size, analyse_stats, estimate_size
from .whitespace import analyse_json_whitespace, analyse_unbounded_whitespace

__all__ = [
    "ANALYSES", "CODES", "Analysis", "analyse_identical_alternatives", "analyse_json_whitespace",
    "analyse_left_recursion", "analyse_nullable_loops", "analyse_overlapping_literals",
    "analyse_productivity", "analyse_references", "analyse_regularity", "analyse_repeat_limits",
    "analyse_size", "analyse_start", "analyse_stats", "analyse_unbounded_whitespace",
    "analyse_unused", "estimate_size", "lint_grammar", "nullable_rules", "productive_rules",
    "sort_diagnostics",
]

Analysis = Callable[[Grammar, Limits], list[Diagnostic]]

ANALYSES: tuple[Analysis, ...] = (
    analyse_start,
    analyse_references,
    analyse_productivity,
    analyse_repeat_limits,
    analyse_unused,
    analyse_nullable_loops,
    analyse_unbounded_whitespace,
    analyse_size,
    analyse_identical_alternatives,
    analyse_overlapping_literals,
    analyse_json_whitespace,
    analyse_left_recursion,
    analyse_regularity,
    analyse_stats,
)


def sort_diagnostics(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """By line and column, then severity (errors first); diagnostics without a span last,
    keeping their order otherwise (the sort is stable)."""

    def key(d: Diagnostic) -> tuple[int, int, int, int]:
        rank = SEVERITIES.index(d.severity)
        if d.span is None:
            return 1, 0, 0, rank
        return 0, d.span.line, d.span.column, rank

    return sorted(diagnostics, key=key)


def lint_grammar(grammar: Grammar, limits: Limits = DEFAULT_LIMITS) -> list[Diagnostic]:
    """Every analysis of `grammar`, sorted by position."""
    found: list[Diagnostic] = []
    for analysis in ANALYSES:
        found.extend(analysis(grammar, limits))
    return sort_diagnostics(found)
