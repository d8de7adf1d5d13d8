"""Completion costs of Earley sets: the fewest steps that finish the text from a recognizer state.

`completion.py` gives each rule-automaton state the cost to the end of its rule. What follows
the rule comes from its callers, and an Earley item knows them only through its origin set: an
item (s, o) of rule Q finishes the text in cost[s] + ret(o, Q) steps, where ret(o, Q), the
*tail* of every item of rule Q begun at set o, is the best of Q's callers in set o:

    ret(o, Q) = min over items i of set o, calls c of i's state to Q: cost[next(c)] + tail(i)

and a root item (origin -1: the start rule, or a state walked as a root) has tail 0. A set's
cost is the least cost[s] + tail over its items: its shortest completion, exactly (every
completion ends some item's rule and returns through its callers). Items begun in their own set
(predicted there) have tails that depend on other items of the set, their predictors: a small
fixpoint per set over the rules called in it (`set_tails`), in passes until no tail falls.

Data: `costs` = (cost, tails, memo, rv, bstate): cost int64[n_states] (`CompletionCosts.cost`,
read-only); tails int64[item capacity], one per item of the recognizer it goes with, valid for
the items of the first bstate[TAIL_SETS] sets; memo int64[MEMO_SLOTS, 4] (generation, origin,
rule, ret), a direct-mapped cache of ret for the sets before bstate[BASE] (those a kernel call
does not change: generation bstate[MEMO_GEN], one per call); rv int64[n_rules, 2] (generation
bstate[RV_GEN], ret of the set being closed). Costs are capped at UNREACHABLE.

The kernels rely on the recognizer's invariants (`earley.py`) for every index, and on their
callers for `tails` covering the items' capacity and `rv` the table's rules; a recognizer that
truncates its sets lowers bstate[TAIL_SETS] to their number (`PushdownBackend.restore`).
"""
from __future__ import annotations

from numba.types import Tuple, int32, int64

from ..completion import UNREACHABLE
from ..jit import A, R, kernel
from .counters import N_SETS
from .earley import ENGINE, GRAMMAR

TAIL_SETS, MEMO_GEN, RV_GEN, BASE = range(4)
MEMO_SLOTS = 1024

COSTS = Tuple((R(int64), A(int64), A(int64, 2), A(int64, 2), A(int64)))
"""The type of `costs`."""


@kernel(R(int32), R(int32), R(int32), A(int32, 2), A(int32, 2), COSTS, int64, int64, nrt=False,
        inline=True)
def _ret(coff, crule, cnext, items, sets, costs, o, q):  # type: ignore[no-untyped-def]
    """ret(o, q): the fewest steps from the end of rule q, begun at set o, to the end."""
    cost, tails, memo, rv, bstate = costs
    kept = o < bstate[BASE]
    slot = (o * 40503 + q) & (MEMO_SLOTS - 1)
    if kept and memo[slot, 0] == bstate[MEMO_GEN] and memo[slot, 1] == o and memo[slot, 2] == q:
        return memo[slot, 3]
    best = UNREACHABLE
    for i in range(sets[o, 0], sets[o + 1, 0]):
        t = tails[i]
        if t >= UNREACHABLE:
            continue
        s = items[i, 0]
        for c in range(coff[s], coff[s + 1]):
            if crule[c] == q:
                best = min(best, cost[cnext[c]] + t)
    if kept:
        memo[slot, 0] = bstate[MEMO_GEN]
        memo[slot, 1] = o
        memo[slot, 2] = q
        memo[slot, 3] = best
    return best


@kernel(R(int32), R(int32), R(int32), R(int32), A(int32, 2), A(int32, 2), COSTS, int64,
        nrt=False, inline=True)
def set_tails(coff, crule, cnext, srule, items, sets, costs, k):  # type: ignore[no-untyped-def]
    """Write the tails of the items of set k (the sets before it have theirs)."""
    cost, tails, memo, rv, bstate = costs
    lo, hi = sets[k, 0], sets[k + 1, 0]
    for i in range(lo, hi):
        o = items[i, 1]
        if o < 0:
            tails[i] = 0
        elif o < k:
            tails[i] = _ret(coff, crule, cnext, items, sets, costs, o, srule[items[i, 0]])
    bstate[RV_GEN] += 1
    gen = bstate[RV_GEN]
    changed = True
    while changed:
        changed = False
        for i in range(lo, hi):
            s = items[i, 0]
            if items[i, 1] == k:
                r = srule[s]
                t = rv[r, 1] if rv[r, 0] == gen else UNREACHABLE
            else:
                t = tails[i]
            if t >= UNREACHABLE:
                continue
            for c in range(coff[s], coff[s + 1]):
                r = crule[c]
                v = min(UNREACHABLE, cost[cnext[c]] + t)
                if rv[r, 0] != gen or v < rv[r, 1]:
                    rv[r, 0] = gen
                    rv[r, 1] = v
                    changed = True
    for i in range(lo, hi):
        if items[i, 1] == k:
            r = srule[items[i, 0]]
            tails[i] = rv[r, 1] if rv[r, 0] == gen else UNREACHABLE


@kernel(A(int32, 2), A(int32, 2), COSTS, int64, nrt=False, inline=True)
def set_cost(items, sets, costs, k):  # type: ignore[no-untyped-def]
    """The cost of set k (its tails written)."""
    cost, tails = costs[0], costs[1]
    best = UNREACHABLE
    for i in range(sets[k, 0], sets[k + 1, 0]):
        best = min(best, cost[items[i, 0]] + tails[i])
    return best


@kernel(R(int32), R(int32), R(int32), R(int32), A(int32, 2), A(int32, 2), COSTS, int64,
        nrt=False, inline=True)
def begin_costs(coff, crule, cnext, srule, items, sets, costs, k):  # type: ignore[no-untyped-def]
    """Start a kernel call over sets 0..k: a new memo generation for them, and their tails."""
    bstate = costs[4]
    bstate[MEMO_GEN] += 1
    bstate[BASE] = k + 1
    for j in range(bstate[TAIL_SETS], k + 1):
        set_tails(coff, crule, cnext, srule, items, sets, costs, j)
    bstate[TAIL_SETS] = k + 1


@kernel(GRAMMAR, ENGINE, COSTS, nrt=False)
def earley_cost(g, e, costs):  # type: ignore[no-untyped-def]
    """The cost of the last set."""
    tr, bc, acc, coff, crule, cnext, srule, rstart, nullable, relax, rtok = g
    items, sets, per_state, counters = e
    k = counters[N_SETS] - 1
    begin_costs(coff, crule, cnext, srule, items, sets, costs, k)
    return set_cost(items, sets, costs, k)
