"""Grammar → rule automata with calls (`PushdownTable`), for languages that need a stack.

Which rules stay rules: the start rule and, in each group of mutually recursive rules, enough
rules to break every cycle (a finite automaton cannot count their nesting), chosen so that
rule ends are rare (see `choose_kept`); every other rule is inlined into its callers, so
strings, numbers and whitespace become plain byte transitions inside the rule that uses them.
The costs come from the grammar itself (`rule_summaries`, `end_cost`: first and last bytes,
nullability, productivity and follow sets of the rules), so the automata are built once.
With `keep_all`, every reachable rule stays a rule (for grammars whose fully inlined automaton
is too large).

Each kept rule's body becomes a Thompson NFA whose references to kept rules are call edges; a
call of the rule itself in tail position (nothing can follow it) becomes a jump back to the
rule's start, so right recursion runs as a loop. All rules share one byte-class partition;
each is determinized and minimized with the call columns kept apart from the byte columns.
References to unproductive rules are dropped (they can never complete).
"""
from __future__ import annotations

import functools
import operator
from collections.abc import Iterable

import numpy as np

from ..runtime.dfa_table import DFATable
from ..runtime.pushdown_table import PushdownTable
from .analyses.common import fold
from .dfa import byte_classes, merge_columns, subset_table
from .errors import GrammarError
from .ir import (
    Automaton,
    CharClass,
    Choice,
    Grammar,
    Literal,
    Node,
    Repeat,
    RuleRef,
    Seq,
    references,
)
from .limits import DEFAULT_LIMITS, Limits
from .lowering import check_references, cyclic_components, reachable_rules, substitute
from .minimize import minimize_table
from .nfa import CALL, NFA, build_nfa
from .utf8 import utf8_sequences

NOTHING = CharClass(())


def _acyclic(nodes: set[str], graph: dict[str, list[str]]) -> bool:
    """Whether the references among `nodes` form no cycle."""
    return not cyclic_components({n: [m for m in graph[n] if m in nodes] for n in nodes},
                                 sorted(nodes))


def choose_kept(grammar: Grammar, order: list[str], cost: dict[str, float]) -> list[str]:
    """The start rule and, per recursive component, a set of rules that breaks every cycle,
    built by inlining the costliest rules first while the inlined ones stay acyclic.

    A kept rule's end is where a token may have to be checked against the real stack, so the
    cheapest rules to keep are those whose strings end with few bytes and are followed by few
    bytes (the closing bracket of an object, not the last digit of any value)."""
    rules = grammar.by_name
    listed = set(order)
    graph = {name: [r.name for r in references(rules[name].body) if r.name in listed]
             for name in order}
    keep = [grammar.start]
    for comp in cyclic_components(graph, order):
        inlined: set[str] = set()
        for name in sorted(comp, key=lambda n: (-cost.get(n, 0.0), order.index(n))):
            if name != grammar.start and _acyclic(inlined | {name}, graph):
                inlined.add(name)
        keep += [name for name in comp if name not in inlined and name != grammar.start]
    return sorted(set(keep), key=order.index)


def rule_bodies(grammar: Grammar, keep: list[str], order: list[str]) -> dict[str, Node]:
    """Each kept rule's body with every other rule of `order` (the reachable productive rules)
    inlined and every rule outside it removed (unproductive: it derives nothing)."""
    rules = grammar.by_name
    kept, productive = set(keep), set(order)
    resolved: dict[str, Node] = {name: NOTHING for name in rules if name not in productive}
    pending = [name for name in order if name not in kept]
    graph = {name: {r.name for r in references(rules[name].body)} & set(pending) for name in pending}
    while pending:
        ready = [name for name in pending if not graph[name] - resolved.keys()]
        for name in ready:
            resolved[name] = substitute(rules[name].body, resolved)
        pending = [name for name in pending if name not in resolved]
    return {name: substitute(rules[name].body, resolved) for name in keep}


Summary = tuple[bool, bool, int, int]
"""(productive, nullable, first bytes, last bytes) of an expression; byte sets as 256-bit ints."""

_UNPRODUCTIVE: Summary = (False, False, 0, 0)
_EMPTY: Summary = (True, True, 0, 0)


def _bits(ranges: Iterable[tuple[int, int]]) -> int:
    out = 0
    for lo, hi in ranges:
        out |= ((1 << (hi - lo + 1)) - 1) << lo
    return out


@functools.lru_cache(maxsize=1024)
def _class_ends(ranges: tuple[tuple[int, int], ...]) -> tuple[int, int]:
    """(first bytes, last bytes) of the UTF-8 encodings of a character class."""
    seqs = [seq for lo, hi in ranges for seq in utf8_sequences(lo, hi)]
    return _bits(seq[0] for seq in seqs), _bits(seq[-1] for seq in seqs)


def _leaf_summary(n: Node) -> Summary:
    if isinstance(n, Literal):
        return True, False, 1 << n.data[0], 1 << n.data[-1]
    if isinstance(n, CharClass):
        return (True, False, *_class_ends(n.ranges)) if n.ranges else _UNPRODUCTIVE
    assert isinstance(n, Automaton)
    d = n.dfa
    if d.is_empty_language:
        return _UNPRODUCTIVE
    moved = d.transitions >= 0
    into_accepting = moved & d.accepting[np.where(moved, d.transitions, 0)]
    first = _bits((b, b) for b in np.flatnonzero(moved[d.start][d.byte_class]).tolist())
    last = _bits((b, b) for b in np.flatnonzero(into_accepting.any(axis=0)[d.byte_class]).tolist())
    return True, bool(d.accepting[d.start]), first, last


def _summary(node: Node, rules: dict[str, Summary], memo: dict[int, Summary]) -> Summary:
    """The summary of `node` given those of the rules (a missing rule derives nothing)."""

    def combine(n: Node, kids: list[Summary]) -> Summary:
        if isinstance(n, RuleRef):
            return rules.get(n.name, _UNPRODUCTIVE)
        if isinstance(n, Seq):
            if not all(k[0] for k in kids):
                return _UNPRODUCTIVE
            first = last = 0
            for k in kids:
                first |= k[2]
                if not k[1]:
                    break
            for k in reversed(kids):
                last |= k[3]
                if not k[1]:
                    break
            return True, all(k[1] for k in kids), first, last
        if isinstance(n, Choice):
            alive = [k for k in kids if k[0]]
            if not alive:
                return _UNPRODUCTIVE
            return (True, any(k[1] for k in alive), functools.reduce(operator.or_, (k[2] for k in alive)),
                    functools.reduce(operator.or_, (k[3] for k in alive)))
        if isinstance(n, Repeat):
            (item,) = kids
            if n.max == 0 or not item[0]:
                return _EMPTY if n.min == 0 else _UNPRODUCTIVE
            return True, n.min == 0 or item[1], item[2], item[3]
        return _leaf_summary(n)

    return fold(node, combine, memo)


def rule_summaries(grammar: Grammar, names: list[str]
                   ) -> tuple[dict[str, Summary], dict[str, dict[int, Summary]]]:
    """The summary of each rule of `names` (a set closed under references, e.g. the reachable
    rules) as a least fixpoint, and per rule the summaries of its body's nodes by id."""
    rules = grammar.by_name
    users: dict[str, list[str]] = {name: [] for name in names}
    for name in names:
        for used in dict.fromkeys(r.name for r in references(rules[name].body)):
            if used in users:
                users[used].append(name)
    summary: dict[str, Summary] = {}
    memos: dict[str, dict[int, Summary]] = {}
    work = list(reversed(names))
    queued = set(work)
    while work:
        name = work.pop()
        queued.discard(name)
        memos[name] = {}
        value = _summary(rules[name].body, summary, memos[name])
        if summary.get(name) != value:
            summary[name] = value
            for user in users[name]:
                if user not in queued:
                    queued.add(user)
                    work.append(user)
    return summary, memos


def end_cost(grammar: Grammar, order: list[str], summary: dict[str, Summary],
             memos: dict[str, dict[int, Summary]]) -> dict[str, float]:
    """Per rule of `order` (the reachable productive rules, with their `rule_summaries`):
    (bytes that can end it) x (bytes that can follow it), both from the grammar with every rule
    of `order` kept as a rule."""
    rules = grammar.by_name
    follow = dict.fromkeys(order, 0)
    tails: list[tuple[str, str]] = []
    for name in order:
        memo = memos[name]
        stack: list[tuple[Node, int, bool]] = [(rules[name].body, 0, True)]
        while stack:
            n, after, tail = stack.pop()
            if not memo[id(n)][0]:
                continue
            if isinstance(n, RuleRef):
                follow[n.name] |= after
                if tail:
                    tails.append((name, n.name))
            elif isinstance(n, Choice):
                stack.extend((alt, after, tail) for alt in n.alternatives)
            elif isinstance(n, Repeat) and n.max != 0:
                again = memo[id(n.item)][2] if n.max is None or n.max > 1 else 0
                stack.append((n.item, after | again, tail))
            elif isinstance(n, Seq):
                for item in reversed(n.items):
                    stack.append((item, after, tail))
                    item_first, item_nullable = memo[id(item)][2], memo[id(item)][1]
                    after = item_first | (after if item_nullable else 0)
                    tail = tail and item_nullable
    changed = True
    while changed:
        changed = False
        for caller, callee in tails:
            grown = follow[callee] | follow[caller]
            if grown != follow[callee]:
                follow[callee], changed = grown, True
    return {name: float(max(1, summary[name][3].bit_count()) * max(1, follow[name].bit_count()))
            for name in order}


def eliminate_tail_self_calls(nfa: NFA, symbol: int) -> NFA:
    """`nfa` with each call edge on `symbol` whose target can only finish (its epsilon closure
    holds the accept state and no edges) turned into an epsilon edge back to the start."""
    tail_calls = [(s, edge) for s, es in enumerate(nfa.edges) for edge in es
                  if edge[0] == symbol and _only_finishes(nfa, edge[2])]
    if not tail_calls:
        return nfa
    edges = list(nfa.edges)
    eps = list(nfa.eps)
    for s, edge in tail_calls:
        edges[s] = tuple(e for e in edges[s] if e != edge)
        eps[s] = (*eps[s], nfa.start)
    return NFA(edges=tuple(edges), eps=tuple(eps), start=nfa.start, accept=nfa.accept)


def _only_finishes(nfa: NFA, state: int) -> bool:
    tail = nfa.epsilon_closure({state})
    return nfa.accept in tail and not any(nfa.edges[q] for q in tail)


def _rule_dfa(nfa: NFA, classes: np.ndarray, n_calls: int, limits: Limits) -> DFATable:
    return minimize_table(classes, *subset_table(nfa, classes, n_calls, limits), 0, compact=False)


def build_pushdown(
    grammar: Grammar, limits: Limits = DEFAULT_LIMITS, *, keep_all: bool = False
) -> PushdownTable:
    """The rule automata of `grammar`; GrammarError for a missing start rule, an undefined
    reference or an empty language, BudgetExceeded past `limits`."""
    check_references(grammar)
    reachable = reachable_rules(grammar)
    summary, memos = rule_summaries(grammar, reachable)
    order = [name for name in reachable if summary[name][0]]
    if grammar.start not in order:
        raise GrammarError(
            f"the language is empty: the start rule '{grammar.start}' derives no finite string",
            code="empty-language")
    if keep_all:
        return _build(grammar, order, order, limits)
    cost = end_cost(grammar, order, summary, memos)
    return _build(grammar, choose_kept(grammar, order, cost), order, limits)


def _build(grammar: Grammar, keep: list[str], order: list[str], limits: Limits) -> PushdownTable:
    index = {name: i for i, name in enumerate(keep)}
    bodies = rule_bodies(grammar, keep, order)
    nfas = [eliminate_tail_self_calls(build_nfa(bodies[name], limits, calls=index), CALL + i)
            for i, name in enumerate(keep)]
    classes = byte_classes(nfas)
    n_bytes = int(classes.max()) + 1
    dfas = [_rule_dfa(nfa, classes, len(keep), limits) for nfa in nfas]
    total = sum(d.n_states for d in dfas)
    if total > limits.max_dfa_states:
        raise limits.exceeded("max_dfa_states", total, "rule automaton states")
    return _assemble(grammar, keep, dfas, classes, n_bytes)


def _assemble(grammar: Grammar, keep: list[str], dfas: list[DFATable], classes: np.ndarray,
              n_bytes: int) -> PushdownTable:
    offsets = np.cumsum([0] + [d.n_states for d in dfas])
    n = int(offsets[-1])
    transitions = np.full((n, n_bytes), -1, dtype=np.int32)
    accepting = np.zeros(n, dtype=bool)
    state_rule = np.zeros(n, dtype=np.int32)
    call_lists: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for r, d in enumerate(dfas):
        base = int(offsets[r])
        rows = slice(base, base + d.n_states)
        byte_part = d.transitions[:, :n_bytes]
        transitions[rows] = np.where(byte_part >= 0, byte_part + base, -1)
        accepting[rows] = d.accepting
        state_rule[rows] = r
        for s, row in enumerate(d.transitions[:, n_bytes:].tolist()):
            call_lists[base + s] = [(callee, t + base) for callee, t in enumerate(row) if t >= 0]
    call_offsets = np.cumsum([0] + [len(c) for c in call_lists]).astype(np.int32)
    flat = [edge for c in call_lists for edge in c]
    new_of_old, columns = merge_columns(transitions)
    return PushdownTable(
        byte_class=new_of_old[classes],
        transitions=np.ascontiguousarray(transitions[:, columns]),
        accepting=accepting,
        call_offsets=call_offsets,
        call_rule=np.array([c for c, _ in flat], dtype=np.int32),
        call_next=np.array([t for _, t in flat], dtype=np.int32),
        state_rule=state_rule,
        rule_start=offsets[:-1].astype(np.int32) + np.array([d.start for d in dfas], dtype=np.int32),
        start_rule=keep.index(grammar.start),
        rule_names=tuple(keep),
    )
