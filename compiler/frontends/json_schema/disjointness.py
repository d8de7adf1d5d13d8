"""Proofs that `oneOf` branches cannot both match one instance, so `oneOf` may compile as
`anyOf`.

Each branch is summarised by an over-approximation of what it accepts: its merged keywords
with nested `anyOf`/`oneOf`/`not` ignored and unsupported keywords dropped (dropping a
constraint only grows the set, so a disjointness proven on summaries holds for the branches).
Two summaries are disjoint when their JSON types do not meet, their `enum`/`const` values
differ, their numeric ranges do not meet, or, for objects, some property is required by one
side and its values on the two sides are disjoint (each side's value: its `properties` entry,
the `patternProperties` its name matches, else `additionalProperties`; a discriminator:
disjoint `const`/`enum`, summaries disjoint in turn, a few members deep, or string languages
that do not meet, such as patterns `^A$` and `^B$`), or required by one and forbidden by the
other (or by itself: a summary that requires a name it forbids holds no object, as when a
`oneOf` branch sits beside one it contradicts). A side whose conjunction holds nested
`anyOf`/`oneOf` is split into one summary per branch (`_cases`, at most `_MAX_CASES`), and two
sides are disjoint when every pair of their cases is.
"""
from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from ...automata.language_ops import as_dfa, intersect
from ...support import deadline
from ...support.errors import GrammarError
from .conjunctions import NEGATED, Constraints, Location, conjunction, location
from .constraints import Collector
from .document import join
from .ecma_regex import ecma_pattern
from .string_sets import strings_of
from .translation import Translation, remaining
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


def _member_pointers(t: "Translation", c: Constraints, name: str) -> list[str] | None:
    """The subschemas that constrain member `name` of the objects of `c`: per object part its
    `properties` entry and the `patternProperties` it matches, else `additionalProperties`
    (None where nothing constrains it, or a pattern cannot be read)."""
    out: list[str] = []
    for part in c.objects:
        try:
            matched = [where for pattern, where in part.patterns
                       if as_dfa(ecma_pattern(pattern, limits=t.limits),
                                 t.limits).fullmatch(name.encode("utf-8"))]
        except (GrammarError, UnicodeEncodeError):
            return None
        if name in part.properties:
            out += [part.properties[name], *matched]
        elif matched:
            out += matched
        elif part.additional is not None:
            out.append(part.additional)
    return out or None


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
        # Where one side requires it, a common object has the member: its values must meet.
        if _members_disjoint(t, collector, a, b, name, depth):
            return True
    return False


def _members_disjoint(t: "Translation", collector: Collector, a: Constraints, b: Constraints,
                      name: str, depth: int) -> bool:
    """Whether no value of member `name` satisfies both `a` and `b` (each side: its
    `properties` entry, matching `patternProperties` or `additionalProperties`): by their
    `const`/`enum` values, by the summaries of the member's subschemas (to `_MAX_DEPTH`
    members deep), or, where both allow only strings, by the emptiness of the intersection
    of their string languages (`string_sets.strings_of`, each side a superset of its
    strings)."""
    sides = []
    for c in (a, b):
        pointers = _member_pointers(t, c, name)
        if pointers is None:
            return False
        conj = conjunction([location(p) for p in pointers])
        parts = collector.flatten(conj)
        if parts is None:
            return True  # the member can take no value at all
        sides.append((conj, collector.collect(parts)))
    (conj_a, sa), (conj_b, sb) = sides
    if sa.values is not None and sb.values is not None and not set(sa.values) & set(sb.values):
        return True
    if depth >= _MAX_DEPTH:
        return False
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


_MAX_CASES = 16
"""At most this many cases per side when nested alternatives are split (`_cases`)."""


def _cases(collector: Collector, locations: Sequence[Location]) -> list[Constraints] | None:
    """Summaries whose union holds every instance of the conjunction of `locations`: one per
    branch of each nested `anyOf`/`oneOf` (a few levels, at most `_MAX_CASES` cases and
    splits), so that a
    branch which is itself a choice of disjoint shapes is compared shape by shape; None when
    the conjunction holds nothing."""
    pending = [list(locations)]
    done: list[Constraints] = []
    splits = 0  # a choice that refers to itself (`oneOf: [{$ref: "#"}]`) splits forever
    while pending:
        deadline.check()
        locs = pending.pop()
        parts = collector.flatten(conjunction(locs))
        if parts is None:
            continue
        split = next(((loc, kw) for loc in parts if NEGATED not in loc[1]
                      and (kw := collector.alternative(*loc)) in ("anyOf", "oneOf")), None)
        if split is not None and len(done) + len(pending) < _MAX_CASES and splits < _MAX_CASES:
            splits += 1
            (pointer, _), keyword = split
            rest = remaining(parts, split[0], keyword)
            branches = range(len(collector.doc.at(pointer)[keyword]))
            if len(done) + len(pending) + len(branches) <= _MAX_CASES:
                pending.extend(rest + [location(join(pointer, keyword, i))] for i in branches)
                continue
        done.append(collector.collect(parts))
    return done or None


def _cases_disjoint(t: "Translation", collector: Collector, a: list[Constraints],
                    b: list[Constraints]) -> bool:
    return all(_disjoint(t, collector, x, y) for x in a for y in b)


def disjoint_subschemas(t: "Translation", a: Sequence[str], b: Sequence[str]) -> bool:
    """Whether no instance matches both the conjunction of the subschemas at `a` and that of
    those at `b` (as far as their summaries tell)."""
    collector = Collector(t.doc, lenient=True, strict_formats=t.options.strict_formats)
    sides = [_cases(collector, [location(p) for p in pointers]) for pointers in (a, b)]
    return sides[0] is None or sides[1] is None or _cases_disjoint(t, collector, *sides)


def overlapping(t: "Translation", branches: list[str],
                context: Sequence[Location] = ()) -> dict[str, list[str]]:
    """For each subschema at `branches`, the others that it is not provably disjoint from
    together with the subschemas of `context` (the siblings of the `oneOf`, which every
    instance also matches), in order."""
    collector = Collector(t.doc, lenient=True, strict_formats=t.options.strict_formats)
    summaries: dict[str, list[Constraints]] = {}
    for pointer in branches:
        cases = _cases(collector, [*context, location(pointer)])
        if cases is not None:
            summaries[pointer] = cases
    found: dict[str, list[str]] = {b: [] for b in branches}
    for a, b in combinations(summaries, 2):
        if not _cases_disjoint(t, collector, summaries[a], summaries[b]):
            found[a].append(b)
            found[b].append(a)
    return {b: sorted(found[b], key=branches.index) for b in branches}


__all__ = ["disjoint_subschemas", "overlapping"]
