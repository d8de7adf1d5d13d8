"""Linting JSON Schemas (grammask.compiler.analyses.json_schema and `grammask lint`): errors agree
with the frontend and are located by JSON pointer and line:column, the structured-output
findings fire where they should and nowhere else, the examples of specs/diagnostics.md, and the
JSON position index against `json.loads` on random documents."""
from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from grammask.compiler.cli.main import main
from grammask.compiler.support.diagnostics import Diagnostic, render
from grammask.compiler.support.errors import GrammarError
from grammask.compiler.frontends.json_schema import JsonSchemaOptions, schema_to_grammar
from grammask.compiler.analyses.json_schema import SCHEMA_CODES, lint_schema, located_error
from grammask.compiler.frontends.json_schema.locate import JsonPositions
from grammask.compiler.support.limits import Limits
from hypothesis import given, settings
from hypothesis import strategies as st

from ..support.budget import examples
from ..support.paths import DATA, SPECS

DOC = SPECS / "diagnostics.md"
SUITE = DATA / "json-schema-test-suite" / "draft2020-12"


def lint(schema: Any, **options: Any) -> list[Diagnostic]:
    text = schema if isinstance(schema, str) else json.dumps(schema, indent=2)
    return lint_schema(text, "s.json", JsonSchemaOptions(**options))


def codes(found: list[Diagnostic]) -> list[tuple[str, str | None]]:
    return [(d.code, d.pointer) for d in found]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return code, captured.out, captured.err


# ---------------------------------------------------------------- positions

DOCUMENT = '''{
  "a/b": {"x~y": [1, {"k": null}, []]},
  "s": "x\\u00e9\\ud83d\\ude00(",
  "a/b": {"x~y": [true]}
}'''


def test_positions_of_members_elements_and_escaped_names() -> None:
    p = JsonPositions(DOCUMENT)
    assert p.span("").line == 1 and p.span("").column == 1
    name = p.span("/a~1b")
    assert (name.line, name.column, name.end_column) == (4, 3, 7)
    assert (p.span("/a~1b/x~0y").line, p.span("/a~1b/x~0y").column) == (4, 11)
    element = p.span("/a~1b/x~0y/0")
    assert (element.line, element.column, element.end_column) == (4, 19, 22)
    assert "/a~1b/x~0y/1" not in p.located


def test_positions_fall_back_to_the_nearest_ancestor() -> None:
    p = JsonPositions(DOCUMENT)
    assert p.span("/s/not/there") == p.span("/s")
    assert p.span("/nothing") == p.span("")


def test_string_positions_count_escapes_as_one_character() -> None:
    p = JsonPositions(DOCUMENT)
    spans = [p.string_span("/s", i) for i in range(5)]
    assert [(s.column, s.end_column) for s in spans[:4] if s] == [(9, 9), (10, 15), (16, 27),
                                                                  (28, 28)]
    assert spans[4] is None
    assert p.string_span("/a~1b", 0) is None


@pytest.mark.parametrize("text", ["{", "[1,]", '{"a" 1}', "1 2", "", '{"a": 1,}', "nul"])
def test_positions_reject_text_that_is_not_json(text: str) -> None:
    with pytest.raises(ValueError):
        JsonPositions(text)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=4),
    max_leaves=25)


def pointers(value: Any, pointer: str = "") -> list[tuple[str, Any, str | None]]:
    """(pointer, value, member name) for every value inside `value`."""
    out: list[tuple[str, Any, str | None]] = []
    todo: list[tuple[str, Any, str | None]] = [(pointer, value, None)]
    while todo:
        p, v, name = todo.pop()
        out.append((p, v, name))
        if isinstance(v, dict):
            todo.extend((p + "/" + k.replace("~", "~0").replace("/", "~1"), x, k)
                        for k, x in v.items())
        elif isinstance(v, list):
            todo.extend((f"{p}/{i}", x, None) for i, x in enumerate(v))
    return out


@settings(max_examples=examples(200), deadline=None)
@given(JSON_VALUES, st.sampled_from([None, 0, 2]), st.booleans())
def test_positions_agree_with_json_loads(value: Any, indent: int | None, ascii_: bool) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_)
    p = JsonPositions(text)
    found = pointers(value)
    assert set(p.located) == {ptr for ptr, _, _ in found}
    for ptr, v, name in found:
        at = p.located[ptr]
        assert json.loads(text[at.value_start:at.value_end]) == v
        if name is None:
            assert at.key is None
        else:
            assert at.key is not None and json.loads(text[at.key[0]:at.key[1]]) == name
        span = p.span(ptr)
        start = at.key[0] if at.key else at.value_start
        assert text.split("\n")[span.line - 1][span.column - 1] == text[start]


# ---------------------------------------------------------------- errors

def test_error_located_at_the_member_name() -> None:
    (d,) = lint('{\n  "type": "object",\n  "properties": {"age": {"type": "int"}}\n}')
    assert (d.severity, d.code, d.pointer) == ("error", "invalid-schema", "/properties/age/type")
    assert d.span is not None and (d.span.line, d.span.column) == (3, 26)
    assert d.message.startswith("type must be one of")


def test_pattern_error_points_at_the_character_of_the_pattern() -> None:
    text = '{"type": "string", "pattern": "\\u00e9\\u00e9(?<=a^)"}'
    (d,) = lint(text)
    assert d.code == "unsupported-pattern" and d.pointer == "/pattern"
    assert d.span is not None and text[d.span.column - 1:d.span.column + 3] == "(?<="


def test_json_syntax_error_has_its_line_and_column() -> None:
    (d,) = lint('{"type": "object",\n "properties": {"a": 1,}}')
    assert d.code == "invalid-schema" and d.pointer is None
    assert d.span is not None and (d.span.line, d.span.column) == (2, 24)


def test_every_unsupported_keyword_reported_in_one_pass() -> None:
    schema = {"type": "object", "properties": {
        "id": {"type": "string", "format": "regex", "maxLength": 64},
        "list": {"type": "array", "uniqueItems": True, "maxItems": 3},
        "either": {"oneOf": [{"type": "object", "dependentRequired": {"a": ["b"]}},
                             {"type": "object", "properties": {"b": {"type": "string"}}}]}}}
    found = [d for d in lint(schema) if d.severity == "error"]
    assert sorted(codes(found)) == [("unsupported-format", "/properties/id/format"),
                                    ("unsupported-keyword", "/properties/either/oneOf"),
                                    ("unsupported-keyword", "/properties/list/uniqueItems")]
    assert all("--lenient" in d.message for d in found if d.code == "unsupported-keyword")
    relaxed = lint(schema, lenient=True)
    assert sorted(codes(relaxed)) == [("schema-lenient-ignored", "/properties/id/format"),
                                      ("schema-lenient-ignored", "/properties/list/uniqueItems"),
                                      ("schema-oneof-as-anyof", "/properties/either/oneOf"),
                                      ("schema-unbounded-string",
                                       "/properties/either/oneOf/1/properties/b")]


def test_empty_language_names_the_empty_subschema() -> None:
    schema = {"type": "object", "required": ["a"],
              "properties": {"a": {"type": "integer", "minimum": 5, "maximum": 3}}}
    errors = [d for d in lint(schema) if d.severity == "error"]
    assert codes(errors) == [("empty-language", "")]
    assert errors[0].message.endswith("(no value satisfies /properties/a)")
    assert not [d for d in lint({"properties": {"a": {"type": "integer", "minimum": 5,
                                                      "maximum": 3}}}) if d.severity == "error"]


@pytest.mark.parametrize("schema, code", [
    ("[1]", "invalid-schema"),
    ('{"properties": {"a": 3}}', "invalid-schema"),
    ('{"$ref": "http://example.com/x.json"}', "unsupported-ref"),
    ('{"$ref": "#/$defs/nope"}', "invalid-ref"),
    ('{"pattern": "[a"}', "invalid-pattern"),
    ("[" * 100_000 + "]" * 100_000, "budget"),
], ids=["array", "bad-subschema", "remote-ref", "missing-ref", "bad-pattern", "deep-text"])
def test_bad_schemas_are_one_error(schema: str, code: str) -> None:
    found = lint(schema)
    assert [d.code for d in found] == [code]
    assert code != "budget" or "max_schema_depth" in found[0].message


def test_depth_budget_is_a_diagnostic() -> None:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(60):
        schema = {"items": schema}
    found = lint_schema(json.dumps(schema), "s.json", JsonSchemaOptions(),
                        limits=Limits(max_schema_depth=50))
    assert [d.code for d in found] == ["budget"] and "max_schema_depth" in found[0].message


def test_located_error_keeps_the_code_and_strips_the_pointer() -> None:
    text = '{\n  "type": "objec"\n}'
    with pytest.raises(GrammarError) as info:
        schema_to_grammar(text)
    located = located_error(info.value, text)
    assert (located.line, located.column, located.pointer) == (2, 3, "/type")
    assert located.code == "invalid-schema" and not located.message.startswith("/")


def suite_groups() -> list[tuple[str, Any]]:
    groups = []
    for path in sorted(SUITE.rglob("*.json")):
        groups += [(f"{path.stem}: {g['description']}", g["schema"])
                   for g in json.loads(path.read_text(encoding="utf-8"))]
    return groups


def test_errors_agree_with_the_frontend_on_the_test_suite() -> None:
    groups = suite_groups()
    assert len(groups) > 300
    for name, schema in groups[::3]:
        found = lint(schema)
        assert not [d for d in found if d.code == "internal-error"], name
        try:
            schema_to_grammar(schema)
            compiles = True
        except GrammarError:
            compiles = False
        errors = [d.code for d in found if d.severity == "error"]
        assert compiles == (not errors or errors == ["empty-language"]), name


# ---------------------------------------------------------------- findings

def test_merged_constraints_bound_strings_and_arrays() -> None:
    schema = {"type": "object", "properties": {
        "a": {"allOf": [{"type": "string"}, {"maxLength": 5}]},
        "b": {"$ref": "#/$defs/short"},
        "c": {"type": "array", "prefixItems": [{"const": 1}], "items": False},
        "d": {"type": "string", "format": "date"},
        "e": {"type": "string", "enum": ["x", "y", "other"]},
        "f": {},
        "g": {"type": "string"}},
        "$defs": {"short": {"type": "string", "pattern": "^[a-z]+$"}}}
    assert codes(lint(schema)) == [("schema-unbounded-string", "/properties/g")]


def test_one_finding_per_location() -> None:
    schema = {"type": "object", "properties": {k: {"$ref": "#/$defs/text"} for k in "abc"},
              "$defs": {"text": {"type": "string"}}}
    assert codes(lint(schema)) == [("schema-unbounded-string", "/$defs/text")]
    indented = lint(schema, whitespace="indent")
    assert codes(indented) == [("schema-unbounded-string", "/$defs/text")]


def test_required_values_that_can_be_null_are_not_reported() -> None:
    schema = {"type": "object", "required": ["a", "b", "c", "d", "e"], "properties": {
        "a": {"type": ["integer", "null"]},
        "b": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "c": {"enum": [1, None]},
        "d": {"$ref": "#/$defs/maybe"},
        "e": {"type": "boolean", "description": "optional flag"}},
        "$defs": {"maybe": {"type": ["string", "null"], "maxLength": 3}}}
    found = lint(schema)
    assert codes(found) == [("schema-required-not-nullable", "/properties/e")]
    assert found[0].severity == "warning" and "'optional'" in found[0].message
    plain = lint({"type": "object", "required": ["n"], "properties": {"n": {"type": "boolean"}}})
    assert [(d.severity, d.code) for d in plain] == [("info", "schema-required-not-nullable")]


def test_enum_escapes() -> None:
    def enum_findings(schema: dict[str, Any]) -> list[tuple[str, str | None]]:
        return [c for c in codes(lint(schema)) if c[0] == "schema-closed-enum"]

    assert enum_findings({"enum": ["a", "b"]}) == [("schema-closed-enum", "/enum")]
    assert enum_findings({"enum": ["a", "b", "Not applicable"]}) == []
    assert enum_findings({"enum": ["a", "b", None]}) == []
    assert enum_findings({"enum": ["a"]}) == []
    assert enum_findings({"enum": [1, 2, 3]}) == []
    assert enum_findings({"anyOf": [{"enum": ["a", "b"]},
                                    {"type": "string", "maxLength": 9}]}) == []
    assert enum_findings({"anyOf": [{"enum": ["a", "b"]}, {"enum": ["c", "d"]}]}) == [
        ("schema-closed-enum", "/anyOf/0/enum"), ("schema-closed-enum", "/anyOf/1/enum")]
    assert enum_findings({"enum": ["a", "b"], "anyOf": [{"type": "string"}, {"type": "null"}]}) \
        == [("schema-closed-enum", "/enum")]


def test_additional_properties_only_with_strict() -> None:
    schema = {"type": "object", "properties": {
        "open": {"type": "object"},
        "closed": {"type": "object", "properties": {"x": {"const": 1}},
                   "additionalProperties": False}},
        "additionalProperties": False}
    assert lint(schema) == []
    found = lint(schema, strict=True)
    assert codes(found) == [("schema-additional-absent", "/properties/open")]
    assert "only {} is accepted" in found[0].message


def test_unused_definitions() -> None:
    schema = {"$ref": "#/$defs/used/properties/x",
              "$defs": {"used": {"properties": {"x": {"const": 1}}},
                        "chain": {"$ref": "#/$defs/tail"},
                        "tail": {"const": 2},
                        "outer": {"$defs": {"inner": {"const": 3}}}},
              "definitions": {"legacy": {"const": 4}}}
    found = lint(schema)
    assert sorted(codes(found)) == [("schema-unused-def", "/$defs/chain"),
                                    ("schema-unused-def", "/$defs/outer"),
                                    ("schema-unused-def", "/$defs/tail"),
                                    ("schema-unused-def", "/definitions/legacy")]
    dynamic = {"$dynamicAnchor": "a", "$defs": {"x": {"$dynamicRef": "#a"}}}
    assert [d for d in lint(dynamic, lenient=True) if d.code == "schema-unused-def"] == []


def test_stats_note() -> None:
    found = lint_schema('{"type": "boolean"}', "s.json", stats=True)
    assert [(d.severity, d.code) for d in found] == [("info", "stats")]
    assert "backend dfa" in found[0].message


def test_codes_are_registered_with_their_severity() -> None:
    severities = {"info", "warning"}
    assert {sev for sev, _ in SCHEMA_CODES.values()} == severities
    assert SCHEMA_CODES["schema-required-not-nullable"][0] == "info"
    assert SCHEMA_CODES["schema-closed-enum"][0] == "info"


# ---------------------------------------------------------------- specs/diagnostics.md

OPTIONS_FOR = {"schema-additional-absent": {"strict": True},
               "schema-oneof-as-anyof": {"lenient": True},
               "schema-lenient-ignored": {"lenient": True}}


def doc_code(example: tuple[str, str]) -> str:
    """The code at the end of the first line of an example's expected output."""
    found = re.search(r"\[([a-z0-9-]+)\]$", example[1].split("\n", 1)[0])
    assert found is not None, example[1]
    return found[1]


def doc_examples() -> list[tuple[str, str]]:
    """(schema, expected text) for every json block followed by a text block."""
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"^```(\w+)\n(.*?)^```$", text, re.DOTALL | re.MULTILINE)
    return [(body, blocks[i + 1][1].rstrip("\n")) for i, (lang, body) in enumerate(blocks[:-1])
            if lang == "json" and blocks[i + 1][0] == "text"]


@pytest.mark.parametrize("example", doc_examples(), ids=doc_code)
def test_diagnostics_doc_examples(example: tuple[str, str]) -> None:
    schema, expected = example
    code = doc_code(example)
    path = "example.schema.json"
    found = lint_schema(schema, path, JsonSchemaOptions(**OPTIONS_FOR.get(code, {})))
    assert expected in "\n".join(render(path, schema, d) for d in found)


def test_diagnostics_doc_covers_every_schema_code() -> None:
    shown = {doc_code(e) for e in doc_examples()}
    assert set(SCHEMA_CODES) <= shown
    assert {"invalid-schema", "unsupported-keyword", "unsupported-format", "unsupported-ref",
            "invalid-ref", "invalid-pattern", "unsupported-pattern", "empty-language"} <= shown


# ---------------------------------------------------------------- grammask lint

PERSON = '''{
  "type": "object",
  "properties": {
    "name": {"type": "string"},
    "age": {"type": "integer"}
  },
  "required": ["name", "age"]
}
'''


def test_lint_cli_schema_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "person.schema.json"
    path.write_text(PERSON, encoding="utf-8")
    code, out, _ = run(capsys, "lint", str(path))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == (f"{path}:4:5: warning: at /properties/name: this string has no"
                        " maxLength, pattern, format or enum: a model can keep writing it until"
                        " its token budget runs out; add a maxLength [schema-unbounded-string]")
    assert lines[1:3] == [' 4 |     "name": {"type": "string"},', "   |     ^"]
    assert lines[-1] == "0 errors, 1 warning, 2 notes"
    code, out, _ = run(capsys, "lint", "--strict", str(path))
    assert code == 1 and "[schema-additional-absent]" in out
    code, out, _ = run(capsys, "lint", str(path), "--no-warn", "schema-unbounded-string",
                       "--no-warn", "schema-required-not-nullable")
    assert code == 0 and out == "0 errors, 0 warnings, 0 notes\n"


def test_lint_cli_errors_formats_and_stdin(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    bad = '{\n  "type": "array",\n  "uniqueItems": true,\n  "maxItems": 3\n}\n'
    path = tmp_path / "list.json"
    path.write_text(bad, encoding="utf-8")
    code, out, _ = run(capsys, "lint", "--format", "json", str(path))
    assert code == 1
    (obj,) = [json.loads(line) for line in out.splitlines()]
    assert (obj["line"], obj["column"], obj["code"]) == (3, 3, "unsupported-keyword")
    code, out, _ = run(capsys, "lint", "--format", "sarif", "--lenient", str(path))
    assert code == 0
    (result,) = json.loads(out)["runs"][0]["results"]
    assert result["ruleId"] == "schema-lenient-ignored"
    assert result["message"]["text"].startswith("at /uniqueItems: ")
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 3
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(bad.encode())))
    code, out, _ = run(capsys, "lint", "--language", "jsonschema", "-")
    assert code == 1 and out.startswith("<stdin>:3:3: error: at /uniqueItems: ")
    code, _, err = run(capsys, "lint", "--indent", "2", "--whitespace", "compact", str(path))
    assert code == 2 and "--indent" in err
