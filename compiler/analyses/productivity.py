"""Productive and nullable rules (least fixpoints), and the `unproductive` error.

A rule is productive when it can derive at least one finite string of terminals. References to
undefined rules count as productive here, so one missing definition is reported once (as
`undefined-rule`), not again at every rule that uses it.
"""
from __future__ import annotations

from ..support import deadline
from ..support.diagnostics import Diagnostic
from ..ir.nodes import (Automaton, CharClass, Choice, Grammar, Literal, Node, Repeat, RuleRef, Seq,
                  references)
from ..support.limits import Limits
from .common import diagnostic, nullable_node, nullable_rules, rule_fixpoint

__all__ = ["analyse_productivity", "nullable_node", "nullable_rules", "productive_node",
           "productive_rules"]


def productive_node(node: Node, productive: set[str], defined: set[str] | None = None) -> bool:
    """Whether `node` can derive a finite string, given the productive rules (names not in
    `defined`, when given, count as productive). Evaluated left to right and short-circuited:
    a choice stops at its first productive alternative, a sequence at its first unproductive
    item, and `x{0,n}` is productive without looking at x; shared sub-expressions are
    evaluated once, without recursion."""

    def leaf(n: Node) -> bool | None:
        kind = type(n)
        if kind is Literal:
            return True
        if kind is CharClass:
            return bool(n.ranges)  # type: ignore[union-attr]
        if kind is Automaton:
            return not n.dfa.is_empty_language  # type: ignore[union-attr]
        if kind is RuleRef:
            return n.name in productive or (  # type: ignore[union-attr]
                defined is not None and n.name not in defined)  # type: ignore[union-attr]
        if kind is Repeat and n.min == 0:  # type: ignore[union-attr]
            return True
        return None

    top = leaf(node)
    if top is not None:
        return top
    memo: dict[int, bool] = {}
    stack: list[list] = [[node, 0]]
    while True:
        frame = stack[-1]
        n, i = frame
        kind = type(n)
        kids = (n.items if kind is Seq else n.alternatives if kind is Choice  # type: ignore[union-attr]
                else (n.item,))  # type: ignore[union-attr]
        every = kind is not Choice
        result: bool | None = None
        while i < len(kids):
            k = kids[i]
            value = memo.get(id(k))
            if value is None:
                value = leaf(k)
            if value is None:
                frame[1] = i
                stack.append([k, 0])
                break
            if value != every:
                result = value
                break
            i += 1
        else:
            result = every
        if result is None:
            continue
        memo[id(n)] = result
        if not len(memo) & 4095:
            deadline.check()
        stack.pop()
        if not stack:
            return result


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
