"""`contains`, `minContains`, `maxContains`, exactly: every array of up to five items over a few
values (with `prefixItems`, `items`, `minItems`/`maxItems` beside) is accepted exactly when
`jsonschema` finds it valid; random constrained walks end in valid instances; the errors
(a count past `max_repeat`, a `maxContains` whose subschema's negation is not expressible) name
their keyword. Several `contains` in one conjunction each count their own matches.
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
    {"contains": {"type": "integer"}},
    {"contains": {"minimum": 2}, "minContains": 2},
    {"contains": {"const": 1}, "maxContains": 1},
    {"contains": {"type": "string"}, "minContains": 0, "maxContains": 2, "minItems": 1},
    {"contains": {"minimum": 2}, "minContains": 1, "maxContains": 3, "maxItems": 4},
    {"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": {"type": "integer"},
     "contains": {"const": 3}, "maxContains": 2},
    {"type": "array", "items": {"enum": [1, 2, "a"]}, "contains": {"type": "integer",
                                                                    "maximum": 1},
     "minContains": 2, "minItems": 3},
    {"anyOf": [{"contains": {"const": "a"}}, {"type": "integer"}]},
    {"contains": {"type": "integer"}, "minContains": 4, "maxItems": 3},
    {"allOf": [{"contains": {"const": 1}}, {"items": {"type": "integer"}, "maxItems": 3}]},
    {"allOf": [{"contains": {"const": 1}}, {"contains": {"const": 2}}]},
    {"allOf": [{"contains": {"type": "integer"}, "minContains": 2},
               {"contains": {"minimum": 2}, "maxContains": 1}]},
    {"allOf": [{"contains": {"const": "a"}, "maxContains": 1},
               {"contains": {"minimum": 2}, "minContains": 0, "maxContains": 2},
               {"contains": {"const": 1}}], "maxItems": 4},
    {"prefixItems": [{"const": 3}], "allOf": [{"contains": {"const": 3}, "minContains": 2},
                                              {"contains": {"type": "integer"},
                                               "maxContains": 2}]},
]
VALUES = [1, 2, 3, "a"]


def arrays() -> list[Any]:
    out: list[Any] = ["x", 5, None]
    for n in range(6):
        out.extend(list(v) for v in itertools.product(VALUES, repeat=n))
    return out


@pytest.mark.parametrize("schema", SCHEMAS)
def test_exactly(schema: dict[str, Any]) -> None:
    check = validator(schema)
    try:
        compiled = compile_json_schema(schema, byte_vocabulary())
    except GrammarError as exc:
        assert exc.code == "empty-language" and not any(map(check.is_valid, arrays()))
        return
    for value in arrays():
        text = json.dumps(value)
        assert accepts(compiled, text) == check.is_valid(value), (schema, text)


@pytest.mark.parametrize("schema", SCHEMAS[:8] + SCHEMAS[10:12])
@given(rng=st.randoms(use_true_random=True))
@settings(max_examples=examples(8), deadline=None)
def test_walks_validate(schema: dict[str, Any], rng: random.Random) -> None:
    walk_validates(schema, rng)


def test_errors_name_the_keyword() -> None:
    with pytest.raises(BudgetExceeded) as budget:
        compile_json_schema({"contains": {}, "minContains": 50}, byte_vocabulary(),
                            limits=Limits(max_repeat=10))
    assert budget.value.pointer == "/minContains" and budget.value.limit == "max_repeat"
    inexpressible = {"contains": {"type": "object", "dependentRequired": {"a": ["b"]}},
                     "maxContains": 1}
    with pytest.raises(GrammarError) as info:
        compile_json_schema(inexpressible, byte_vocabulary())
    assert info.value.pointer == "/contains"
