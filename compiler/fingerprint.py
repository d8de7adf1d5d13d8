"""Structural fingerprints of IR expressions, for caches that outlive one compile.

`fingerprint(node)` is a small int, equal for two expressions exactly when they are
structurally equal (same node kinds, literals, classes, bounds, rule names, and the same
`Automaton` tables by identity; spans are ignored). It is computed by hash-consing: every
distinct (kind, fields, fingerprints of the children) gets the next int in one table shared by
every compile of the process, so a node costs one dict lookup and a shared sub-expression is
visited once. The table is bounded: when it passes `_MAX_ENTRIES` it starts over under a new
`generation`, which callers include in their cache keys, so no stale int is ever matched.
"""
from __future__ import annotations

import threading
from typing import Any

from .ir import Automaton, CharClass, Choice, Literal, Node, Repeat, RuleRef, Seq

_MAX_ENTRIES = 1 << 20
_table: dict[tuple[Any, ...], int] = {}
_generation = 0
_lock = threading.Lock()


def fingerprint(node: Node) -> tuple[int, int]:
    """(generation, id) of `node`'s structure; see the module docstring."""
    global _generation
    with _lock:
        if len(_table) > _MAX_ENTRIES:
            _table.clear()
            _generation += 1
        memo: dict[int, int] = {}
        stack: list[tuple[Node, bool]] = [(node, False)]
        while stack:
            n, ready = stack.pop()
            if id(n) in memo:
                continue
            kind = type(n)
            kids: tuple[Node, ...] = (n.items if kind is Seq else  # type: ignore[union-attr]
                                      n.alternatives if kind is Choice else  # type: ignore[union-attr]
                                      (n.item,) if kind is Repeat else ())  # type: ignore[union-attr]
            if kids and not ready:
                stack.append((n, True))
                stack.extend((k, False) for k in kids if id(k) not in memo)
                continue
            if kind is Literal:
                key: tuple[Any, ...] = ("L", n.data)  # type: ignore[union-attr]
            elif kind is CharClass:
                key = ("C", n.ranges)  # type: ignore[union-attr]
            elif kind is RuleRef:
                key = ("R", n.name)  # type: ignore[union-attr]
            elif kind is Automaton:
                key = ("A", n.dfa)  # type: ignore[union-attr]
            elif kind is Repeat:
                key = ("*", n.min, n.max, memo[id(kids[0])])  # type: ignore[union-attr]
            else:
                key = ("S" if kind is Seq else "|", *(memo[id(k)] for k in kids))
            memo[id(n)] = _table.setdefault(key, len(_table))
        return _generation, memo[id(node)]


def reset() -> None:
    """Forget every fingerprint (the next ones belong to a new generation)."""
    global _generation
    with _lock:
        _table.clear()
        _generation += 1


__all__ = ["fingerprint", "reset"]
