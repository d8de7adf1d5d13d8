"""Boolean operations on regular languages: intersection and difference by product construction.

Expressions state union (`Choice`) directly; intersection and difference are built here on the
operands' minimal DFAs and returned as an `Automaton` IR leaf, so they nest inside any other
expression. Each operand must be regular (no rule references). The product explores only pairs
reachable from the start pair over the joint byte partition; a dead operand (-1) ends the pair
for an intersection, and for the subtracted side of a difference it is a sink that never
accepts. The result is minimized and trimmed, and its size is bounded by
`Limits.max_dfa_states`.
"""
from __future__ import annotations

import numpy as np

from ..runtime.dfa_table import DFATable
from .errors import GrammarError
from .ir import Automaton, Node, references
from .limits import DEFAULT_LIMITS, Limits


def as_dfa(operand: Node | DFATable, limits: Limits = DEFAULT_LIMITS) -> DFATable:
    """The minimal DFA of a regular expression node (an `Automaton` gives its own DFA)."""
    if isinstance(operand, DFATable):
        return operand
    if isinstance(operand, Automaton):
        return operand.dfa
    refs = references(operand)
    if refs:
        raise GrammarError(
            f"a language operation needs a regular operand, but it refers to rule {refs[0].name!r}",
            code="not-regular",
        )
    from .pipeline import ir_to_dfa

    return ir_to_dfa(operand, limits)


def intersect(*operands: Node | DFATable, limits: Limits = DEFAULT_LIMITS,
              label: str = "intersection") -> Automaton:
    """The strings every operand matches."""
    if not operands:
        raise ValueError("intersect needs at least one operand")
    dfas = [as_dfa(o, limits) for o in operands]
    return Automaton(_product(dfas, n_required=len(dfas), limits=limits), label)


def difference(kept: Node | DFATable, removed: Node | DFATable, *,
               limits: Limits = DEFAULT_LIMITS, label: str = "difference") -> Automaton:
    """The strings `kept` matches and `removed` does not."""
    dfas = [as_dfa(kept, limits), as_dfa(removed, limits)]
    return Automaton(_product(dfas, n_required=1, limits=limits), label)


def _product(dfas: list[DFATable], n_required: int, limits: Limits) -> DFATable:
    """The product of `dfas`: the first `n_required` must stay alive and accept; the others
    (subtracted) may die and must not accept."""
    from .dfa import trim
    from .minimize import minimize

    keys = np.stack([d.byte_class for d in dfas], axis=1)
    _, rep, byte_class = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    cols = [d.byte_class[rep] for d in dfas]
    rows = [d.transitions[:, c].tolist() for d, c in zip(dfas, cols)]
    acc = [d.accepting.tolist() for d in dfas]
    k = len(rep)
    start = tuple(d.start for d in dfas)
    index = {start: 0}
    order = [start]
    table: list[list[int]] = []
    accepting: list[bool] = []
    i = 0
    while i < len(order):
        pair = order[i]
        i += 1
        accepting.append(
            all(acc[j][q] for j, q in enumerate(pair[:n_required]))
            and not any(q >= 0 and acc[j][q] for j, q in enumerate(pair) if j >= n_required))
        row = []
        for c in range(k):
            nxt = tuple(rows[j][q][c] if q >= 0 else -1 for j, q in enumerate(pair))
            if any(q < 0 for q in nxt[:n_required]):
                row.append(-1)
                continue
            t = index.get(nxt)
            if t is None:
                if len(order) >= limits.max_dfa_states:
                    raise limits.exceeded("max_dfa_states", f"more than {len(order)}",
                                          "product automaton states")
                t = index[nxt] = len(order)
                order.append(nxt)
            row.append(t)
        table.append(row)
    trimmed = trim(np.asarray(byte_class, dtype=np.int32).reshape(256),
                   np.array(table, dtype=np.int32).reshape(len(order), k),
                   np.array(accepting, dtype=bool), 0)
    return minimize(trimmed)
