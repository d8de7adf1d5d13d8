"""Grammar → one expression, for grammars whose language needs no stack.

A grammar with no recursion among the rules reachable from its start is regular: substituting
every rule reference by the rule's (already substituted) body gives a single IR expression that
the DFA path compiles. Bodies are shared, not copied, so the result is a DAG whose size is the
grammar's; the NFA and DFA budgets bound what expanding it may cost. Recursive grammars are
reported with the cycle that makes them so. Each shared sub-expression is visited once.
"""
from __future__ import annotations

from ..ir.graph import check_references, dependency_order, find_cycle
from ..ir.nodes import Grammar, Node
from ..ir.rewrite import substitute
from ..support import deadline
from ..support.errors import GrammarError

__all__ = ["inline_regular"]


def inline_regular(grammar: Grammar) -> Node:
    """The start rule as one expression with every reference inlined.

    Raises GrammarError for a missing start rule, an undefined reference, or recursion
    (code `recursive-grammar`: such grammars need the pushdown runtime).
    """
    check_references(grammar)
    rules = grammar.by_name
    cycle = find_cycle(grammar)
    if cycle is not None:
        span = rules[cycle[0]].span
        raise GrammarError(
            "recursive grammar: " + " -> ".join(cycle)
            + "; its language is not regular, so it compiles for the pushdown runtime, not to a DFA",
            line=span.line if span else None, column=span.column if span else None,
            source=span.source if span else None, code="recursive-grammar",
        )
    resolved: dict[str, Node] = {}
    for name in dependency_order(grammar):
        deadline.check()
        resolved[name] = substitute(rules[name].body, resolved)
    return resolved[grammar.start]
