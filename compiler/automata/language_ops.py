"""Boolean operations on regular languages: intersection and difference by product construction.

Expressions state union (`Choice`) directly; intersection and difference are built here on the
operands' minimal DFAs and returned as an `Automaton` IR leaf, so they nest inside any other
expression. Each operand must be regular (no rule references). The product explores only pairs
reachable from the start pair over the joint byte partition; a dead operand (-1) ends the pair
for an intersection, and for the subtracted side of a difference it is a sink that never
accepts. Operands are combined one at a time (a Numba kernel per pair), each result minimized
and trimmed, and each pairwise product is bounded by `Limits.max_dfa_states`.

Results are cached: the DFA of a node per node object, products per operand DFAs; DFAs coming
out of here are interned (equal tables give the one object), so equal languages reach the
same cache entries downstream.
"""
from __future__ import annotations

import numpy as np
from numba.types import boolean, int32, int64

from ...runtime.dfa.table import DFATable
from ...runtime.jit import R, kernel
from ..ir.graph import first_references
from ..ir.nodes import Automaton, Node
from ..support import deadline
from ..support.caches import cache_name, memo, register
from ..support.errors import GrammarError
from ..support.limits import DEFAULT_LIMITS, Limits
from .build import ir_to_dfa
from .hashing import key_slot
from .minimize import minimize, minimize_table
from .nfa import IdentityKey


def as_dfa(operand: Node | DFATable, limits: Limits = DEFAULT_LIMITS) -> DFATable:
    """The minimal DFA of a regular expression node (an `Automaton` gives its own DFA)."""
    if isinstance(operand, DFATable):
        return operand
    if isinstance(operand, Automaton):
        return operand.dfa
    return _node_dfa(IdentityKey(operand), limits)


@memo(maxsize=512)
def _node_dfa(key: IdentityKey, limits: Limits) -> DFATable:
    """The minimal DFA of a node, computed once per node object: formats, patterns and other
    shared operands are used many times."""
    refs = first_references(key.node)
    if refs:
        raise GrammarError(
            f"a language operation needs a regular operand, but it refers to rule {refs[0].name!r}",
            code="not-regular",
        )
    return interned(ir_to_dfa(key.node, limits))


_INTERNED: dict[tuple[object, ...], DFATable] = {}
_MAX_INTERNED = 4096
register(cache_name(__name__, "interned"), _INTERNED.clear, lambda: len(_INTERNED),
         _MAX_INTERNED)


def interned(dfa: DFATable) -> DFATable:
    """The first DFA seen with exactly these tables (minimal DFAs of one language are equal), so
    that results cached by DFA identity are found again for an equal language."""
    key = (dfa.start, dfa.transitions.shape, dfa.byte_class.tobytes(),
           dfa.transitions.tobytes(), dfa.accepting.tobytes())
    found = _INTERNED.get(key)
    if found is None:
        if len(_INTERNED) >= _MAX_INTERNED:
            _INTERNED.clear()
        found = _INTERNED.setdefault(key, dfa)
    return found


def intersect(*operands: Node | DFATable, limits: Limits = DEFAULT_LIMITS,
              label: str = "intersection") -> Automaton:
    """The strings every operand matches."""
    if not operands:
        raise ValueError("intersect needs at least one operand")
    dfas = tuple(as_dfa(o, limits) for o in operands)
    return Automaton(_product(dfas, len(dfas), limits), label)


def difference(kept: Node | DFATable, removed: Node | DFATable, *,
               limits: Limits = DEFAULT_LIMITS, label: str = "difference") -> Automaton:
    """The strings `kept` matches and `removed` does not."""
    return Automaton(_product((as_dfa(kept, limits), as_dfa(removed, limits)), 1, limits), label)


@memo(maxsize=512)
def _product(dfas: tuple[DFATable, ...], n_required: int, limits: Limits) -> DFATable:
    """The product of `dfas` (cached by their identity): the first `n_required` must stay
    alive and accept; the others (subtracted) may die and must not accept. Built one operand
    at a time, each step minimized."""
    result = minimize(dfas[0]) if len(dfas) == 1 else dfas[0]
    for i, other in enumerate(dfas[1:], start=1):
        deadline.check()
        keys = np.stack([result.byte_class, other.byte_class], axis=1)
        _, rep, byte_class = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        table, accepting, m = pair_product(
            result.transitions, result.accepting, result.start, other.transitions,
            other.accepting, other.start, result.byte_class[rep], other.byte_class[rep],
            i < n_required, limits.max_dfa_states)
        if m < 0:
            raise limits.exceeded("max_dfa_states", f"more than {limits.max_dfa_states}",
                                  "product automaton states")
        result = minimize_table(byte_class.reshape(256).astype(np.int32), table, accepting, 0)
        if result.is_empty_language:
            break
    return interned(result)


@kernel(R(int32, 2), R(boolean), int64, R(int32, 2), R(boolean), int64, R(int32), R(int32),
        boolean, int64, tiered=True)
def pair_product(a, a_accepting, a_start, b, b_accepting, b_start, a_column, b_column,
                 required, max_states):  # type: ignore[no-untyped-def]
    """(transitions, accepting, m) of the pairs reachable from the start pair over the joint
    classes (class c reads column a_column[c] of `a` and b_column[c] of `b`): both must stay
    alive and accept when `required`, else `b` is subtracted (it may die, -1, and must not
    accept). Pairs are numbered in discovery order; m = -1 past `max_states`."""
    k = len(a_column)
    nb = b.shape[0] + 1
    size = 256
    slots = np.full(size, -1, dtype=np.int64)
    keys = np.empty(64, dtype=np.int64)
    table = np.empty((64, k), dtype=np.int32)
    keys[0] = a_start * nb + b_start
    slots[key_slot(keys[0], size - 1)] = 0
    m = 1
    i = 0
    while i < m:
        qa, qb = keys[i] // nb, keys[i] % nb
        if qb == nb - 1:
            qb = -1
        for c in range(k):
            ta = a[qa, a_column[c]]
            tb = b[qb, b_column[c]] if qb >= 0 else -1
            if ta < 0 or (tb < 0 and required):
                table[i, c] = -1
                continue
            key = np.int64(ta) * nb + (tb if tb >= 0 else nb - 1)
            slot = key_slot(key, size - 1)
            while slots[slot] >= 0 and keys[slots[slot]] != key:
                slot = (slot + 1) & (size - 1)
            if slots[slot] >= 0:
                table[i, c] = slots[slot]
                continue
            if m >= max_states:
                return table[:0], np.zeros(0, dtype=np.bool_), -1
            if m == len(keys):
                grown_keys = np.empty(2 * m, dtype=np.int64)
                grown_keys[:m] = keys
                keys = grown_keys
                grown = np.empty((2 * m, k), dtype=np.int32)
                grown[:m] = table[:m]
                table = grown
            keys[m] = key
            slots[slot] = m
            table[i, c] = m
            m += 1
            if 2 * m > size:
                size *= 4
                slots = np.full(size, -1, dtype=np.int64)
                for j in range(m):
                    sl = key_slot(keys[j], size - 1)
                    while slots[sl] >= 0:
                        sl = (sl + 1) & (size - 1)
                    slots[sl] = j
        i += 1
    accepting = np.zeros(m, dtype=np.bool_)
    for j in range(m):
        qa, qb = keys[j] // nb, keys[j] % nb
        in_b = qb < nb - 1 and b_accepting[qb]
        accepting[j] = a_accepting[qa] and (in_b if required else not in_b)
    return table[:m].copy(), accepting, m
