"""Recursion: left-recursive rules, and whether the grammar is regular (compiles to a DFA) or
recursive (compiles to rule automata for the pushdown runtime)."""
from __future__ import annotations

from collections import deque

from ...runtime.dfa.table import DFATable
from ..automata.build import ir_to_dfa
from ..ir.graph import cyclic_components, find_cycle, reachable_rules
from ..ir.nodes import (
    Automaton,
    CharClass,
    Grammar,
    Literal,
    Node,
    Repeat,
    RuleRef,
    Seq,
    TokenRef,
    walk,
)
from ..ir.summaries import fold, nullable_rules
from ..lowering.regular import inline_regular
from ..support.diagnostics import Diagnostic
from ..support.errors import BudgetExceeded, GrammarError
from ..support.limits import Limits
from .common import diagnostic, rule_span
from .size import estimate_size

__all__ = ["COMPILE_THRESHOLD", "analyse_left_recursion", "analyse_regularity", "left_refs"]

COMPILE_THRESHOLD = 20_000


def left_refs(node: Node, nullable: set[str]) -> frozenset[str]:
    """Rules that can be expanded first in `node`, before any input is consumed (references
    after a prefix that can match the empty string included)."""

    def combine(n: Node, kids: list[tuple[frozenset[str], bool]]) -> tuple[frozenset[str], bool]:
        if isinstance(n, (Literal, CharClass, TokenRef)):
            return frozenset(), False
        if isinstance(n, Automaton):
            return frozenset(), bool(n.dfa.accepting[n.dfa.start])
        if isinstance(n, RuleRef):
            return frozenset({n.name}), n.name in nullable
        if isinstance(n, Repeat):
            if n.max == 0:
                return frozenset(), True
            return kids[0][0], n.min == 0 or kids[0][1]
        if isinstance(n, Seq):
            firsts: set[str] = set()
            for refs, empty in kids:
                firsts |= refs
                if not empty:
                    return frozenset(firsts), False
            return frozenset(firsts), True
        return frozenset().union(*(k[0] for k in kids)), any(k[1] for k in kids)

    return fold(node, combine)[0]


def _cycle_through(graph: dict[str, list[str]], start: str, members: set[str]) -> list[str]:
    """A shortest cycle start -> ... -> start inside `members` (breadth-first)."""
    parent: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in graph[v]:
            if w == start:
                path = [v]
                while (up := parent[path[-1]]) is not None:
                    path.append(up)
                return path[::-1] + [start]
            if w in members and w not in parent:
                parent[w] = v
                queue.append(w)
    return [start, start]


def analyse_left_recursion(grammar: Grammar, limits: Limits) -> list[Diagnostic]:
    """`left-recursion` (info) once per group of mutually left-recursive rules, at the first
    of them in source order, with the cycle."""
    nullable = nullable_rules(grammar)
    names = [rule.name for rule in grammar.rules]
    position = {name: i for i, name in enumerate(names)}
    graph = {rule.name: sorted(left_refs(rule.body, nullable) & position.keys(),
                               key=position.__getitem__) for rule in grammar.rules}
    out = []
    for comp in cyclic_components(graph, names):
        first = min(comp, key=position.__getitem__)
        cycle = _cycle_through(graph, first, set(comp))
        out.append(diagnostic(
            "left-recursion",
            f"rule '{first}' is left-recursive ({' -> '.join(cycle)}): it can derive a string"
            " starting with itself without consuming input; the pushdown runtime supports"
            " this, top-down (LL) parsers do not", rule_span(grammar, first)))
    return out


def _over_repeat_limit(grammar: Grammar, limits: Limits) -> bool:
    return any(isinstance(n, Repeat) and max(n.min, n.max or 0) > limits.max_repeat
               for name in reachable_rules(grammar) for n in walk(grammar.by_name[name].body))


def analyse_regularity(grammar: Grammar, limits: Limits) -> list[Diagnostic]:
    """`recursive` with the cycle, or `regular`; for a regular grammar of modest size, compile
    it (under `limits`) and report the minimal DFA's state count, or a `state-budget` error
    when compiling exceeds a budget."""
    if grammar.start not in grammar.by_name:
        return []
    cycle = find_cycle(grammar)
    if cycle is not None:
        return [diagnostic(
            "recursive",
            f"the grammar is recursive ({' -> '.join(cycle)}): its language needs a stack, so"
            " it compiles to rule automata for the pushdown runtime instead of a DFA",
            rule_span(grammar, cycle[0]))]
    message = f"the grammar is regular: no rule reachable from '{grammar.start}' is recursive"
    estimate = estimate_size(grammar).nfa_states
    if estimate > min(COMPILE_THRESHOLD, limits.max_nfa_states) \
            or _over_repeat_limit(grammar, limits):
        return [diagnostic("regular", message + ", so it compiles to a DFA (its state count"
                           " is not computed here: the grammar is large)")]
    try:
        dfa = _compile(grammar, limits)
    except BudgetExceeded as exc:
        return [diagnostic("state-budget", f"compiling to a DFA failed: {exc.message}",
                           rule_span(grammar, grammar.start), severity="error"),
                diagnostic("regular", message)]
    except GrammarError:
        return [diagnostic("regular", message)]
    n = dfa.n_states
    detail = ("the language is empty" if dfa.is_empty_language
              else f"its minimal DFA has {n:,} state{'' if n == 1 else 's'}")
    return [diagnostic("regular", f"{message}; {detail}")]


def _compile(grammar: Grammar, limits: Limits) -> DFATable:
    root, rules = inline_regular(grammar)
    return ir_to_dfa(root, limits, rules)
