"""The bytes that no rule automaton of a grammar can tell apart, read from its IR alone.

Invariant: two bytes share a class of `byte_partition(bodies)` only when every byte edge that
building those bodies can make (a literal's bytes, a character class's UTF-8 byte trie
`class_edges`, an automaton's classes) holds both or neither. Such bytes move every NFA built
from the bodies alike, so they have equal columns in every rule automaton, and the partition
refines the byte classes of each rule (`RuleAutomaton.byte_class`) whatever inlining,
counting or minimization did to it.

Why: a lazy pushdown table (`runtime/pushdown/assembly.py`) maps every built rule's columns
onto the coarsest partition refining theirs; a rule built later with a byte distinction new to
the table refines it, and every row of the table is gathered again (on a table of 150,000
states, a third of a second in one fill). Refining by this partition at the first extension
refines the table once, while it is small; the rules built later fit it.

Cost: one walk over the distinct nodes of the bodies, then one refinement per distinct byte
range (a few hundred on large schemas).
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ...runtime.pushdown.assembly import refined_partition
from ..automata.flat_ir import class_edges
from ..ir.nodes import Automaton, CharClass, Literal, Node, RuleRef, TokenRef, children


def byte_partition(bodies: Iterable[Node]) -> np.ndarray | None:
    """int32[256] (module docstring), classes numbered as `refined_partition` numbers them;
    None when a body holds a token reference (its spelling is the vocabulary's)."""
    seen: set[int] = set()
    stack = list(bodies)
    ranges: set[tuple[int, int]] = set()
    parts: dict[int, np.ndarray] = {}
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        kind = type(node)
        if kind is Literal:
            ranges.update((b, b) for b in node.data)  # type: ignore[union-attr]
        elif kind is CharClass:
            edges = class_edges(node.ranges)[1]  # type: ignore[union-attr]
            ranges.update(zip(edges[:, 1].tolist(), edges[:, 2].tolist()))
        elif kind is Automaton:
            dfa = node.dfa  # type: ignore[union-attr]
            parts[id(dfa)] = dfa.byte_class
        elif kind is TokenRef:
            return None
        elif kind is not RuleRef:
            stack.extend(children(node))
    indicators = []
    for lo, hi in sorted(ranges):
        inside = np.zeros(256, dtype=np.int32)
        inside[lo:hi + 1] = 1
        indicators.append(inside)
    return refined_partition([*indicators, *parts.values()])
