"""Bounded repetitions of a one-byte class as counters: `[ \\t\\n\\r]{0,24}` in a DFA without
building 25 copies of it through the subset construction.

A JSON Schema's whitespace gaps are half the states of a typical object rule: each gap is a
chain of states that differ only in how many more whitespace bytes they allow. Here the NFA
has one loop state per such repetition (`thompson` with `counted_from`), the subset
construction and minimization run on that smaller automaton, and each state of a loop is then
expanded into its chain by copying rows.

Exactness. Let q be a counted loop (bound b) and G the DFA states whose NFA states include q.
When no other NFA state of a state of G has an edge on q's bytes (checked on every state of
G, with the NFA states the subset construction kept), a move on q's bytes from a state of G
consumes a pass of q and nothing else, so it leads to L = closure({q}), and L is the only
state in which passes accumulate: every other state of G is entered with no pass taken. L is
then replaced by the chain L^0 .. L^b (L^j: j passes taken), each with L's other moves, L^j
moving on q's bytes to L^(j+1) and L^b not at all; moves on q's bytes from the rest of G go
to L^1, every other move into L to L^0 (omitted when there is none). That is the DFA of the
bounded repetition. Several loops may share a state when they have the same bytes and bound
and were entered together (the gaps before `,` and before `}` after a member): they count in
step, so q above stands for all of them. That holds when no loop reaches a loop, itself
included, by epsilon edges, since a loop is then only entered afresh after a byte none of them
reads. When a check fails (`\\s?\\s{0,8}`, `c{0,8}c{0,8}`, `(c{0,8})*`), `counted_dfa` says
so and the caller builds the repetition copy by copy. Minimization runs before the expansion
with each loop's L and its other G states labelled apart, so no merge crosses what the counts
tell apart.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba.types import boolean, int32, int64

from ...runtime.jit import R, kernel
from ..support.limits import Limits
from .dfa import UncheckedDFA, byte_classes, edge_columns, read_only, subset_sets, trimmed
from .flat_ir import FlatIR
from .minimize import hopcroft_blocks, quotient
from .nfa import NFA, build_counted_nfa, build_rule_nfa

COUNTED_FROM = 4
"""A repetition `c{m,n}` of a one-byte class is counted when n - m is at least this."""


@kernel(R(int64), R(int64), R(int64), R(int32), tiered=True)
def _loops_apart(loops, loop_of, eps_off, eps_to):  # type: ignore[no-untyped-def]
    """Whether no loop reaches a loop, itself included, by epsilon edges (as `c{0,8}c{0,8}`
    and `(c{0,8})*` do: a loop would be entered afresh while one counts, so one DFA state
    would hold it at two counts)."""
    mark = np.full(len(loop_of), -1, dtype=np.int64)
    stack = np.empty(len(eps_to) + 1, dtype=np.int64)
    for g in range(len(loops)):
        top = 1
        stack[0] = loops[g]
        while top:
            top -= 1
            s = stack[top]
            for j in range(eps_off[s], eps_off[s + 1]):
                t = eps_to[j]
                if mark[t] != g:
                    if loop_of[t] >= 0:
                        return False
                    mark[t] = g
                    stack[top] = t
                    top += 1
    return True


@kernel(R(int32), R(int64), R(int32, 2), R(int64), R(int64), R(boolean, 2), R(int64), R(int32),
        R(int32), tiered=True)
def _labels(pool, pool_off, transitions, loop_of, sig_of, sig_cols, e_off, e_lo, e_hi):  # type: ignore[no-untyped-def]
    """(labels for minimization, group of each DFA state or -1, signature of each group), or
    labels of length 0 when the loops cannot be counted. A DFA state's group is the state its
    loops' bytes lead to (L); `loop_of[s]` is the loop of NFA state s or -1, `sig_of[g]` the
    signature (columns `sig_cols[x]` and bound) of loop g."""
    m = len(pool_off) - 1
    group = np.full(m, -1, dtype=np.int64)
    gsig = np.full(m, -1, dtype=np.int64)
    fail = np.zeros(0, dtype=np.int64)
    for d in range(m):
        sig = -1
        for i in range(pool_off[d], pool_off[d + 1]):
            g = loop_of[pool[i]]
            if g >= 0:
                if sig >= 0 and sig_of[g] != sig:
                    return fail, group, gsig
                sig = sig_of[g]
        if sig < 0:
            continue
        for i in range(pool_off[d], pool_off[d + 1]):
            r = pool[i]
            if loop_of[r] >= 0:
                continue
            for j in range(e_off[r], e_off[r + 1]):
                for c in range(e_lo[j], e_hi[j] + 1):
                    if sig_cols[sig, c]:
                        return fail, group, gsig
        t = -1
        for c in range(sig_cols.shape[1]):
            if sig_cols[sig, c]:
                t = transitions[d, c]
                break
        if t < 0:
            return fail, group, gsig
        # The loops' bytes lead to the closure of the loops alone: it must hold no other loop
        # (one entered mid-way, as in c{0,8}c{0,8}), so every loop of it is in step.
        i, j = pool_off[d], pool_off[t]
        while True:
            while i < pool_off[d + 1] and loop_of[pool[i]] < 0:
                i += 1
            while j < pool_off[t + 1] and loop_of[pool[j]] < 0:
                j += 1
            if i == pool_off[d + 1] or j == pool_off[t + 1]:
                if i != pool_off[d + 1] or j != pool_off[t + 1]:
                    return fail, group, gsig
                break
            if pool[i] != pool[j]:
                return fail, group, gsig
            i += 1
            j += 1
        group[d] = t
        gsig[t] = sig
    labels = np.zeros(m, dtype=np.int64)
    for d in range(m):
        t = group[d]
        if t >= 0:
            labels[d] = 1 + 2 * t + (1 if t == d else 0)
    return labels, group, gsig


@kernel(R(int32, 2), R(boolean), R(int64), R(boolean), R(int64), R(boolean, 2), R(int64),
        tiered=True)
def _expand(table, accepting, group, is_loop, gsig, sig_cols, sig_bound):  # type: ignore[no-untyped-def]
    """(transitions, accepting) of the minimized DFA `table` (start 0) with each loop state
    (is_loop[i]: the L of its group) replaced by its chain (module docstring); `group[i]` is
    the group of state i or -1, `gsig[x]` the signature of group x."""
    n, k = table.shape
    n_groups = len(gsig)
    at = np.full(n_groups, -1, dtype=np.int64)
    for i in range(n):
        if is_loop[i]:
            at[group[i]] = i
    entered = np.zeros(n_groups, dtype=np.bool_)
    if is_loop[0]:
        entered[group[0]] = True
    for i in range(n):
        for c in range(k):
            t = table[i, c]
            if t >= 0 and is_loop[t]:
                x = group[t]
                if group[i] != x or not sig_cols[gsig[x], c]:
                    entered[x] = True
    first = np.full(n_groups, -1, dtype=np.int64)
    size = n
    for x in range(n_groups):
        if at[x] >= 0:
            first[x] = size
            size += sig_bound[gsig[x]] - (0 if entered[x] else 1)
    out = np.empty((size, k), dtype=np.int32)
    acc = np.empty(size, dtype=np.bool_)
    out[:n] = table
    acc[:n] = accepting
    for x in range(n_groups):
        if at[x] < 0:
            continue
        cols, bound = sig_cols[gsig[x]], sig_bound[gsig[x]]
        low = 0 if entered[x] else 1
        # The state after j passes: L itself for j = low, then the appended copies.
        for j in range(low, bound + 1):
            s = at[x] if j == low else first[x] + j - low - 1
            if j > low:
                out[s] = table[at[x]]
                acc[s] = accepting[at[x]]
            nxt = -1 if j == bound else first[x] + j - low
            for c in range(k):
                if cols[c]:
                    out[s, c] = nxt
        one = at[x] if low == 1 else first[x]
        for i in range(n):
            if group[i] == x and not is_loop[i]:
                for c in range(k):
                    if cols[c]:
                        out[i, c] = one
    return out, acc


def counted_dfa(nfa: NFA, counted: np.ndarray, classes: np.ndarray, n_calls: int,
                limits: Limits) -> UncheckedDFA | None:
    """The trimmed DFA (unchecked; byte columns merged, `n_calls` call columns last) of `nfa`
    with each counted loop (rows (state, bound) of `counted`) passed at most its bound in a
    row; None when the loops cannot be counted (module docstring). Not minimal in general: a
    chain's last state may equal another state."""
    loops = np.ascontiguousarray(counted[:, 0])
    loop_of = np.full(nfa.n_states, -1, dtype=np.int64)
    loop_of[loops] = np.arange(len(counted))
    if not _loops_apart(loops, loop_of, nfa.eps_off, nfa.eps_to):
        return None
    lo, hi = edge_columns(nfa, classes)
    transitions, accepting, pool, pool_off = subset_sets(nfa, classes, n_calls, limits, (lo, hi))
    # Read-only, as `minimize.minimal` passes them: one compiled kernel for both.
    transitions, accepting = read_only(transitions), read_only(accepting)
    k = transitions.shape[1]
    sigs: dict[tuple[int, bytes, bytes], int] = {}
    sig_of = np.empty(len(counted), dtype=np.int64)
    firsts, ends = nfa.edge_off[loops].tolist(), nfa.edge_off[loops + 1].tolist()
    for g, (a, b, bound) in enumerate(zip(firsts, ends, counted[:, 1].tolist())):
        sig_of[g] = sigs.setdefault((bound, lo[a:b].tobytes(), hi[a:b].tobytes()), len(sigs))
    sig_cols = np.zeros((len(sigs), k), dtype=np.bool_)
    sig_bound = np.empty(len(sigs), dtype=np.int64)
    for (bound, los, his), x in sigs.items():
        sig_bound[x] = bound
        for a, b in zip(np.frombuffer(los, dtype=lo.dtype).tolist(),
                        np.frombuffer(his, dtype=hi.dtype).tolist()):
            sig_cols[x, a:b + 1] = True
    labels, group, gsig = _labels(pool, pool_off, transitions, loop_of, sig_of, sig_cols,
                                  nfa.edge_off, lo, hi)
    if len(labels) != len(accepting):
        return None
    block, n_blocks, dead = hopcroft_blocks(transitions, accepting, labels)
    table, acc, rep = quotient(transitions, accepting, block, n_blocks, dead, block[0])
    if not len(acc):
        return trimmed(classes, table, acc, True, n_calls)
    is_loop = (labels[rep] > 0) & (labels[rep] % 2 == 0)
    table, acc = _expand(table, acc, group[rep], is_loop, gsig, sig_cols, sig_bound)
    if len(acc) > limits.max_dfa_states:
        raise limits.exceeded("max_dfa_states", f"more than {limits.max_dfa_states}", "DFA states")
    return trimmed(classes, table, acc, True, n_calls)


def _unchanged(nfa: NFA) -> NFA:
    return nfa


def counted_or_nfa(flat: FlatIR, limits: Limits,
                   adjust: Callable[[NFA], NFA] = _unchanged) -> UncheckedDFA | NFA:
    """The automaton of `flat` (calls as the last columns) with its bounded repetitions of
    one-byte classes counted; when it has none or they cannot be counted, its NFA built copy
    by copy, for the caller's subset construction. `adjust` rewrites either NFA first (the
    tail calls of a recursive rule, say)."""
    nfa, counted = build_counted_nfa(flat, limits, COUNTED_FROM)
    nfa = adjust(nfa)
    if not len(counted):
        return nfa
    dfa = counted_dfa(nfa, counted, byte_classes(nfa), len(flat.called), limits)
    return dfa if dfa is not None else adjust(build_rule_nfa(flat, limits))
