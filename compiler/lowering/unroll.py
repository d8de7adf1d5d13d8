"""Recursion cut at a depth: a recursive grammar's strings whose derivations nest at most D deep,
as a grammar without cycles (a regular language, for the DFA-based tools such as `diff`).

Each rule is copied per level: `name@k`. A reference from a rule to a rule of its own cyclic
component (mutual recursion, found by `cyclic_components`) goes one level down; any other
reference stays on its level; a reference below level D is NOTHING. The start rule is the
level-0 copy of the start. So the result's language is the subset of the grammar's whose
derivations follow at most D recursive references on any path from the root (for JSON values,
nesting depth in containers, up to the grammar's own shape), and it equals the grammar's when
the grammar has no cycle. Copies are made only as references reach them: at most (D + 1) times
the reachable rules.
"""
from __future__ import annotations

from collections import deque

from ..ir.graph import cyclic_components, reachable_rules, rule_uses
from ..ir.nodes import NOTHING, Grammar, Node, Rule, RuleRef
from ..ir.rewrite import rewrite
from ..support import deadline

__all__ = ["unrolled"]


def unrolled(grammar: Grammar, depth: int) -> Grammar:
    """`grammar` with recursion followed at most `depth` deep (module docstring)."""
    if depth < 0:
        raise ValueError(f"depth must be non-negative, got {depth}")
    order = reachable_rules(grammar)
    rules = grammar.by_name
    graph = {name: [r.name for r in rule_uses(grammar)[name] if r.name in rules]
             for name in order}
    component = {name: i for i, comp in enumerate(cyclic_components(graph, order))
                 for name in comp}
    made: dict[tuple[str, int], str] = {}
    queue: deque[tuple[str, int]] = deque()

    def name_of(rule: str, level: int) -> str:
        key = (rule, level)
        if key not in made:
            made[key] = f"{rule}@{level}"
            queue.append(key)
        return made[key]

    start = name_of(grammar.start, 0)
    out: list[Rule] = []
    while queue:
        deadline.check()
        rule, level = queue.popleft()
        mine = component.get(rule)

        def replace(n: Node, rule: str = rule, level: int = level,
                    mine: int | None = mine) -> Node | None:
            if not isinstance(n, RuleRef) or n.name not in rules:
                return None
            down = level + (mine is not None and component.get(n.name) == mine)
            return NOTHING if down > depth else RuleRef(name_of(n.name, down), n.span)

        source = rules[rule]
        out.append(Rule(made[rule, level], rewrite(source.body, replace), source.span))
    return Grammar(tuple(out), start, grammar.source)
