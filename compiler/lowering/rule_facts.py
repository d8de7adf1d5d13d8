"""What the grammar says of its kept rules before their automata exist: the bytes that can
follow each one, whether it may end the text, and what keeping it costs.

Both come from one walk (`_follows`) over the bodies of the rules that matter: the kept rules
and the inlined rules that lead to one (*leading* rules, whose automata will be walked into
their callers'). Each such body is walked once: a reference to one of those rules is noted
with the bytes that can come after it in that body (and whether the body may end right after
it, a *tail* call); a reference to any other rule is not entered (it leads to no kept rule).
The follow sets are then closed over tail calls (a callee called last is followed by whatever
follows its caller), which gives an inlined rule's callees the bytes after each of its
references, as walking into its body at every reference would, in one pass over each body
instead of one per reference and context. The walk asks a `_Facts` which nodes to enter and
the first bytes and nullability of what follows them: `_Summarized` reads them from
`rule_summaries` (the costs of `end_cost`, which need every rule's last bytes anyway), and
`_OnDemand` computes only what the walk asks (`FirstBytes`), entering only the nodes that
lead to a kept rule: the facts of a lazily built table (`assembly.py`), needed for every rule
before most rules are built, then cost the walk of the few bodies that call kept rules (a
dispatch over 128 tools), not a summary of every node. A table built whole derives these
facts from its automata and checks them against these; one extended rule by rule keeps them
(`PushdownTable`), and the tests rebuild its complete form to check them.

Byte sets are 256-bit Python ints (as in `summaries.py`).
"""
from __future__ import annotations

from collections import ChainMap
from typing import Protocol

import numpy as np

from ..ir.graph import rule_uses
from ..ir.nodes import Choice, Grammar, Node, Repeat, RuleRef, Seq
from ..ir.summaries import FirstBytes, Summary, fold, nullable_among

Memos = dict[str, ChainMap[int, Summary]]
"""Per rule, its nodes' summaries (`rule_summaries`): maps[0] holds the nodes that reference
a rule; a node in neither map is not in the rule's body."""


class _Facts(Protocol):
    def calls(self, rule: str) -> bool:
        """Whether the body of `rule` (walked) may lead to a kept rule."""

    def enters(self, node: Node, owner: str) -> bool:
        """Whether `node`, in the body of rule `owner`, is productive and may lead to a kept
        rule."""

    def head(self, node: Node, owner: str) -> tuple[int, bool]:
        """(first bytes, nullable) of the productive `node`."""


class _Summarized:
    """Facts read from `rule_summaries`' per-rule memos."""

    def __init__(self, memos: Memos) -> None:
        self.memos = memos

    def calls(self, rule: str) -> bool:
        return True

    def enters(self, node: Node, owner: str) -> bool:
        memo = self.memos[owner]
        return id(node) in memo.maps[0] and memo[id(node)][0]

    def head(self, node: Node, owner: str) -> tuple[int, bool]:
        s = self.memos[owner][id(node)]
        return s[2], s[1]


class _OnDemand:
    """Facts computed as the walk asks for them, for kept rules `kept` among the reachable
    productive rules `order`."""

    def __init__(self, grammar: Grammar, kept: list[str], order: list[str]) -> None:
        productive, keep = set(order), set(kept)
        uses = rule_uses(grammar)
        users: dict[str, list[str]] = {}
        for name in order:
            for ref in uses[name]:
                users.setdefault(ref.name, []).append(name)
        leading: set[str] = set()  # inlined rules that may lead to a kept rule
        work = list(kept)
        while work:
            for user in users.get(work.pop(), ()):
                if user not in keep and user not in leading:
                    leading.add(user)
                    work.append(user)
        self._kept, self._leading = kept, leading
        self._targets = keep | leading
        self._calling = leading | {name for name in kept
                                   if any(r.name in self._targets for r in uses[name])}
        self._reach: dict[int, bool] = {}
        self._enters: dict[int, bool] = {}
        self.first = FirstBytes(grammar, productive, nullable_among(grammar, order))

    def calls(self, rule: str) -> bool:
        return rule in self._calling

    def enters(self, node: Node, owner: str) -> bool:
        known = self._enters.get(id(node))
        if known is None:
            targets = self._targets
            known = fold(node, lambda n, kids: any(kids) or (
                type(n) is RuleRef and n.name in targets), self._reach  # type: ignore[union-attr]
            ) and self.first.productive(node)
            self._enters[id(node)] = known
        return known

    @property
    def walked(self) -> list[str]:
        """The kept rules, then the inlined rules that lead to one."""
        return [*self._kept, *sorted(self._leading)]

    def head(self, node: Node, owner: str) -> tuple[int, bool]:
        return self.first.first(node), self.first.nullable(node)


def _follows(grammar: Grammar, walked: list[str], facts: _Facts
             ) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """(bytes right after each rule of `walked` inside the bodies of `walked`, (caller,
    callee) tail calls among them); each body walked once, references to other rules not
    entered."""
    rules = grammar.by_name
    targets = set(walked)
    follow = dict.fromkeys(walked, 0)
    tails: list[tuple[str, str]] = []
    for name in walked:
        if not facts.calls(name):
            continue
        stack: list[tuple[Node, int, bool]] = [(rules[name].body, 0, True)]
        seen: set[tuple[int, int, bool]] = set()
        while stack:
            n, after, tail = stack.pop()
            if not facts.enters(n, name):
                continue  # leads to no kept rule, or derives nothing
            if (id(n), after, tail) in seen:
                continue
            seen.add((id(n), after, tail))
            if isinstance(n, RuleRef):
                if n.name in targets:
                    follow[n.name] |= after
                    if tail:
                        tails.append((name, n.name))
            elif isinstance(n, Choice):
                stack.extend((alt, after, tail) for alt in n.alternatives)
            elif isinstance(n, Repeat) and n.max != 0:
                again = facts.head(n.item, name)[0] if n.max is None or n.max > 1 else 0
                stack.append((n.item, after | again, tail))
            elif isinstance(n, Seq):
                # Only the items right of the first one entered can follow a kept rule.
                entered = [facts.enters(item, name) for item in n.items]
                if True not in entered:
                    continue
                first = entered.index(True)
                for i in range(len(n.items) - 1, first - 1, -1):
                    if entered[i]:
                        stack.append((n.items[i], after, tail))
                    if i > first:
                        item_first, item_nullable = facts.head(n.items[i], name)
                        after = item_first | (after if item_nullable else 0)
                        tail = tail and item_nullable
    return follow, tails


def _closed(values: dict[str, int], tails: list[tuple[str, str]]) -> dict[str, int]:
    """`values` with values[callee] ⊇ values[caller] for every tail call: a worklist that
    revisits a rule's callees when its value grows."""
    callees: dict[str, list[str]] = {}
    for caller, callee in tails:
        callees.setdefault(caller, []).append(callee)
    work = list(callees)
    queued = set(work)
    while work:
        caller = work.pop()
        queued.discard(caller)
        value = values[caller]
        for callee in callees[caller]:
            grown = values[callee] | value
            if grown != values[callee]:
                values[callee] = grown
                if callee in callees and callee not in queued:
                    queued.add(callee)
                    work.append(callee)
    return values


def end_cost(grammar: Grammar, order: list[str], summary: dict[str, Summary],
             memos: Memos) -> dict[str, float]:
    """Per rule of `order` (the reachable productive rules, with their `rule_summaries`):
    (bytes that can end it) x (bytes that can follow it), both from the grammar with every rule
    of `order` kept as a rule."""
    follow = _closed(*_follows(grammar, order, _Summarized(memos)))
    return {name: float(max(1, summary[name][3].bit_count()) * max(1, follow[name].bit_count()))
            for name in order}


def _bits(x: int) -> np.ndarray:
    return np.unpackbits(np.frombuffer(x.to_bytes(32, "little"), dtype=np.uint8),
                         bitorder="little").astype(bool)


def kept_facts(grammar: Grammar, kept: list[str], order: list[str]
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(nullable bool[R], follow bool[R, 256], can_end bool[R]) of the rules of `kept` (in
    that order; the others of `order`, the reachable productive rules, inlined), as the
    rule automata table derives them (`PushdownTable`)."""
    facts = _OnDemand(grammar, kept, order)
    walked = facts.walked
    follow, tails = _follows(grammar, walked, facts)
    follow = _closed(follow, tails)
    ends = _closed({name: int(name == grammar.start) for name in walked}, tails)
    nullable = facts.first.nullable
    return (np.array([nullable(grammar.by_name[name].body) for name in kept], dtype=bool),
            np.stack([_bits(follow[name]) for name in kept]),
            np.array([ends[name] == 1 for name in kept], dtype=bool))
