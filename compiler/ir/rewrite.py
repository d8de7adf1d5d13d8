"""Rewriting rule references: one walk that rebuilds an expression with some references
replaced, and what is built on it (a grammar's rules under new names, to embed one grammar in
another).

Shared sub-expressions stay shared: each node object is rebuilt once (memoized by identity),
and a node none of whose children changed is kept as is, so a rewrite that touches nothing
returns the very same object.
"""
from __future__ import annotations

from ..support import deadline
from .nodes import Choice, Grammar, Node, Repeat, Rule, RuleRef, Seq, children

__all__ = ["renamed_rules", "substitute"]


def substitute(node: Node, resolved: dict[str, Node]) -> Node:
    """`node` with each reference to a name in `resolved` replaced by `resolved[name]` (other
    references kept), rebuilt without recursion."""
    memo: dict[int, Node] = {}
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        n, ready = stack.pop()
        if id(n) in memo:
            continue
        if isinstance(n, RuleRef):
            memo[id(n)] = resolved.get(n.name, n)
            continue
        kids = children(n)
        if not kids:
            memo[id(n)] = n
            continue
        if not len(memo) & 4095:
            deadline.check()
        if not ready:
            stack.append((n, True))
            stack.extend((k, False) for k in kids)
            continue
        new = tuple(memo[id(k)] for k in kids)
        if all(a is b for a, b in zip(new, kids)):
            memo[id(n)] = n
        elif isinstance(n, Seq):
            memo[id(n)] = Seq(new, n.span)
        elif isinstance(n, Choice):
            memo[id(n)] = Choice(new, n.span)
        else:
            assert isinstance(n, Repeat)
            memo[id(n)] = Repeat(new[0], n.min, n.max, n.span)
    return memo[id(node)]


def renamed_rules(grammar: Grammar, rename: dict[str, str]) -> tuple[Rule, ...]:
    """`grammar`'s rules with each name in `rename` (rule names and the references to them)
    replaced by its new name; other names kept."""
    refs: dict[str, Node] = {old: RuleRef(new) for old, new in rename.items()}
    return tuple(Rule(rename.get(r.name, r.name), substitute(r.body, refs), r.span, r.kept)
                 for r in grammar.rules)
