"""Proofs that `oneOf` branches cannot both match one instance, so `oneOf` may compile as
`anyOf`.

Each branch is summarised by an over-approximation of what it accepts: its merged keywords
with nested `anyOf`/`oneOf`/`not` ignored and unsupported keywords dropped (dropping a
constraint only grows the set, so a disjointness proven on summaries holds for the branches).
Two summaries are disjoint when their JSON types do not meet, their `enum`/`const` values
differ, their numeric ranges do not meet, or, for objects, some property is required by both
with disjoint values (a discriminator: disjoint `const`/`enum`, summaries disjoint in turn, a
few members deep, or string languages that do not meet, such as patterns `^A$` and `^B$`), or
required by one and forbidden by the other (or by itself: a summary that requires a name it
forbids holds no object, as when a `oneOf` branch sits beside one it contradicts).
"""
from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

from ...automata.language_ops import intersect
from ...support.errors import GrammarError
from .conjunctions import Constraints, Location, conjunction, location
from .constraints import Collector
from .string_sets import strings_of
from .translation import Translation
from .values import json_type

_MAX_DEPTH = 3
"""How many members deep two branches are compared."""


def _types(c: Constraints) -> set[str]:
    if c.values is not None:
        found = {json_type(v) for v in c.values.values()}
        if "integer" in found:
            found.add("number")
        return found & (c.types | ({"number"} if "integer" in c.types else set()))
    return set(c.types) | ({"integer"} if "number" in c.types else set())


def _values_of(t: "Translation", collector: Collector, pointer: str) -> set[Any] | None:
    parts = collector.flatten((location(pointer),))
    if parts is None:
        return set()
    c = collector.collect(parts)
    return None if c.values is None else set(c.values)


def _property_values(t: "Translation", collector: Collector, c: Constraints,
                     name: str) -> set[Any] | None:
    """The values property `name` can take, as far as `const`/`enum` say (None: unknown)."""
    found: set[Any] | None = None
    for part in c.objects:
        if name in part.properties:
            values = _values_of(t, collector, part.properties[name])
            if values is not None:
                found = values if found is None else found & values
    return found


def _forbids(t: "Translation", c: Constraints, name: str) -> bool:
    if name in c.forbidden:
        return True
    for part in c.objects:
        if name in part.properties:
            if t.doc.at(part.properties[name]) is False:
                return True
            continue
        if part.patterns:
            continue
        if (part.additional is not None and t.doc.at(part.additional) is False) or (
                part.additional is None and t.options.strict):
            return True
    return False


def _numbers_disjoint(a: Constraints, b: Constraints) -> bool:
    for low, high in ((a, b), (b, a)):
        if low.maximum is not None and high.minimum is not None and (
                low.maximum < high.minimum or (low.maximum == high.minimum and (
                    low.exclusive_maximum or high.exclusive_minimum))):
            return True
    return False


def _objects_disjoint(t: "Translation", collector: Collector, a: Constraints,
                      b: Constraints, depth: int) -> bool:
    for name in set(a.required) | set(b.required):
        # A side that requires a name the other forbids, or one it forbids itself (so it
        # holds no object), meets no object of the other.
        if name in a.required and _forbids(t, b, name):
            return True
        if name in b.required and _forbids(t, a, name):
            return True
        if name in a.required and name in b.required and \
                _members_disjoint(t, collector, a, b, name, depth):
            return True
    return False


def _members_disjoint(t: "Translation", collector: Collector, a: Constraints, b: Constraints,
                      name: str, depth: int) -> bool:
    """Whether no value of member `name` satisfies both `a` and `b`: by their `const`/`enum`
    values, by the summaries of the member's subschemas (to `_MAX_DEPTH` members deep), or,
    where both allow only strings, by the emptiness of the intersection of their string
    languages (`string_sets.strings_of`, each side a superset of its strings)."""
    va = _property_values(t, collector, a, name)
    vb = _property_values(t, collector, b, name)
    if va is not None and vb is not None and not va & vb:
        return True
    if depth >= _MAX_DEPTH:
        return False
    sides = []
    for c in (a, b):
        conj = conjunction([location(part.properties[name]) for part in c.objects
                            if name in part.properties])
        parts = collector.flatten(conj) if conj else None
        if not conj:
            return False
        if parts is None:
            return True  # the member can take no value at all
        sides.append((conj, collector.collect(parts)))
    (conj_a, sa), (conj_b, sb) = sides
    if _disjoint(t, collector, sa, sb, depth + 1):
        return True
    if not _types(sa) & _types(sb) <= {"string"}:
        return False
    try:
        common = intersect(strings_of(t, conj_a, removed=True),
                           strings_of(t, conj_b, removed=True), limits=t.limits)
    except GrammarError:
        return False
    return common.dfa.is_empty_language


def _disjoint(t: "Translation", collector: Collector, a: Constraints, b: Constraints,
              depth: int = 0) -> bool:
    common = _types(a) & _types(b)
    if not common:
        return True
    if a.values is not None and b.values is not None and not set(a.values) & set(b.values):
        return True
    if common - {"number", "integer", "object"}:
        return False
    if common & {"number", "integer"} and not _numbers_disjoint(a, b):
        return False
    return "object" not in common or _objects_disjoint(t, collector, a, b, depth)


def disjoint_subschemas(t: "Translation", a: Sequence[str], b: Sequence[str]) -> bool:
    """Whether no instance matches both the conjunction of the subschemas at `a` and that of
    those at `b` (as far as their summaries tell)."""
    collector = Collector(t.doc, lenient=True, strict_formats=t.options.strict_formats)
    summaries = []
    for pointers in (a, b):
        parts = collector.flatten(conjunction([location(p) for p in pointers]))
        if parts is None:
            return True
        summaries.append(collector.collect(parts))
    return _disjoint(t, collector, *summaries)


def overlapping(t: "Translation", branches: list[str],
                context: Sequence[Location] = ()) -> dict[str, list[str]]:
    """For each subschema at `branches`, the others that it is not provably disjoint from
    together with the subschemas of `context` (the siblings of the `oneOf`, which every
    instance also matches), in order."""
    collector = Collector(t.doc, lenient=True, strict_formats=t.options.strict_formats)
    summaries: dict[str, Constraints] = {}
    for pointer in branches:
        parts = collector.flatten(tuple(context) + (location(pointer),))
        if parts is not None:
            summaries[pointer] = collector.collect(parts)
    found: dict[str, list[str]] = {b: [] for b in branches}
    for a, b in combinations(summaries, 2):
        if not _disjoint(t, collector, summaries[a], summaries[b]):
            found[a].append(b)
            found[b].append(a)
    return {b: sorted(found[b], key=branches.index) for b in branches}


__all__ = ["disjoint_subschemas", "overlapping"]
