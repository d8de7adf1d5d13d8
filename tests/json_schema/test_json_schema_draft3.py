"""Draft-03 keywords under a draft-03 `$schema` (`compiler/frontends/json_schema/draft3.py`): each is
read exactly or refused with its JSON pointer, never dropped.

Instances are judged by `jsonschema.Draft3Validator`: every valid one must be accepted (written
compactly or with the default separators, without exponent, in some order of its top-level
keys, which covers the schema's order) and no invalid one in any key order. Groups marked
"suite" follow the JSON-Schema-Test-Suite's draft3 files (extends.json, required.json,
type.json, disallow.json, divisibleBy.json, dependencies.json); the rest are our own.
"""
from __future__ import annotations

import itertools
import json

import pytest
from jsonschema import Draft3Validator

from grammask.compiler import GrammarError
from grammask.compiler import compile_json_schema
from grammask.compiler.frontends.json_schema.document import SchemaDocument
from grammask.compiler.support.limits import DEFAULT_LIMITS
from tests.support.json_schema_suite import accepts, byte_vocabulary

DRAFT3 = "http://json-schema.org/draft-03/schema#"


def draft3(schema: dict) -> dict:
    return {"$schema": DRAFT3, **schema}


def texts(value: object) -> list[str]:
    """`value` written compactly and with the default separators, its top-level keys in every
    order."""
    orders = [value]
    if isinstance(value, dict) and len(value) <= 4:
        orders = [dict(p) for p in itertools.permutations(value.items())]
    return [json.dumps(v, separators=seps, ensure_ascii=False)
            for v in orders for seps in ((",", ":"), (", ", ": "))]


def check(schema: dict, instances: list, **options: object) -> None:
    """Compile `schema` under draft 03; its verdict on `instances` must be the validator's.
    Each group has valid and invalid instances, so a reading that accepts everything or
    nothing fails it."""
    schema = draft3(schema)
    compiled = compile_json_schema(schema, byte_vocabulary(), **options)
    validator = Draft3Validator(schema)
    verdicts = {True: 0, False: 0}
    for value in instances:
        valid = validator.is_valid(value)
        verdicts[valid] += 1
        accepted = [t for t in texts(value) if accepts(compiled, t)]
        if valid:
            assert accepted, f"valid {json.dumps(value)} rejected"
        else:
            assert not accepted, f"invalid {accepted[0]!r} accepted"
    assert verdicts[True] and verdicts[False], verdicts


def refused(schema: dict, pointer: str, code: str = "unsupported-keyword") -> GrammarError:
    with pytest.raises(GrammarError) as exc:
        compile_json_schema(draft3(schema), byte_vocabulary())
    assert exc.value.code == code, exc.value
    assert str(exc.value).startswith(pointer + ":") or exc.value.pointer == pointer, exc.value
    return exc.value


# ------------------------------------------------------------------------------ divisibleBy

@pytest.mark.parametrize("schema, instances", [
    ({"divisibleBy": 2}, [10, 7, "foo", 0, -4]),                                    # suite
    ({"divisibleBy": 1.5}, [0, 4.5, 35, 3]),                                        # suite
    ({"divisibleBy": 0.0001}, [0.0075, 0.00751]),                                   # suite
    ({"type": "number", "divisibleBy": 0.25}, [0.75, 1, -2.5, 0.3, 0.125, "x"]),
    ({"divisibleBy": 4, "extends": {"divisibleBy": 6}}, [12, 0, -36, 8, 18, 6]),
    ({"type": "integer", "divisibleBy": 3, "minimum": 0, "maximum": 10}, [0, 9, 12, -3, 4]),
])
def test_divisible_by(schema: dict, instances: list) -> None:
    check(schema, instances)


def test_divisible_by_is_exact_on_decimals() -> None:
    # The validator divides floats (0.3 / 0.1 is 2.9999999999999996); the keyword's meaning,
    # as multipleOf's, is the exact decimal quotient.
    compiled = compile_json_schema(draft3({"divisibleBy": 0.1}), byte_vocabulary())
    assert accepts(compiled, "0.3") and accepts(compiled, "-1.7")
    assert not accepts(compiled, "0.35") and not accepts(compiled, "0.01")


@pytest.mark.parametrize("value", [0, -1, 0.0, "2", True])
def test_divisible_by_must_be_positive_number(value: object) -> None:
    refused({"divisibleBy": value}, "/divisibleBy", "invalid-schema")


# ---------------------------------------------------------------------------------- extends

@pytest.mark.parametrize("schema, instances", [
    ({"properties": {"bar": {"type": "integer", "required": True}},                  # suite
      "extends": {"properties": {"foo": {"type": "string", "required": True}}}},
     [{"foo": "baz", "bar": 2}, {"foo": "baz"}, {"bar": 2}, {"foo": "baz", "bar": "quux"}]),
    ({"properties": {"bar": {"type": "integer", "required": True}},                  # suite
      "extends": [{"properties": {"foo": {"type": "string", "required": True}}},
                  {"properties": {"baz": {"type": "null", "required": True}}}]},
     [{"foo": "quux", "bar": 2, "baz": None}, {"bar": 2, "baz": None},
      {"foo": "quux", "bar": 2}, {"bar": 2}]),
    ({"minimum": 20, "extends": {"maximum": 30}}, [25, 35, 19, "x"]),                # suite
    ({"definitions": {"pos": {"minimum": 0}}, "type": "integer",
      "extends": {"$ref": "#/definitions/pos"}}, [0, 5, -1, 1.5]),
    ({"extends": [{"extends": {"type": "string"}}, {"maxLength": 2}]}, ["ab", "abc", 1]),
    ({"extends": [{"type": "array", "items": {"type": "integer"}}, {"maxItems": 2}]},
     [[], [1, 2], [1, 2, 3], ["a"], {}]),
])
def test_extends(schema: dict, instances: list) -> None:
    check(schema, instances)


def test_extends_nothing_is_no_constraint() -> None:
    compiled = compile_json_schema(draft3({"extends": []}), byte_vocabulary())
    assert accepts(compiled, "1") and accepts(compiled, "{}")


def test_extends_subschemas_are_indexed() -> None:
    schema = draft3({"properties": {"a": {"$ref": "#/extends/0"}},
                     "extends": [{"type": "object", "properties": {"n": {"type": "integer"}}}]})
    doc = SchemaDocument(schema, DEFAULT_LIMITS)
    assert doc.at("/extends/0")["type"] == "object"
    assert doc.at("/extends/0/properties/n") == {"type": "integer"}
    check(schema, [{"a": {}}, {"a": {"n": 1}}, {"a": 1}, {"a": {"n": "x"}}, 1])


@pytest.mark.parametrize("value, pointer", [
    ("string", "/extends"), (3, "/extends"), ([{}, 1], "/extends/1")])
def test_extends_must_hold_schemas(value: object, pointer: str) -> None:
    refused({"extends": value}, pointer, "invalid-schema")


# --------------------------------------------------------------------------------- disallow

@pytest.mark.parametrize("schema, instances", [
    ({"disallow": "integer"}, ["foo", 1, 1.5, 1.0, None]),                           # suite
    ({"disallow": ["integer", "boolean"]}, ["foo", 1, True, False, 2.5]),            # suite
    ({"type": "number", "disallow": "integer"}, [3, 9.75, -0.5, "x"]),
    ({"disallow": "number"}, [3, 3.5, True, "nobody expects", {"a": 1}, [1], None]),
    ({"disallow": ["null", "boolean", "array"]}, [None, True, [], 0, "x", {}]),
    ({"disallow": ["object", "string"]}, [{}, "", 1, []]),
    ({"type": "string", "disallow": [{"type": "string", "pattern": "xpto"}]},
     ["abc", "The xpto is weird", 1]),
    ({"type": "array", "disallow": [{"type": "array", "minItems": 3}]},
     [[], [1], [1, 2], [1, 2, 3], [1, 2, 3, 4]]),
    ({"disallow": [{"type": "integer", "minimum": 0, "maximum": 9}, "string"]},
     [-1, 10, 0, 9, 4.5, "x", None]),
    ({"definitions": {"s": {"type": "string", "maxLength": 1}},
      "disallow": [{"$ref": "#/definitions/s"}]}, ["ab", "a", "", 1]),
    ({"disallow": [{"properties": {"a": {"required": False}}, "type": "null"}]},
     [None, 1, {}]),
    ({"properties": {"v": {"type": "any", "disallow": "null"}}},
     [{"v": 1}, {"v": None}, {}]),
])
def test_disallow(schema: dict, instances: list) -> None:
    check(schema, instances)


def test_disallow_any_leaves_nothing() -> None:
    refused({"disallow": "any"}, "", "empty-language")
    check({"properties": {"a": {"disallow": ["any"]}}}, [{}, {"a": 1}, {"a": None}])


def test_disallow_type_names_read_as_schemas() -> None:
    doc = SchemaDocument(draft3({"disallow": ["integer", {"minLength": 2}]}), DEFAULT_LIMITS)
    assert doc.at("/disallow/0") == {"type": "integer"}
    assert doc.at("/disallow/1") == {"minLength": 2}


@pytest.mark.parametrize("value, pointer", [
    ("integr", "/disallow"), (["string", 3], "/disallow/1"), ({"type": "string"}, "/disallow"),
])
def test_disallow_must_name_types_or_hold_schemas(value: object, pointer: str) -> None:
    refused({"disallow": value}, pointer, "invalid-schema")


@pytest.mark.parametrize("member", [
    {"type": "array", "minItems": 3, "maxItems": 3},
    {"properties": {"a": {"required": True}}},
    {"patternProperties": {"^a": {"type": "string"}}},
])
def test_disallow_schema_refused_like_not(member: dict) -> None:
    refused({"disallow": ["null", member]}, "/disallow/1")


def test_disallow_of_disallow() -> None:
    """The negation of a negation: `disallow` of `{disallow: string}` is `string`."""
    compiled = compile_json_schema(draft3({"disallow": ["null", {"disallow": "string"}]}),
                                   byte_vocabulary())
    assert [accepts(compiled, x) for x in ('"a"', "null", "1", "{}", "[]")] == [
        True, False, False, False, False]


def test_disallow_refused_where_its_negation_is_not_expressible() -> None:
    # suite ("multiple disallow subschema"): not of an object schema with property schemas.
    schema = {"disallow": ["string", {"type": "object",
                                      "properties": {"foo": {"type": "string"}}}]}
    error = refused(schema, "/disallow/1")
    assert "negation" in str(error)
    lenient = compile_json_schema(draft3(schema), byte_vocabulary(), lenient=True)
    assert any(n.startswith("/disallow/1:") and "ignored (lenient)" in n for n in lenient.notes)
    assert not accepts(lenient, '"foo"')   # the expressible member still holds
    assert accepts(lenient, "1")


# --------------------------------------------------------------------------------- required

@pytest.mark.parametrize("schema, instances", [
    ({"properties": {"foo": {"required": True}, "bar": {}}}, [{"foo": 1}, {"bar": 1}]),  # suite
    ({"type": "object", "properties": {"foo": {"required": False}}},                 # suite
     [{}, {"foo": 1}, {"foo": 1, "bar": 2}, 1, {"x": 1}]),
    ({"type": "object", "properties": {"a": {"type": "integer", "required": True},
                                       "b": {"type": "string", "required": True},
                                       "c": {"required": False}}},
     [{"a": 1, "b": "x"}, {"a": 1, "b": "x", "c": None}, {"a": 1}, {"b": "x"}, {}, 1]),
    ({"properties": {"o": {"type": "object", "properties": {"x": {"required": True}}}}},
     [{}, {"o": {"x": 1}}, {"o": {}}, {"o": {"y": 1}}]),
    # Read where the parent lists the property, not through $ref (as validators do).
    ({"definitions": {"r": {"type": "integer", "required": True}},
      "properties": {"a": {"$ref": "#/definitions/r"}}}, [{}, {"a": 1}, {"a": "x"}]),
    ({"definitions": {"r": {"type": "integer"}},
      "properties": {"a": {"$ref": "#/definitions/r", "required": True}}},
     [{"a": 1}, {}, {"a": "x"}]),
    # A boolean required on the root, an item or an extended schema says nothing of itself.
    ({"type": "integer", "required": True}, [1, "x"]),
    ({"items": {"type": "integer", "required": True}}, [[], [1], ["x"]]),
    ({"extends": {"properties": {"k": {"required": True}}}}, [{"k": 1}, {}]),
    ({"patternProperties": {"^x": {"required": True, "type": "string"}}},
     [{}, {"x": "s"}, {"x": 1}]),
])
def test_required_true_in_property_schema(schema: dict, instances: list) -> None:
    check(schema, instances)


def test_required_must_be_boolean_or_names() -> None:
    refused({"properties": {"a": {"required": "yes"}}}, "/properties/a/required",
            "invalid-schema")


# ------------------------------------------------------------------------------------- type

@pytest.mark.parametrize("schema, instances", [
    ({"type": "integer"}, [1, -1, 0, 1.1, 1.0, "1", {}, [], True, None]),              # suite
    ({"type": ["integer", "string"]}, [1, "foo", 1.1, {}, [], True, None]),           # suite
    ({"type": "any", "minimum": 2, "maxItems": 2, "pattern": "a$"},
     ["a", "b", 3, 1, None, True, {"une": 1}, [True, False], [True, False, True]]),
    ({"type": ["string", "any"], "maxLength": 1}, [1, "a", "ab", None]),
    ({"type": [{"type": "string", "minLength": 2}]}, ["ab", "a", 1]),
    ({"type": [{"type": "string"}, "any"], "minLength": 1}, ["a", "", 1, {}]),
])
def test_type(schema: dict, instances: list) -> None:
    check(schema, instances)


def test_type_any_matches_everything() -> None:                                       # suite
    compiled = compile_json_schema(draft3({"type": "any"}), byte_vocabulary())
    assert all(accepts(compiled, t) for t in ("1", "1.1", '"foo"', "{}", "[]", "true", "null"))


@pytest.mark.parametrize("schema, instances", [
    ({"type": ["integer", {"properties": {"foo": {"type": "null"}}}]},               # suite
     [1, "foo", 1.1, {}, {"foo": None}, {"foo": "bar"}, [], True, None]),
    ({"type": [{"type": ["string"]}, {"type": ["array", "null"]}]},                 # suite
     ["foo", None, [], 1, {}, True]),
    ({"type": ["array", {"type": "object"}]}, [[], {}, 1, "x", None]),
    ({"type": ["array", {"minimum": 3}]}, [[], 4, 2, "x", None]),
    ({"type": ["string", {"type": "integer", "minimum": 3}], "maxLength": 2},
     ["ab", "abc", 3, 2, 1.5, None]),
    ({"type": ["null", {"type": "object", "properties": {"b": {"type": "string"}}}]},
     [None, {}, {"b": "x"}, {"b": 1}, 1]),
    ({"properties": {"a": {"type": ["boolean", {"enum": [1, 2]}, {"type": "string",
                                                                "pattern": "^x"}]}}},
     [{"a": True}, {"a": 2}, {"a": "xy"}, {"a": "y"}, {"a": 3}, {}]),
    ({"type": ["any", {"type": "string"}], "minimum": 2}, [1, 3, "x", None]),
    ({"type": ["integer", {"type": "string"}], "disallow": [{"minimum": 5}]},
     [1, 7, "x", 1.5]),
])
def test_type_union_with_schemas_is_an_alternative(schema: dict, instances: list) -> None:
    check(schema, instances)


@pytest.mark.parametrize("schema, instances", [
    ({"disallow": [{"type": ["string", {"type": "integer", "minimum": 3}]}]},
     [1, 5, "x", None, 2.5]),
    ({"disallow": [{"type": ["null", {"maxLength": 2}]}]}, [None, "ab", "abc", 1]),
    ({"extends": {"disallow": [{"type": ["boolean", {"enum": ["a", "b"]}]}]}},
     [True, "a", "c", 1]),
])
def test_type_union_negated_is_each_member_negated(schema: dict, instances: list) -> None:
    check(schema, instances)


def test_type_union_in_a_negation_beside_other_keywords_refused() -> None:
    schema = {"disallow": [{"type": ["string", {"type": "integer"}], "minLength": 2}]}
    error = refused(schema, "/disallow/0")
    assert "negation" in str(error)


@pytest.mark.parametrize("member", [1, True, "anything", ["string"]])
def test_type_union_members_are_schemas_or_type_names(member: object) -> None:
    refused({"type": [{"type": "string"}, member]}, "/type/1", "invalid-schema")


@pytest.mark.parametrize("value", [{"type": "string"}, "anything", ["string", 1]])
def test_type_values(value: object) -> None:
    refused({"type": value}, "/type", "invalid-schema")


# ----------------------------------------------------------------------------- dependencies

@pytest.mark.parametrize("schema, instances", [
    ({"dependencies": {"bar": "foo"}},                                                 # suite
     [{}, {"foo": 1}, {"foo": 1, "bar": 2}, {"bar": 2}, "foo", 12]),
    ({"dependencies": {"quux": ["foo", "bar"]}},                                       # suite
     [{}, {"foo": 1, "bar": 2}, {"foo": 1, "bar": 2, "quux": 3}, {"foo": 1, "quux": 2},
      {"bar": 1, "quux": 2}, {"quux": 1}]),
    ({"properties": {"a": {}, "b": {}}, "dependencies": {"a": "b", "b": []}},
     [{"a": 1, "b": 2}, {"b": 2}, {"a": 1}]),
])
def test_dependencies_property_names(schema: dict, instances: list) -> None:
    check(schema, instances)


def test_dependencies_schema_form_refused() -> None:                                   # suite
    schema = {"dependencies": {"bar": {"properties": {"foo": {"type": "integer"},
                                                      "bar": {"type": "integer"}}}}}
    error = refused(schema, "/dependencies")
    assert "schema form" in str(error)
    lenient = compile_json_schema(draft3(schema), byte_vocabulary(), lenient=True)
    assert any(n.startswith("/dependencies:") and "ignored (lenient)" in n
               for n in lenient.notes)


# ------------------------------------------------------------------------- other dialects

@pytest.mark.parametrize("dialect", [None, "http://json-schema.org/draft-04/schema#",
                                     "https://json-schema.org/draft/2020-12/schema"])
def test_draft3_keywords_are_annotations_elsewhere(dialect: str | None) -> None:
    schema: dict = {"divisibleBy": 2, "disallow": "integer", "extends": {"type": "string"},
                    "properties": {"a": {"type": "integer"}}}
    if dialect is not None:
        schema["$schema"] = dialect
    compiled = compile_json_schema(schema, byte_vocabulary())
    assert all(accepts(compiled, t) for t in ("3", "true", '{"a":1}', "[]"))
    with pytest.raises(GrammarError) as exc:
        compile_json_schema({**schema, "type": "any"}, byte_vocabulary())
    assert exc.value.code == "invalid-schema" and str(exc.value).startswith("/type:")


def test_lint_reports_refused_draft3_forms() -> None:
    from grammask.compiler.frontends.json_schema import JsonSchemaOptions
    from grammask.compiler.analyses.json_schema import lint_schema

    schema = draft3({"properties": {"a": {"disallow": [{"type": ["string", {"type": "integer"}],
                                                        "minLength": 2}]},
                                    "b": {"dependencies": {"x": {"type": "object"}}}}})
    found = lint_schema(json.dumps(schema, indent=2), "s.json", JsonSchemaOptions())
    pointers = {(d.code, d.pointer) for d in found if d.severity == "error"}
    assert ("unsupported-keyword", "/properties/a/disallow/0") in pointers
    assert ("unsupported-keyword", "/properties/b/dependencies") in pointers
