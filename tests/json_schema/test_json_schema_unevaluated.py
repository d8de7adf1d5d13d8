"""`unevaluatedProperties` and `unevaluatedItems` (`unevaluated.py`): on random schemas that put
one beside `properties`, `prefixItems`, `items`, `allOf`, `anyOf`, `oneOf`, `if`/`then`/`else`,
`not` and `$ref`, every instance of a finite universe (`test_json_schema_violations.UNIVERSE`)
is accepted exactly when `jsonschema` validates it.
"""
from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler import GrammarError, compile_json_schema
from tests.support.budget import examples
from tests.support.json_schema_suite import accepts, agrees_on, byte_vocabulary

from .test_json_schema_violations import SCHEMAS, UNIVERSE

_OBJECTS = st.fixed_dictionaries({}, optional={
    "properties": st.dictionaries(st.sampled_from("ab"), SCHEMAS, max_size=2),
    "patternProperties": st.just({"^b": {"type": "integer"}}),
    "prefixItems": st.lists(SCHEMAS, max_size=2),
    "items": SCHEMAS,
})


@st.composite
def _evaluating(draw: st.DrawFn) -> dict[str, Any]:
    schema = dict(draw(_OBJECTS))
    keyword = draw(st.sampled_from(["unevaluatedProperties", "unevaluatedItems"]))
    schema[keyword] = draw(st.sampled_from([False, {"type": "integer"}, True]))
    combinator = draw(st.sampled_from(["allOf", "anyOf", "oneOf", "if", "not", "$ref", None]))
    inner = draw(st.lists(st.one_of(_OBJECTS, SCHEMAS), min_size=2, max_size=2))
    if combinator in ("allOf", "anyOf", "oneOf"):
        schema[combinator] = inner
    elif combinator == "if":
        schema.update({"if": inner[0], "then": inner[1]})
    elif combinator == "not":
        schema["not"] = inner[0]
    elif combinator == "$ref":
        schema.update({"$defs": {"d": inner[0]}, "$ref": "#/$defs/d"})
    return schema


@settings(max_examples=examples(120), deadline=None)
@given(_evaluating())
def test_random_unevaluated_exactly(schema: dict[str, Any]) -> None:
    agrees_on(schema, UNIVERSE, property_order="any")


@pytest.mark.parametrize("schema, valid, invalid", [
    # A reference opens a scope of its own: `A` does not see the sibling `properties`.
    ({"$defs": {"A": {"unevaluatedProperties": False}}, "properties": {"a": {}},
      "$ref": "#/$defs/A"}, [{}], [{"a": 1}]),
    # Every anyOf branch that holds evaluates, so both may.
    ({"anyOf": [{"properties": {"a": {"type": "integer"}}},
                {"properties": {"b": {"type": "integer"}}}], "unevaluatedProperties": False},
     [{"a": 1, "b": 1}, {"a": 1}], [{"a": "x", "b": 1}, {"c": 1}]),
    # A failed `if` evaluates nothing; a held one does, even without then/else.
    ({"if": {"properties": {"a": {"const": 1}}}, "unevaluatedProperties": False},
     [{"a": 1}, {}], [{"a": 2}]),
    ({"prefixItems": [{}], "allOf": [{"prefixItems": [{}, {}]}], "unevaluatedItems": False},
     [[1, 2]], [[1, 2, 3]]),
])
def test_unevaluated_examples(schema: dict[str, Any], valid: list[Any], invalid: list[Any]) -> None:
    g = compile_json_schema(schema, byte_vocabulary(), property_order="any")
    assert all(accepts(g, json.dumps(x)) for x in valid)
    assert not any(accepts(g, json.dumps(x)) for x in invalid)


def test_unevaluated_items_beside_contains_is_refused() -> None:
    with pytest.raises(GrammarError) as info:
        compile_json_schema({"contains": {"type": "string"}, "unevaluatedItems": False},
                            byte_vocabulary())
    assert info.value.code == "unsupported-keyword"
    assert info.value.pointer == "/unevaluatedItems"
