"""Byte-level NFA → trimmed DFA over byte classes: the driver of determinization (the kernel
itself is `subset_kernel.py`), trimming, and merging equal columns.

Byte classes partition 0..255 so that no NFA edge separates two bytes of one class; the DFA is
built per class, so a table row has one entry per class instead of 256. The result is trimmed
(states that cannot reach acceptance become the dead state -1) and numbered in breadth-first
order from the start, so equal automata give equal tables (one Numba kernel: liveness,
breadth-first numbering and renumbering).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np
from numba.types import boolean, int32, int64

from ...runtime.dfa.kernels import breadth_first_order, reachable_and_live
from ...runtime.dfa.table import DFATable
from ...runtime.jit import R, kernel
from ..support.limits import DEFAULT_LIMITS, Limits
from .flat_ir import CALL
from .hashing import FNV_OFFSET, hash_step
from .nfa import NFA
from .subset_kernel import subset_construction


def byte_classes(nfas: NFA | Iterable[NFA]) -> np.ndarray:
    """int32[256]: the coarsest partition of bytes that every byte edge of the NFAs respects."""
    if isinstance(nfas, NFA):
        return _byte_classes(nfas.edge_lo, nfas.edge_hi)
    nfas = list(nfas)
    return _byte_classes(np.concatenate([n.edge_lo for n in nfas] + [np.zeros(0, np.int32)]),
                         np.concatenate([n.edge_hi for n in nfas] + [np.zeros(0, np.int32)]))


@kernel(R(int32), R(int32), tiered=True)
def _byte_classes(edge_lo, edge_hi):  # type: ignore[no-untyped-def]
    cuts = np.zeros(257, dtype=np.bool_)
    for j in range(len(edge_lo)):
        if edge_lo[j] < CALL:
            cuts[edge_lo[j]] = True
            cuts[edge_hi[j] + 1] = True
    out = np.empty(256, dtype=np.int32)
    c = 0
    for b in range(256):
        if b and cuts[b]:
            c += 1
        out[b] = c
    return out


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
    return subset_sets(nfa, classes, n_calls, limits)[:2]


def edge_columns(nfa: NFA, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first and last column of each edge of `nfa` over `classes`, then one column per
    called rule (the byte classes of a range are consecutive)."""
    return _edge_columns(nfa.edge_lo, nfa.edge_hi, classes)


@kernel(R(int32), R(int32), R(int32), tiered=True)
def _edge_columns(edge_lo, edge_hi, classes):  # type: ignore[no-untyped-def]
    n_bytes = classes.max() + 1
    lo = np.empty(len(edge_lo), dtype=np.int32)
    hi = np.empty(len(edge_lo), dtype=np.int32)
    for j in range(len(edge_lo)):
        a, b = edge_lo[j], edge_hi[j]
        lo[j] = classes[a] if a < CALL else n_bytes + a - CALL
        hi[j] = classes[b] if b < CALL else n_bytes + b - CALL
    return lo, hi


def subset_sets(nfa: NFA, classes: np.ndarray, n_calls: int = 0,
                limits: Limits = DEFAULT_LIMITS,
                columns: tuple[np.ndarray, np.ndarray] | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`subset_table` with the NFA states of each DFA state: (transitions, accepting, pool,
    pool_off), the important states of DFA state d (those with edges, and the accept state)
    being pool[pool_off[d]:pool_off[d + 1]]. `columns`: `edge_columns`, when the caller has
    them."""
    lo, hi = edge_columns(nfa, classes) if columns is None else columns
    transitions, accepting, m, pool, pool_off = subset_construction(
        nfa.edge_off, lo, hi, nfa.edge_to, nfa.eps_off, nfa.eps_to, nfa.start, nfa.accept,
        int(classes.max()) + 1 + n_calls, limits.max_dfa_states)
    if m < 0:
        raise limits.exceeded("max_dfa_states", f"more than {limits.max_dfa_states}", "DFA states")
    return transitions, accepting, pool, pool_off


@kernel(R(int32, 2), R(boolean), int64, tiered=True)
def trimmed_table(transitions, accepting, start):  # type: ignore[no-untyped-def]
    """(transitions, accepting) of the states of `transitions` (int32[n, k], -1: no move)
    that are reachable from `start` through states that can reach acceptance, numbered
    breadth-first (columns in order), moves into other states dropped; no states when `start`
    cannot reach acceptance."""
    n, k = transitions.shape
    live = reachable_and_live(transitions, accepting, start)[1]
    if not live[start]:
        return np.empty((0, k), dtype=np.int32), np.zeros(0, dtype=np.bool_)
    order = breadth_first_order(transitions, live, start)
    new = np.full(n, -1, dtype=np.int32)
    for i in range(len(order)):
        new[order[i]] = i
    size = len(order)
    out = np.empty((size, k), dtype=np.int32)
    acc = np.empty(size, dtype=np.bool_)
    for i in range(size):
        s = order[i]
        acc[i] = accepting[s]
        for c in range(k):
            t = transitions[s, c]
            out[i, c] = new[t] if t >= 0 else -1
    return out, acc


def trim(
    byte_class: np.ndarray,
    transitions: np.ndarray,
    accepting: np.ndarray,
    start: int,
    compact: bool = True,
    n_calls: int = 0,
) -> DFATable:
    """Drop states that are unreachable or cannot reach acceptance; renumber breadth-first;
    when `compact`, merge byte classes whose columns are equal in every state (the last
    `n_calls` columns are call columns: kept as they are, after the byte columns)."""
    table, acc = trimmed_table(np.ascontiguousarray(transitions, dtype=np.int32),
                               np.ascontiguousarray(accepting, dtype=np.bool_), start)
    return trimmed_dfa(byte_class, table, acc, compact, n_calls)


def read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view, so the kernels are compiled for one array type (tables of a
    `DFATable` are read-only)."""
    view = a.view()
    view.flags.writeable = False
    return view


class UncheckedDFA(NamedTuple):
    """A trimmed DFA as arrays, start 0 (the empty language: one state, no moves), before it
    is checked as a `DFATable`: what rule automata stay, since `PushdownTable` checks them
    once assembled."""

    byte_class: np.ndarray
    transitions: np.ndarray
    accepting: np.ndarray

    @property
    def n_states(self) -> int:
        return int(self.transitions.shape[0])

    def dfa(self) -> DFATable:
        """The checked `DFATable`."""
        return DFATable(byte_class=self.byte_class, transitions=self.transitions,
                        accepting=self.accepting, start=0)


def trimmed_dfa(byte_class: np.ndarray, table: np.ndarray, accepting: np.ndarray,
                compact: bool = True, n_calls: int = 0) -> DFATable:
    """The DFA (start 0) of a trimmed `table`, or of the empty language when it has no states;
    with `compact`, equal byte columns merged (the last `n_calls` columns are call columns,
    kept as they are after the byte columns)."""
    return trimmed(byte_class, table, accepting, compact, n_calls).dfa()


def trimmed(byte_class: np.ndarray, table: np.ndarray, accepting: np.ndarray,
            compact: bool = True, n_calls: int = 0) -> UncheckedDFA:
    """`trimmed_dfa`'s arrays, unchecked."""
    byte_class = byte_class.astype(np.int32)
    if not len(accepting):
        return UncheckedDFA(np.zeros(256, dtype=np.int32), np.full((1, 1), -1, dtype=np.int32),
                     np.zeros(1, dtype=bool))
    own = table.shape[1] - n_calls
    table = np.ascontiguousarray(table, dtype=np.int32)
    if compact:
        new_of_old, first = _merge_columns(table, own)
        if len(first) < own:
            byte_class = new_of_old[byte_class]
            table = _kept_columns(table, first, own)
    return UncheckedDFA(read_only(byte_class), read_only(table), read_only(accepting))


@kernel(R(int32, 2), R(int64), int64, tiered=True)
def _kept_columns(table, first, own):  # type: ignore[no-untyped-def]
    """The columns `first` of the first `own` columns of `table`, then all the others."""
    n, k = table.shape
    m = len(first)
    out = np.empty((n, m + k - own), dtype=np.int32)
    for s in range(n):
        for j in range(m):
            out[s, j] = table[s, first[j]]
        for c in range(own, k):
            out[s, m + c - own] = table[s, c]
    return out


def merge_columns(table: np.ndarray, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(new index of each of the first `k` columns (all when None), the first old column of
    each new one), merging identical columns and numbering them in order of first appearance
    (so column 0 stays 0)."""
    table = np.ascontiguousarray(table, dtype=np.int32)
    return _merge_columns(table, table.shape[1] if k is None else k)


@kernel(R(int32, 2), int64, tiered=True)
def _merge_columns(table, k):  # type: ignore[no-untyped-def]
    n = table.shape[0]
    hashes = np.full(k, FNV_OFFSET, dtype=np.int64)
    for s in range(n):
        for c in range(k):
            hashes[c] = hash_step(hashes[c], table[s, c] + 1)
    new_of_old = np.empty(k, dtype=np.int32)
    first = np.empty(k, dtype=np.int64)
    m = 0
    for c in range(k):
        found = -1
        for r in range(m):
            f = first[r]
            if hashes[f] != hashes[c]:
                continue
            same = True
            for s in range(n):
                if table[s, f] != table[s, c]:
                    same = False
                    break
            if same:
                found = r
                break
        if found < 0:
            first[m] = c
            found = m
            m += 1
        new_of_old[c] = found
    return new_of_old, first[:m].copy()


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
