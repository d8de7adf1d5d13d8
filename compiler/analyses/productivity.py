"""Productive and nullable rules (least fixpoints), and the `unproductive` error.

A rule is productive when it can derive at least one finite string of terminals. References to
undefined rules count as productive here, so one missing definition is reported once (as
`undefined-rule`), not again at every rule that uses it.
"""
from __future__ import annotations

from ..diagnostics import Diagnostic
from ..ir import Automaton, CharClass, Grammar, Literal, Node, Repeat, RuleRef, Seq, references
from ..limits import Limits
from .common import diagnostic, fold, nullable_node, nullable_rules, rule_fixpoint

__all__ = ["analyse_productivity", "nullable_node", "nullable_rules", "productive_node",
           "productive_rules"]


def productive_node(node: Node, productive: set[str], defined: set[str] | None = None) -> bool:
    """Whether `node` can derive a finite string, given the productive rules (names not in
    `defined`, when given, count as productive)."""

    def combine(n: Node, kids: list[bool]) -> bool:
        if isinstance(n, Literal):
            return True
        if isinstance(n, CharClass):
            return bool(n.ranges)
        if isinstance(n, Automaton):
            return not n.dfa.is_empty_language
        if isinstance(n, RuleRef):
            return n.name in productive or (defined is not None and n.name not in defined)
        if isinstance(n, Repeat):
            return n.min == 0 or kids[0]
        return all(kids) if isinstance(n, Seq) else any(kids)

    return fold(node, combine)


def productive_rules(grammar: Grammar) -> set[str]:
    """Names of the rules that can derive a finite string of terminals."""
    defined = set(grammar.by_name)
    return rule_fixpoint(grammar, lambda body, done: productive_node(body, done, defined))


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
