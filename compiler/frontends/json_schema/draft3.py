"""Draft-03 keywords read onto the draft 2020-12 machinery, under a draft-03 `$schema` only
(`SchemaDocument.draft3`); in every other dialect they are unknown keywords, so annotations
(`vocabularies.py`), as the keywords of later drafts are under draft 03.

Each is exact or refused, never dropped (draft-zyp-json-schema-03, as `Draft3Validator`):
- `extends`, a schema or an array of schemas, is `allOf`: `Collector.flatten` adds them to the
  conjunction.
- `disallow`, a type name or an array of type names and schemas, rejects what matches any
  member: the conjunction of the negation of each member, folded by `negation.py` (a type
  name T is the schema `{"type": T}` at its pointer, see `document.py`; the negation of a
  schema member is refused where `not` of it would be).
- `divisibleBy` is `multipleOf` (greater than 0, exact on decimals).
- `type` may name `any` (every value), and its array form may hold schemas (an instance
  matches one member): `[S]` is the conjunct S; a union of a schema with a type name or
  another schema is an alternative, like `anyOf` over its members (a name T as the schema
  `{"type": T}` at its pointer): `Collector.alternative` splits it where `anyOf` is split,
  and its negation is the negation of each member. Inside a negated subschema beside other
  keywords it is refused (`unsupported-keyword`), as `anyOf` is there. A lone schema (not in
  an array) is no `type`, nor `disallow`: invalid.
- `required: true` in the schema of a property makes the parent require that property: read
  from the parent's `properties` as written (not through `$ref`), as draft-03 validators do
  (who also take a non-empty array there for true; any other value than a boolean or an
  array of names is an `invalid-schema` error); `required` says nothing about the schema
  that holds it (it is no keyword of its own in draft 03, so an array there is an
  annotation).
- `dependencies` may map a property to one property name (`"a": "b"` is `"a": ["b"]`); its
  schema form is refused, as in later drafts.
"""
from __future__ import annotations

from typing import Any

from ...support.errors import GrammarError
from .document import join

KEYWORDS = ("divisibleBy", "extends", "disallow")
"""The keywords only draft 03 has that assert something."""
TYPE_UNION = (": a draft-03 type union holding a schema and another member is an alternative "
              "(like anyOf), which is not supported inside a negated subschema beside other "
              "keywords")
"""Why a `type` union with schema members is refused where it is not split."""


def _members(pointer: str, key: str, value: Any) -> list[str]:
    if isinstance(value, list):
        return [join(pointer, key, i) for i in range(len(value))]
    return [join(pointer, key)]


def conjuncts(pointer: str, schema: dict[str, Any],
              ignored: frozenset[str]) -> tuple[frozenset[str], list[str], list[str]]:
    """The draft-03 keywords of the subschema `schema` at `pointer` that are conjunctions,
    expanded: the keywords now accounted for (to ignore there from now on, so that expanding
    again adds nothing), the pointers of the subschemas that must hold (`extends`, a `type`
    that is one schema), and those that must not (`disallow`)."""
    done: set[str] = set()
    plain: list[str] = []
    negated: list[str] = []
    if "extends" in schema and "extends" not in ignored:
        done.add("extends")
        plain.extend(_members(pointer, "extends", schema["extends"]))
    if "disallow" in schema and "disallow" not in ignored:
        done.add("disallow")
        negated.extend(_members(pointer, "disallow", schema["disallow"]))
    if "type" in schema and "type" not in ignored:
        value = schema["type"]
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
            done.add("type")
            plain.append(join(pointer, "type", 0))
    return frozenset(done), plain, negated


def union(value: Any) -> bool:
    """Whether the draft-03 `type` value is an alternative: an array of more than one member,
    one of them a schema."""
    return isinstance(value, list) and len(value) > 1 and any(isinstance(v, dict) for v in value)


def any_type(value: Any) -> bool:
    """Whether the draft-03 `type` value names `any`, so every value matches it."""
    return value == "any" or (isinstance(value, list) and "any" in value)


def required_properties(schema: dict[str, Any], pointer: str) -> list[tuple[str, str]]:
    """(name, pointer of its `required`) for each property whose schema in the `properties`
    of `schema` (at `pointer`) says `required: true` (or, as validators read it, a non-empty
    array of names there); `GrammarError` for a `required` there that is neither."""
    props = schema.get("properties")
    if not isinstance(props, dict):
        return []
    found = []
    for name, sub in props.items():
        value = sub.get("required", False) if isinstance(sub, dict) else False
        where = join(pointer, "properties", name, "required")
        if not isinstance(value, bool) and not (
                isinstance(value, list) and all(isinstance(k, str) for k in value)):
            raise GrammarError(f"required must be a boolean (or an array of property "
                               f"names), got {value!r}", pointer=where, code="invalid-schema")
        if value:
            found.append((name, where))
    return found


def dependencies(value: dict[str, Any]) -> dict[str, Any]:
    """Draft-03 `dependencies` with each single property name made a one-name list."""
    return {name: [v] if isinstance(v, str) else v for name, v in value.items()}


__all__ = ["KEYWORDS", "TYPE_UNION", "any_type", "conjuncts", "dependencies",
           "required_properties", "union"]
