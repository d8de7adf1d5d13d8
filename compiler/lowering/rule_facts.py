"""What the grammar says of its kept rules before their automata exist: the bytes that can
follow each one, whether it may end the text, and what keeping it costs.

Both come from one walk (`_follows`) over the kept rules' bodies, with `rule_summaries`'
first bytes and nullability of every node: a reference to a kept rule is noted with the bytes
that can come after it in its caller (and whether its caller may end right after it, a
*tail* call); a reference to an inlined rule is walked into, as its automaton will be. The
follow sets are then closed over tail calls (a callee called last is followed by whatever
follows its caller). The rule automata of a table built lazily (`assembly.py`) need these
facts for every rule before most rules are built; a table whose rules are all built derives
them from its automata and checks them against these.

Byte sets are 256-bit Python ints (as in `summaries.py`).
"""
from __future__ import annotations

from collections import ChainMap

import numpy as np

from ..ir.nodes import Choice, Grammar, Node, Repeat, RuleRef, Seq
from ..ir.summaries import Summary

Memos = dict[str, ChainMap[int, Summary]]
"""Per rule, its nodes' summaries (`rule_summaries`): maps[0] holds the nodes that reference
a rule; a node in neither map is not in the rule's body."""


def _follows(grammar: Grammar, kept: list[str], memos: Memos
             ) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """(bytes right after each rule of `kept` inside its callers, (caller, callee) tail
    calls); references to other rules with memos are walked into, to rules without are
    dropped (unproductive)."""
    rules = grammar.by_name
    keep = set(kept)
    follow = dict.fromkeys(kept, 0)
    tails: list[tuple[str, str]] = []
    for name in kept:
        stack: list[tuple[Node, int, bool, str]] = [(rules[name].body, 0, True, name)]
        seen: set[tuple[int, int, bool]] = set()
        while stack:
            n, after, tail, owner = stack.pop()
            memo = memos[owner]
            if id(n) not in memo.maps[0] or not memo[id(n)][0]:
                continue  # references no rule, or derives nothing
            if (id(n), after, tail) in seen:
                continue
            seen.add((id(n), after, tail))
            if isinstance(n, RuleRef):
                if n.name in keep:
                    follow[n.name] |= after
                    if tail:
                        tails.append((name, n.name))
                elif n.name in memos:
                    stack.append((rules[n.name].body, after, tail, n.name))
            elif isinstance(n, Choice):
                stack.extend((alt, after, tail, owner) for alt in n.alternatives)
            elif isinstance(n, Repeat) and n.max != 0:
                again = memo[id(n.item)][2] if n.max is None or n.max > 1 else 0
                stack.append((n.item, after | again, tail, owner))
            elif isinstance(n, Seq):
                for item in reversed(n.items):
                    stack.append((item, after, tail, owner))
                    item_first, item_nullable = memo[id(item)][2], memo[id(item)][1]
                    after = item_first | (after if item_nullable else 0)
                    tail = tail and item_nullable
    return follow, tails


def _closed(values: dict[str, int], tails: list[tuple[str, str]]) -> dict[str, int]:
    """`values` with values[callee] ⊇ values[caller] for every tail call."""
    changed = True
    while changed:
        changed = False
        for caller, callee in tails:
            grown = values[callee] | values[caller]
            if grown != values[callee]:
                values[callee], changed = grown, True
    return values


def end_cost(grammar: Grammar, order: list[str], summary: dict[str, Summary],
             memos: Memos) -> dict[str, float]:
    """Per rule of `order` (the reachable productive rules, with their `rule_summaries`):
    (bytes that can end it) x (bytes that can follow it), both from the grammar with every rule
    of `order` kept as a rule."""
    follow = _closed(*_follows(grammar, order, memos))
    return {name: float(max(1, summary[name][3].bit_count()) * max(1, follow[name].bit_count()))
            for name in order}


def _bits(x: int) -> np.ndarray:
    return np.unpackbits(np.frombuffer(x.to_bytes(32, "little"), dtype=np.uint8),
                         bitorder="little").astype(bool)


def kept_facts(grammar: Grammar, kept: list[str], order: list[str], summary: dict[str, Summary],
               memos: Memos) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(nullable bool[R], follow bool[R, 256], can_end bool[R]) of the rules of `kept` (in
    that order; the others of `order`, the reachable productive rules, inlined), as the
    rule automata table derives them (`PushdownTable`)."""
    productive = {name: memos[name] for name in order}
    follow, tails = _follows(grammar, kept, productive)
    follow = _closed(follow, tails)
    ends = _closed({name: int(name == grammar.start) for name in kept}, tails)
    return (np.array([summary[name][1] for name in kept], dtype=bool),
            np.stack([_bits(follow[name]) for name in kept]),
            np.array([ends[name] == 1 for name in kept], dtype=bool))
