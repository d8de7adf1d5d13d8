"""Grammar → rule automata with calls (`PushdownTable`), for languages that need a stack.

Which rules stay rules: the start rule and, in each group of mutually recursive rules, enough
rules to break every cycle (a finite automaton cannot count their nesting), chosen so that
rule ends are rare (see `choose_kept`); every other rule is inlined into its callers, so
strings, numbers and whitespace become plain byte transitions inside the rule that uses them.
The costs come from the grammar itself (`rule_summaries`, `rule_facts.end_cost`: first and last bytes,
nullability and follow sets of the rules, computed only when a recursive group has several
rules), so the automata are built once; which rules are productive, from `productive_among`.
With `keep_all`, every reachable rule stays a rule (for grammars whose fully inlined automaton
is too large).

Each kept rule's body becomes a Thompson NFA whose references to kept rules are call edges; a
call of the rule itself in tail position (nothing can follow it) becomes a jump back to the
rule's start, so right recursion runs as a loop. All rules share one byte-class partition;
each is determinized and minimized with the call columns kept apart from the byte columns
(bounded repetitions of one-byte classes counted, `counted.py`, where that is exact).
References to unproductive rules are dropped (they can never complete). The states budget is
checked after each rule automaton, so an oversized grammar fails before the rest are built.
The runtime assembles the rule automata into one table (`runtime/pushdown/assembly.py`); with
`lazy`, it builds them through this module as its matchers first reach them, from the facts
(`rule_facts.kept_facts`) that a table cannot derive from part of its rules.
"""
from __future__ import annotations

import collections
import dataclasses
import threading
from collections.abc import Callable, Mapping

import numpy as np

from ...runtime.pushdown.assembly import RuleAutomaton, assemble
from ...runtime.pushdown.table import PushdownTable
from ..automata.counted import counted_or_nfa
from ..automata.dfa import UncheckedDFA, byte_classes, subset_table
from ..automata.flat_ir import CALL, NO_INLINE, FlatIR, flatten
from ..automata.minimize import minimal
from ..automata.nfa import NFA
from ..ir.graph import (
    check_references,
    cyclic_components,
    per_grammar,
    reachable_rules,
    rule_uses,
)
from ..ir.nodes import CharClass, Grammar, Node
from ..ir.summaries import productive_among, rule_summaries
from ..support import deadline
from ..support.caches import cache_name, register
from ..support.errors import BudgetExceeded, GrammarError
from ..support.limits import DEFAULT_LIMITS, Limits
from .byte_partition import byte_partition
from .rule_facts import end_cost, kept_facts

EMPTY_CLASS = CharClass(())


def _closes_cycle(name: str, nodes: set[str], graph: dict[str, list[str]]) -> bool:
    """Whether adding `name` to `nodes` (whose references form no cycle) makes a cycle, that
    is, whether `name` reaches itself through `nodes`."""
    seen: set[str] = set()
    stack = [m for m in graph[name] if m in nodes or m == name]
    while stack:
        m = stack.pop()
        if m == name:
            return True
        if m not in seen:
            seen.add(m)
            stack.extend(x for x in graph[m] if x in nodes or x == name)
    return False


def choose_kept(grammar: Grammar, order: list[str],
                cost: Callable[[], dict[str, float]]) -> list[str]:
    """The start rule, the rules marked `kept`, and, per recursive component, a set of rules
    that breaks every cycle, built by inlining the costliest rules first while the inlined
    ones stay acyclic. `cost()` gives the costs; it is asked only when a component has more
    than one rule (a rule that calls only itself is kept whatever it costs).

    A kept rule's end is where a token may have to be checked against the real stack, so the
    cheapest rules to keep are those whose strings end with few bytes and are followed by few
    bytes (the closing bracket of an object, not the last digit of any value)."""
    uses = rule_uses(grammar)
    listed = set(order)
    graph = {name: [r.name for r in uses[name] if r.name in listed] for name in order}
    position = {name: i for i, name in enumerate(order)}
    keep = [grammar.start, *(r.name for r in grammar.rules if r.kept and r.name in listed)]
    costs: dict[str, float] = {}
    for comp in cyclic_components(graph, order):
        inlined: set[str] = set()
        if len(comp) > 1 and not costs:
            costs = cost()
        for name in sorted(comp, key=lambda n: (-costs.get(n, 0.0), position[n])):
            deadline.check()
            if name not in keep and not _closes_cycle(name, inlined, graph):
                inlined.add(name)
        keep += [name for name in comp if name not in inlined and name != grammar.start]
    return sorted(set(keep), key=position.__getitem__)


def inlined_bodies(grammar: Grammar, keep: list[str], order: list[str]) -> dict[str, Node]:
    """What a reference stands for in the kept rules' automata: the body of every rule of
    `order` (the reachable productive rules) that is not kept, and nothing for a rule outside
    `order` (unproductive: it derives nothing)."""
    kept, productive = set(keep), set(order)
    bodies: dict[str, Node] = {r.name: EMPTY_CLASS for r in grammar.rules if r.name not in productive}
    bodies.update((r.name, r.body) for r in grammar.rules
                  if r.name in productive and r.name not in kept)
    return bodies


def eliminate_tail_self_calls(nfa: NFA, symbol: int) -> NFA:
    """`nfa` with each call edge on `symbol` whose target can only finish (its epsilon closure
    holds the accept state and no edges) turned into an epsilon edge back to the start."""
    calls = np.flatnonzero(nfa.edge_lo == symbol)
    tail = [j for j in calls.tolist() if _only_finishes(nfa, int(nfa.edge_to[j]))]
    if not tail:
        return nfa
    n = nfa.n_states
    src = np.repeat(np.arange(n), np.diff(nfa.edge_off))
    keep = np.ones(len(src), dtype=bool)
    keep[tail] = False
    eps_src = np.repeat(np.arange(n), np.diff(nfa.eps_off))
    return NFA.from_arrays(n, src[keep], nfa.edge_lo[keep], nfa.edge_hi[keep],
                           nfa.edge_to[keep], np.concatenate((eps_src, src[tail])),
                           np.append(nfa.eps_to, [nfa.start] * len(tail)), nfa.start,
                           nfa.accept)


def _only_finishes(nfa: NFA, state: int) -> bool:
    tail = nfa.epsilon_closure({state})
    return nfa.accept in tail and not any(nfa.edge_off[q + 1] > nfa.edge_off[q] for q in tail)


@dataclasses.dataclass(frozen=True, eq=False)
class RuleDFA:
    """One kept rule's automaton (minimal but for counted repetitions, `counted.py`): columns
    are its own byte classes (`table.byte_class`, no two with equal columns), then one per
    rule it calls (`called`, in that order)."""

    table: UncheckedDFA
    called: tuple[str, ...]


_RULE_DFAS: collections.OrderedDict[tuple[object, ...], RuleDFA] = collections.OrderedDict()
_RULE_DFAS_SIZE = 512
_rule_dfas_lock = threading.Lock()


def clear_rule_dfas() -> None:
    """Forget the rule automata kept across compiles."""
    with _rule_dfas_lock:
        _RULE_DFAS.clear()


register(cache_name(__name__, "rule_dfa"), clear_rule_dfas, lambda: len(_RULE_DFAS),
         _RULE_DFAS_SIZE)


def rule_dfa(name: str, body: Node, limits: Limits,
             inline: Mapping[str, Node] = NO_INLINE) -> RuleDFA:
    """The automaton of rule `name` with body `body`, whose references to the rules of
    `inline` stand for their bodies and whose other references are calls. Cached by the
    flattened body (`FlatIR.key`), so a rule met again in a later compile (the "any JSON
    value" rule of most schemas, say) costs one flattening."""
    flat = flatten(body, limits, None, inline)
    key = (name, flat.key(), limits)
    with _rule_dfas_lock:
        hit = _RULE_DFAS.get(key)
        if hit is not None:
            _RULE_DFAS.move_to_end(key)
            return hit
    table, called = _rule_table(name, flat, limits), flat.called
    built = RuleDFA(table, called)
    with _rule_dfas_lock:
        _RULE_DFAS[key] = built
        if len(_RULE_DFAS) > _RULE_DFAS_SIZE:
            _RULE_DFAS.popitem(last=False)
    return built


def _rule_table(name: str, flat: FlatIR, limits: Limits) -> UncheckedDFA:
    """The automaton of a flattened rule body, bounded repetitions of one-byte classes counted
    (`counted.py`) where their counts can be told apart, else copied and minimized."""
    called = flat.called
    built = counted_or_nfa(flat, limits, lambda nfa: _tail_loops(nfa, name, called))
    if not isinstance(built, NFA):
        return built
    classes = byte_classes(built)
    return minimal(classes, *subset_table(built, classes, len(called), limits), 0,
                   n_calls=len(called))


def _tail_loops(nfa: NFA, name: str, called: tuple[str, ...]) -> NFA:
    return eliminate_tail_self_calls(nfa, CALL + called.index(name)) if name in called else nfa


SMALL_LEAF_STATES = 64
"""A rule that references no other rule and whose automaton has at most this many states is
inlined even when rules are otherwise kept (`inline_leaves`)."""

LEAF_PROBE_FACTOR = 4
"""Whether a leaf is small is found by building it with at most this many times
`SMALL_LEAF_STATES` subset states (and `LEAF_PROBE_FACTOR**2` times as many NFA states): a
large leaf costs a bounded probe, not its whole automaton, and is kept as a rule, built when
a matcher first reaches it (one whose minimal automaton is small but whose subset
construction is not is kept too: a choice of speed, never of language)."""


def build_pushdown(
    grammar: Grammar, limits: Limits = DEFAULT_LIMITS, *, keep_all: bool = False,
    inline_leaves: bool = False, lazy: bool = False, relaxed: Limits | None = None,
) -> PushdownTable:
    """The rule automata of `grammar`; GrammarError for a missing start rule, an undefined
    reference or an empty language, BudgetExceeded past `limits`. With `keep_all`, every
    reachable rule stays a rule, except, with `inline_leaves`, small rules that use no other
    (strings, numbers: each end of a kept rule is a place where tokens must be checked against
    the real stack, so keeping those would make most tokens stack-dependent). With `lazy`,
    only the start rule is built now (`_build`); a rule over budget is then found when it is
    built, in a matcher's step; with `relaxed`, a rule other than the start rule that is over
    `limits` is built within `relaxed` instead (`_KeptRules.build`)."""
    check_references(grammar)
    reachable = reachable_rules(grammar)
    productive = per_grammar(grammar, "productive", lambda g: productive_among(g, reachable))
    order = [name for name in reachable if name in productive]
    if grammar.start not in order:
        raise GrammarError(
            f"the language is empty: the start rule '{grammar.start}' derives no finite string",
            code="empty-language")
    if keep_all:
        keep = _without_small_leaves(grammar, order, limits) if inline_leaves else order
        return _build(grammar, keep, order, limits, lazy)
    keep = choose_kept(grammar, order, lambda: end_cost(grammar, order, *per_grammar(
        grammar, "summaries", lambda g: rule_summaries(g, reachable))))
    return _build(grammar, keep, order, limits, lazy, relaxed)


def _without_small_leaves(grammar: Grammar, order: list[str], limits: Limits) -> list[str]:
    uses = rule_uses(grammar)
    rules = grammar.by_name
    probe = dataclasses.replace(
        limits, max_dfa_states=min(limits.max_dfa_states, LEAF_PROBE_FACTOR * SMALL_LEAF_STATES),
        max_nfa_states=min(limits.max_nfa_states, LEAF_PROBE_FACTOR**2 * SMALL_LEAF_STATES))
    keep = []
    for name in order:
        deadline.check()
        if name != grammar.start and not uses[name] and not rules[name].kept:
            try:
                if rule_dfa(name, rules[name].body, probe).table.n_states <= SMALL_LEAF_STATES:
                    continue
            except BudgetExceeded:
                pass
        keep.append(name)
    return keep


class _KeptRules:
    """The `RuleSource` of one grammar's kept rules: rule i is `keep[i]`, its references to
    the rules of `inline` stand for their bodies. Counts the states built against
    `max_pushdown_states` (and each rule against `max_dfa_states`)."""

    def __init__(self, grammar: Grammar, keep: list[str], order: list[str],
                 limits: Limits, relaxed: Limits | None = None) -> None:
        self._keep = keep
        self._index = {name: i for i, name in enumerate(keep)}
        self._bodies = [grammar.by_name[name].body for name in keep]
        self._inline = inlined_bodies(grammar, keep, order)
        self._limits = limits
        self._relaxed = relaxed
        self._start = self._index[grammar.start]
        self._states = 0
        self._lock = threading.Lock()
        self._partition: tuple[np.ndarray | None] | None = None

    def byte_partition(self) -> np.ndarray | None:
        """A partition of the bytes that refines every kept rule's byte classes
        (`byte_partition.py`; computed once)."""
        with self._lock:
            if self._partition is None:
                self._partition = (byte_partition([*self._bodies, *self._inline.values()]),)
            return self._partition[0]

    def build(self, rule: int, ahead: bool = False) -> RuleAutomaton:
        """Rule `rule`'s automaton (`ahead`: built ahead of need, counted all the same);
        `BudgetExceeded` past a budget. With `relaxed` limits, a rule other than the start
        rule that goes over the first limits (a first attempt's inlining budget, which the
        compile can no longer fall back from once matchers build rules) is built again
        within `relaxed`: the same language, in a larger automaton."""
        name, limits = self._keep[rule], self._limits
        try:
            try:
                d = rule_dfa(name, self._bodies[rule], limits, self._inline)
            except BudgetExceeded:
                if self._relaxed is None or rule == self._start:
                    raise
                d = rule_dfa(name, self._bodies[rule], self._relaxed, self._inline)
        except BudgetExceeded as exc:
            raise exc.located(message=f"rule '{name}': {exc.message}") from None
        with self._lock:
            total = self._states + d.table.n_states
            if total > limits.max_pushdown_states:
                raise limits.exceeded("max_pushdown_states", f"more than {total}",
                                      "states of all rule automata")
            self._states = total
        t = d.table
        return RuleAutomaton(t.transitions, t.byte_class, t.accepting,
                             np.array([self._index[c] for c in d.called], dtype=np.int32))


def _build(grammar: Grammar, keep: list[str], order: list[str], limits: Limits,
           lazy: bool = False, relaxed: Limits | None = None) -> PushdownTable:
    """The table of the kept rules: every one built now, or (`lazy`) the start rule only, the
    others built as the recognizer reaches them (`runtime/pushdown/assembly.py`) within
    `limits`, or past them within `relaxed` (`_KeptRules.build`)."""
    source = _KeptRules(grammar, keep, order, limits, relaxed)
    start = keep.index(grammar.start)
    tokens = np.array([-1 if (m := grammar.by_name[name].max_tokens) is None else m
                       for name in keep], dtype=np.int32)
    if lazy:
        facts = kept_facts(grammar, keep, order)
        return assemble({start: source.build(start)}, tuple(keep), start, facts, source,
                        rule_tokens=tokens)
    built = {}
    for i in range(len(keep)):
        deadline.check()
        built[i] = source.build(i)
    return assemble(built, tuple(keep), start, rule_tokens=tokens)
