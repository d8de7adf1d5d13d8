"""`unevaluatedProperties` and `unevaluatedItems` (2019-09 and 2020-12) in a merged conjunction.

The keyword U of the subschema at P applies to the members (items) of the instance that no
keyword of P's in-place evaluation evaluated: P's own `properties`, `patternProperties`,
`additionalProperties` (`prefixItems`, `items`, `additionalItems`), and those of every
subschema reached from P through `allOf`, `$ref`, the `anyOf`/`oneOf` branches, `if`, `then`,
`else` and `dependentSchemas` that hold for the instance, a nested U evaluating everything.
The translator distributes alternatives before merging (and an `anyOf` beside U over the
subsets of its branches that hold together, `translate.py`), so the subschemas that hold are
exactly the conjunction's positive locations reached from P (a negated one never contributes;
made schemas are reached from nothing). A sibling that P does not reach evaluates nothing for
U (`$ref` opens a new scope). So U becomes one more object (array) part of the conjunction:
the evaluated names and patterns (the evaluated prefix) mapped to `true`, U for the rest;
nothing where something reached evaluates every member (item). `contains` reached from P (it
evaluates the items it matches, which no position says) makes `unevaluatedItems` an
`unsupported-keyword` error.
"""
from __future__ import annotations

from typing import Any

from ...support.errors import GrammarError
from .conjunctions import NEGATED, ArrayPart, Constraints, Location, ObjectPart
from .document import SchemaDocument, join

KEYWORDS = ("unevaluatedProperties", "unevaluatedItems")
TRUE = "~true"
"""The pointer of the made schema `true` that evaluated names and positions map to."""


def _children(doc: SchemaDocument, pointer: str, schema: dict[str, Any]) -> list[str]:
    """The subschemas that the subschema at `pointer` applies in place."""
    kids: list[str] = []
    for keyword in ("allOf", "anyOf", "oneOf"):
        if isinstance(schema.get(keyword), list):
            kids.extend(join(pointer, keyword, i) for i in range(len(schema[keyword])))
    kids.extend(join(pointer, k) for k in ("if", "then", "else") if k in schema)
    if isinstance(schema.get("dependentSchemas"), dict):
        kids.extend(join(pointer, "dependentSchemas", n) for n in schema["dependentSchemas"])
    for keyword in ("$ref", "$dynamicRef"):
        if keyword in schema:
            try:
                kids.append(doc.resolve(schema[keyword], pointer, keyword))
            except GrammarError:
                pass  # reported where the reference is followed
    return kids


def _reached(doc: SchemaDocument, parts: list[Location], start: str) -> list[tuple[str, Any]]:
    """The positive locations of `parts` (and their subschemas) that the subschema at
    `start` reaches in place, `start` first."""
    positive = {p for p, ignored in parts if NEGATED not in ignored}
    seen, todo, out = {start}, [start], []
    while todo:
        pointer = todo.pop()
        schema = doc.at(pointer)
        if not isinstance(schema, dict):
            continue
        out.append((pointer, schema))
        for kid in _children(doc, pointer, schema):
            if kid in positive and kid not in seen:
                seen.add(kid)
                todo.append(kid)
    return out


def apply_unevaluated(doc: SchemaDocument, parts: list[Location], c: Constraints,
                      found: list[tuple[str, str]]) -> str | None:
    """Add to `c` the part of each `(keyword, pointer)` of `found` (module docstring); where
    `unevaluatedItems` cannot be compiled, the reason, else None."""
    for keyword, pointer in found:
        reached = _reached(doc, parts, pointer)
        if keyword == "unevaluatedProperties":
            names: dict[str, str] = {}
            patterns: dict[str, str] = {}
            if any("additionalProperties" in s or (p != pointer and keyword in s)
                   for p, s in reached):
                continue
            for _, s in reached:
                names.update(dict.fromkeys(s.get("properties", ()), TRUE))
                patterns.update(dict.fromkeys(s.get("patternProperties", ()), TRUE))
            doc.make(TRUE, True)
            c.objects.append(ObjectPart(pointer + "~unevaluated", names, list(patterns.items()),
                                        join(pointer, keyword)))
            continue
        prefix, every = 0, False
        for p, s in reached:
            if "contains" in s:
                return ("'contains' evaluates the items it matches, which no position says "
                        f"(at {join(p, 'contains')})")
            items = s.get("items")
            if isinstance(items, list):
                prefix = max(prefix, len(items))
                every = every or "additionalItems" in s
            elif items is not None:
                every = True
            prefix = max(prefix, len(s.get("prefixItems", ())))
            every = every or (p != pointer and keyword in s)
        if not every:
            doc.make(TRUE, True)
            c.arrays.append(ArrayPart(pointer + "~unevaluated", [TRUE] * prefix,
                                      join(pointer, keyword)))
    return None


__all__ = ["KEYWORDS", "apply_unevaluated"]
