"""Leo's items for the Earley recognizer (`earley.py`): right recursion through several rules in
constant time per byte.

A *tail call* is a state's only call after which nothing can happen: the state it returns to
accepts and has no move, byte or call (`tail_call`). When rule q completes at origin o and set o
holds exactly one item waiting on q, whose call is a tail call, the caller completes at once,
and so on up: a chain of complete items, one per level of a right recursion (A -> x B,
B -> y A | z), which the plain closure would add to every set, one completion per level per
byte. After Leo (1991), `close_set` adds only the top of the chain (`completion`): the return
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

One loop scans an origin set for the completion and for each level of its chain (`close_set`
scans again only to move several waiting items): every inlined copy of a loop costs the first
pushdown mask compile time on a fresh machine (`runtime/jit.py`).
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
        A(int32, 2), A(int64), int64, int64, nrt=False, inline=True)
def completion(tr, acc, coff, crule, cnext, srule, items, sets, counters, o, q):  # type: ignore[no-untyped-def]
    """The item (state, origin) that completing rule q, begun at set o before the set being
    built, adds: the one item of set o waiting on q, moved past its call, or where that call is
    a tail call the top of its chain (module docstring); state -1 where set o holds no waiting
    item, -2 where it holds several (the caller moves each). One scan finds the waiting items
    of the completion and of each level of the chain; each item left behind keeps a memo, an
    item further up, which later walks follow instead of scanning, and the walk ends by
    pointing every item it passed at the top."""
    first = -1
    to = -1
    top = -1
    for _ in range(counters[N_ITEMS] + 1):
        counters[WORK] += sets[o + 1, 0] - sets[o, 0]
        found = -1  # the one waiting item, or -2 for several
        nxt = -1
        for i in range(sets[o, 0], sets[o + 1, 0]):
            s = items[i, 0]
            for c in range(coff[s], coff[s + 1]):
                if crule[c] == q:
                    found, nxt = (i, cnext[c]) if found == -1 else (-2, -1)
        tail = found >= 0 and tail_call(tr, acc, coff, cnext, items[found, 0])
        if first < 0:
            if not tail:
                return nxt if found != -2 else -2, items[found, 1] if found >= 0 else -1
            first = found
            to = nxt
        elif not tail:
            break
        else:
            items[top, 2] = -2 - found
        top = found
        while items[top, 2] <= -2:  # memos point to earlier items: this ends
            top = -2 - items[top, 2]
        o = items[top, 1]
        if o < 0:
            break
        q = srule[cnext[coff[items[top, 0]]]]
    else:
        # A chain longer than the items would be a cycle, which cannot be (a cycle of calls
        # inside one set is entered from outside it, so its entry has two waiting items);
        # without a shortcut the step is still exact.
        return to, items[first, 1]
    x = first
    while x != top:
        up = -2 - items[x, 2]
        items[x, 2] = -2 - top
        x = up
    return cnext[coff[items[top, 0]]], items[top, 1]
