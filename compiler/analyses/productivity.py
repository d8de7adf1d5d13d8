"""The `unproductive` error, from the productive rules of `ir.summaries`.

A rule is productive when it can derive at least one finite string of terminals. References to
undefined rules count as productive here, so one missing definition is reported once (as
`undefined-rule`), not again at every rule that uses it.
"""
from __future__ import annotations

from ..ir.nodes import Grammar, references
from ..ir.summaries import productive_rules
from ..support.diagnostics import Diagnostic
from ..support.limits import Limits
from .common import diagnostic

__all__ = ["analyse_productivity"]


def analyse_productivity(grammar: Grammar, limits: Limits) -> list[Diagnostic]:
    """`unproductive` for every rule that derives no finite string, naming the unproductive
    rules it depends on; for the start rule, also that the language is empty."""
    productive = productive_rules(grammar)
    out = []
    for rule in grammar.rules:
        if rule.name in productive:
            continue
        stuck = list(dict.fromkeys(
            ref.name for ref in references(rule.body)
            if ref.name in grammar.by_name and ref.name not in productive))
        if stuck:
            names = ", ".join(f"'{n}'" for n in stuck[:5]) + (", ..." if len(stuck) > 5 else "")
            why = ("every derivation needs it again, so none ever finishes"
                   if stuck == [rule.name] else
                   f"every derivation needs {names}, which derive{'s' if len(stuck) == 1 else ''}"
                   " no finite string either")
        else:
            why = "its body matches nothing"
        message = f"rule '{rule.name}' is unproductive: it derives no finite string ({why})"
        if rule.name == grammar.start:
            message += "; it is the start rule, so the language is empty"
        out.append(diagnostic("unproductive", message, rule.span))
    return out
