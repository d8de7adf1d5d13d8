"""Arrays with `uniqueItems: true` whose items take a finite set of values, exact.

The items must each be one of a finite set V of JSON values: the members of the items'
`enum`/`const` that satisfy the items' other keywords (`members.member_nodes`, one node of
spellings per value), or `true`, `false` and `null` as far as the items' `type` allows them.
The state of an array being written is the set S of values written so far; from S it goes on
with a separator and a value not in S (while `maxItems` allows), or ends once |S| reaches
`minItems`. Two distinct values have disjoint spellings (a spelling is of one value), so no
value is written twice, in any spelling, and every order of distinct values is accepted.

It is exponential, as `any_order.py` is: 2**|V| states, made as a DAG of nodes, and past
`INLINED_UP_TO` values each state and each value a rule of its own (the grammar then keeps
them as rules, built as matchers reach them). `Limits.max_unique_values` bounds |V|: past it,
an error that names the bound. Anything else under `uniqueItems` (items of an infinite
domain: strings, numbers, objects; a `prefixItems` or array-form `items` prefix; `contains`;
items with `anyOf`/`oneOf`/`if`) is the `unsupported-keyword` error at `uniqueItems` (lenient:
a warning, and the items may repeat).
"""
from __future__ import annotations

from ...ir.nodes import EMPTY, NOTHING, Choice, Literal, Node, Seq
from ...support import deadline
from .arrays import array_node, bracketed, position
from .conjunctions import NEGATED, Constraints, conjunction, location
from .dependent import dependent_keyword
from .members import member_nodes
from .negation import apply_nots
from .translation import Translation, unsupported
from .values import canonical

INLINED_UP_TO = 4
"""Arrays of at most this many possible values are one node DAG inlined into their rule;
larger ones keep a rule per state."""

_FINITE = ("uniqueItems is supported where the items take a finite set of values (enum, "
           "const, boolean, null) and the array has no prefix items and no contains (to keep "
           "it, list the items' values in an enum of at most Limits.max_unique_values)")


def _item_values(t: "Translation", c: "Constraints", depth: int) -> list[Node] | None:
    """One node of spellings per value the items of `c` may take, or None when those values
    are not a finite set found here."""
    pointers = position(c, None)
    if not pointers:
        return None
    parts = t.collector.flatten(conjunction([location(p) for p in pointers]))
    if parts is None:
        return []  # no item is possible
    for pointer, ignored in parts:
        if NEGATED in ignored:
            continue
        schema = t.doc.at(pointer)
        if (t.collector.alternative(pointer, ignored) is not None
                or ("if" in schema and "if" not in ignored)
                or dependent_keyword(t.collector, schema, ignored) is not None):
            return None
    items = t.collector.collect(parts)
    for w in items.warnings:
        t.warn(w)
    if items.nots:
        apply_nots(t, items)
    if items.values is not None:
        return member_nodes(t, items, depth + 1)
    if not items.types <= {"boolean", "null"}:
        return None
    values: list[Node] = []
    if "null" in items.types and canonical(None) not in items.excluded_values:
        values.append(Literal(b"null"))
    if "boolean" in items.types:
        values.extend(Literal(b"true" if v else b"false") for v in (True, False)
                      if canonical(v) not in items.excluded_values)
    return values


def unique_array(t: "Translation", c: "Constraints", depth: int) -> Node | None:
    """The arrays `c` allows, no two items equal (`c.unique`), or None if there are none;
    where the items are not a finite set found here, the error, or (lenient) `array_node`'s
    arrays."""
    where = c.unique or ""
    values = None
    if not c.contains and not any(part.prefix for part in c.arrays):
        values = _item_values(t, c, depth)
    if values is None:
        unsupported(t, where, _FINITE)
        return array_node(t, c, depth)
    k = len(values)
    if k > t.limits.max_unique_values:
        raise t.limits.exceeded("max_unique_values", k, "distinct values the items of a "
                                "uniqueItems array may take (one automaton state per subset "
                                "of them)").located(pointer=where)
    lo, hi = c.min_items, c.max_items
    hi = k if hi is None else min(hi, k)
    if hi < lo:
        return None
    sep = t.layout.item(depth)
    ruled = k > INLINED_UP_TO
    if ruled:
        values = [t.rule(f"{where}-value", v) for v in values]
    states: dict[int, Node] = {}

    def state(seen: int) -> Node:
        """After at least one value: the rest of the array, the values `seen` written."""
        node = states.get(seen)
        if node is not None:
            return node
        deadline.check()
        count = seen.bit_count()
        alts: list[Node] = []
        if count < hi:
            for i, v in enumerate(values):
                if not seen >> i & 1 and (rest := state(seen | 1 << i)) is not NOTHING:
                    alts.append(Seq((sep, v, rest)))
        if count >= lo:
            alts.append(EMPTY)
        body: Node = NOTHING if not alts else alts[0] if len(alts) == 1 else Choice(tuple(alts))
        node = t.rule(f"{where}-unique-{seen:x}", body) if ruled and body is not NOTHING \
            else body
        states[seen] = node
        return node

    first = [Seq((v, rest)) for i, v in enumerate(values)
             if hi > 0 and (rest := state(1 << i)) is not NOTHING]
    body = None if not first else first[0] if len(first) == 1 else Choice(tuple(first))
    if body is None and lo > 0:
        return None
    return bracketed(t, body, lo == 0, depth)
