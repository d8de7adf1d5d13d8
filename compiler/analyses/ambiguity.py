"""Cheap ambiguity checks inside one choice: identical alternatives, and literal alternatives
that are prefixes of one another."""
from __future__ import annotations

from ..ir.nodes import (
    Automaton,
    CharClass,
    Choice,
    Grammar,
    Literal,
    Node,
    Repeat,
    RuleRef,
    TokenRef,
    walk,
)
from ..ir.summaries import fold
from ..support.diagnostics import Diagnostic
from ..support.limits import Limits
from .common import diagnostic, show_bytes

__all__ = ["analyse_identical_alternatives", "analyse_overlapping_literals", "structural_keys"]


def structural_keys(node: Node, table: dict[tuple[object, ...], int]) -> dict[int, int]:
    """For every sub-expression of `node` (by id), an integer equal for structurally equal
    expressions (spans ignored) across every call sharing `table`; no recursion, unlike `==`."""
    memo: dict[int, int] = {}

    def combine(n: Node, kids: list[int]) -> int:
        payload: object = None
        if isinstance(n, Literal):
            payload = n.data
        elif isinstance(n, CharClass):
            payload = n.ranges
        elif isinstance(n, Automaton):
            payload = id(n.dfa)
        elif isinstance(n, TokenRef):
            payload = (n.ids, n.texts, n.negated)
        elif isinstance(n, Repeat):
            payload = (n.min, n.max)
        elif isinstance(n, RuleRef):
            payload = n.name
        return table.setdefault((type(n).__name__, payload, tuple(kids)), len(table))

    fold(node, combine, memo)
    return memo


def _describe(node: Node) -> str:
    if isinstance(node, Literal):
        return f" ({show_bytes(node.data)})"
    if isinstance(node, RuleRef):
        return f" ({node.name})"
    return ""


def analyse_identical_alternatives(grammar: Grammar, limits: Limits) -> list[Diagnostic]:
    """`identical-alternatives` at every alternative equal to an earlier one of its choice."""
    table: dict[tuple[object, ...], int] = {}
    out = []
    for rule in grammar.rules:
        keys = structural_keys(rule.body, table)
        for node in walk(rule.body):
            if not isinstance(node, Choice):
                continue
            first: dict[int, int] = {}
            for i, alt in enumerate(node.alternatives):
                earlier = first.setdefault(keys[id(alt)], i)
                if earlier != i:
                    out.append(diagnostic(
                        "identical-alternatives",
                        f"alternative {i + 1}{_describe(alt)} is identical to alternative"
                        f" {earlier + 1} of this choice: it adds nothing to the language and"
                        " makes every text it matches ambiguous; remove one",
                        alt.span or node.span or rule.span))
    return out


def analyse_overlapping_literals(grammar: Grammar, limits: Limits) -> list[Diagnostic]:
    """`overlapping-literals` where a literal alternative of a choice is a proper prefix of
    another literal alternative of the same choice (reported once per shorter literal)."""
    out = []
    for rule in grammar.rules:
        for node in walk(rule.body):
            if not isinstance(node, Choice):
                continue
            lits: dict[bytes, Literal] = {}
            position: dict[bytes, int] = {}
            for index, alt in enumerate(node.alternatives):
                if isinstance(alt, Literal):
                    lits.setdefault(alt.data, alt)
                    position.setdefault(alt.data, index)
            ordered = sorted(lits)
            for i, short in enumerate(ordered):
                longer = []
                for other in ordered[i + 1:]:
                    if not other.startswith(short):
                        break
                    longer.append(other)
                if not longer:
                    continue
                first = min(longer, key=position.__getitem__)
                more = f" (and {len(longer) - 1} more)" if len(longer) > 1 else ""
                out.append(diagnostic(
                    "overlapping-literals",
                    f"alternative {show_bytes(short)} is a prefix of alternative"
                    f" {show_bytes(first)}{more}: harmless for the DFA, but ambiguous for a"
                    " tokenizer or a parser that commits to the first alternative that"
                    " matches; list the longer one first or make them distinct",
                    lits[short].span or node.span or rule.span))
    return out
