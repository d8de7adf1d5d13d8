"""Regression tests for six classes of unsound JSON Schema compilations, each an instance
the frontend accepted although the schema forbids it, judged by the exact reference
(`json_schema_exact`: numbers as written, compared exactly):

1. exponent spellings surviving a complement (`not`, the `else` of `if`, an overlapping
   `oneOf`): the complement of a numeric constraint taken over every number text rather than
   over the exponent-free ones the constraint is exact on;
2. `propertyNames` whose combinators (`not`, `anyOf`, `oneOf`, `if`, `$ref`) were ignored;
3. object and array values of `enum`/`const` that skipped their sibling keywords;
4. numbers of a schema given as JSON text read as floats (`1e-400` as 0);
5. draft-04 (and 03) integers: under those drafts an integer has no fraction or exponent, so
   `1.0` is not one;
6. draft-03 keywords (`divisibleBy`, `disallow`, `extends`, `required: true`) ignored.

Each case is a schema, a text it forbids and, where there is one, a text it allows (in the
documented form: compact, no exponent, keys in schema order). The schema may fail to compile
with a GrammarError other than `empty-language` (refusing a schema is sound); if it compiles,
the forbidden text is rejected and the allowed one accepted.
"""
from __future__ import annotations

import json
from typing import Any

import pytest

from grammask.compiler import GrammarError
from grammask.compiler import compile_json_schema

from ..support.json_schema_exact import exact_validator, exact_verdict
from ..support.json_schema_suite import accepts, byte_vocabulary

D3 = "http://json-schema.org/draft-03/schema#"
D4 = "http://json-schema.org/draft-04/schema#"
Case = tuple[Any, str, str | None]

EXPONENTS_UNDER_COMPLEMENT: list[Case] = [
    ({"not": {"const": 10}}, "1e1", "11"),
    ({"not": {"const": 10}}, "1E+1", "10.5"),
    ({"not": {"const": 10}}, "100e-1", "9"),
    ({"not": {"enum": [0, 2]}}, "0e0", "1"),
    ({"not": {"const": 0}}, "-0E5", "1"),
    ({"type": "number", "not": {"minimum": 5}}, "1e1", "4"),
    ({"type": "integer", "not": {"maximum": 3}}, "1e0", "4"),
    ({"not": {"multipleOf": 5}}, "1e1", "7"),
    ({"not": {"exclusiveMaximum": 0}}, "-1E0", "0"),
    ({"if": {"minimum": 5}, "then": False}, "1e1", "4"),
    ({"if": {"multipleOf": 2}, "then": False, "else": {"type": "number"}}, "4e0", "3"),
    ({"if": {"maximum": 0}, "then": {"type": "string"}}, "-1e0", "1"),
    ({"oneOf": [{"type": "number"}, {"const": 10}]}, "1e1", "11"),
    ({"oneOf": [{"minimum": 0}, {"multipleOf": 2}]}, "2e0", "3"),
    ({"oneOf": [{"type": "integer"}, {"maximum": 1}]}, "1e0", "0.5"),
    ({"items": {"not": {"const": 0}}}, "[0e0]", "[1]"),
    ({"items": {"not": {"const": 0}}}, "[1,0.0e3]", "[1,2]"),
    ({"properties": {"a": {"not": {"enum": [1, 2]}}}}, '{"a":2E0}', '{"a":3}'),
    ({"properties": {"n": {"if": {"maximum": 0}, "then": False}}}, '{"n":-1e0}', '{"n":1}'),
    ({"type": "number", "not": {"type": "integer"}}, "1e1", "1.5"),
    ({"type": "integer", "not": {"enum": [3]}}, "3e0", "4"),
]

PROPERTY_NAMES_COMBINATORS: list[Case] = [
    ({"propertyNames": {"not": {"const": "a"}}}, '{"a":1}', '{"b":1}'),
    ({"propertyNames": {"not": {"const": "a"}}}, '{"\\u0061":1}', '{"b":1}'),
    ({"propertyNames": {"not": {"enum": ["a", "b"]}}}, '{"b":1}', '{"c":1}'),
    ({"propertyNames": {"not": {"pattern": "^x"}}}, '{"xa":1}', '{"ax":1}'),
    ({"propertyNames": {"anyOf": [{"const": "a"}, {"pattern": "^x-"}]}}, '{"b":1}',
     '{"x-b":1}'),
    ({"propertyNames": {"oneOf": [{"maxLength": 1}, {"pattern": "^a"}]}}, '{"a":1}', '{"b":1}'),
    ({"propertyNames": {"if": {"pattern": "^a"}, "then": {"maxLength": 2}}}, '{"abc":1}',
     '{"ab":1}'),
    ({"propertyNames": {"if": {"const": "a"}, "then": False}}, '{"a":1}', '{"b":1}'),
    ({"propertyNames": {"$ref": "#/$defs/n"}, "$defs": {"n": {"not": {"const": "a"}}}},
     '{"a":1}', '{"b":1}'),
    ({"propertyNames": {"allOf": [{"not": {"const": "a"}}, {"maxLength": 3}]}}, '{"a":1}',
     '{"abc":1}'),
    ({"properties": {"a": {"type": "integer"}}, "propertyNames": {"not": {"const": "a"}}},
     '{"a":1}', '{"b":2}'),
]

CONTAINER_VALUES: list[Case] = [
    ({"enum": [{"a": 1}, {"b": 1}], "not": {"required": ["a"]}}, '{"a":1}', '{"b":1}'),
    ({"enum": [{"a": 1, "b": 2}, {"a": 1}], "dependentRequired": {"a": ["b"]}}, '{"a":1}',
     '{"a":1,"b":2}'),
    ({"enum": [{"a": 1}, {"b": 1}], "if": {"required": ["a"]}, "then": False}, '{"a":1}',
     '{"b":1}'),
    ({"enum": [{"a": 1}, {"a": 1, "b": 2}], "minProperties": 2}, '{"a":1}', '{"a":1,"b":2}'),
    ({"enum": [{"a": 1}, {"a": 1, "b": 2}], "maxProperties": 1}, '{"a":1,"b":2}', '{"a":1}'),
    ({"enum": [{"a": 1}, {"a": "x"}], "properties": {"a": {"type": "string"}}}, '{"a":1}',
     '{"a":"x"}'),
    ({"enum": [{"a": 1}, {"b": 1}], "required": ["b"]}, '{"a":1}', '{"b":1}'),
    ({"enum": [{"a": 1}, {"b": 1}], "properties": {"b": {}}, "additionalProperties": False},
     '{"a":1}', '{"b":1}'),
    ({"enum": [{"a": 1}, {"b": 1}], "propertyNames": {"const": "b"}}, '{"a":1}', '{"b":1}'),
    ({"const": {"a": 1}, "not": {"minProperties": 1}}, '{"a":1}', None),
    ({"enum": [{"a": [1]}, {"a": []}], "properties": {"a": {"minItems": 1}}}, '{"a":[]}',
     '{"a":[1]}'),
    ({"enum": [[1], [1, 2]], "minItems": 2}, "[1]", "[1,2]"),
    ({"enum": [[1], ["a"]], "items": {"type": "string"}}, "[1]", '["a"]'),
    ({"enum": [[], [1, 2]], "not": {"minItems": 1}}, "[1,2]", "[]"),
    ({"const": [0, 0], "maxItems": 1}, "[0,0]", None),
    ({"enum": [[1, "a"], [1, 2]], "prefixItems": [{}, {"type": "integer"}]}, '[1,"a"]',
     "[1,2]"),
]

SCHEMA_TEXT_NUMBERS: list[Case] = [
    ('{"minimum": 1e-400}', "0", "1"),
    ('{"type": "integer", "minimum": 1E-400}', "0", "1"),
    ('{"maximum": -1e-400}', "0", "-1"),
    ('{"exclusiveMinimum": 0.1000000000000000000001}', "0.1", "0.2"),
    ('{"maximum": 0.0999999999999999999999}', "0.1", "0.09"),
    ('{"const": 0.1000000000000000000001}', "0.1", "0.1000000000000000000001"),
    ('{"enum": [1.0000000000000000000001, "a"]}', "1", '"a"'),
    ('{"not": {"minimum": 0.9999999999999999999999}}', "0.99999999999999999999995", "0.5"),
    ('{"multipleOf": 0.1000000000000000000001}', "0.3", "0"),
    ('{"properties": {"a": {"maximum": 1e-400}}}', '{"a":0.5e-399}', '{"a":0}'),
]

LEGACY_INTEGERS: list[Case] = [
    ({"$schema": D4, "type": "integer", "enum": [1, 2.0]}, "1.0", "1"),
    ({"$schema": D4, "type": "integer"}, "1.0", "1"),
    ({"$schema": D4, "type": "integer", "minimum": 0}, "5.0", "5"),
    ({"$schema": D4, "type": "integer", "multipleOf": 2}, "4.0", "4"),
    ({"$schema": D4, "type": "integer", "enum": [-0.0]}, "-0.0", "0"),
    ({"$schema": D4, "properties": {"a": {"type": "integer"}}}, '{"a":1.0}', '{"a":1}'),
    ({"$schema": D4, "items": {"type": "integer"}}, "[0.0]", "[0]"),
    ({"$schema": D4, "type": ["integer", "string"]}, "2.00", "2"),
    ({"$schema": D4, "oneOf": [{"type": "integer"}, {"type": "string"}]}, "3.0", "3"),
    ({"$schema": D4, "definitions": {"i": {"type": "integer"}}, "$ref": "#/definitions/i"},
     "7.0", "7"),
    ({"$schema": D3, "type": "integer"}, "1.0", "1"),
]

DRAFT3_KEYWORDS: list[Case] = [
    ({"$schema": D3, "divisibleBy": 3}, "1", "3"),
    ({"$schema": D3, "divisibleBy": 0.5}, "0.3", "1.5"),
    ({"$schema": D3, "disallow": "integer"}, "1", "1.5"),
    ({"$schema": D3, "disallow": ["string", "null"]}, "null", "1"),
    ({"$schema": D3, "disallow": [{"type": "string", "maxLength": 1}]}, '"a"', '"ab"'),
    ({"$schema": D3, "extends": {"type": "string"}}, "1", '"a"'),
    ({"$schema": D3, "extends": [{"minimum": 2}, {"maximum": 5}]}, "6", "3"),
    ({"$schema": D3, "extends": {"disallow": "number"}}, "1", '"a"'),
    ({"$schema": D3, "properties": {"a": {"required": True}}}, "{}", '{"a":1}'),
    ({"$schema": D3, "properties": {"a": {"type": "integer", "divisibleBy": 2}}}, '{"a":3}',
     '{"a":4}'),
    ({"$schema": D3, "type": ["string", {"type": "integer", "minimum": 3}]}, "1", "5"),
]


def check_case(schema: Any, forbidden: str, allowed: str | None) -> None:
    check = exact_validator(schema)
    assert not exact_verdict(check, forbidden), "the case is wrong: the reference allows it"
    assert allowed is None or exact_verdict(check, allowed), "the case is wrong"
    try:
        compiled = compile_json_schema(schema, byte_vocabulary())
    except GrammarError as exc:
        assert exc.code != "empty-language" or allowed is None, exc
        return
    assert not accepts(compiled, forbidden), f"accepts the forbidden {forbidden!r}"
    assert allowed is None or accepts(compiled, allowed), f"rejects the allowed {allowed!r}"


@pytest.mark.parametrize("schema, forbidden, allowed", EXPONENTS_UNDER_COMPLEMENT)
def test_exponent_spellings_under_complement(schema: Any, forbidden: str,
                                             allowed: str | None) -> None:
    check_case(schema, forbidden, allowed)


@pytest.mark.parametrize("schema, forbidden, allowed", PROPERTY_NAMES_COMBINATORS)
def test_property_names_combinators(schema: Any, forbidden: str, allowed: str | None) -> None:
    check_case(schema, forbidden, allowed)


@pytest.mark.parametrize("schema, forbidden, allowed", CONTAINER_VALUES)
def test_object_and_array_values_keep_sibling_keywords(schema: Any, forbidden: str,
                                                       allowed: str | None) -> None:
    check_case(schema, forbidden, allowed)


@pytest.mark.parametrize("schema, forbidden, allowed", SCHEMA_TEXT_NUMBERS)
def test_schema_text_numbers_read_exactly(schema: str, forbidden: str,
                                          allowed: str | None) -> None:
    check_case(schema, forbidden, allowed)


@pytest.mark.parametrize("schema, forbidden, allowed", LEGACY_INTEGERS)
def test_draft4_integers_have_no_fraction(schema: Any, forbidden: str,
                                          allowed: str | None) -> None:
    check_case(schema, forbidden, allowed)


@pytest.mark.parametrize("schema, forbidden, allowed", DRAFT3_KEYWORDS)
def test_draft3_keywords_apply(schema: Any, forbidden: str, allowed: str | None) -> None:
    check_case(schema, forbidden, allowed)


def test_many_object_values_beside_object_keywords() -> None:
    """Past MEMBER_RULES_FROM shaped values, each is a rule of its own: 100 objects beside
    `properties` and `required` compile, each value kept exactly when the keywords allow it."""
    values = [{"id": i, "name": f"n{i}", "x": {"y": i}} for i in range(100)]
    schema = {"type": "object", "properties": {"id": {"maximum": 49}}, "required": ["id"],
              "enum": values}
    c = compile_json_schema(schema, byte_vocabulary())
    for i in (0, 49, 50, 99):
        assert accepts(c, json.dumps(values[i])) == (i <= 49), i
    assert not accepts(c, json.dumps({"id": 3, "name": "n4", "x": {"y": 3}}))
