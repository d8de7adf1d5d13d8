"""Subset construction: byte-level NFA → trimmed DFA over byte classes.

Byte classes partition 0..255 so that no NFA edge separates two bytes of one class; the DFA is
built per class, so a table row has one entry per class instead of 256. The result is trimmed
(states that cannot reach acceptance become the dead state -1) and numbered in breadth-first
order from the start, so equal automata give equal tables.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable

import numpy as np

from ..runtime.dfa_kernels import breadth_first_order, reachable_and_live
from ..runtime.dfa_table import DFATable
from .limits import DEFAULT_LIMITS, Limits
from .nfa import CALL, NFA
from .subset import subset_construction


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
    transitions, accepting = subset_table(nfa, classes, n_calls, limits)
    return trim(classes, transitions, accepting, 0, compact=n_calls == 0)


def subset_table(nfa: NFA, classes: np.ndarray, n_calls: int = 0,
                 limits: Limits = DEFAULT_LIMITS) -> tuple[np.ndarray, np.ndarray]:
    """(transitions int32[m, n_classes], accepting bool[m]) of the subset construction of `nfa`
    over `classes` and `n_calls` call columns: start 0, every state reachable, not trimmed."""
    n_bytes = int(classes.max()) + 1
    column = np.concatenate([classes, n_bytes + np.arange(n_calls, dtype=np.int32)])
    e_off = np.zeros(nfa.n_states + 1, dtype=np.int64)
    np.cumsum([len(edges) for edges in nfa.edges], out=e_off[1:])
    ends = np.array([e for edges in nfa.edges for e in edges], dtype=np.int64).reshape(-1, 3)
    eps_off = np.zeros(nfa.n_states + 1, dtype=np.int64)
    np.cumsum([len(es) for es in nfa.eps], out=eps_off[1:])
    eps_to = np.fromiter(itertools.chain.from_iterable(nfa.eps), dtype=np.int32,
                         count=int(eps_off[-1]))
    col = np.where(ends[:, :2] >= CALL, ends[:, :2] - CALL + 256, ends[:, :2])
    transitions, accepting, m = subset_construction(
        e_off, column[col[:, 0]], column[col[:, 1]], ends[:, 2].astype(np.int32), eps_off, eps_to,
        nfa.start, nfa.accept, n_bytes + n_calls, limits.max_dfa_states)
    if m < 0:
        raise limits.exceeded("max_dfa_states", f"more than {limits.max_dfa_states}", "DFA states")
    return transitions, accepting


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
    old = breadth_first_order(np.ascontiguousarray(transitions, dtype=np.int32), live, start)
    remap = np.full(n + 1, -1, dtype=np.int32)
    remap[old] = np.arange(len(old), dtype=np.int32)
    sub = transitions[old]
    new_tr = np.where(sub >= 0, remap[np.where(sub >= 0, sub, n)], -1).astype(np.int32)
    table = DFATable(
        byte_class=byte_class.astype(np.int32),
        transitions=new_tr.reshape(len(old), k),
        accepting=accepting[old],
        start=0,
    )
    return compact_classes(table) if compact else table


def merge_columns(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(new index of each column, the first old column of each new one), merging identical
    columns and numbering them in order of first appearance (so column 0 stays 0)."""
    by_column = np.ascontiguousarray(table.T)
    index: dict[bytes, int] = {}
    new_of_old = np.array([index.setdefault(col.tobytes(), len(index)) for col in by_column],
                          dtype=np.int32)
    first = np.unique(new_of_old, return_index=True)[1]
    return new_of_old, first


def compact_classes(dfa: DFATable) -> DFATable:
    """Merge byte classes whose columns are identical in every state."""
    new_of_old, first = merge_columns(dfa.transitions)
    if len(first) == dfa.n_classes:
        return dfa
    return DFATable(
        byte_class=new_of_old[dfa.byte_class],
        transitions=np.ascontiguousarray(dfa.transitions[:, first]),
        accepting=dfa.accepting,
        start=dfa.start,
    )
