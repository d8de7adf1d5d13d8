"""Rule references: undefined rules, a missing start rule, rules nothing reaches."""
from __future__ import annotations

import difflib

from ..ir.graph import reachable_rules
from ..ir.nodes import Grammar, references
from ..support.diagnostics import Diagnostic
from ..support.limits import Limits
from .common import diagnostic

__all__ = ["analyse_references", "analyse_start", "analyse_unused"]


def _suggestion(name: str, defined: list[str]) -> str:
    close = difflib.get_close_matches(name, defined, n=1, cutoff=0.75)
    return f"; did you mean '{close[0]}'?" if close else ""


def analyse_references(grammar: Grammar, limits: Limits) -> list[Diagnostic]:
    """`undefined-rule` at every reference to a rule that is not defined."""
    defined = [rule.name for rule in grammar.rules]
    out = []
    for rule in grammar.rules:
        for ref in references(rule.body):
            if ref.name not in grammar.by_name:
                out.append(diagnostic(
                    "undefined-rule",
                    f"rule '{ref.name}' is not defined (referenced in '{rule.name}')"
                    + _suggestion(ref.name, defined),
                    ref.span or rule.span))
    return out


def analyse_start(grammar: Grammar, limits: Limits) -> list[Diagnostic]:
    """`missing-start` when the start rule is not defined."""
    if grammar.start in grammar.by_name:
        return []
    defined = [rule.name for rule in grammar.rules]
    if defined:
        shown = ", ".join(f"'{n}'" for n in defined[:5]) + (", ..." if len(defined) > 5 else "")
        detail = f"; the rules defined are {shown}"
    else:
        detail = "; the grammar defines no rules"
    return [diagnostic("missing-start", f"start rule '{grammar.start}' is not defined{detail}")]


def analyse_unused(grammar: Grammar, limits: Limits) -> list[Diagnostic]:
    """`unused-rule` for every defined rule not reachable from the start rule (nothing when
    the start rule itself is missing: that is reported once, as `missing-start`)."""
    if grammar.start not in grammar.by_name:
        return []
    reachable = set(reachable_rules(grammar))
    return [
        diagnostic("unused-rule",
                   f"rule '{rule.name}' is never used: it is not reachable from the start rule"
                   f" '{grammar.start}'", rule.span)
        for rule in grammar.rules if rule.name not in reachable
    ]
