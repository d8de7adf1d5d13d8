"""`contains` with `minContains`/`maxContains`: arrays in which the items matching a subschema C
number between a least and a most, exactly.

An array is read left to right with a state (j, n): j items so far, n of them matching C. Each
item is either a match (its position's conjunction and C), counted, or not: with a most, its
conjunction and the negation of C (so every item is counted exactly once; C's negation must be
expressible, `negation.negatable`, else `unsupported-keyword`); without one, just its
position's conjunction (an array with enough matching items is accepted along the choice that
counts them, and n stops at the least, where what follows no longer matters). j stops where
positions and `minItems` no longer tell items apart (past the prefix and `minItems`) unless
`maxItems` bounds it. The state (j, n) accepts the end when j >= minItems and n >= least; a
state's choices refer to the states after the next item, and past `INLINED_UP_TO` states each
is a rule of its own so that the choices are shared, not copied. At most one `contains` per
conjunction (more: `unsupported-keyword`); the counts are bounded by `Limits.max_repeat`, the
states by `Limits.max_schema_rules`.
"""
from __future__ import annotations

from ...ir.nodes import EMPTY, NOTHING, Choice, Node, Repeat, Seq
from .conjunctions import Constraints, conjunction, location, negated
from .negation import negatable
from .translation import Translation, unsupported

__all__ = ["counted_array"]

INLINED_UP_TO = 8
"""States kept as one expression (each refers to at most two others) before rules."""


def counted_array(t: "Translation", c: "Constraints", prefix: list[list[str]], rest: list[str],
                  lo: int, hi: int | None, depth: int) -> tuple[Node | None, bool] | None:
    """(the non-empty arrays `c` allows, as the items between the brackets, or None; whether
    the empty array is allowed), or None when no array is (module docstring)."""
    if len(c.contains) > 1:
        unsupported(t, c.contains[1].pointer, "a second 'contains' in one conjunction (each "
                                              "would count its own matches)")
    count = c.contains[0]
    least, most = count.least, count.most
    if most is not None and most < least:
        return None
    for keyword, value in (("minContains", least), ("maxContains", most)):
        if value is not None and value > t.limits.max_repeat:
            raise t.limits.exceeded("max_repeat", value, f"{keyword} (a repetition count)"
                                    ).located(pointer=count.where + "/" + keyword)
    if hi is not None and hi < least:
        return None
    exact = most is not None
    if exact and not negatable(t, count.pointer):
        unsupported(t, count.pointer, "the negation of this subschema is not expressible here, "
                                      "so items that do not match it cannot be told apart for "
                                      "maxContains")
        exact = False
        most = None
    top = most if exact else least
    saturated_j = max(len(prefix), lo, 1)
    sep = t.layout.item(depth)
    states: dict[tuple[int, int], Node] = {}
    ruled = (saturated_j + 1) * (top + 1) > INLINED_UP_TO if hi is None else \
        (hi + 1) * (top + 1) > INLINED_UP_TO

    def pointers(j: int) -> list[str]:
        return prefix[j] if j < len(prefix) else rest

    def item(j: int, match: bool | None) -> Node:
        """Item j: matching C, not matching it, or either (None)."""
        where = [location(p) for p in pointers(j)]
        if match is None:
            return t.ref(conjunction(where), depth + 1)
        return t.ref(conjunction([*where, location(count.pointer) if match
                                  else negated(count.pointer)]), depth + 1)

    def state(j: int, n: int) -> Node:
        """After j items, n of them matching: the rest of the array (j = 0: not empty)."""
        key = (j, n)
        if key in states:
            return states[key]
        gap = sep if j else EMPTY
        room = hi is None or j < hi
        nxt = j + 1 if hi is not None or j < saturated_j else j
        alts: list[Node] = []
        loop: Node = EMPTY
        if room:
            counting = exact or n < least
            if counting and (not exact or n < top):
                after = state(nxt, n + 1)
                if after is not NOTHING:
                    alts.append(Seq((gap, item(j, True), after)))
            other = item(j, False if exact else None) if counting else item(j, None)
            if nxt == j:  # past the positions that differ: non-matches loop here
                loop = Repeat(Seq((sep, other)), 0, None)
            else:
                after = state(nxt, n)
                if after is not NOTHING:
                    alts.append(Seq((gap, other, after)))
        if j and j >= lo and n >= least:
            alts.append(EMPTY)
        body: Node = NOTHING if not alts else alts[0] if len(alts) == 1 else Choice(tuple(alts))
        if body is not NOTHING and loop is not EMPTY:
            body = Seq((loop, body))
        if ruled and body is not NOTHING:
            body = t.rule(f"{count.where}-contains-{j}-{n}", body)
        states[key] = body
        return body

    body = state(0, 0)
    may_be_empty = lo == 0 and least == 0
    if body is NOTHING and not may_be_empty:
        return None
    return (None if body is NOTHING else body), may_be_empty
