"""The objects or arrays a subschema rejects, as a union of schemas: how `not`, the `else` of
`if` and overlapping `oneOf` branches negate what `negation.py` cannot subtract in place.

An object is rejected by a subschema S (of merged constraints s) exactly when it breaks one of
S's object keywords, so among objects, not S is the union of one schema per way to break one:
- a required name r absent: `{"properties": {r: false}}`;
- a listed property p present with a value its schema P rejects:
  `{"required": [p], "properties": {p: not P}}` (P false: p present at all);
- fewer members than `minProperties` m: `{"maxProperties": m - 1}`; more than
  `maxProperties` M: `{"minProperties": M + 1}`;
- a member whose name matches a pattern p of `patternProperties` and whose value its schema
  P rejects: `{"~member": {"names": {"pattern": p}, "value": not P}}` (P false: any value);
- a member that a part of S does not list and none of its patterns p_i matches, L its listed
  names, whose value `additionalProperties` A rejects (A false, or absent with `strict`:
  any value): `{"~member": {"names": {"not": {"anyOf": [{"enum": L}, {"pattern": p_i}…]}},
  "value": not A}}`;
- a member whose name `propertyNames` N rejects: `{"~member": {"names": not N}}`
  (`Constraints.witnesses`, `objects.py`: a member, listed or additional, whose name is a
  string of `names` and whose value meets `value`).
Each also lists S's other property names with `{}`, so that schema order is S's. Arrays alike:
- an item at position i that its prefix schema P rejects:
  `{"minItems": i + 1, "items": [{}, …, not P]}` (array form: position i only);
- an item past the prefix that `items` R rejects, where there is no prefix:
  `{"contains": not R}`, or `{"minItems": 1}` where every item of the conjunction is provably
  outside R (two negated branches would otherwise make two `contains`); with a prefix,
  `contains` would count its items too: refused;
- fewer items matching a `contains` C than its least m (`minContains`, 1 without it):
  `{"contains": C, "minContains": 0, "maxContains": m - 1}`; more than its most M:
  `{"contains": C, "minContains": M + 1}` (C the same subschema, an alias);
- the size bounds as for objects.
Each schema also says `type` object or array (objects also `additionalProperties: true`, so
that `strict` does not close them). A subschema P that says nothing is never broken (no
schema for it). The union is exact, its members may overlap (a grammar choice need not be
disjoint), and a negated P is negated again where its member's rule is translated, the same
way, so nesting and recursion need nothing more. Object keywords outside this list
(presence rules, and a negated schema that itself asks for a member) and array ones (`uniqueItems`, `items` beside a prefix) make the
union inexpressible here (None), as do draft 03 documents.

The schemas are registered in the document (`SchemaDocument.schemas`) under the negated
subschema's pointer + `~object-i` / `~array-i` (`~array-i-nonempty` for "any item"), each
`not P` as an alias of P (`SchemaDocument.aliases`), and each C above as one; the same
subschema always yields the same schemas.
"""
from __future__ import annotations

from typing import Any

from .conjunctions import MEMBER, Constraints
from .constraints import HANDLED, POSITIVE, PRESENCE, UNSUPPORTED
from .disjointness import disjoint_subschemas
from .document import join
from .translation import Translation

_VALIDATING = frozenset((*HANDLED, *UNSUPPORTED, *PRESENCE, *POSITIVE))


def _trivial(t: "Translation", pointer: str) -> bool:
    """Whether the subschema at `pointer` accepts everything as written (true, or only
    annotations)."""
    while pointer in t.doc.aliases:
        pointer = t.doc.aliases[pointer]
    schema = t.doc.at(pointer)
    return schema is True or (isinstance(schema, dict) and not _VALIDATING & schema.keys())


def _object_breaks(t: "Translation", s: Constraints) -> list[tuple[str, dict[str, Any]]] | None:
    if s.presence or s.forbidden or s.witnesses:
        return None
    listed = dict.fromkeys(name for part in s.objects for name in part.properties)
    listed.update(dict.fromkeys(s.required))
    names: dict[str, Any] = dict.fromkeys(listed, True)  # listed in S's order (schema order)
    breaks: list[dict[str, Any]] = []

    def some_member(name_schema: Any, value: Any) -> None:
        breaks.append({"properties": names, MEMBER: {"names": name_schema, "value": value}})

    for part in s.objects:
        for pattern, pointer in part.patterns:
            if t.doc.at(pointer) is False or not _trivial(t, pointer):
                some_member({"pattern": pattern},
                            True if t.doc.at(pointer) is False else ("not", pointer))
        closed = t.options.strict if part.additional is None else \
            t.doc.at(part.additional) is False  # `strict`: absent is false
        if closed or (part.additional is not None and not _trivial(t, part.additional)):
            outside = ([{"enum": list(part.properties)}] if part.properties else []) + [
                {"pattern": pattern} for pattern, _ in part.patterns]
            some_member({"not": {"anyOf": outside}} if outside else True,
                        True if closed else ("not", part.additional))
        for name, pointer in part.properties.items():
            if t.doc.at(pointer) is False:
                breaks.append({"required": [name], "properties": names})
            elif not _trivial(t, pointer):
                breaks.append({"required": [name],
                               "properties": {**names, name: ("not", pointer)}})
    for pointer in s.property_names:
        some_member(("not", pointer), True)
    breaks.extend({"properties": {**names, name: False}} for name in s.required)
    if s.min_properties:
        breaks.append({"maxProperties": s.min_properties - 1})
    if s.max_properties is not None:
        breaks.append({"minProperties": s.max_properties + 1})
    open_ = {"additionalProperties": True}  # never closed by `strict`
    return [(f"object-{i}", {"type": "object", **b, **open_}) for i, b in enumerate(breaks)]


def _items_break(t: "Translation", rest: str, c: Constraints | None) -> dict[str, Any]:
    """The break "an item that `rest` rejects" (no prefix): `contains` of its negation, or,
    where every item of `c` is provably outside `rest`, any item at all."""
    items = [part.rest for part in c.arrays if part.rest is not None] if c is not None else []
    if items and not any(part.prefix for part in c.arrays) and \
            disjoint_subschemas(t, items, [rest]):
        return {"minItems": 1}
    return {"contains": ("not", rest)}


def _array_breaks(t: "Translation", s: Constraints,
                  c: Constraints | None) -> list[tuple[str, dict[str, Any]]] | None:
    if s.unique:
        return None
    breaks: list[dict[str, Any]] = []
    for count in s.contains:  # too few matches, or too many
        if count.least:
            breaks.append({"contains": ("same", count.pointer), "minContains": 0,
                           "maxContains": count.least - 1})
        if count.most is not None:
            breaks.append({"contains": ("same", count.pointer), "minContains": count.most + 1})
    for part in s.arrays:
        for i, pointer in enumerate(part.prefix):
            if not _trivial(t, pointer):
                breaks.append({"minItems": i + 1, "items": [True] * i + [("not", pointer)]})
        if part.rest is not None and not _trivial(t, part.rest):
            if part.prefix:
                return None
            breaks.append(_items_break(t, part.rest, c))
    if s.min_items:
        breaks.append({"maxItems": s.min_items - 1})
    if s.max_items is not None:
        breaks.append({"minItems": s.max_items + 1})
    # Made schemas are named by their content: the same index may hold either items break.
    return [(f"array-{i}" + ("-nonempty" if b == {"minItems": 1} else ""), {"type": "array", **b})
            for i, b in enumerate(breaks)]


def violations(t: "Translation", pointer: str, s: Constraints, kind: str,
               c: Constraints | None = None) -> list[str] | None:
    """The pointers of schemas whose union, among values of JSON type `kind` (`object` or
    `array`), is what the subschema at `pointer` (merged: `s`) rejects in the conjunction `c`
    (None: in any, as far as deciding whether there is a union); None where that is not
    expressible (module docstring)."""
    if t.doc.draft3 or s.values is not None:
        return None
    breaks = _object_breaks(t, s) if kind == "object" else _array_breaks(t, s, c)
    if breaks is None:
        return None
    pointers = []
    for suffix, schema in breaks:
        where = f"{pointer}~{suffix}"
        if where not in t.doc.schemas:
            _register(t, where, schema)
        pointers.append(where)
    return pointers


def value_violations(t: "Translation", pointer: str, value: Any) -> list[str]:
    """The pointers of schemas whose union is the objects (arrays) other than `value`, the one
    object (array) that a negated `enum`/`const` at `pointer` lists: a key of it absent, present
    with another value, or another key present; an array of another length, or another item
    at a position. Registered like `violations`' (`~object-value-i`, `~array-value-i`)."""
    breaks: list[dict[str, Any]]
    json_kind = "object" if isinstance(value, dict) else "array"
    if isinstance(value, dict):
        keys = list(value)
        # A member with another value is a witness, as another key is: found wherever it
        # stands among the members, since no `properties` of these schemas orders them.
        breaks = [b for k, v in value.items() for b in (
            {"properties": {k: False}},
            {MEMBER: {"names": {"const": k}, "value": {"not": {"const": v}}}})]
        breaks.append({MEMBER: {"names": {"not": {"enum": keys}} if keys else True,
                                "value": True}})
        breaks = [{"type": "object", **b, "additionalProperties": True} for b in breaks]
    else:
        n = len(value)
        breaks = ([{"maxItems": n - 1}] if n else []) + [{"minItems": n + 1}] + [
            {"minItems": i + 1, "items": [True] * i + [{"not": {"const": v}}]}
            for i, v in enumerate(value)]
        breaks = [{"type": "array", **b} for b in breaks]
    pointers = []
    for i, schema in enumerate(breaks):
        where = f"{pointer}~{json_kind}-value-{i}"
        if where not in t.doc.schemas:
            _register(t, where, schema)
        pointers.append(where)
    return pointers


def _register(t: "Translation", where: str, schema: dict[str, Any]) -> None:
    """Put `schema` into the document at `where`, each subschema at its own pointer and each
    `("not", P)` in it as `{"not": alias of P}`."""
    doc = t.doc
    stack: list[tuple[str, Any]] = [(where, schema)]
    while stack:
        at, value = stack.pop()
        if isinstance(value, tuple) and value[0] == "same":
            doc.make(at, {})
            doc.aliases[at] = value[1]
            continue
        if isinstance(value, tuple):
            doc.make(at, {"not": {}})
            doc.aliases[join(at, "not")] = value[1]
            continue
        if not isinstance(value, dict):
            doc.make(at, value)
            continue
        shape = dict(value)
        for keyword in ("properties", MEMBER):  # subschemas by name
            if keyword in value:
                shape[keyword] = dict.fromkeys(value[keyword], True)
                stack.extend((join(at, keyword, name), sub)
                             for name, sub in value[keyword].items())
        for keyword in ("items", "anyOf"):  # subschemas by position
            if keyword in value:
                shape[keyword] = [True] * len(value[keyword])
                stack.extend((join(at, keyword, i), sub) for i, sub in enumerate(value[keyword]))
        for keyword in ("contains", "additionalProperties", "not"):
            if keyword in value:
                shape[keyword] = True
                stack.append((join(at, keyword), value[keyword]))
        doc.make(at, shape)


__all__ = ["value_violations", "violations"]
