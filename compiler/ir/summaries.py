"""Summaries of grammar IR, the one place they are computed: the (productive, nullable, first
bytes, last bytes) `Summary` of expressions (`summarize`) and rules (`rule_summaries`; the
nullable rules are read from it), and, short-circuited for when little is asked, productivity
alone (`productive_node`), nullability alone (`nullable_node`) and first bytes on demand
(`FirstBytes`, which looks only at what can come first: the facts of a lazily built table).

Data layout: a summary of an expression is computed bottom-up by `fold` (children first, each
shared sub-expression once, an explicit stack: nesting depth is not limited by recursion), and
a summary of rules as a least fixpoint over the rules (`rule_fixpoint` for sets of names,
`rule_summaries` for tuples), with a work list that visits rules after the rules they use.
Byte sets are 256-bit Python ints. A reference to a rule outside the computed set derives
nothing, unless said otherwise (`productive_node`'s `defined`).

The linter (`analyses/`) reports from these summaries and the rule-automata builder
(`lowering/`) decides from them what to inline; neither computes its own.
"""
from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Iterable, MutableMapping
from typing import TypeVar

import numpy as np

from ...runtime.dfa.table import DFATable
from ..support import deadline
from ..support.caches import memo
from .graph import dependency_order, rule_uses
from .nodes import (
    Automaton,
    CharClass,
    Choice,
    Grammar,
    Literal,
    Node,
    Repeat,
    RuleRef,
    Seq,
    TokenRef,
    children,
)
from .utf8 import utf8_sequences

__all__ = ["FirstBytes", "Summary", "fold", "leaf_summary", "nullable_among", "nullable_node",
           "nullable_rules", "productive_among", "productive_node", "productive_rules",
           "rule_fixpoint", "rule_summaries", "rule_worklist", "summarize"]

T = TypeVar("T")


def fold(node: Node, combine: Callable[[Node, list[T]], T],
         memo: MutableMapping[int, T] | None = None) -> T:
    """`combine(n, values of n's children)` for every node, children first, computed once per
    shared sub-expression; an explicit stack, so nesting depth is not limited by recursion.
    `memo` (keyed by node id) receives every node's value when given; a node already in it is
    not visited again (nor below it)."""
    memo = {} if memo is None else memo
    stack: list[tuple[Node, bool]] = [(node, False)]
    done = 0
    while stack:
        n, ready = stack.pop()
        kids = children(n)
        if ready or not kids:
            if id(n) not in memo:
                memo[id(n)] = combine(n, [memo[id(k)] for k in kids])
                done += 1
                if not done & 4095:
                    deadline.check()
            continue
        if id(n) in memo:
            continue
        stack.append((n, True))
        stack.extend((k, False) for k in reversed(kids) if id(k) not in memo)
    return memo[id(node)]


def rule_worklist(grammar: Grammar, names: Iterable[str]
                  ) -> tuple[dict[str, list[str]], list[str]]:
    """(the rules of `names` that use each one, a work stack of `names` whose top is popped
    first: rules before the rules that use them, then the others) for fixpoints over rules;
    `names` must be closed under references (the reachable rules, or every rule)."""
    names = list(names)
    uses = rule_uses(grammar)
    users: dict[str, list[str]] = {name: [] for name in names}
    for name in names:
        for used in uses[name]:
            if used.name in users:
                users[used.name].append(name)
    ordered = [name for name in dependency_order(grammar) if name in users]
    placed = set(ordered)
    return users, [name for name in reversed(names) if name not in placed] + ordered[::-1]


def rule_fixpoint(grammar: Grammar, holds: Callable[[Node, set[str]], bool],
                  names: Iterable[str] | None = None) -> set[str]:
    """The least set S of rule names (of `names`, default every rule) with `holds(rule.body,
    S)` for every rule in S, where `holds` is monotone in S: a worklist that examines rules
    after the rules they use, and a rule again (once queued, not twice) when a rule it uses
    joins S."""
    rules = grammar.by_name
    users, work = rule_worklist(grammar, rules if names is None else names)
    queued = set(work)
    result: set[str] = set()
    while work:
        name = work.pop()
        queued.discard(name)
        if name in result or not holds(rules[name].body, result):
            continue
        result.add(name)
        for user in users[name]:
            if user not in result and user not in queued:
                queued.add(user)
                work.append(user)
    return result




def _short_circuit(node: Node, leaf: Callable[[Node], bool | None],
                   memo: dict[int, bool] | None = None) -> bool:
    """A boolean of `node` from the booleans of its leaves: a choice is true when some
    alternative is, a sequence or repetition when every child is (`leaf` decides any node
    it answers for, such as `x{0,n}`). Evaluated left to right and short-circuited (a
    choice stops at its first true alternative, a sequence at its first false item); shared
    sub-expressions are evaluated once (`memo`, by id, may be shared across calls), without
    recursion."""
    top = leaf(node)
    if top is not None:
        return top
    memo = {} if memo is None else memo
    if id(node) in memo:
        return memo[id(node)]
    stack: list[list] = [[node, 0]]
    while True:
        frame = stack[-1]
        n, i = frame
        kids = children(n)
        every = type(n) is not Choice
        result: bool | None = None
        while i < len(kids):
            k = kids[i]
            value = memo.get(id(k))
            if value is None:
                value = leaf(k)
            if value is None:
                frame[1] = i
                stack.append([k, 0])
                break
            if value != every:
                result = value
                break
            i += 1
        else:
            result = every
        if result is None:
            continue
        memo[id(n)] = result
        if not len(memo) & 4095:
            deadline.check()
        stack.pop()
        if not stack:
            return result


def productive_node(node: Node, productive: set[str], defined: set[str] | None = None,
                    memo: dict[int, bool] | None = None, alive: set[int] | None = None) -> bool:
    """Whether `node` can derive a finite string, given the productive rules (names not in
    `defined`, when given, count as productive, and nodes whose id is in `alive` are known
    to be productive); short-circuited (`_short_circuit`: `x{0,n}` is productive without
    looking at x)."""

    def leaf(n: Node) -> bool | None:
        if alive is not None and id(n) in alive:
            return True
        kind = type(n)
        if kind is Literal:
            return True
        if kind is CharClass:
            return bool(n.ranges)  # type: ignore[union-attr]
        if kind is Automaton:
            return not n.dfa.is_empty_language  # type: ignore[union-attr]
        if kind is RuleRef:
            return n.name in productive or (  # type: ignore[union-attr]
                defined is not None and n.name not in defined)  # type: ignore[union-attr]
        if kind is Repeat and n.min == 0:  # type: ignore[union-attr]
            return True
        return None

    return _short_circuit(node, leaf, memo)


def nullable_node(node: Node, nullable: set[str], memo: dict[int, bool] | None = None) -> bool:
    """Whether `node` derives the empty string, given the nullable rules; short-circuited
    (`_short_circuit`: a sequence stops at its first item that is not nullable). The same
    value as `summarize`'s: a nullable expression is productive."""

    def leaf(n: Node) -> bool | None:
        kind = type(n)
        if kind is Literal or kind is CharClass or kind is TokenRef:
            return False
        if kind is Automaton:
            return bool(n.dfa.accepting[n.dfa.start])  # type: ignore[union-attr]
        if kind is RuleRef:
            return n.name in nullable  # type: ignore[union-attr]
        if kind is Repeat and (n.min == 0 or n.max == 0):  # type: ignore[union-attr]
            return True
        return None

    return _short_circuit(node, leaf, memo)


def nullable_among(grammar: Grammar, names: list[str]) -> set[str]:
    """The nullable rules of `names` (a list closed under references), as a least fixpoint
    of `nullable_node`: far fewer nodes looked at than `rule_summaries`."""
    return rule_fixpoint(grammar, nullable_node, names)


class FirstBytes:
    """The first bytes and nullability of productive expressions of one grammar, asked one
    at a time and looking only at what can come first: a sequence's items up to its first
    that is not nullable, a choice's productive alternatives, and for a rule reference the
    rules that can begin it (the same values as `summarize`'s, for a grammar most of whose
    nodes are never asked about: each tool's arguments behind a dispatch). Data layout: per
    node (by id) the bytes it can begin with itself and the rules that can begin it
    (`_leading`); a rule's first bytes are those of every rule reachable through such
    leading references (`rule_first`), so left recursion needs no fixpoint."""

    def __init__(self, grammar: Grammar, productive: set[str], nullable: set[str]) -> None:
        self._rules = grammar.by_name
        self._productive = productive
        self._nullable = nullable
        self._alive: dict[int, bool] = {}
        self._empty: dict[int, bool] = {}
        self._lead: dict[int, tuple[int, frozenset[str]]] = {}
        self._rule_first: dict[str, int] = {}

    def productive(self, node: Node) -> bool:
        """Whether `node` derives some string."""
        return productive_node(node, self._productive, None, self._alive)

    def nullable(self, node: Node) -> bool:
        """Whether `node` derives the empty string."""
        return nullable_node(node, self._nullable, self._empty)

    def first(self, node: Node) -> int:
        """The bytes a string of the productive expression `node` can begin with."""
        own, rules = self._leading(node)
        for name in rules:
            own |= self.rule_first(name)
        return own

    def rule_first(self, name: str) -> int:
        """The bytes a string of the productive rule `name` can begin with."""
        if name not in self._rule_first:
            seen, work, out = {name}, [name], 0
            while work:
                own, rules = self._leading(self._rules[work.pop()].body)
                out |= own
                for r in rules - seen:
                    seen.add(r)
                    work.append(r)
            self._rule_first[name] = out
        return self._rule_first[name]

    def _kids(self, n: Node) -> tuple[Node, ...]:
        """The children of `n` that can begin its strings."""
        kind = type(n)
        if kind is Seq:
            for i, item in enumerate(n.items):  # type: ignore[union-attr]
                if not self.nullable(item):
                    return n.items[:i + 1]  # type: ignore[union-attr]
            return n.items  # type: ignore[union-attr]
        if kind is Choice:
            return tuple(a for a in n.alternatives if self.productive(a))  # type: ignore[union-attr]
        if kind is Repeat:
            item = n.item  # type: ignore[union-attr]
            return (item,) if n.max != 0 and self.productive(item) else ()  # type: ignore[union-attr]
        return ()

    def _leading(self, node: Node) -> tuple[int, frozenset[str]]:
        memo = self._lead
        stack: list[tuple[Node, tuple[Node, ...] | None]] = [(node, None)]
        while stack:
            n, kids = stack.pop()
            if id(n) in memo:
                continue
            kind = type(n)
            if kind is RuleRef:
                memo[id(n)] = (0, frozenset((n.name,)))  # type: ignore[union-attr]
            elif kind not in (Seq, Choice, Repeat):
                memo[id(n)] = (leaf_summary(n)[2], frozenset())
            elif kids is None:
                kids = self._kids(n)
                stack.append((n, kids))
                stack.extend((k, None) for k in kids if id(k) not in memo)
            else:
                own, rules = 0, frozenset[str]()
                for k in kids:
                    own |= memo[id(k)][0]
                    rules |= memo[id(k)][1]
                memo[id(n)] = (own, rules)
                if not len(memo) & 4095:
                    deadline.check()
        return memo[id(node)]


def productive_rules(grammar: Grammar) -> set[str]:
    """Names of the rules that can derive a finite string of terminals."""
    defined = set(grammar.by_name)
    return rule_fixpoint(grammar, lambda body, done: productive_node(body, done, defined))


Summary = tuple[bool, bool, int, int]
"""(productive, nullable, first bytes, last bytes) of an expression; byte sets as 256-bit ints."""

_UNPRODUCTIVE: Summary = (False, False, 0, 0)
_EMPTY: Summary = (True, True, 0, 0)


def _bits(ranges: Iterable[tuple[int, int]]) -> int:
    out = 0
    for lo, hi in ranges:
        out |= ((1 << (hi - lo + 1)) - 1) << lo
    return out


@memo(maxsize=1024)
def _class_ends(ranges: tuple[tuple[int, int], ...]) -> tuple[int, int]:
    """(first bytes, last bytes) of the UTF-8 encodings of a character class."""
    seqs = [seq for lo, hi in ranges for seq in utf8_sequences(lo, hi)]
    return _bits(seq[0] for seq in seqs), _bits(seq[-1] for seq in seqs)


def leaf_summary(n: Node) -> Summary:
    if isinstance(n, Literal):
        return True, False, 1 << n.data[0], 1 << n.data[-1]
    if isinstance(n, CharClass):
        return (True, False, *_class_ends(n.ranges)) if n.ranges else _UNPRODUCTIVE
    if isinstance(n, TokenRef):  # its spellings start with the marker byte, end anywhere
        return True, False, 1 << 0xFF, (1 << 256) - 1
    assert isinstance(n, Automaton)
    return _automaton_summary(n.dfa)


@memo(maxsize=256)
def _automaton_summary(d: DFATable) -> Summary:
    if d.is_empty_language:
        return _UNPRODUCTIVE
    moved = d.transitions >= 0
    into_accepting = moved & d.accepting[np.where(moved, d.transitions, 0)]
    first = _bits((b, b) for b in np.flatnonzero(moved[d.start][d.byte_class]).tolist())
    last = _bits((b, b) for b in np.flatnonzero(into_accepting.any(axis=0)[d.byte_class]).tolist())
    return True, bool(d.accepting[d.start]), first, last


def _combiner(rules: dict[str, Summary]) -> Callable[[Node, list[Summary]], Summary]:
    """`fold`'s combine for summaries, given those of the rules."""

    def combine(n: Node, kids: list[Summary]) -> Summary:
        kind = type(n)
        if kind is RuleRef:
            return rules.get(n.name, _UNPRODUCTIVE)  # type: ignore[union-attr]
        if kind is Seq:
            first = last = 0
            nullable = True
            for k in kids:
                if not k[0]:
                    return _UNPRODUCTIVE
                if nullable:
                    first |= k[2]
                    nullable = k[1]
            for k in reversed(kids):
                last |= k[3]
                if not k[1]:
                    break
            return True, nullable, first, last
        if kind is Choice:
            alive = nullable = False
            first = last = 0
            for k in kids:
                if k[0]:
                    alive = True
                    nullable = nullable or k[1]
                    first |= k[2]
                    last |= k[3]
            return (True, nullable, first, last) if alive else _UNPRODUCTIVE
        if kind is Repeat:
            (item,) = kids
            if n.max == 0 or not item[0]:  # type: ignore[union-attr]
                return _EMPTY if n.min == 0 else _UNPRODUCTIVE  # type: ignore[union-attr]
            return True, n.min == 0 or item[1], item[2], item[3]  # type: ignore[union-attr]
        return leaf_summary(n)

    return combine


def summarize(node: Node, rules: dict[str, Summary],
              memo: MutableMapping[int, Summary] | None = None) -> Summary:
    """The summary of `node` given those of the rules (a missing rule derives nothing);
    `memo` receives every sub-expression's, keyed by id."""
    return fold(node, _combiner(rules), memo)


def _closed_summaries(bodies: Iterable[Node]) -> dict[int, Summary]:
    """The summaries of the nodes of `bodies` that reference no rule (by id): the same in
    every rule and every round of a fixpoint over rules."""
    combine = _combiner({})

    def with_openness(n: Node, kids: list[tuple[Summary, bool]]) -> tuple[Summary, bool]:
        return (combine(n, [k[0] for k in kids]),
                type(n) is RuleRef or any(k[1] for k in kids))

    values: dict[int, tuple[Summary, bool]] = {}
    for body in bodies:
        fold(body, with_openness, values)
    return {i: v[0] for i, v in values.items() if not v[1]}


def rule_summaries(grammar: Grammar, names: list[str]
                   ) -> tuple[dict[str, Summary], dict[str, ChainMap[int, Summary]]]:
    """The summary of each rule of `names` (a set closed under references, e.g. the reachable
    rules) as a least fixpoint, and per rule the summaries of its body's nodes by id: a
    `ChainMap` whose first map holds the nodes that reference a rule, computed for this rule,
    and whose second the nodes that reference none, computed once for all rules (a grammar's
    rules share most of those: strings, numbers, whitespace; a fixpoint round re-computes only
    the first kind)."""
    rules = grammar.by_name
    known = _closed_summaries(rules[name].body for name in names)
    users, work = rule_worklist(grammar, names)
    summary: dict[str, Summary] = {}
    memos: dict[str, ChainMap[int, Summary]] = {}
    queued = set(work)
    while work:
        name = work.pop()
        queued.discard(name)
        memos[name] = ChainMap({}, known)
        value = summarize(rules[name].body, summary, memos[name])
        if summary.get(name) != value:
            summary[name] = value
            for user in users[name]:
                if user not in queued:
                    queued.add(user)
                    work.append(user)
    return summary, memos


def nullable_rules(grammar: Grammar) -> set[str]:
    """Names of the rules that can derive the empty string (from their `rule_summaries`)."""
    summary, _ = rule_summaries(grammar, list(grammar.by_name))
    return {name for name, s in summary.items() if s[1]}


def productive_among(grammar: Grammar, names: list[str]) -> set[str]:
    """The productive rules of `names` (a list closed under references, e.g. the reachable
    rules), as a least fixpoint; `productive_node` short-circuits, so this looks at far fewer
    nodes than `rule_summaries`."""
    alive: set[int] = set()  # productive nodes stay productive as the fixpoint grows

    def holds(body: Node, done: set[str]) -> bool:
        memo: dict[int, bool] = {}
        result = productive_node(body, done, None, memo, alive)
        alive.update(i for i, v in memo.items() if v)
        return result

    return rule_fixpoint(grammar, holds, names)
