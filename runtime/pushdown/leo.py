"""Leo's items for the Earley recognizer (`earley.py`): right recursion through several rules in
constant time per byte.

A *tail call* is a state's only call after which nothing can happen: the state it returns to
accepts and has no move, byte or call (`tail_call`). When rule q completes at origin o and set o
holds exactly one item waiting on q, whose call is a tail call, the caller completes at once,
and so on up: a chain of complete items, one per level of a right recursion (A -> x B,
B -> y A | z), which the plain closure would add to every set, one completion per level per
byte. After Leo (1991), `close_set` adds only the top of the chain (`leo_top`): the return
state of the last item along it. The items skipped are complete and have no move: nothing
scans, predicts or completes from them but the one completion that the chain says, so the
sets accept exactly the same texts, and the fills (which read the states of the last set and
check uncertain tokens on the real sets, `kernels.py`) give the same masks.

Memo: an item of a chain keeps, in its third column, -2 - u for an item u further up its
chain (the top, once a walk has passed it). That column links items of one state for
deduplication only while their set is built (values >= -1, `add_item`); a chain item always
lies in an earlier set, which no step changes while it is kept (a truncation drops it, and
rebuilding writes the column again). A chain depends only on the sets up to its items', so
the memos stay true, and each item is scanned past at most once: a chain costs each set a
constant, amortized. The scans count as Earley work (`WORK`).
"""
from __future__ import annotations

from numba.types import boolean, int32, int64

from ..jit import A, R, kernel
from .counters import N_ITEMS, WORK


@kernel(R(int32, 2), R(boolean), R(int32), R(int32), int64, nrt=False, inline=True)
def tail_call(tr, acc, coff, cnext, s):  # type: ignore[no-untyped-def]
    """Whether state s makes exactly one call, returning to a state that accepts and has no
    move (byte or call)."""
    if coff[s + 1] - coff[s] != 1:
        return False
    t = cnext[coff[s]]
    if not acc[t] or coff[t] != coff[t + 1]:
        return False
    for x in range(tr.shape[1]):
        if tr[t, x] >= 0:
            return False
    return True


@kernel(R(int32, 2), R(boolean), R(int32), R(int32), R(int32), R(int32), A(int32, 2),
        A(int32, 2), A(int64), int64, nrt=False, inline=True)
def _next_in_chain(tr, acc, coff, crule, cnext, srule, items, sets, counters, x):  # type: ignore[no-untyped-def]
    """The item that item x's tail call leads to once its callee completes: the one item of
    x's origin set that waits on the rule of x's return state, if it is the only one and its
    call is a tail call too; else -1."""
    o = items[x, 1]
    if o < 0:
        return -1
    q = srule[cnext[coff[items[x, 0]]]]
    counters[WORK] += sets[o + 1, 0] - sets[o, 0]
    found = -1
    for i in range(sets[o, 0], sets[o + 1, 0]):
        s = items[i, 0]
        for c in range(coff[s], coff[s + 1]):
            if crule[c] == q:
                if found >= 0:
                    return -1
                found = i
    if found >= 0 and not tail_call(tr, acc, coff, cnext, items[found, 0]):
        return -1
    return found


@kernel(R(int32, 2), R(boolean), R(int32), R(int32), R(int32), R(int32), A(int32, 2),
        A(int32, 2), A(int64), int64, nrt=False, inline=True)
def leo_top(tr, acc, coff, crule, cnext, srule, items, sets, counters, w):  # type: ignore[no-untyped-def]
    """The top of the chain of tail calls from item w, the one waiting item of a completed
    rule in a set before the one being built: w itself unless its call is a tail call. Each
    item left behind keeps a memo, an item further up (module docstring): the walk follows
    memos, scans only where there is none, and then points every item it passed at the top."""
    if not tail_call(tr, acc, coff, cnext, items[w, 0]):
        return w
    top = w
    for _ in range(counters[N_ITEMS]):
        memo = items[top, 2]
        if memo <= -2:
            top = -2 - memo
            continue
        up = _next_in_chain(tr, acc, coff, crule, cnext, srule, items, sets, counters, top)
        if up < 0:
            break
        items[top, 2] = -2 - up
        top = up
    else:
        # A chain longer than the items would be a cycle, which cannot be (a cycle of calls
        # inside one set is entered from outside it, so its entry has two waiting items);
        # without a shortcut the step is still exact.
        return w
    x = w
    while x != top:
        up = -2 - items[x, 2]
        items[x, 2] = -2 - top
        x = up
    return top
