"""`property_order="any"`: an object's listed properties in every order, each at most once.

Exactness on small objects, by brute force: every sequence of keys (listed ones, an additional
one, repetitions) up to one more than the listed count, with `required`, `minProperties`,
`maxProperties`, `dependentRequired` and closed or open objects, is accepted exactly when
`jsonschema` finds the object valid and no key repeats (additional keys may repeat: documented,
and left out of the sequences). Properties over random schemas (`json_schema_strategies`) and
the vendored real ones: valid values with the keys of every object shuffled are accepted token
by token; random constrained walks end in values that validate, no listed key repeated
(`check_valid`). The bound (`Limits.max_unordered_properties`), the structural tag's
`any_order` and the CLI's default for `check`.
"""
from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from grammask.compiler import (
    BudgetExceeded,
    GrammarError,
    Limits,
    compile_json_schema,
    compile_structural_tag,
)
from grammask.runtime import Vocabulary

from ..support.budget import examples
from ..support.cli import run
from ..support.json_schema_oracle import documented_form, validator, without_exponents
from ..support.json_schema_strategies import schemas
from ..support.json_schema_suite import accepts, byte_vocabulary
from ..support.vocabularies import small_vocabulary
from .test_json_schema_invariants import (
    SLOW,
    candidates,
    check_accepted,
    check_valid,
    sample,
    sample_values,
    walk,
)

VALUES = {"integer": 7, "string": "s"}


def shuffled(value: Any, rng: random.Random) -> Any:
    """`value` with the keys of every object in a random order."""
    if isinstance(value, dict):
        items = [(k, shuffled(v, rng)) for k, v in value.items()]
        rng.shuffle(items)
        return dict(items)
    if isinstance(value, list):
        return [shuffled(v, rng) for v in value]
    return value


def listed_objects(schema: Any) -> bool:
    """Whether an `enum` or `const` of the schema lists an object (whose keys stay in their
    given order, `specs/json_schema.md`, also with `property_order="any"`)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            values = [node.get("const")] + (node["enum"] if isinstance(node.get("enum"), list)
                                            else [])
            inside = list(values)
            while inside:
                v = inside.pop()
                if isinstance(v, dict):
                    return True
                if isinstance(v, list):
                    inside.extend(v)
            stack.extend(v for k, v in node.items() if k not in ("enum", "const"))
    return False


def objects(schema: dict[str, Any], keys: list[str]) -> list[tuple[list[str], str]]:
    """Every sequence of `keys` (repetitions included) up to one longer than the listed
    properties, each as its key list and object text (values by the property's type)."""
    types = {k: s.get("type", "integer") for k, s in schema.get("properties", {}).items()}
    out = []
    for n in range(len(types) + 2):
        for seq in itertools.product(keys, repeat=n):
            text = "{" + ", ".join(f'"{k}": {json.dumps(VALUES[types.get(k, "integer")])}'
                                   for k in seq) + "}"
            out.append((list(seq), text))
    return out


SMALL = [
    {"properties": {"a": {"type": "integer"}, "b": {"type": "string"},
                    "c": {"type": "integer"}}, "required": ["a"]},
    {"properties": {"a": {"type": "integer"}, "b": {"type": "string"},
                    "c": {"type": "integer"}}, "required": ["a", "c"],
     "additionalProperties": False},
    {"properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
     "minProperties": 2, "maxProperties": 3},
    {"properties": {"a": {"type": "integer"}, "b": {"type": "string"},
                    "c": {"type": "integer"}}, "dependentRequired": {"b": ["c"]},
     "additionalProperties": False},
    # Past `INLINED_UP_TO` listed properties: a rule per state.
    {"properties": {k: {"type": "integer"} for k in "abcde"}, "required": ["e", "b"],
     "additionalProperties": False},
    {"properties": {k: {"type": "integer"} for k in "abcde"}, "required": ["c"],
     "minProperties": 3, "maxProperties": 4},
]


@pytest.mark.parametrize("schema", SMALL)
def test_small_objects_exactly(schema: dict[str, Any]) -> None:
    schema = {"type": "object", **schema}
    compiled = compile_json_schema(schema, byte_vocabulary(), property_order="any")
    check = validator(schema)
    listed = list(schema["properties"])
    closed = schema.get("additionalProperties") is False
    keys = listed if closed or len(listed) > 3 else [*listed, "x"]
    for seq, text in objects(schema, keys):
        if seq.count("x") > 1:
            continue  # additional keys may repeat (documented)
        valid = len(set(seq)) == len(seq) and check.is_valid(json.loads(text))
        assert accepts(compiled, text) == valid, (text, valid)


def test_schema_order_refuses_other_orders() -> None:
    schema = {"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
    text = '{"b": 1, "a": 2}'
    assert not accepts(compile_json_schema(schema, byte_vocabulary()), text)
    assert accepts(compile_json_schema(schema, byte_vocabulary(), property_order="any"), text)


@given(schema=schemas(), data=st.data(), rng=st.randoms(use_true_random=True))
@settings(max_examples=examples(60), suppress_health_check=SLOW)
def test_random_schemas_any_order(schema: Any, data: st.DataObject, rng: random.Random) -> None:
    """Valid values, keys shuffled (but where an enum or const lists objects), are accepted;
    finished walks validate."""
    vocab = small_vocabulary()
    check = validator(schema)
    values = candidates(schema, data)
    try:
        compiled = compile_json_schema(schema, vocab, property_order="any")
    except GrammarError as exc:
        event(f"compile error: {exc.code}")
        assert exc.code != "empty-language" or not any(map(check.is_valid, values))
        return
    for value in values:
        arranged = documented_form(check, value)
        if arranged is not None:
            check_accepted(compiled, vocab, arranged if listed_objects(schema)
                           else shuffled(arranged, rng), rng)
    for _ in range(3):
        text = walk(compiled, vocab, rng, 80)
        event("walk capped" if text is None else "walk ended")
        if text is not None and not check_valid(schema, text):
            event("walk repeated an additional key")


SAMPLE_IDS = sorted(sample())


@pytest.mark.parametrize("schema_id", SAMPLE_IDS)
def test_sample_any_order(schema_id: str) -> None:
    """Real schemas: shuffled valid values are accepted and walks validate (an object with
    more listed properties than the bound is an error that names it)."""
    schema = sample()[schema_id]
    try:
        compiled = compile_json_schema(schema, Vocabulary.default(), property_order="any")
    except BudgetExceeded as exc:
        assert exc.limit == "max_unordered_properties", exc
        return
    check = validator(schema)

    @given(data=st.data(), rng=st.randoms(use_true_random=True))
    @settings(max_examples=examples(2), suppress_health_check=SLOW)
    def shuffled_values_and_walks(data: st.DataObject, rng: random.Random) -> None:
        value = documented_form(check, without_exponents(data.draw(sample_values(schema_id))))
        assume(value is not None and len(json.dumps(value)) <= 1500)
        check_accepted(compiled, Vocabulary.default(), shuffled(value, rng), rng)
        text = walk(compiled, Vocabulary.default(), rng, 48)
        if text is not None:
            check_valid(schema, text)

    shuffled_values_and_walks()


def test_bound_is_an_error_naming_it() -> None:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(5)}}
    with pytest.raises(BudgetExceeded) as info:
        compile_json_schema(schema, byte_vocabulary(), property_order="any",
                            limits=Limits(max_unordered_properties=4))
    assert info.value.limit == "max_unordered_properties" and info.value.measured == 5
    assert info.value.pointer == "" and "any order" in str(info.value)
    # Schema order has no such bound.
    compile_json_schema(schema, byte_vocabulary(), limits=Limits(max_unordered_properties=4))


def test_a_long_count_of_extra_members_recurses_no_deeper() -> None:
    """Counting members up to `minProperties` builds a chain of states as long as the count;
    it once recursed as deep (RecursionError at 1,000). Past the DFA budget it is that
    budget's error; the count is exact."""
    for schema in ({"type": "object", "minProperties": 1500},
                   {"type": "object", "properties": {"a": {}}, "minProperties": 1500}):
        with pytest.raises(BudgetExceeded):
            compile_json_schema(schema, byte_vocabulary(), property_order="any")
    g = compile_json_schema({"type": "object", "properties": {"a": {}}, "minProperties": 40},
                            byte_vocabulary(), property_order="any")
    text = "{" + ",".join(f'"k{i}": 1' for i in range(40)) + "}"
    assert accepts(g, text) and not accepts(g, text.replace('"k7": 1,', ""))


def test_bad_property_order() -> None:
    with pytest.raises(ValueError, match="property_order"):
        compile_json_schema({}, byte_vocabulary(), property_order="sorted")


def test_structural_tag_any_order() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"},
                                               "b": {"type": "string"}}, "required": ["a"]}
    spec = {"type": "structural_tag",
            "format": {"type": "json_schema", "json_schema": schema, "any_order": True}}
    compiled = compile_structural_tag(spec, byte_vocabulary())
    assert accepts(compiled, '{"b": "x", "a": 1}') and accepts(compiled, '{"a": 1}')
    assert not accepts(compiled, '{"b": "x"}') and not accepts(compiled, '{"a": 1, "a": 1}')
    spec["format"]["style"] = "qwen_xml"  # tests/frontends/test_xml_styles.py: every style
    compiled = compile_structural_tag(spec, byte_vocabulary())
    assert accepts(compiled, "<parameter=b>x</parameter><parameter=a>1</parameter>")
    assert not accepts(compiled, "<parameter=b>x</parameter>")


def test_cli_check_reads_any_order(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"properties": {"a": {"type": "integer"},
                                               "b": {"type": "integer"}}}))
    text = '{"b": 1, "a": 2}'
    assert run(capsys, "check", str(path), "--text", text)[0] == 0
    code, out, _ = run(capsys, "check", str(path), "--property-order", "schema", "--text", text)
    assert code == 1 and "no-match" in out
    assert run(capsys, "check", str(path), "--text", '{"a": 1, "a": 2}')[0] == 1
    code, _, err = run(capsys, "check", "--regex", "a", "--property-order", "any", "--text", "a")
    assert code == 2 and "--property-order" in err


def test_cli_check_falls_back_past_the_bound(tmp_path: Any,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Past the bound, `check` (any order by default) reads the schema in schema order with a
    warning that names the bound; asked for any order, it is the error."""
    path = tmp_path / "s.json"
    listed = {f"p{i}": {"type": "integer"} for i in range(5)}
    path.write_text(json.dumps({"properties": {"inner": {"properties": listed}}}))
    bound = ["--limit", "max_unordered_properties=4"]
    code, out, err = run(capsys, "check", str(path), *bound, "--text", '{"inner": {"p0": 1}}')
    assert code == 0 and "warning" in err and "max_unordered_properties=4" in err
    assert "/properties/inner" in err and "schema order" in err
    code, _, _ = run(capsys, "check", str(path), *bound, "--text", '{"inner": {"p1": 1, "p0": 2}}')
    assert code == 1
    code, _, err = run(capsys, "check", str(path), *bound, "--property-order", "any",
                       "--text", "{}")
    assert code == 2 and "error" in err and "[budget]" in err
