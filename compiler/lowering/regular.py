"""Grammar → one expression, for grammars whose language needs no stack.

A grammar with no recursion among the rules reachable from its start is regular: the start
rule's body, with every rule reference standing for that rule's body, is a single expression
that the DFA path compiles. `inline_regular` gives the body and the bodies references stand
for; `flat_ir.flatten` follows the references as it flattens (shared, not copied, so the DAG
is the grammar's size and no rewritten copy of the IR is built; the NFA and DFA budgets bound
what expanding it may cost). Recursive grammars are reported with the cycle that makes them so.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from ..ir.graph import check_references, find_cycle
from ..ir.nodes import Grammar, Node
from ..support.errors import GrammarError

__all__ = ["Inlined", "inline_regular"]


class Inlined(NamedTuple):
    """A regular grammar as one expression: `root`, each reference in it (and in the bodies)
    standing for the body `rules` gives its name."""

    root: Node
    rules: Mapping[str, Node]


def inline_regular(grammar: Grammar) -> Inlined:
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
    return Inlined(rules[grammar.start].body, {name: r.body for name, r in rules.items()})
