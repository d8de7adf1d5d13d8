"""The keywords each draft asserts: a schema is read by the draft its root `$schema` names, and
a keyword outside that draft's vocabulary is an annotation, as the specification says of
unknown keywords, wherever it stands (positive, under `not`, in `oneOf`, `if`, `disallow`,
`propertyNames`).

Invariants:
- `dialect(root)` is one of `DRAFTS`: the draft whose name the root's `$schema` contains
  (`draft-03`, `draft-04`, `draft-06`, `draft-07`, `2019-09`), else `2020-12` (no `$schema`,
  or an unknown one).
- `VOCABULARIES[d]` is the set of keywords, among those the frontend knows (`ASSERTIONS`),
  that validate something under draft d: jsonschema's `VALIDATORS` of that draft, restricted
  to `ASSERTIONS` (a test keeps them equal), plus `READ_BY[d]` (keywords read by another
  keyword of the same schema: draft 3/4 `exclusiveMinimum` by `minimum`, `then`/`else` by
  `if`, `minContains`/`maxContains` by `contains`) and `LEGACY[d]`.
- `LEGACY["2020-12"]` keeps `additionalItems`: a draft 2020-12 schema with array-form `items`
  is invalid by its metaschema (jsonschema cannot apply it), and it keeps its draft 2019-09
  reading (position schemas, then `additionalItems`).
- Draft 3's `required: true` is read by the parent's `properties` from the schema as written
  (`draft3.py`), so `required` is no keyword of its own there.
- Structural keywords (`$defs`, `definitions`, `$id`, anchors) hold in every draft.
- `in_force(schema, vocabulary)` is the schema as its draft reads it: without the keywords of
  `ASSERTIONS` outside `vocabulary`; every other key (annotations, structure) is kept.
"""
from __future__ import annotations

from typing import Any

DRAFTS = ("draft-03", "draft-04", "draft-06", "draft-07", "2019-09", "2020-12")

_DRAFT3 = frozenset((
    "type", "properties", "patternProperties", "additionalProperties", "items",
    "additionalItems", "dependencies", "minimum", "maximum", "minItems", "maxItems",
    "uniqueItems", "pattern", "minLength", "maxLength", "enum", "format", "divisibleBy",
    "disallow", "extends", "$ref"))
_DRAFT4 = (_DRAFT3 - {"divisibleBy", "disallow", "extends"}) | {
    "allOf", "anyOf", "oneOf", "not", "minProperties", "maxProperties", "required",
    "multipleOf"}
_DRAFT6 = _DRAFT4 | {"const", "contains", "propertyNames", "exclusiveMinimum",
                     "exclusiveMaximum"}
_DRAFT7 = _DRAFT6 | {"if"}
_DRAFT2019 = (_DRAFT7 - {"dependencies"}) | {
    "dependentRequired", "dependentSchemas", "unevaluatedItems", "unevaluatedProperties",
    "$recursiveRef"}
_DRAFT2020 = (_DRAFT2019 - {"$recursiveRef", "additionalItems"}) | {"prefixItems",
                                                                     "$dynamicRef"}

VALIDATING: dict[str, frozenset[str]] = {
    "draft-03": _DRAFT3, "draft-04": _DRAFT4, "draft-06": _DRAFT6, "draft-07": _DRAFT7,
    "2019-09": _DRAFT2019, "2020-12": _DRAFT2020}
"""Per draft, the keywords with a validator of their own (jsonschema's `VALIDATORS`)."""

_BOUND_FLAGS = frozenset(("exclusiveMinimum", "exclusiveMaximum"))
_CONDITION = frozenset(("then", "else"))
_CONTAINS = frozenset(("minContains", "maxContains"))
READ_BY: dict[str, frozenset[str]] = {
    "draft-03": _BOUND_FLAGS, "draft-04": _BOUND_FLAGS, "draft-06": frozenset(),
    "draft-07": _CONDITION, "2019-09": _CONDITION | _CONTAINS,
    "2020-12": _CONDITION | _CONTAINS}
"""Per draft, the keywords another keyword of the same schema reads."""

LEGACY: dict[str, frozenset[str]] = {d: frozenset() for d in DRAFTS}
LEGACY["2020-12"] = frozenset(("additionalItems",))
"""Per draft, keywords kept for schemas its metaschema rejects (see the module docstring)."""

VOCABULARIES: dict[str, frozenset[str]] = {
    d: VALIDATING[d] | READ_BY[d] | LEGACY[d] for d in DRAFTS}
"""Per draft, every keyword in force."""

ASSERTIONS = frozenset().union(*VOCABULARIES.values())
"""Every keyword that asserts in some draft: outside a draft's vocabulary, an annotation."""


def dialect(root: Any) -> str:
    """The draft of a document whose root is `root` (see the module docstring)."""
    declared = root.get("$schema") if isinstance(root, dict) else None
    if isinstance(declared, str):
        for draft in DRAFTS[:-1]:
            if draft in declared:
                return draft
    return DRAFTS[-1]


def in_force(schema: Any, vocabulary: frozenset[str]) -> Any:
    """`schema` without the keywords of other drafts (the same object when it has none)."""
    if not isinstance(schema, dict) or all(k in vocabulary or k not in ASSERTIONS
                                           for k in schema):
        return schema
    return {k: v for k, v in schema.items() if k in vocabulary or k not in ASSERTIONS}


__all__ = ["ASSERTIONS", "DRAFTS", "LEGACY", "READ_BY", "VALIDATING", "VOCABULARIES",
           "dialect", "in_force"]
