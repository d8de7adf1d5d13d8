"""Repetitions: bounds over `Limits.max_repeat`, and loops whose item can match nothing."""
from __future__ import annotations

from ..ir.nodes import Grammar, Repeat, walk
from ..ir.summaries import rule_summaries
from ..support.diagnostics import Diagnostic
from ..support.limits import Limits
from .common import diagnostic

__all__ = ["analyse_nullable_loops", "analyse_repeat_limits"]


def _bounds(node: Repeat) -> str:
    if node.max is None:
        return {0: "*", 1: "+"}.get(node.min, f"{{{node.min},}}")
    return "?" if (node.min, node.max) == (0, 1) else f"{{{node.min},{node.max}}}"


def analyse_repeat_limits(grammar: Grammar, limits: Limits) -> list[Diagnostic]:
    """`repeat-limit` for every repetition whose bound exceeds `limits.max_repeat` (frontends
    already reject these; this catches IR built by hand)."""
    out = []
    for rule in grammar.rules:
        for node in walk(rule.body):
            if isinstance(node, Repeat) and max(node.min, node.max or 0) > limits.max_repeat:
                error = limits.exceeded("max_repeat", max(node.min, node.max or 0),
                                        f"repetition count in {_bounds(node)}")
                out.append(diagnostic("repeat-limit", error.message, node.span or rule.span))
    return out


def analyse_nullable_loops(grammar: Grammar, limits: Limits) -> list[Diagnostic]:
    """`nullable-loop` for every repetition that may run more than once (max None or > 1)
    whose item can match the empty string, such as `(a?)*`."""
    _, summaries = rule_summaries(grammar, list(grammar.by_name))
    out = []
    for rule in grammar.rules:
        summary = summaries[rule.name]  # (productive, nullable, first, last) by node id
        for node in walk(rule.body):
            if not isinstance(node, Repeat) or (node.max is not None and node.max <= 1):
                continue
            if summary[id(node.item)][1]:
                out.append(diagnostic(
                    "nullable-loop",
                    f"the item of this repetition ({_bounds(node)}) can match the empty string,"
                    " so one text has many derivations (any number of empty iterations):"
                    " the language is unchanged, but a parser or pushdown matcher may loop"
                    " without consuming input or explode on the ambiguity; make the item"
                    " non-empty, e.g. (a)* instead of (a?)*", node.span or rule.span))
    return out
