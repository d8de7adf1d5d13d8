"""`oneOf` read as `anyOf` where its branches are provably disjoint (`disjointness.py`): on
random `oneOf`s of object schemas (`properties`, `patternProperties`, `additionalProperties`,
`required`, branches that are choices in turn), every instance of a finite universe is
accepted exactly when `jsonschema` validates it; a proof of disjointness that was wrong would
accept an instance both branches match.
"""
from __future__ import annotations

import itertools
import json
from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler import compile_json_schema
from tests.support.budget import examples
from tests.support.json_schema_suite import accepts, agrees_on, byte_vocabulary

_VALUES: list[Any] = [None, 0, 1, "x", False]
UNIVERSE: list[Any] = [None, 0, "x", [], *(
    dict(zip(names, values)) for n in range(3) for names in itertools.combinations("ab", n)
    for values in itertools.product(_VALUES, repeat=n))]
"""Non-objects and every object over names `a`, `b` with values among null, 0, 1, "x", false."""

_LEAVES = st.sampled_from([{"type": "string"}, {"type": "integer"}, {"const": 1},
                           {"enum": [False]}, {}, False, {"type": ["null", "integer"]}])


@st.composite
def _object(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"} if draw(st.booleans()) else {}
    names = draw(st.lists(st.sampled_from("ab"), unique=True, max_size=2))
    if names:
        schema["properties"] = {n: draw(_LEAVES) for n in names}
    if draw(st.integers(0, 2)) == 0:
        schema["patternProperties"] = {draw(st.sampled_from(["^a", "^b$", "."])): draw(_LEAVES)}
    if draw(st.integers(0, 2)) == 0:
        schema["additionalProperties"] = draw(_LEAVES)
    required = draw(st.lists(st.sampled_from("ab"), unique=True, max_size=2))
    if required:
        schema["required"] = required
    return schema


_BRANCHES = st.one_of(_object(), _object(), st.builds(
    lambda k, xs: {k: xs}, st.sampled_from(["anyOf", "oneOf"]),
    st.lists(_object(), min_size=2, max_size=2)))


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(_BRANCHES, min_size=2, max_size=3))
def test_random_object_oneofs_exactly(branches: list[dict[str, Any]]) -> None:
    agrees_on({"oneOf": branches}, UNIVERSE, property_order="any")


def test_a_member_value_told_apart_by_another_branchs_patterns() -> None:
    """`a` is a string in one branch and, by the other's `patternProperties`, null there:
    disjoint without a common `required` (no negation needed)."""
    schema = {"oneOf": [
        {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}},
        {"type": "object", "required": ["b"], "properties": {"b": {"type": "integer"}},
         "patternProperties": {"^a$": {"type": "null"}}}]}
    g = compile_json_schema(schema, byte_vocabulary(), property_order="any")
    validator = jsonschema.Draft202012Validator(schema)
    for x in [{"a": "x"}, {"b": 1}, {"a": "x", "b": 1}, {"a": None, "b": 1}, {"a": 1}, {}]:
        assert accepts(g, json.dumps(x)) == validator.is_valid(x), x


def test_a_branch_that_is_a_choice_is_compared_case_by_case() -> None:
    """Each case of the first branch has a `type` the second's `additionalProperties`
    forbids, though the branch as a whole says nothing of `type`."""
    cases = [{"required": ["type"], "properties": {"type": {"const": t}}} for t in "xy"]
    schema = {"type": "object", "oneOf": [
        {"oneOf": cases},
        {"additionalProperties": {"enum": [False]}, "minProperties": 1, "maxProperties": 1}]}
    g = compile_json_schema(schema, byte_vocabulary())
    validator = jsonschema.Draft202012Validator(schema)
    for x in [{"type": "x"}, {"type": "y"}, {"p": False}, {"type": False}, {"p": 1}, {}]:
        assert accepts(g, json.dumps(x)) == validator.is_valid(x), x
