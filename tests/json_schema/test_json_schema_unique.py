"""`uniqueItems: true` over items of a finite set of values, exactly: every array of up to five
items over a pool of values (and other spellings of them: escapes, `1.0` for `1`) is accepted
exactly when `jsonschema` finds it valid, for fixed schemas and random ones (a random finite
item domain, sizes, `enum` of arrays beside); random constrained walks end in valid
instances; the other forms are errors at `uniqueItems` (lenient: a warning, items may
repeat), and the number of values is bounded by `Limits.max_unique_values`.
"""
from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler import BudgetExceeded, GrammarError, Limits, compile_json_schema

from ..support.budget import examples
from ..support.json_schema_oracle import validator
from ..support.json_schema_suite import accepts, byte_vocabulary
from .test_json_schema_invariants import walk_validates

SCHEMAS = [
    {"type": "array", "uniqueItems": True, "items": {"enum": ["a", "b", "c"]}},
    {"type": "array", "uniqueItems": True, "items": {"type": "boolean"}, "minItems": 1},
    {"uniqueItems": True, "items": {"enum": [1, 2.0, "a", None, True]}, "maxItems": 3},
    {"type": "array", "uniqueItems": True, "items": {"type": ["boolean", "null"]}},
    {"type": "array", "uniqueItems": True, "minItems": 2, "maxItems": 4,
     "items": {"enum": ["a", "b", "c", 1, 2, 3]}},
    {"type": "array", "uniqueItems": True, "items": {"enum": [[1], [1, 1], {"a": 1}]}},
    {"enum": [[1, 1], [1, 2], [], "a"], "uniqueItems": True},
    {"allOf": [{"uniqueItems": True}, {"items": {"enum": [1, 2, 3], "not": {"const": 2}}}]},
    {"type": "array", "uniqueItems": True, "items": {"enum": [1, 2, "a"], "type": "integer"}},
    {"anyOf": [{"type": "string"}, {"uniqueItems": True, "items": {"const": "a"}}]},
]
POOL: list[Any] = [1, 2, 3, "a", "b", "c", None, True, False, [1], {"a": 1}]


def arrays() -> list[Any]:
    out: list[Any] = ["x", 5, None, [1, 1], [1, 2]]
    small = [1, 2, "a", True, None]
    for n in range(5):
        out.extend(list(v) for v in itertools.product(small, repeat=n))
    return out


def spellings(value: list[Any]) -> list[str]:
    """The array's usual text and texts that write equal items another way."""
    text = json.dumps(value)
    return [text, text.replace('"a"', '"\\u0061"'), text.replace("2", "2.0"),
            text.replace(", ", ",")]


def check_exactly(schema: dict[str, Any], values: list[Any]) -> None:
    check = validator(schema)
    try:
        compiled = compile_json_schema(schema, byte_vocabulary())
    except GrammarError as exc:
        assert exc.code == "empty-language" and not any(map(check.is_valid, values))
        return
    for value in values:
        for text in spellings(value) if isinstance(value, list) else [json.dumps(value)]:
            assert accepts(compiled, text) == check.is_valid(json.loads(text)), (schema, text)


@pytest.mark.parametrize("schema", SCHEMAS)
def test_exactly(schema: dict[str, Any]) -> None:
    check_exactly(schema, arrays())


@given(domain=st.lists(st.sampled_from(POOL), min_size=0, max_size=5),
       lo=st.integers(0, 3), hi=st.one_of(st.none(), st.integers(0, 4)),
       draws=st.lists(st.lists(st.sampled_from(POOL), max_size=4), min_size=10, max_size=30))
@settings(max_examples=examples(40), deadline=None)
def test_random_domains_exactly(domain: list[Any], lo: int, hi: int | None,
                                draws: list[list[Any]]) -> None:
    schema: dict[str, Any] = {"type": "array", "uniqueItems": True, "items": {"enum": domain},
                              "minItems": lo}
    if hi is not None:
        schema["maxItems"] = hi
    check_exactly(schema, draws + [[]])


@pytest.mark.parametrize("schema", SCHEMAS[:5])
@given(rng=st.randoms(use_true_random=True))
@settings(max_examples=examples(8), deadline=None)
def test_walks_validate(schema: dict[str, Any], rng: random.Random) -> None:
    walk_validates(schema, rng)


@pytest.mark.parametrize("schema", [
    {"uniqueItems": True, "items": {"type": "string"}},
    {"uniqueItems": True},
    {"uniqueItems": True, "prefixItems": [{"const": 1}], "items": {"const": 2}},
    {"uniqueItems": True, "items": {"enum": [1, 2]}, "contains": {"const": 1}},
    {"uniqueItems": True, "items": {"anyOf": [{"const": 1}, {"const": 2}]}},
])
def test_other_forms_are_errors_at_the_keyword(schema: dict[str, Any]) -> None:
    with pytest.raises(GrammarError) as info:
        compile_json_schema(schema, byte_vocabulary())
    assert info.value.code == "unsupported-keyword"
    assert info.value.pointer == "/uniqueItems"


def test_negated_uniqueness_is_an_error_at_the_not() -> None:
    with pytest.raises(GrammarError) as info:
        compile_json_schema({"not": {"uniqueItems": True, "items": {"enum": [1, 2]}}},
                            byte_vocabulary())
    assert info.value.code == "unsupported-keyword" and info.value.pointer == "/not"


def test_lenient_reads_other_forms_without_uniqueness() -> None:
    compiled = compile_json_schema({"uniqueItems": True, "items": {"type": "string"}},
                                   byte_vocabulary(), lenient=True)
    assert accepts(compiled, '["a", "a"]')
    assert any("uniqueItems" in note for note in compiled.notes)


def test_bounds_and_bad_values() -> None:
    many = {"uniqueItems": True, "items": {"enum": list(range(11))}}
    with pytest.raises(BudgetExceeded) as budget:
        compile_json_schema(many, byte_vocabulary())
    assert budget.value.limit == "max_unique_values" and budget.value.pointer == "/uniqueItems"
    compiled = compile_json_schema(many, byte_vocabulary(), limits=Limits(max_unique_values=11))
    assert accepts(compiled, "[10, 0, 5]") and not accepts(compiled, "[10, 0, 10]")
    with pytest.raises(GrammarError) as info:
        compile_json_schema({"uniqueItems": "yes"}, byte_vocabulary())
    assert info.value.code == "invalid-schema" and info.value.pointer == "/uniqueItems"
