"""`not`, `else` and overlapping `oneOf` over objects and arrays, negated as the union of the
ways to break a subschema (`violations.py`): every instance of a finite universe (scalars,
objects over two names, arrays of up to two items, nested one level) is accepted exactly when
`jsonschema` validates it (in any member order), for random schemas built from `properties`,
`required`, `patternProperties`, `additionalProperties` (false or a schema), `propertyNames`,
sizes, `prefixItems`/`items`, `contains` with its counts, one object or array `const`/`enum`
value, and the combinators (negated in turn:
`not` of `oneOf`, of `if`, of a subschema holding its own `not`), nested inside each other.
"""
from __future__ import annotations

import itertools
import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler import compile_json_schema
from tests.support.budget import examples
from tests.support.json_schema_suite import accepts, agrees_on, byte_vocabulary
from tests.support.structural_reference import strict_schema

_ITEMS: list[Any] = [None, 0, "x", [], {}]
UNIVERSE: list[Any] = [None, True, 0, 1.5, "x", "", *(
    dict(zip(names, values)) for n in range(3) for names in itertools.combinations("ab", n)
    for values in itertools.product(_ITEMS, repeat=n)), *(
    list(values) for n in range(3) for values in itertools.product(_ITEMS, repeat=n))]
"""72 instances: the scalars, every object over names `a`, `b` and every array of up to two
items, with values among null, 0, "x", [] and {}."""

_LEAVES = st.sampled_from([{}, {"type": "string"}, {"type": "integer"}, {"type": "null"},
                           {"const": "x"}, {"type": "array"}, {"type": "object"}, {"maxItems": 0},
                           {"required": ["a"]}, True, False, {"const": {"a": None}},
                           {"const": ["x", {}]}, {"enum": [{}, 0]}, {"const": []},
                           {"enum": [[], {}]}])


def _objects(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        schema: dict[str, Any] = {}
        if draw(st.booleans()):
            schema["type"] = "object"
        names = draw(st.lists(st.sampled_from("ab"), unique=True, max_size=2))
        if names:
            schema["properties"] = {n: draw(inner) for n in names}
        required = draw(st.lists(st.sampled_from("ab"), unique=True, max_size=2))
        if required:
            schema["required"] = required
        for keyword in ("minProperties", "maxProperties"):
            if draw(st.integers(0, 3)) == 0:
                schema[keyword] = draw(st.integers(0, 2))
        patterns = draw(st.lists(st.sampled_from(["^a$", "b", "[ab]", "c"]), unique=True,
                                 max_size=2))
        if patterns and draw(st.booleans()):
            schema["patternProperties"] = {p: draw(inner) for p in patterns}
        additional = draw(st.integers(0, 5))
        if additional == 0:
            schema["additionalProperties"] = False
        elif additional == 1:
            schema["additionalProperties"] = draw(inner)
        if draw(st.integers(0, 4)) == 0:
            schema["propertyNames"] = draw(st.sampled_from(
                [{"const": "a"}, {"pattern": "b"}, {"not": {"const": "b"}}, {"maxLength": 0}]))
        return schema
    return build()


def _arrays(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        schema: dict[str, Any] = {}
        if draw(st.booleans()):
            schema["type"] = "array"
        prefix = draw(st.lists(inner, max_size=2))
        if prefix:
            schema["prefixItems"] = prefix
        elif draw(st.booleans()):
            schema["items"] = draw(inner)
        for keyword in ("minItems", "maxItems"):
            if draw(st.integers(0, 3)) == 0:
                schema[keyword] = draw(st.integers(0, 2))
        if draw(st.integers(0, 3)) == 0:
            schema["contains"] = draw(inner)
            for keyword in ("minContains", "maxContains"):
                if draw(st.booleans()):
                    schema[keyword] = draw(st.integers(0, 2))
        return schema
    return build()


def _combined(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        _objects(inner), _arrays(inner),
        inner.map(lambda s: {"not": s}),
        st.lists(inner, min_size=2, max_size=3).map(lambda b: {"oneOf": b}),
        st.lists(inner, min_size=2, max_size=2).map(lambda b: {"anyOf": b}),
        st.tuples(inner, inner, inner).map(lambda t: {"if": t[0], "then": t[1], "else": t[2]}),
        st.tuples(inner, inner).map(lambda t: {"allOf": [t[0], {"not": t[1]}]}))


SCHEMAS = st.recursive(_LEAVES, _combined, max_leaves=6)


def _agrees(schema: Any, strict: bool = False) -> None:
    agrees_on(schema, UNIVERSE, validated=strict_schema(schema) if strict else schema,
              property_order="any", strict=strict)


@settings(max_examples=examples(120), deadline=None)
@given(SCHEMAS.filter(lambda s: isinstance(s, dict) and ("not" in s or "oneOf" in s
                                                         or "if" in s or "allOf" in s)))
def test_random_negations_exactly(schema: Any) -> None:
    _agrees(schema)


@settings(max_examples=examples(40), deadline=None)
@given(SCHEMAS.filter(lambda s: isinstance(s, dict) and ("not" in s or "oneOf" in s)))
def test_random_negations_exactly_under_strict(schema: Any) -> None:
    """`strict` closes the schema's objects, never the schemas the negations make."""
    _agrees(schema, strict=True)


@pytest.mark.parametrize("schema", [
    # The forms found in real schemas: objects that differ in one property's value or type,
    # without `type` (so every non-object matches both), arrays that overlap only when empty.
    {"oneOf": [{"properties": {"a": {"enum": ["x"]}, "b": {"type": "string"}}},
               {"properties": {"a": {"enum": [0]}, "b": {"type": ["string", "null"]}}}]},
    {"oneOf": [{"type": "array", "items": {"type": "integer"}},
               {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}]},
    {"if": {"properties": {"a": {"const": "x"}}, "required": ["a"]},
     "then": {"required": ["b"]}, "else": {"properties": {"b": False}}},
    {"not": {"prefixItems": [{"type": "string"}], "minItems": 1}},
    {"not": {"minProperties": 1, "maxProperties": 1}},
    # A member the negated subschema does not list, or one only the context lists.
    {"oneOf": [{"properties": {"a": {}}, "additionalProperties": False},
               {"properties": {"b": {}}, "additionalProperties": False}]},
    {"properties": {"b": {"type": "integer"}},
     "not": {"properties": {"a": {}}, "additionalProperties": False}},
    # A member outside one negated part's names that another's violation lists (the name
    # sets are fixed, not "listed nowhere in the conjunction"), and enum objects.
    {"not": {"additionalProperties": False},
     "allOf": [{"not": {"properties": {"a": {}, "b": {}}, "required": ["a"],
                        "additionalProperties": False}}]},
    {"enum": [{"a": 1, "b": 0}, {"a": 1}], "not": {"properties": {"a": {}},
                                                   "additionalProperties": False}},
    # A negation met again through `allOf` (it once made a rule of only itself: no value).
    {"allOf": [{"not": {"properties": {"a": {"type": "object",
                                             "properties": {"b": {"const": "x"}}}}}},
               {"type": "object", "properties": {"a": {"type": "object"}}}]},
    {"$defs": {"d": {"properties": {"a": {"$ref": "#/$defs/d"}, "b": {"type": "null"}}}},
     "not": {"$ref": "#/$defs/d"}},
    # Negations of negations, alternatives and conditionals (`negation._union`).
    {"oneOf": [{"not": {"required": ["a", "b"]}, "required": ["a"]}, {"required": ["b"]}]},
    {"not": {"oneOf": [{"type": "string"}, {"required": ["a"]}, {"type": ["object", "string"]}]}},
    {"not": {"if": {"type": "object"}, "then": {"required": ["a"]}, "else": {"type": "integer"}}},
    {"not": {"allOf": [{"not": {"type": "array"}}, {"not": {"type": "string"}}]}},
    # Arrays whose items differ in type: "an item of another type" is "any item" there, so
    # two negated branches do not make two `contains`.
    {"oneOf": [{"type": "array", "minItems": 1, "items": {"type": "string"}},
               {"type": "array", "minItems": 1, "items": {"type": "array"}},
               {"type": "array", "minItems": 1, "items": {"type": "object"}}]},
])
def test_negations_of_objects_and_arrays(schema: dict[str, Any]) -> None:
    g = compile_json_schema(schema, byte_vocabulary(), property_order="any")
    validator = jsonschema.Draft202012Validator(schema)
    for x in UNIVERSE:
        assert accepts(g, json.dumps(x)) == validator.is_valid(x), x


def test_a_made_contains_beside_another_counts_its_own() -> None:
    """`not: {items: X}` is made into `contains: not X`, which counts its own matches beside
    the schema's own `contains` (once the error of a second `contains`)."""
    schema = {"allOf": [{"contains": {"type": "string"}, "maxContains": 1}],
              "not": {"items": {"type": "integer"}}}
    g = compile_json_schema(schema, byte_vocabulary())
    validator = jsonschema.Draft202012Validator(schema)
    for x in UNIVERSE:
        assert accepts(g, json.dumps(x)) == validator.is_valid(x), x
    for n in range(4):
        for items in itertools.product([1, "a", None], repeat=n):
            x = list(items)
            assert accepts(g, json.dumps(x)) == validator.is_valid(x), x


def test_an_object_enum_value_negated_accepts_every_key_order() -> None:
    """`not: {const: OBJ}` is the objects other than OBJ, its keys in any order (none of the
    schema's `properties` orders them): a member with another value is a witness wherever
    it stands (a fuzz finding once: `{"a": 1, "id": []}` against `{"a": 1, "id": {}}`)."""
    schema = {"not": {"const": {"a": 1, "id": {}, "z": [1]}}}
    g = compile_json_schema(schema, byte_vocabulary())
    validator = jsonschema.Draft202012Validator(schema)
    for a, id_value, extra in itertools.product([1, 2], [{}, [], 5], [{}, {"q": 1}]):
        value = {"a": a, "id": id_value, "z": [1], **extra}
        for order in itertools.permutations(value):
            x = {k: value[k] for k in order}
            assert accepts(g, json.dumps(x)) == validator.is_valid(x), x
