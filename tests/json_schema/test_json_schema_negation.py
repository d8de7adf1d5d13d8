"""Negation in JSON Schema: `not`, the `else` of `if`, and `oneOf` branches that may overlap,
folded type by type. Random schemas over negatable pieces are compiled and every instance of
a fixed pool is checked against `jsonschema` (the oracle), under every JSON layout."""
from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler import GrammarError
from grammask.compiler import compile_json_schema, schema_to_grammar
from tests.support.budget import examples
from tests.support.json_schema_suite import accepts, byte_vocabulary

# Objects have one key at most: grammask writes required keys that no `properties` lists
# before any other key (specs/json_schema.md), an order the oracle does not ask for.
POOL: list[Any] = [
    None, True, False, 0, 1, 2, 3, -1, 2.5, 1.0, 10, "", "a", "ab", "abc", "ba", "hello",
    "2020-01-01", [], [1], [1, 2], ["a", "b", "c"], {}, {"a": 1}, {"b": "x"}, {"c": None},
]

SCALARS = st.one_of(
    st.builds(lambda t: {"type": t}, st.sampled_from(
        ["null", "boolean", "integer", "number", "string", "array", "object"])),
    st.builds(lambda t: {"type": t}, st.lists(st.sampled_from(
        ["null", "integer", "string", "object"]), min_size=1, max_size=3, unique=True)),
    st.builds(lambda v: {"minimum": v}, st.sampled_from([0, 1, 2, 2.5])),
    st.builds(lambda v: {"exclusiveMaximum": v}, st.sampled_from([0, 2, 3])),
    st.builds(lambda v: {"multipleOf": v}, st.sampled_from([2, 5])),
    st.builds(lambda v: {"pattern": v}, st.sampled_from(["^a", "b", "c$"])),
    st.builds(lambda v: {"minLength": v}, st.sampled_from([1, 2])),
    st.builds(lambda v: {"maxLength": v}, st.sampled_from([0, 2])),
    st.builds(lambda v: {"enum": v}, st.lists(st.sampled_from(POOL[:16]), min_size=1,
                                               max_size=3)),
    st.builds(lambda v: {"required": v}, st.lists(st.sampled_from(["a", "b"]), min_size=1,
                                                   max_size=2, unique=True)),
    st.builds(lambda v: {"minItems": v}, st.sampled_from([1, 2])),
    st.builds(lambda v: {"maxProperties": v}, st.sampled_from([0, 1])),
    st.just({"format": "date"}),
)


def _merged(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in parts:
        for k, v in p.items():
            out.setdefault(k, v)
    return out


PIECES = st.lists(SCALARS, min_size=1, max_size=2).map(_merged)
SCHEMAS = st.recursive(
    PIECES,
    lambda inner: st.one_of(
        st.builds(lambda a: {"not": a}, inner),
        st.builds(lambda a, b: {"anyOf": [a, b]}, inner, inner),
        st.builds(lambda a, b: {"oneOf": [a, b]}, inner, inner),
        st.builds(lambda a, b, c: {"if": a, "then": b, "else": c}, inner, inner, inner),
        st.builds(lambda a, b: {"if": a, "then": b}, inner, inner),
        st.builds(lambda a, b: {**a, "not": b}, PIECES, inner),
    ),
    max_leaves=4,
)


def validator(schema: Any) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


@settings(max_examples=examples(150), deadline=None)
@given(SCHEMAS)
def test_random_schemas_with_negation_match_the_oracle(schema: dict[str, Any]) -> None:
    truth = validator(schema)
    try:
        compiled = compile_json_schema(schema, byte_vocabulary())
    except GrammarError as exc:
        if exc.code == "empty-language":
            assert not any(truth.is_valid(v) for v in POOL), schema
            return
        assert exc.code == "unsupported-keyword", exc
        return
    for value in POOL:
        expected = truth.is_valid(value)
        for text in (json.dumps(value), json.dumps(value, indent=2)):
            assert accepts(compiled, text) == expected, (schema, text)


@pytest.mark.parametrize("schema, valid, invalid", [
    # `required` holds of every non-object: its negation rejects them all.
    ({"not": {"required": ["a"]}}, [{}, {"b": 1}], [{"a": 1}, "x", 1, None, []]),
    ({"not": {"minimum": 2}}, [1, 1.5, -3], [2, 3, "x", None, {}]),
    ({"not": {"pattern": "^a"}}, ["b", ""], ["a", "ab", 1, None]),
    ({"type": ["string", "integer"], "not": {"type": "string", "maxLength": 1}},
     ["ab", 1], ["a", ""]),
    ({"not": {"not": {"type": "integer"}}}, [1, 2.0], [1.5, "1"]),
    ({"type": "array", "not": {"minItems": 2}}, [[], [1]], [[1, 2]]),
    ({"type": "object", "not": {"maxProperties": 1}}, [{"a": 1, "b": 2}], [{}, {"a": 1}]),
    ({"if": {"type": "integer"}, "then": {"minimum": 5}, "else": {"type": "string"}},
     [5, 7, "x"], [4, None, 2.5]),
    ({"if": {"required": ["a"]}, "then": {"required": ["b"]}},
     [{}, {"a": 1, "b": 2}, "x"], [{"a": 1}]),
    ({"oneOf": [{"type": "integer"}, {"minimum": 2}]}, [1, 2.5, "x"], [2, 3]),
    ({"type": "object", "oneOf": [{"required": ["a", "b"]}, {"required": ["a", "c"]}]},
     [{"a": 1, "b": 2}, {"a": 1, "c": 2}], [{"a": 1, "b": 2, "c": 3}, {"a": 1}]),
    # Witnesses: some member whose name is in a language and whose value meets a schema.
    ({"type": "object", "not": {"patternProperties": {"^a": {"type": "integer"}}}},
     [{"ab": "x"}, {"b": 1, "a": None}, {"\u0061": 2.5}], [{}, {"ab": 1}, {"b": "x"}]),
    ({"type": "object", "not": {"properties": {"a": {}}, "additionalProperties": {"type": "string"}}},
     [{"b": 1}, {"a": 1, "c": None}], [{}, {"a": 1}, {"b": "x", "c": "y"}]),
    ({"type": "object", "not": {"propertyNames": {"maxLength": 1}}},
     [{"ab": 1}, {"a": 1, "bc": 2}], [{}, {"a": 1, "b": 2}]),
    ({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
      "not": {"properties": {"a": True}, "additionalProperties": False}, "maxProperties": 2},
     [{"a": 1, "b": 2}], [{"a": 1}, {"a": 1, "b": 2, "c": 3}]),
])
def test_negation_examples(schema: dict[str, Any], valid: list[Any], invalid: list[Any]) -> None:
    truth = validator(schema)
    assert all(truth.is_valid(v) for v in valid) and not any(truth.is_valid(v) for v in invalid)
    compiled = compile_json_schema(schema, byte_vocabulary())
    for value in valid:
        assert accepts(compiled, json.dumps(value)), value
    for value in invalid:
        assert not accepts(compiled, json.dumps(value)), value


def test_negations_that_are_not_expressible() -> None:
    # Each needs what `violations.py` cannot write: "some item past a prefix breaks a
    # schema", "no item matches" beside a count, presence rules, uniqueness.
    for schema in ({"not": {"prefixItems": [{}], "items": {"type": "string"}}},
                   {"not": {"contains": {"type": "string"}}},
                   {"not": {"dependentRequired": {"a": ["b"]}}},
                   {"not": {"uniqueItems": True}}):
        with pytest.raises(GrammarError) as exc:
            compile_json_schema(schema, byte_vocabulary())
        assert exc.value.code == "unsupported-keyword"
        compile_json_schema(schema, byte_vocabulary(), lenient=True)


def test_a_branch_beside_one_it_contradicts_needs_no_negation() -> None:
    """Two `oneOf`s over the same member: distributing the first puts A beside each branch
    of the second, and A ∧ B (B forbids the name A requires) holds no object, so it is
    disjoint from A ∧ A without negating anything (before, each side negated the other's
    object schema, a union that grew past Limits.max_schema_rules on real schemas)."""
    a = {"type": "object", "required": ["v"], "properties": {"v": {"type": "integer"}}}
    b = {"type": "object", "properties": {"t": {"type": "string"}}, "additionalProperties": False}
    schema = {"type": "object", "properties": {"x": {"oneOf": [a, b]}},
              "patternProperties": {"^x$": {"oneOf": [a, b]}}}
    g = compile_json_schema(schema, byte_vocabulary())
    assert len(schema_to_grammar(schema).grammar.rules) <= 12  # 22 with the negations
    validator = jsonschema.Draft202012Validator(schema)
    for x in [{"x": {"v": 1}}, {"x": {"t": "s"}}, {"x": {}}, {"x": {"v": 1, "t": "s"}},
              {"x": {"v": "s"}}, {"x": 1}, {}]:
        assert accepts(g, json.dumps(x)) == validator.is_valid(x), x
