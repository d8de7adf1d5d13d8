"""`dependentSchemas` and the schema form of `dependencies` (drafts 4-7), exactly: every object
over a few keys and values, and non-objects, accepted exactly when `jsonschema` finds them
valid; random constrained walks end in valid instances; too many triggers is an error that
names the keyword (lenient: a warning, the keyword ignored).
"""
from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler import GrammarError, compile_json_schema
from grammask.compiler.frontends.json_schema import JsonSchemaOptions, schema_to_grammar

from ..support.budget import examples
from ..support.json_schema_oracle import validator
from ..support.json_schema_suite import accepts, byte_vocabulary
from .test_json_schema_invariants import walk_validates

DRAFT7 = "http://json-schema.org/draft-07/schema#"
SCHEMAS = [
    {"dependentSchemas": {"a": {"required": ["b"]}, "b": {"properties": {"c": {"const": 1}}}}},
    {"type": "object", "properties": {"a": {"type": "integer"}},
     "dependentSchemas": {"a": {"properties": {"b": {"type": "string"}}, "required": ["b"]},
                          "c": False}},
    {"dependentSchemas": {"a": {"maxProperties": 2}, "b": True}, "additionalProperties":
        {"type": "integer"}},
    {"dependentSchemas": {"a": {"not": {"required": ["c"]}}}, "dependentRequired": {"b": ["a"]}},
    {"$schema": DRAFT7, "dependencies": {"a": ["b"], "b": {"properties": {"a": {"type": "string"}}},
                                         "c": {"required": ["a"]}}},
    {"anyOf": [{"type": "string"}, {"dependentSchemas": {"a": {"required": ["b"]}}}]},
]
VALUES = [1, "s"]
KEYS = ["a", "b", "c"]


def instances() -> list[Any]:
    out: list[Any] = [None, True, 3, "x", [1]]
    for n in range(len(KEYS) + 1):
        for keys in itertools.permutations(KEYS, n):
            for values in itertools.product(VALUES, repeat=n):
                out.append(dict(zip(keys, values)))
    return out


@pytest.mark.parametrize("schema", SCHEMAS)
def test_exactly(schema: dict[str, Any]) -> None:
    compiled = compile_json_schema(schema, byte_vocabulary(), property_order="any")
    check = validator(schema)
    for value in instances():
        text = json.dumps(value)
        assert accepts(compiled, text) == check.is_valid(value), (schema, text)


@pytest.mark.parametrize("schema", SCHEMAS)
@given(rng=st.randoms(use_true_random=True))
@settings(max_examples=examples(10), deadline=None)
def test_walks_validate(schema: dict[str, Any], rng: random.Random) -> None:
    walk_validates(schema, rng)


def test_too_many_triggers() -> None:
    schema = {"dependentSchemas": {f"k{i}": {"required": ["x"]} for i in range(7)}}
    with pytest.raises(GrammarError) as info:
        compile_json_schema(schema, byte_vocabulary())
    assert info.value.pointer == "/dependentSchemas" and "7 trigger properties" in str(info.value)
    parsed = schema_to_grammar(schema, JsonSchemaOptions(lenient=True))
    assert [d.pointer for d in parsed.diagnostics] == ["/dependentSchemas"]
