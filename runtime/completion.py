"""Shortest completions: from each automaton state, the fewest tokens that can finish the text.

A token budget (`Matcher(max_tokens=)`, `backends/token_budget.py`) needs, for whatever state
the recognizer is in, how many more tokens finishing the text takes at least. It is counted on
the automata in *steps*, each a token the vocabulary surely has:

| move | steps |
|---|---|
| a byte of a class holding a byte that a token spells alone | 1 |
| a token reference (`MARKER` + id, and a named token's text: one token) | 1 |
| any other byte (no single-byte token for any byte of its class) | not a move |
| a call of rule R (rule automata) | the cost of R from its start |

So a counted path of n steps is n tokens a model can write, and a state's cost is an upper
bound of the tokens its shortest completion needs (the exact byte count where each byte is its
own token). For a vocabulary with every single byte, every live state has a finite cost.

Invariant of `CompletionCosts` (one per compiled grammar: `CompiledGrammar.completion_costs`):
`cost` is int64[n_states], read-only, each in [0, UNREACHABLE]: for a DFA the cost to an
accepting state; for rule automata (every rule built) the cost to the end of the state's rule,
a call costing its callee's cost from its start (what follows a rule comes from its callers:
`pushdown/costs.py` adds them at run time). `max_cost` is the largest cost (UNREACHABLE when
some state has no counted completion: a bound never covers every state then). A state is
UNREACHABLE when no counted path finishes it. `within` (rule automata only) is, per state, the
largest cost inside the state's rule after a token of its stored row (-1 while unknown; filled
as fills need it, `pushdown/budget.py`); `rows` keeps DFA rows per (state, bound), at most
`DFA_ROWS_KEPT`.

The costs are one least fixpoint (`shortest_completion`), a queue-driven relaxation over the
reversed moves: a state's cost falls when a successor's does, or when a callee's start does
(every caller of the rule falls with it); costs are integers that only fall, so it ends.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
from numba.types import boolean, int32, int64

from .csr import csr_order
from .dfa.kernels import walk_bytes
from .jit import A, R, kernel
from .vocab.spelling import MARKER

UNREACHABLE = 1 << 40
"""The cost of a state no counted path finishes (sums are capped there)."""

DFA_ROWS_KEPT = 256
"""DFA rows under a budget kept per grammar (one per state and bound met near a budget's end)."""


@kernel(A(int64), A(int64), A(boolean), int64, int64, int64, int64, inline=True)
def _lower(cost, queue, queued, head, size, p, v):  # type: ignore[no-untyped-def]
    """Lower cost[p] to v if v is lower, queueing p (a circular queue of `size` states from
    `head`) unless it is queued already; the queue's new size."""
    if v < cost[p]:
        cost[p] = v
        if not queued[p]:
            queue[(head + size) % len(queue)] = p
            queued[p] = True
            return size + 1
    return size


@kernel(R(int32, 2), R(boolean), R(int64), R(int64), R(int64), R(int32), R(int32), R(int32),
        R(int64), R(int64), R(int64), R(int64), R(int64))
def shortest_completion(transitions, step_class, ref_offsets, ref_from, call_source, call_rule,  # type: ignore[no-untyped-def]
                        call_next, rule_start, accepting_states, by_next, by_next_order, by_rule,
                        by_rule_order):
    """cost int64[n]: the fewest steps from each state to one of `accepting_states` (see the
    module), capped at UNREACHABLE.

    A byte move counts where `step_class` holds for its class;
    `ref_from[ref_offsets[t]:ref_offsets[t + 1]]` are the states with a reference move to t;
    calls are the triples (call_source, call_rule, call_next), grouped by next state
    (`by_next`, `by_next_order`) and by rule (`by_rule`, `by_rule_order`) as `csr_order` gives
    them. Relies on the table's invariants for every index."""
    n, k = transitions.shape
    # Reversed counted byte moves, grouped by target.
    counts = np.zeros(n + 1, dtype=np.int64)
    for s in range(n):
        for c in range(k):
            t = transitions[s, c]
            if t >= 0 and step_class[c]:
                counts[t + 1] += 1
    for s in range(n):
        counts[s + 1] += counts[s]
    preds = np.empty(counts[n], dtype=np.int64)
    fill = counts[:n].copy()
    for s in range(n):
        for c in range(k):
            t = transitions[s, c]
            if t >= 0 and step_class[c]:
                preds[fill[t]] = s
                fill[t] += 1
    n_rules = len(rule_start)
    starts_at = np.full(n, -1, dtype=np.int64)  # one rule per start state (automata are per rule)
    for r in range(n_rules):
        if rule_start[r] >= 0:
            starts_at[rule_start[r]] = r
    cost = np.full(n, UNREACHABLE, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    queued = np.zeros(n, dtype=np.bool_)
    head = 0
    size = 0
    for s in accepting_states:
        size = _lower(cost, queue, queued, head, size, s, 0)
    while size:
        u = queue[head]
        head = (head + 1) % n
        size -= 1
        queued[u] = False
        cu = cost[u]
        for j in range(counts[u], counts[u + 1]):
            size = _lower(cost, queue, queued, head, size, preds[j], cu + 1)
        for j in range(ref_offsets[u], ref_offsets[u + 1]):
            size = _lower(cost, queue, queued, head, size, ref_from[j], cu + 1)
        # u as the state after a call: its source costs the callee's start plus u.
        for j in range(by_next[u], by_next[u + 1]):
            c = by_next_order[j]
            size = _lower(cost, queue, queued, head, size, call_source[c],
                          min(UNREACHABLE, cost[rule_start[call_rule[c]]] + cu))
        # u as a rule's start: every call of that rule costs u plus the state after it.
        r = starts_at[u]
        if r >= 0:
            for j in range(by_rule[r], by_rule[r + 1]):
                c = by_rule_order[j]
                size = _lower(cost, queue, queued, head, size, call_source[c],
                              min(UNREACHABLE, cu + cost[call_next[c]]))
    return cost


@dataclass(frozen=True, eq=False)
class CompletionCosts:
    """The completion costs of one compiled grammar's automaton (see the module)."""

    cost: np.ndarray
    max_cost: int
    within: np.ndarray | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    rows: OrderedDict[tuple[int, int], np.ndarray] = field(default_factory=OrderedDict,
                                                           repr=False)

    def kept_row(self, state: int, bound: int) -> np.ndarray | None:
        """The DFA row stored for (`state`, `bound`), if any."""
        with self.lock:
            row = self.rows.get((state, bound))
            if row is not None:
                self.rows.move_to_end((state, bound))
            return row

    def keep_row(self, state: int, bound: int, row: np.ndarray) -> None:
        """Store a DFA row for (`state`, `bound`), dropping the least recently used past
        `DFA_ROWS_KEPT`."""
        with self.lock:
            self.rows[(state, bound)] = row
            while len(self.rows) > DFA_ROWS_KEPT:
                self.rows.popitem(last=False)


def _step_classes(byte_class: np.ndarray, n_classes: int, data: np.ndarray,
                  offsets: np.ndarray) -> np.ndarray:
    """bool[n_classes]: the classes holding a byte that some token spells alone."""
    single = np.flatnonzero(np.diff(offsets) == 1)
    alone = np.zeros(256, dtype=bool)
    alone[data[offsets[single]]] = True
    steps = np.zeros(n_classes, dtype=bool)
    steps[byte_class[alone]] = True
    return steps


def _reference_moves(transitions: np.ndarray, byte_class: np.ndarray, data: np.ndarray,
                     offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, sources) of the reference moves grouped by target: state s moves to t when
    a token spelled with `MARKER` walks from s to t."""
    n = transitions.shape[0]
    starts = np.flatnonzero(transitions[:, byte_class[MARKER]] >= 0)
    refs = np.flatnonzero((np.diff(offsets) > 0) & (data[np.minimum(offsets[:-1], len(data) - 1)]
                                                    == MARKER)) if len(data) else []
    moves = {(int(s), int(t)) for s in starts for tok in refs
             if (t := walk_bytes(transitions, byte_class, data, offsets[tok], offsets[tok + 1],
                                 s)) >= 0}
    src = np.array(sorted(moves), dtype=np.int64).reshape(-1, 2)
    grouped, order = csr_order(n, src[:, 1].copy())
    return grouped, src[order, 0].copy()


def completion_costs(transitions: np.ndarray, byte_class: np.ndarray, accepting: np.ndarray,
                     spelling: tuple[np.ndarray, np.ndarray],
                     calls: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
                     ) -> CompletionCosts:
    """The completion costs of a validated DFA (`calls` None) or of rule automata with every
    rule built (`calls` = call_offsets, call_rule, call_next, rule_start), over a vocabulary
    spelled `spelling` = (data, offsets) (`TokenSpelling`)."""
    data, offsets = spelling
    n = transitions.shape[0]
    if calls is None:
        call_source = np.zeros(0, dtype=np.int64)
        call_rule = call_next = rule_start = np.zeros(0, dtype=np.int32)
    else:
        call_offsets, call_rule, call_next, rule_start = calls
        call_source = np.repeat(np.arange(n, dtype=np.int64), np.diff(call_offsets))
    ref_offsets, ref_from = _reference_moves(transitions, byte_class, data, offsets)
    by_next, by_next_order = csr_order(n, call_next)
    by_rule, by_rule_order = csr_order(len(rule_start), call_rule)
    cost = shortest_completion(transitions, _step_classes(byte_class, transitions.shape[1], data,
                                                          offsets),
                               ref_offsets, ref_from, call_source, call_rule, call_next,
                               rule_start, np.flatnonzero(accepting).astype(np.int64), by_next,
                               by_next_order, by_rule, by_rule_order)
    cost.flags.writeable = False
    within = None if calls is None else np.full(n, -1, dtype=np.int64)
    return CompletionCosts(cost, int(cost.max()), within)
