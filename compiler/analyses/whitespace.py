"""Whitespace: unbounded runs of it (`unbounded-whitespace`), and JSON-like grammars that never
allow any (`json-no-whitespace`).

Whitespace here is tab, line feed, vertical tab, form feed, carriage return and space (the
characters of `\\s` in ASCII).
"""
from __future__ import annotations

from ..ir.graph import reachable_rules
from ..ir.nodes import (
    Automaton,
    CharClass,
    Grammar,
    Literal,
    Node,
    Repeat,
    RuleRef,
    TokenRef,
    walk,
)
from ..ir.summaries import fold, rule_fixpoint
from ..support.diagnostics import Diagnostic
from ..support.limits import Limits
from .common import WHITESPACE_BYTES, diagnostic

__all__ = ["analyse_json_whitespace", "analyse_unbounded_whitespace", "whitespace_only"]


def _class_is_whitespace(node: CharClass) -> bool:
    return all(hi - lo < 32 and all(c in WHITESPACE_BYTES for c in range(lo, hi + 1))
               for lo, hi in node.ranges)


def _terminal_kind(node: Node) -> str | None:
    """'ws' for a terminal of whitespace only, 'other' for any other terminal, else None."""
    if isinstance(node, Literal):
        return "ws" if all(b in WHITESPACE_BYTES for b in node.data) else "other"
    if isinstance(node, CharClass):
        if not node.ranges:
            return None
        return "ws" if _class_is_whitespace(node) else "other"
    if isinstance(node, Automaton):
        return None if node.dfa.is_empty_language else "other"
    if isinstance(node, TokenRef):
        return "other"
    return None


def _reaches(grammar: Grammar, kind: str) -> set[str]:
    """Rules from which a terminal of `kind` is reachable (through references)."""

    def holds(body: Node, done: set[str]) -> bool:
        return any(_terminal_kind(n) == kind or (isinstance(n, RuleRef) and n.name in done)
                   for n in walk(body))

    return rule_fixpoint(grammar, holds)


def _terminals(node: Node, ws_rules: set[str], other_rules: set[str],
               memo: dict[int, tuple[bool, bool]] | None = None) -> tuple[bool, bool]:
    """(whether a whitespace terminal is reachable from `node`, whether another one is)."""

    def combine(n: Node, kids: list[tuple[bool, bool]]) -> tuple[bool, bool]:
        if isinstance(n, RuleRef):
            return n.name in ws_rules, n.name in other_rules
        kind = _terminal_kind(n)
        return (kind == "ws" or any(k[0] for k in kids),
                kind == "other" or any(k[1] for k in kids))

    return fold(node, combine, memo)


def whitespace_only(node: Node, ws_rules: set[str], other_rules: set[str]) -> bool:
    """Whether every terminal reachable from `node` is whitespace (and there is one), given the
    rules that reach whitespace terminals and those that reach other terminals."""
    ws, other = _terminals(node, ws_rules, other_rules)
    return ws and not other


def analyse_unbounded_whitespace(grammar: Grammar, limits: Limits) -> list[Diagnostic]:
    """`unbounded-whitespace` for every repetition without an upper bound whose item matches
    only whitespace (through rule references too)."""
    ws_rules, other_rules = _reaches(grammar, "ws"), _reaches(grammar, "other")
    out = []
    for rule in grammar.rules:
        memo: dict[int, tuple[bool, bool]] = {}
        _terminals(rule.body, ws_rules, other_rules, memo)
        for node in walk(rule.body):
            if isinstance(node, Repeat) and node.max is None and memo[id(node.item)] == (True, False):
                bound = f"{{{node.min},{max(node.min, 20)}}}"
                out.append(diagnostic(
                    "unbounded-whitespace",
                    "unbounded whitespace: this repetition matches only whitespace and has no"
                    " upper bound, so a model can keep emitting spaces or newlines until its"
                    f" token budget runs out; bound it, e.g. {bound}", node.span or rule.span))
    return out


def analyse_json_whitespace(grammar: Grammar, limits: Limits) -> list[Diagnostic]:
    """`json-no-whitespace` when the literals of the reachable rules contain `{`, `:` and `"`
    (or `[` and `,`) but no literal contains whitespace and no class is made of whitespace."""
    names = reachable_rules(grammar) or [rule.name for rule in grammar.rules]
    seen: set[int] = set()
    first: Literal | None = None
    for name in names:
        for node in walk(grammar.by_name[name].body):
            if isinstance(node, Literal):
                seen.update(node.data)
                if first is None and (b"{" in node.data or b"[" in node.data):
                    first = node
            if _terminal_kind(node) == "ws" or (
                    isinstance(node, Literal) and any(b in WHITESPACE_BYTES for b in node.data)):
                return []
    json_like = {ord("{"), ord(":"), ord('"')} <= seen or {ord("["), ord(",")} <= seen
    if not json_like:
        return []
    span = first.span if first is not None else None
    return [diagnostic(
        "json-no-whitespace",
        "this grammar looks like JSON but allows no whitespace anywhere (no literal holds a"
        " space, tab or newline and no character class is whitespace only): models trained"
        " on pretty-printed JSON are forced to write compact JSON, which can lower output"
        " quality; allow bounded optional whitespace, e.g. ws ::= [ \\t\\n]{0,20}",
        span)]
