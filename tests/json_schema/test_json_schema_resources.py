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
