"""Arrays: per-position item schemas (`prefixItems`, or draft 4-2019's array-form `items` with
`additionalItems`), the schema of the remaining items, `minItems`/`maxItems` and `contains`
with `minContains`/`maxContains`, all exact.

Position i's element is the conjunction, over the merged subschemas, of the subschema's
prefix schema i if it has one, else its schema for the rest (absent: anything). A `false`
position caps the length there.

`contains: C` counts the items that match C (`contains.py`); `uniqueItems` is `unique.py`'s.
"""
from __future__ import annotations

from ...ir.nodes import EMPTY, Choice, Literal, Node, Repeat, Seq
from .conjunctions import Constraints
from .contains import counted_array
from .translation import Translation


def position(c: "Constraints", i: int | None) -> list[str]:
    """The pointers of the subschemas item i must satisfy (None: an item past the prefix)."""
    pointers = []
    for part in c.arrays:
        if i is not None and i < len(part.prefix):
            pointers.append(part.prefix[i])
        elif part.rest is not None:
            pointers.append(part.rest)
    return pointers


def array_node(t: "Translation", c: "Constraints", depth: int) -> Node | None:
    """The arrays `c` allows, or None if there are none."""
    n_prefix = max((len(p.prefix) for p in c.arrays), default=0)
    lo, hi = c.min_items, c.max_items
    for i in range(n_prefix + 1):
        pointers = position(c, i if i < n_prefix else None)
        if any(t.doc.at(p) is False for p in pointers):
            hi = i if hi is None else min(hi, i)
            break
    if hi is not None and hi < lo:
        return None
    if hi is not None:
        n_prefix = min(n_prefix, hi)
    if c.contains:
        counted = counted_array(t, c, [position(c, i) for i in range(n_prefix)],
                                position(c, None), lo, hi, depth)
        return None if counted is None else bracketed(t, counted[0], counted[1], depth)
    sep = t.layout.item(depth)
    element = [t.member(position(c, i), depth + 1) for i in range(n_prefix)]
    tail: Node = EMPTY
    if hi is None or hi > n_prefix:
        rest = t.member(position(c, None), depth + 1)
        more_lo = max(lo - n_prefix, 0)
        more_hi = None if hi is None else hi - n_prefix
        count_bound(t, c, more_lo, more_hi, "Items")
        if n_prefix == 0:
            first: Node = rest
            tail = Repeat(Seq((sep, rest)), max(more_lo - 1, 0),
                          None if more_hi is None else more_hi - 1)
            body = Seq((first, tail))
            return bracketed(t, body, lo == 0, depth)
        tail = Repeat(Seq((sep, rest)), more_lo, more_hi)
    for i in range(n_prefix - 1, 0, -1):
        step = Seq((sep, element[i], tail))
        tail = step if i < lo else Repeat(step, 0, 1)
    if n_prefix == 0:
        return bracketed(t, None, True, depth)
    return bracketed(t, Seq((element[0], tail)), lo == 0, depth)


def count_bound(t: "Translation", c: "Constraints", lo: int, hi: int | None, what: str) -> None:
    """`BudgetExceeded` at the `min{what}`/`max{what}` keyword when a repetition of lo to hi
    items or members, past `Limits.max_repeat`, is about to be built."""
    limit = t.limits.max_repeat
    for keyword, count in ((f"max{what}", hi), (f"min{what}", lo)):
        if count is not None and count > limit:
            budget = t.limits.exceeded("max_repeat", count, f"{keyword} (a repetition count)")
            raise budget.located(pointer=c.count_pointers.get(keyword, ""))


def bracketed(t: "Translation", body: Node | None, may_be_empty: bool, depth: int) -> Node:
    """`[ ]` when `may_be_empty`, and `[ body ]` when there is a body."""
    alts: list[Node] = []
    if may_be_empty:
        alts.append(Seq((Literal(b"["), t.layout.empty(), Literal(b"]"))))
    if body is not None:
        alts.append(Seq((Literal(b"["), t.layout.open(depth), body, t.layout.close(depth),
                         Literal(b"]"))))
    return alts[0] if len(alts) == 1 else Choice(tuple(alts))
