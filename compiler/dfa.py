"""Subset construction: byte-level NFA → trimmed DFA over byte classes.

Byte classes partition 0..255 so that no NFA edge separates two bytes of one class; the DFA is
built per class, so a table row has one entry per class instead of 256. The result is trimmed
(states that cannot reach acceptance become the dead state -1) and numbered in breadth-first
order from the start, so equal automata give equal tables.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterable

import numpy as np

from ..runtime.dfa_kernels import reachable_and_live
from ..runtime.dfa_table import DFATable
from .limits import DEFAULT_LIMITS, Limits
from .nfa import CALL, NFA


def byte_classes(nfas: NFA | Iterable[NFA]) -> np.ndarray:
    """int32[256]: the coarsest partition of bytes that every byte edge of the NFAs respects."""
    cuts = np.zeros(257, dtype=bool)
    for nfa in [nfas] if isinstance(nfas, NFA) else nfas:
        for edges in nfa.edges:
            for lo, hi, _ in edges:
                if lo < CALL:
                    cuts[lo] = True
                    cuts[hi + 1] = True
    cuts[0] = False
    return np.cumsum(cuts[:256]).astype(np.int32)


def determinize(
    nfa: NFA,
    limits: Limits = DEFAULT_LIMITS,
    classes: np.ndarray | None = None,
    n_calls: int = 0,
) -> DFATable:
    """The DFA of `nfa`, trimmed, not minimized.

    Columns are the byte classes (the NFA's own, or `classes` when several automata must
    share one partition), then `n_calls` columns for call edges CALL + 0 .. CALL + n_calls - 1,
    which count as passable when trimming. Classes are merged only when there are no calls.
    """
    if classes is None:
        classes = byte_classes(nfa)
    n_bytes = int(classes.max()) + 1
    n_classes = n_bytes + n_calls

    def column(symbol: int) -> int:
        return n_bytes + symbol - CALL if symbol >= CALL else int(classes[symbol])

    # Per NFA state: (first column, last column, target) for each edge.
    class_edges = [
        [(column(lo), column(hi), t) for lo, hi, t in edges] for edges in nfa.edges
    ]
    closure_cache: dict[frozenset[int], frozenset[int]] = {}

    def closure(states: frozenset[int]) -> frozenset[int]:
        c = closure_cache.get(states)
        if c is None:
            c = nfa.epsilon_closure(states)
            closure_cache[states] = c
        return c

    start = closure(frozenset({nfa.start}))
    index: dict[frozenset[int], int] = {start: 0}
    sets = [start]
    rows: list[list[int]] = []
    queue = deque([start])
    while queue:
        current = queue.popleft()
        targets: list[set[int] | None] = [None] * n_classes
        for s in current:
            for c_lo, c_hi, t in class_edges[s]:
                for c in range(c_lo, c_hi + 1):
                    bucket = targets[c]
                    if bucket is None:
                        targets[c] = {t}
                    else:
                        bucket.add(t)
        row = [-1] * n_classes
        for c, bucket in enumerate(targets):
            if bucket is None:
                continue
            nxt = closure(frozenset(bucket))
            j = index.get(nxt)
            if j is None:
                if len(sets) >= limits.max_dfa_states:
                    raise limits.exceeded("max_dfa_states", f"more than {len(sets)}", "DFA states")
                j = len(sets)
                index[nxt] = j
                sets.append(nxt)
                queue.append(nxt)
            row[c] = j
        rows.append(row)
    transitions = np.array(rows, dtype=np.int32).reshape(len(rows), n_classes)
    accepting = np.array([nfa.accept in s for s in sets], dtype=bool)
    return trim(classes, transitions, accepting, 0, compact=n_calls == 0)


def trim(
    byte_class: np.ndarray,
    transitions: np.ndarray,
    accepting: np.ndarray,
    start: int,
    compact: bool = True,
) -> DFATable:
    """Drop states that are unreachable or cannot reach acceptance; renumber breadth-first;
    merge identical byte classes when `compact`."""
    n = transitions.shape[0]
    _, live = reachable_and_live(np.ascontiguousarray(transitions, dtype=np.int32),
                                 np.ascontiguousarray(accepting, dtype=np.bool_), start)
    k = transitions.shape[1]
    if not live[start]:
        return DFATable(
            byte_class=np.zeros(256, dtype=np.int32),
            transitions=np.full((1, 1), -1, dtype=np.int32),
            accepting=np.zeros(1, dtype=bool),
            start=0,
        )
    live_list = live.tolist()
    new_id = {start: 0}
    order = [start]
    i = 0
    while i < len(order):
        s = order[i]
        i += 1
        for t in transitions[s].tolist():
            if t >= 0 and live_list[t] and t not in new_id:
                new_id[t] = len(order)
                order.append(t)
    old = np.array(order, dtype=np.int64)
    remap = np.full(n + 1, -1, dtype=np.int32)
    remap[old] = np.arange(len(order), dtype=np.int32)
    sub = transitions[old]
    new_tr = np.where(sub >= 0, remap[np.where(sub >= 0, sub, n)], -1).astype(np.int32)
    table = DFATable(
        byte_class=byte_class.astype(np.int32),
        transitions=new_tr.reshape(len(order), k),
        accepting=accepting[old],
        start=0,
    )
    return compact_classes(table) if compact else table


def compact_classes(dfa: DFATable) -> DFATable:
    """Merge byte classes whose columns are identical in every state."""
    _, first, inverse = np.unique(dfa.transitions, axis=1, return_index=True, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    if len(first) == dfa.n_classes:
        return dfa
    # Renumber merged classes in order of first appearance, so byte 0's class is 0.
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    new_of_old = rank[inverse].astype(np.int32)
    columns = np.empty(len(first), dtype=np.int64)
    columns[new_of_old] = np.arange(dfa.n_classes)
    return DFATable(
        byte_class=new_of_old[dfa.byte_class],
        transitions=np.ascontiguousarray(dfa.transitions[:, columns]).astype(np.int32),
        accepting=dfa.accepting,
        start=dfa.start,
    )
