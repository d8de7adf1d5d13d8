"""`$ref` to other documents, given as `resources` (absolute URI -> schema; nothing is
fetched): references resolve against base URIs into them, their own relative references
resolve against their URIs, errors inside them name their address, and the suite's remote
documents (`refRemote.json` and the others, in the ratchet of `test_json_schema_suite.py`)
all resolve. Bad resources are errors that say which.
"""
from __future__ import annotations

import json

import pytest

from grammask.compiler import CompileCache, GrammarError, compile_json_schema

from ..support.json_schema_oracle import validator
from ..support.json_schema_suite import accepts, byte_vocabulary

PEOPLE = "https://example.com/schemas/person.json"
RESOURCES = {
    PEOPLE: {"type": "object", "properties": {"name": {"$ref": "name.json"},
                                              "age": {"$ref": "#/$defs/age"}},
             "required": ["name"], "additionalProperties": False,
             "$defs": {"age": {"type": "integer", "minimum": 0}}},
    "https://example.com/schemas/name.json": {"type": "string", "maxLength": 5},
}


def test_references_into_resources() -> None:
    compiled = compile_json_schema({"type": "array", "items": {"$ref": PEOPLE}},
                                   byte_vocabulary(), resources=RESOURCES)
    assert accepts(compiled, '[{"name": "ann", "age": 3}]')
    assert not accepts(compiled, '[{"name": "annabel"}]')  # name.json, relative to person.json
    assert not accepts(compiled, '[{"name": "ann", "age": -1}]')  # its own $defs
    relative = {"$id": "https://example.com/schemas/list.json", "items": {"$ref": "person.json"}}
    assert accepts(compile_json_schema(relative, byte_vocabulary(), resources=RESOURCES),
                   '[{"name": "bo"}]')
    as_text = {uri: json.dumps(s) for uri, s in RESOURCES.items()}
    assert accepts(compile_json_schema({"$ref": PEOPLE}, byte_vocabulary(), resources=as_text),
                   '{"name": "cy"}')


def test_unknown_documents_are_still_refused() -> None:
    with pytest.raises(GrammarError) as info:
        compile_json_schema({"$ref": "https://example.com/other.json"}, byte_vocabulary(),
                            resources=RESOURCES)
    assert info.value.code == "unsupported-ref" and info.value.pointer == "/$ref"
    assert "resources=" in info.value.message


def test_errors_inside_a_resource_name_its_address() -> None:
    broken = {PEOPLE: {"type": "object", "properties": {"a": {"minLength": -1}}}}
    with pytest.raises(GrammarError) as info:
        compile_json_schema({"$ref": PEOPLE}, byte_vocabulary(), resources=broken)
    assert info.value.pointer == PEOPLE + "#/properties/a/minLength"


@pytest.mark.parametrize("resources, code, where", [
    ({"person.json": {}}, "invalid-schema", ""),
    ({PEOPLE + "#/x": {}}, "invalid-schema", ""),
    ({PEOPLE: 3}, "invalid-schema", PEOPLE + "#"),
    ({PEOPLE: {"enum": ["\udc00"]}}, "invalid-schema", PEOPLE + "#/enum/0"),
    ({PEOPLE: {"$schema": "http://json-schema.org/draft-07/schema#"}}, "unsupported-ref",
     PEOPLE + "#/$schema"),
    ([PEOPLE], "invalid-schema", ""),
])
def test_bad_resources(resources: object, code: str, where: str) -> None:
    with pytest.raises(GrammarError) as info:
        compile_json_schema({"type": "integer"}, byte_vocabulary(),
                            resources=resources)  # type: ignore[arg-type]
    assert info.value.code == code and (info.value.pointer or "") == where


def test_the_compile_cache_keys_on_resources() -> None:
    cache = CompileCache()
    other = {**RESOURCES, "https://example.com/schemas/name.json": {"type": "string"}}
    short = compile_json_schema({"$ref": PEOPLE}, byte_vocabulary(), resources=RESOURCES,
                                cache=cache)
    longer = compile_json_schema({"$ref": PEOPLE}, byte_vocabulary(), resources=other,
                                 cache=cache)
    assert not accepts(short, '{"name": "annabel"}') and accepts(longer, '{"name": "annabel"}')


def test_a_resource_that_is_not_json_names_itself_at_its_line_and_column() -> None:
    with pytest.raises(GrammarError) as info:
        compile_json_schema({"$ref": PEOPLE}, byte_vocabulary(), resources={PEOPLE: '{"a": }'})
    assert (info.value.source, info.value.line, info.value.column) == (PEOPLE, 1, 7)
    assert info.value.code == "invalid-schema"


D4, D7 = "http://json-schema.org/draft-04/schema#", "http://json-schema.org/draft-07/schema#"
NULLABLE = {"oneOf": [{"$ref": "#/definitions/p"}, {"type": "null"}]}


@pytest.mark.parametrize("schema, values", [
    # `$id` is no keyword in draft 04: the reference stays in this document.
    ({"$schema": D4, "definitions": {"p": {"type": "string"}, "np": {"$id": "np", **NULLABLE}},
      "properties": {"a": {"$ref": "#/definitions/np"}}}, [{"a": "x"}, {"a": None}, {"a": 1}]),
    # Nor `id` in draft 07 (schemas written for draft 04 and labelled 07).
    ({"$schema": D7, "definitions": {"p": {"type": "string"}, "np": {"id": "np", **NULLABLE}},
      "properties": {"a": {"$ref": "#/definitions/np"}}}, [{"a": "x"}, {"a": None}, {"a": 1}]),
    # Draft 04's `id` sets the base of the references inside it.
    ({"$schema": D4, "id": "http://x.test/root.json", "definitions": {"q": {"type": "string"},
      "np": {"id": "http://x.test/other.json", "definitions": {"q": {"type": "integer"}},
             "properties": {"b": {"$ref": "#/definitions/q"}}}},
      "properties": {"a": {"$ref": "#/definitions/np"}}}, [{"a": {"b": 1}}, {"a": {"b": "x"}}]),
    # Draft 07 ignores `$id` beside `$ref`.
    ({"$schema": D7, "definitions": {"p": {"type": "string"}},
      "properties": {"a": {"$id": "http://x.test/elsewhere.json", "$ref": "#/definitions/p"}}},
     [{"a": "x"}, {"a": 1}]),
])
def test_legacy_drafts_read_their_own_id_keyword(schema: dict, values: list) -> None:
    """Which keyword sets a base URI follows the schema's draft, as `jsonschema` reads it."""
    compiled = compile_json_schema(schema, byte_vocabulary())
    check = validator(schema)
    assert {check.is_valid(v) for v in values} == {True, False}
    for value in values:
        assert accepts(compiled, json.dumps(value)) == check.is_valid(value), value
