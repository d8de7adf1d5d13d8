"""The JSON Schema frontend on hand-written schemas: each keyword's exact semantics, the
layouts, the errors (code and JSON pointer), and lenient warnings."""
from __future__ import annotations

import json

import pytest

from grammask.compiler import GrammarError, Limits, clear_caches, compile_json_schema
from grammask.compiler.frontends.json_schema import (
    JsonSchemaOptions, load_schema, schema_to_grammar,
)
from tests.support.json_schema_suite import accepts, byte_vocabulary
from tests.support.paths import SPECS


def compiled(schema: object, **options: object):  # type: ignore[no-untyped-def]
    return compile_json_schema(schema, byte_vocabulary(), **options)


def check(schema: object, valid: list, invalid: list, **options: object) -> None:
    c = compiled(schema, **options)
    for value in valid:
        for text in (json.dumps(value), json.dumps(value, ensure_ascii=False),
                     json.dumps(value, separators=(",", ":")), json.dumps(value, indent=2)):
            assert accepts(c, text), f"valid {text[:200]!r} rejected"
    for value in invalid:
        text = json.dumps(value)
        assert not accepts(c, text), f"invalid {text[:200]!r} accepted"


PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "pets": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
    },
    "required": ["name", "age"],
}


def test_person_schema() -> None:
    check(PERSON,
          [{"name": "Ann", "age": 30}, {"name": "Ann", "age": 30, "pets": ["cat", "dog"]},
           {"name": "Zoë", "age": 0, "pets": []}, {"name": "A", "age": 1, "extra": [1, {}]}],
          [{"name": "Ann"}, {"name": "", "age": 3}, {"name": "Ann", "age": -1},
           {"name": "Ann", "age": 151}, {"name": "Ann", "age": 3.5},
           {"name": "Ann", "age": 3, "pets": ["a", "b", "c", "d"]}, {"name": "Ann", "age": "3"},
           [], "Ann"])


def test_strict_closes_objects_and_additional_false() -> None:
    check(PERSON, [{"name": "Ann", "age": 30}], [{"name": "Ann", "age": 30, "x": 1}], strict=True)
    check({**PERSON, "additionalProperties": False}, [{"name": "Ann", "age": 30}],
          [{"name": "Ann", "age": 30, "x": 1}])


def test_keys_follow_schema_order_and_escapes() -> None:
    c = compiled(PERSON)
    assert not accepts(c, '{"age": 3, "name": "x"}')
    assert accepts(c, '{"n\\u0061me": "x", "age": 3}')
    assert accepts(c, '{"name": "\\u00e9\\n", "age": 3}')
    assert not accepts(c, '{"name": "x", "age": 3, "name": "y"}')


def test_additional_and_pattern_properties() -> None:
    schema = {"properties": {"a": {"type": "integer"}},
              "patternProperties": {"^x-": {"type": "string"}},
              "additionalProperties": {"type": "boolean"}}
    check(schema, [{"a": 1}, {"a": 1, "x-y": "s", "b": True}, {"x-": "s"}, {}],
          [{"a": "s"}, {"x-y": 1}, {"b": 1}, {"a": 1, "x-q": True}])


def test_property_names_and_counts() -> None:
    check({"propertyNames": {"maxLength": 2}, "minProperties": 1, "maxProperties": 2},
          [{"ab": 1}, {"a": 1, "b": 2}], [{}, {"abc": 1}, {"a": 1, "b": 2, "c": 3}])


def test_arrays_prefix_items_and_bounds() -> None:
    check({"prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False},
          [[], [1], [1, "a"]], [[1, "a", 2], ["a"], [1, 2]])
    check({"items": {"type": "integer"}, "minItems": 2, "maxItems": 3},
          [[1, 2], [1, 2, 3]], [[1], [1, 2, 3, 4], [1, "a"]])
    check({"items": [{"type": "integer"}], "additionalItems": {"type": "string"},
           "$schema": "http://json-schema.org/draft-07/schema#"},
          [[1], [1, "a", "b"]], [["a"], [1, 2]])


def test_combinators() -> None:
    check({"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 2}]},
          [1, "ab"], ["abc", 1.5, None])
    check({"oneOf": [{"type": "integer"}, {"type": "string"}]}, [1, "a"], [None])
    check({"allOf": [{"properties": {"a": {"type": "integer"}}}, {"required": ["a"]}]},
          [{"a": 1}], [{}, {"a": "x"}])
    check({"type": "number", "allOf": [{"minimum": 1}, {"maximum": 2}]}, [1, 1.5, 2], [0, 3])


def test_one_of_that_may_overlap_is_an_error_unless_lenient() -> None:
    # Exactly one of two object schemas needs the negation of `dependentRequired`, which is
    # "some name present without one it needs": not expressible (`violations.py`).
    schema = {"oneOf": [{"dependentRequired": {"a": ["b"]}},
                        {"properties": {"a": {"minimum": 3}}}]}
    with pytest.raises(GrammarError) as exc:
        compiled(schema)
    assert exc.value.code == "unsupported-keyword" and "/oneOf" in str(exc.value)
    c = compiled(schema, lenient=True)
    assert any("oneOf" in n for n in c.notes)


def test_one_of_negating_pattern_properties() -> None:
    # "Some name matching the pattern has a value of another type" (`violations.py`).
    check({"oneOf": [{"patternProperties": {"^a": {"type": "integer"}}},
                     {"properties": {"a": {"minimum": 3}}}]},
          [{"a": 1}, {"a": "x"}, {"a": "y", "ab": "x"}],
          [{"a": 3}, {}, {"b": "x"}, {"a": 4, "ab": 2}, {"a": 1, "ab": "x"}, 1])


def test_discriminated_one_of_is_accepted() -> None:
    schema = {"oneOf": [
        {"type": "object", "properties": {"kind": {"const": "a"}, "x": {"type": "integer"}},
         "required": ["kind"]},
        {"type": "object", "properties": {"kind": {"const": "b"}, "y": {"type": "string"}},
         "required": ["kind"]},
    ]}
    # Without `type`, every non-object matches both branches: rejected, by the negations.
    check({"oneOf": [{k: v for k, v in b.items() if k != "type"} for b in schema["oneOf"]]},
          [{"kind": "a", "x": 1}, {"kind": "b", "y": "s"}], [{"kind": "c"}, {"x": 1}, 1, "a"])
    check(schema, [{"kind": "a", "x": 1}, {"kind": "b", "y": "s"}], [{"kind": "c"}, {"x": 1}])
    siblings = {"type": "object", "oneOf": [{k: v for k, v in b.items() if k != "type"}
                                            for b in schema["oneOf"]]}
    check(siblings, [{"kind": "a", "x": 1}, {"kind": "b", "y": "s"}], [{"kind": "c"}, 1])
    mixed = {"oneOf": [{"type": ["object", "integer"], "maximum": 0,
                        "properties": {"kind": {"const": "a"}}, "required": ["kind"]},
                       {"type": ["object", "number"], "minimum": 1,
                        "properties": {"kind": {"const": "b"}}, "required": ["kind"]}]}
    check(mixed, [{"kind": "a"}, {"kind": "b"}, -3, 1.5], [{"kind": "c"}, 0.5])


def test_integers_by_dialect() -> None:
    check({"type": "integer"}, [3, 3.0, -0.0], [3.5, "3"])
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"}
    check(draft4, [3, -1], [3.0, 3.5])


def test_refs_and_recursion() -> None:
    tree = {"$defs": {"node": {"type": "object", "properties": {
        "value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        "required": ["value"], "additionalProperties": False}}, "$ref": "#/$defs/node"}
    deep = '{"value": 0}'
    for i in range(2000):
        deep = f'{{"value": {i}, "children": [{deep}, {{"value": 1}}]}}'
    check(tree, [{"value": 1}, {"value": 1, "children": [{"value": 2, "children": []}]}],
          [{"value": 1, "children": [{}]}, {"children": []}])
    assert accepts(compiled(tree), deep)
    check({"$id": "http://example.com/root.json", "$defs": {"a": {"$anchor": "thing",
                                                                   "type": "integer"}},
           "$ref": "#thing"}, [1], ["a"])
    check({"definitions": {"a": {"type": "string"}}, "$ref": "#/definitions/a",
           "$schema": "http://json-schema.org/draft-07/schema#", "type": "integer"}, ["s"], [1])


def test_enum_const_and_not() -> None:
    check({"enum": ["a", 1, None, [1, {"b": True}]]}, ["a", 1, 1.0, None, [1, {"b": True}]],
          ["b", 2, [1]])
    check({"type": "string", "enum": ["a", "bb", 3]}, ["a", "bb"], [3, "c"])
    check({"const": {"a": 1}}, [{"a": 1}, {"a": 1.0}], [{"a": 2}, {}])
    check({"type": "string", "not": {"enum": ["x", "y"]}}, ["a", "xy", ""], ["x", "y"])
    check({"not": {"type": ["string", "null"]}}, [1, True, {}], ["a", None])
    check({"type": "integer", "not": {"const": 3}}, [2, 4], [3])


def test_presence_rules() -> None:
    check({"properties": {"a": {}, "b": {}}, "dependentRequired": {"a": ["b"]}},
          [{}, {"b": 1}, {"a": 2, "b": 1}], [{"a": 1}])
    check({"dependencies": {"bar": ["foo"]}, "$schema": "http://json-schema.org/draft-07/schema#"},
          [{}, {"foo": 1}, {"foo": 1, "bar": 2}, "x"], [{"bar": 2}])
    check({"type": "object", "not": {"allOf": [{"required": ["a"]}, {"required": ["b"]}]}},
          [{}, {"a": 1}, {"b": 1}, {"c": 1}], [{"a": 1, "b": 2}])
    check({"type": "object", "not": {"required": ["a"]}}, [{}, {"b": 1}], [{"a": 1}])
    check({"$schema": "http://json-schema.org/draft-07/schema#",
           "dependencies": {"a": {"required": ["b"]}}},
          [{}, {"b": 1}, {"b": 2, "a": 1}, "x"], [{"a": 1}])  # what a name needs, then it
    with pytest.raises(GrammarError) as exc:
        compiled({"not": {"dependentRequired": {"a": ["b"]}}})
    assert exc.value.code == "unsupported-keyword"


def test_json_mode_accepts_any_json() -> None:
    for schema in ({}, True):
        check(schema, [None, 1, -2.5e-3, "x", [], {"a": [1, {"b": None}]}], [])
    for schema in (False, {"type": "integer", "minimum": 3, "maximum": 2}, {"not": {}}):
        with pytest.raises(GrammarError) as exc:
            compiled(schema)
        assert exc.value.code == "empty-language"


def test_layouts() -> None:
    value = {"a": [1, {"b": None}], "c": {}}
    c = compiled({}, whitespace="compact")
    assert accepts(c, json.dumps(value, separators=(",", ":")))
    assert not accepts(c, json.dumps(value))
    c = compiled({}, whitespace="indent", indent=4)
    assert accepts(c, json.dumps(value, indent=4))
    assert not accepts(c, json.dumps(value, indent=2))
    assert not accepts(c, json.dumps(value))
    c = compiled({}, max_whitespace=3)
    assert accepts(c, '[1,   2]') and not accepts(c, '[1,    2]')
    c = compiled({}, separators=(", ", ": "))
    assert accepts(c, json.dumps(value)) and not accepts(c, json.dumps(value, indent=1))


@pytest.mark.parametrize("schema, code, pointer", [
    ({"type": "array", "uniqueItems": True}, "unsupported-keyword", "/uniqueItems"),
    ({"properties": {"a": {"contains": {}, "unevaluatedItems": False}}},
     "unsupported-keyword", "/properties/a/unevaluatedItems"),
    ({"$ref": "http://example.com/x.json"}, "unsupported-ref", "/$ref"),
    ({"$ref": "#/$defs/missing"}, "invalid-ref", "/$ref"),
    ({"type": "strin"}, "invalid-schema", "/type"),
    ({"minLength": -1}, "invalid-schema", "/minLength"),
    ({"type": "string", "format": "regex", "maxLength": 3}, "unsupported-format", "/format"),
    ([1], "invalid-schema", ""),
])
def test_errors_name_the_keyword_and_pointer(schema: object, code: str, pointer: str) -> None:
    with pytest.raises(GrammarError) as exc:
        compiled(schema)
    assert exc.value.code == code
    assert pointer in str(exc.value)


def test_lenient_ignores_with_a_warning() -> None:
    c = compiled({"type": "array", "uniqueItems": True}, lenient=True)
    assert any("uniqueItems" in n for n in c.notes)
    assert accepts(c, "[1, 1]")


def test_schema_inputs() -> None:
    assert load_schema('{"type": "integer"}') == {"type": "integer"}
    with pytest.raises(GrammarError) as exc:
        load_schema('{"type": }')
    assert exc.value.line == 1 and exc.value.column == 10
    with pytest.raises(ValueError):
        JsonSchemaOptions(whitespace="tabs")


def test_deep_schema_within_limits() -> None:
    schema: dict = {"type": "integer"}
    for _ in range(1000):
        schema = {"type": "array", "items": schema}
    grammar, _ = schema_to_grammar(schema)
    assert len(grammar.rules) == 1001
    with pytest.raises(GrammarError) as exc:
        schema_to_grammar(schema, limits=Limits(max_schema_depth=100))
    assert exc.value.code == "budget" and "max_schema_depth" in str(exc.value)


def test_support_matrix_matches_the_frontend() -> None:

    from grammask.compiler.frontends.json_schema.constraints import HANDLED, UNSUPPORTED

    matrix = json.loads((SPECS / "json_schema_support.json")
                        .read_text(encoding="utf-8"))["keywords"]
    assert HANDLED | set(UNSUPPORTED) <= set(matrix)
    for keyword, entry in matrix.items():
        assert (entry["status"] == "unsupported") == (keyword in UNSUPPORTED), keyword
        if entry["status"] == "unsupported":
            value = UNSUPPORTED_EXAMPLES.get(keyword, {"type": "integer"})
            with pytest.raises(GrammarError) as exc:
                compiled({keyword: value, "then": {}, "contains": {},
                          "$schema": UNSUPPORTED_DIALECTS.get(keyword, DRAFT_2020_12)})
            assert exc.value.code == "unsupported-keyword", keyword
            assert f"/{keyword}" in str(exc.value)


# A valid instance each subset entry of the matrix rejects, beside ones it accepts: the
# exponent spellings of numbers, and object values in another key order.
SUBSET_EXAMPLES = {
    "type": ({"type": "integer"}, ["100", "100.0"], ["1e2"]),
    "enum": ({"enum": [1, "a"]}, ["1", "1.0", "1.00", '"\\u0061"'], ["1e0", "10e-1"]),
    "const": ({"const": {"a": 1, "b": 2}}, ['{"a": 1.0, "b": 2}'], ['{"b": 2, "a": 1}']),
    "not": ({"not": {"const": 10}}, ["11", "1.5", '"x"'], ["2e1", "1.5e0"]),
    "oneOf": ({"oneOf": [{"type": "number"}, {"type": "integer"}]}, ["1.5"], ["1.5e0"]),
    "if": ({"if": {"type": "integer"}, "then": {}, "else": {}}, ["1.5", "1", '"x"'],
           ["1.5e0", "1e2"]),
}


@pytest.mark.parametrize("keyword", sorted(SUBSET_EXAMPLES))
def test_support_matrix_subsets_reject_what_the_notes_say(keyword: str) -> None:

    matrix = json.loads((SPECS / "json_schema_support.json")
                        .read_text(encoding="utf-8"))["keywords"]
    assert matrix[keyword]["status"] == "subset", keyword
    schema, accepted, valid_but_rejected = SUBSET_EXAMPLES[keyword]
    c = compiled(schema)
    for text in accepted:
        assert accepts(c, text), text
    for text in valid_but_rejected:
        assert not accepts(c, text), text


UNSUPPORTED_EXAMPLES = {
    "uniqueItems": True, "$dynamicRef": "#x", "$recursiveRef": "#",
}
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
UNSUPPORTED_DIALECTS = {"$recursiveRef": "https://json-schema.org/draft/2019-09/schema"}
"""The draft of each unsupported keyword's example, where 2020-12 has no such keyword."""


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
     "additionalProperties": {"type": "integer"}},
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
     "required": ["b"], "patternProperties": {"^x": {"type": "number"}},
     "additionalProperties": {"type": "null"}},
    {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "integer"}},
                                "additionalProperties": {"type": "number"}}},
])
def test_members_and_elements_are_built_once(schema: object, monkeypatch) -> None:
    """Each member or element has one copy in the NFA, whether it comes first or after a
    separator: the subset construction of the whole value then meets no two equivalent
    states (the smaller automata before it are the names' patterns; the value's whitespace
    gaps are counted loops, `counted.py`, so its minimization is the labelled one there). The
    schemas avoid `true | false` and members whose futures coincide, which minimization
    merges too."""
    import grammask.compiler.automata.counted as counted
    import grammask.compiler.automata.build as build
    from grammask.compiler.automata.dfa import trim

    sizes: list[tuple[int, int]] = []
    subset_table, minimize_table = build.subset_table, build.minimize_table
    subset_sets, quotient = counted.subset_sets, counted.quotient

    def counted_subset_table(nfa, classes, *args: object):  # type: ignore[no-untyped-def]
        transitions, accepting = subset_table(nfa, classes, *args)
        sizes.append((trim(classes, transitions, accepting, 0, compact=False).n_states, -1))
        return transitions, accepting

    def counted_minimize(*args: object):  # type: ignore[no-untyped-def]
        small = minimize_table(*args)
        sizes[-1] = (sizes[-1][0], small.n_states)
        return small

    def counted_subset(*args: object):  # type: ignore[no-untyped-def]
        built = subset_sets(*args)
        sizes.append((len(built[1]), -1))
        return built

    def counted_quotient(*args: object):  # type: ignore[no-untyped-def]
        table, acc, rep = quotient(*args)
        sizes[-1] = (sizes[-1][0], len(acc))
        return table, acc, rep

    monkeypatch.setattr(build, "subset_table", counted_subset_table)
    monkeypatch.setattr(build, "minimize_table", counted_minimize)
    monkeypatch.setattr(counted, "subset_sets", counted_subset)
    monkeypatch.setattr(counted, "quotient", counted_quotient)
    clear_caches()
    assert compiled(schema).dfa is not None
    built, minimal = sizes[-1]
    assert built == minimal, sizes


@pytest.mark.parametrize("schema, pointer", [
    ({"maxProperties": 100_000}, "/maxProperties"),
    ({"type": "object", "minProperties": 20_000}, "/minProperties"),
    ({"type": "array", "minItems": 20_000}, "/minItems"),
    ({"properties": {"a": {"type": "array", "maxItems": 100_000}}}, "/properties/a/maxItems"),
    ({"type": "array", "maxItems": 10, "allOf": [{"maxItems": 100_000}]}, None),
    ({"properties": {"a": {}}, "additionalProperties": False, "maxProperties": 100_000}, None),
])
def test_counts_past_max_repeat_name_their_keyword(schema: dict, pointer: str | None) -> None:
    """A count spelled out as a repetition past `Limits.max_repeat` is refused at its keyword;
    one that a tighter bound or a closed object makes moot compiles."""
    if pointer is None:
        compiled(schema)
        return
    with pytest.raises(GrammarError) as info:
        compiled(schema)
    assert info.value.code == "budget" and info.value.pointer == pointer
    assert "max_repeat" in info.value.message


def test_a_cached_string_leaf_never_refers_to_another_schemas_rules() -> None:
    """A long string reuses its document's chunk rules; its body is not shared with the next
    schema, whose grammar has no such rules (it once failed there with `undefined-rule`)."""
    clear_caches()
    long = {"type": "string", "minLength": 1, "maxLength": 1024}
    compiled({"properties": {"a": dict(long), "b": dict(long)}})
    compiled({"properties": {"c": dict(long)}})
    compiled(dict(long))
