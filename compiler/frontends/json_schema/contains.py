"""`contains` with `minContains`/`maxContains`: arrays in which the items matching a subschema C
number between a least and a most, exactly; several `contains` of one conjunction (`allOf` of
two) each count their own.

An array is read left to right with a state (j, n_1 … n_m): j items so far, n_i of them
matching C_i. Each item chooses, per C_i, to match it (its position's conjunction and C_i),
counted, or not: with a most, its conjunction and the negation of C_i (so every item is counted
exactly once; C_i's negation must be expressible, `negation.negatable`, else
`unsupported-keyword`); without one, nothing about C_i (an array with enough matching items is
accepted along the choices that count them, and n_i stops at the least, where what follows no
longer matters). j stops where positions and `minItems` no longer tell items apart (past the
prefix and `minItems`) unless `maxItems` bounds it. A state accepts the end when j >= minItems
and every n_i >= its least; a state's choices (at most 2**m) refer to the states after the next
item, and past `INLINED_UP_TO` states each is a rule of its own so that the choices are shared,
not copied. The counts are bounded by `Limits.max_repeat`, the states and the item classes (a
rule each) by `Limits.max_schema_rules`.
"""
from __future__ import annotations

from ...ir.nodes import EMPTY, NOTHING, Choice, Node, Repeat, Seq
from ...support import deadline
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
    counts = c.contains
    tops: list[int] = []
    exact: list[bool] = []
    for count in counts:
        least, most = count.least, count.most
        if most is not None and most < least or hi is not None and hi < least:
            return None
        for keyword, value in (("minContains", least), ("maxContains", most)):
            if value is not None and value > t.limits.max_repeat:
                raise t.limits.exceeded("max_repeat", value, f"{keyword} (a repetition count)"
                                        ).located(pointer=count.where + "/" + keyword)
        if most is not None and not negatable(t, count.pointer):
            unsupported(t, count.pointer, "the negation of this subschema is not expressible "
                                          "here, so items that do not match it cannot be told "
                                          "apart for maxContains")
            most = None
        exact.append(most is not None)
        tops.append(least if most is None else most)
    saturated_j = max(len(prefix), lo, 1)
    sep = t.layout.item(depth)
    states: dict[tuple[int, tuple[int, ...]], Node] = {}
    size = 1
    for top in tops:
        size *= top + 1
    ruled = size * (saturated_j + 1 if hi is None else hi + 1) > INLINED_UP_TO
    tag = counts[0].where + "-contains" + "".join(f"-{i}" for i in range(1, len(counts)))

    def pointers(j: int) -> list[str]:
        return prefix[j] if j < len(prefix) else rest

    def item(j: int, matches: tuple[bool | None, ...]) -> Node:
        """Item j matching C_i (True), not matching it (False) or either (None), per i."""
        where = [location(p) for p in pointers(j)]
        where += [location(count.pointer) if m else negated(count.pointer)
                  for count, m in zip(counts, matches) if m is not None]
        return t.ref(conjunction(where), depth + 1)

    def choices(ns: tuple[int, ...]) -> list[tuple[bool | None, ...]]:
        """What the next item may be, per `contains`: the first choice counts nothing."""
        out: list[tuple[bool | None, ...]] = [()]
        for count, n, top, ex in zip(counts, ns, tops, exact):
            options: tuple[bool | None, ...] = (False, True) if ex and n < top else \
                (False,) if ex else (None, True) if n < count.least else (None,)
            out = [(*o, m) for o in out for m in options]
        return out

    def state(j: int, ns: tuple[int, ...]) -> Node:
        """After j items, ns[i] of them matching C_i: the rest of the array (j = 0: not
        empty)."""
        key = (j, ns)
        if key in states:
            return states[key]
        deadline.check()
        gap = sep if j else EMPTY
        nxt = j + 1 if hi is not None or j < saturated_j else j
        alts: list[Node] = []
        loop: Node = EMPTY
        if hi is None or j < hi:
            for matches in choices(ns):
                moved = tuple(n + 1 if m else n for n, m in zip(ns, matches))
                if nxt == j and moved == ns:  # past the positions that differ: non-matches
                    loop = Repeat(Seq((sep, item(j, matches))), 0, None)  # loop here
                elif (after := state(nxt, moved)) is not NOTHING:
                    alts.append(Seq((gap, item(j, matches), after)))
        if j and j >= lo and all(n >= count.least for n, count in zip(ns, counts)):
            alts.append(EMPTY)
        body: Node = NOTHING if not alts else alts[0] if len(alts) == 1 else Choice(tuple(alts))
        if body is not NOTHING and loop is not EMPTY:
            body = Seq((loop, body))
        if ruled and body is not NOTHING:
            body = t.rule(f"{tag}-{j}-" + "-".join(map(str, ns)), body)
        states[key] = body
        return body

    body = state(0, (0,) * len(counts))
    may_be_empty = lo == 0 and all(count.least == 0 for count in counts)
    if body is NOTHING and not may_be_empty:
        return None
    return (None if body is NOTHING else body), may_be_empty
