"""Rewriting expressions: one walk that rebuilds an expression with some sub-expressions
replaced, and what is built on it (rule references replaced by expressions or renamed).

Shared sub-expressions stay shared: each node object is rebuilt once (memoized by identity),
and a node none of whose children changed is kept as is, so a rewrite that touches nothing
returns the very same object.
"""
from __future__ import annotations

from typing import Callable

from ..support import deadline
from .nodes import Choice, Node, Repeat, RuleRef, Seq, children

__all__ = ["rewrite", "substitute"]


def rewrite(node: Node, replace: Callable[[Node], Node | None]) -> Node:
    """`node` rebuilt bottom-up without recursion, each sub-expression `n` for which
    `replace(n)` gives a node replaced by it (its own sub-expressions not visited)."""
    memo: dict[int, Node] = {}
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        n, ready = stack.pop()
        if id(n) in memo:
            continue
        if not ready:
            new_node = replace(n)
            if new_node is not None:
                memo[id(n)] = new_node
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


def substitute(node: Node, resolved: dict[str, Node]) -> Node:
    """`node` with each reference to a name in `resolved` replaced by `resolved[name]` (other
    references kept)."""
    return rewrite(node, lambda n: resolved.get(n.name) if isinstance(n, RuleRef) else None)
