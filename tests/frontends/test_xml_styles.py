"""XML argument styles of structural tags against a plain-Python reference
(`tests/support/xml_reference.py`: each model's rendering, and a reader checked by
`jsonschema`). Completeness: random instances rendered as the model writes them are accepted
under random tokenizations. Soundness: guided random walks end only in texts the reader gives a
valid instance for. Near misses: rejected by both."""
from __future__ import annotations

import random
from typing import Any

import pytest

from grammask.compiler import (
    BudgetExceeded,
    GrammarError,
    Limits,
    compile_structural_tag,
    compile_tool_calls,
)
from grammask.runtime import Matcher, Vocabulary
from tests.support.masks import guided_walk, random_tokenization
from tests.support.xml_reference import accepts, render

STYLES = ["qwen_xml", "minimax_xml", "glm_xml", "deepseek_xml", "deepseek_v4_1_xml",
          "kimi_k3_xml", "cohere_xml"]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "unit": {"enum": ["c", "f"]},
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "note": {"type": ["string", "null"]},
        "tags": {"type": "array", "items": {"$ref": "#/$defs/tag"}, "maxItems": 2},
        "cfg": {"type": "object", "properties": {"mode": {"enum": ["fast", "slow"]},
                                                 "on": {"type": "boolean"}},
                "required": ["mode"]},
    },
    "required": ["city"],
    "$defs": {"tag": {"type": "string", "maxLength": 3}},
}

ALPHABET = "ab Z<>/\n é="


def _instance(rng: random.Random) -> dict[str, Any]:
    """A random instance of SCHEMA, its properties in the schema's order."""
    def text(n: int) -> str:
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, n)))

    out: dict[str, Any] = {"city": text(8)}
    if rng.random() < 0.5:
        out["days"] = rng.randint(1, 14)
    if rng.random() < 0.5:
        out["unit"] = rng.choice("cf")
    if rng.random() < 0.5:
        out["code"] = "".join(rng.choice("ABCXYZ") for _ in range(3))
    if rng.random() < 0.5:
        out["note"] = rng.choice([None, text(5)])
    if rng.random() < 0.5:
        out["tags"] = [text(3) for _ in range(rng.randint(0, 2))]
    if rng.random() < 0.5:
        cfg: dict[str, Any] = {"mode": rng.choice(["fast", "slow"])}
        if rng.random() < 0.5:
            cfg["on"] = rng.random() < 0.5
        out["cfg"] = cfg
    return out


def _vocabulary() -> Vocabulary:
    pieces = ["<parameter=", "</parameter>", "<arg_key>", "</arg_key>", "<arg_value>",
              "</arg_value>", "<｜DSML｜parameter name=\"", "</｜DSML｜parameter>",
              "<|open|>", "<|close|>", "<|sep|>", "argument", ' type="', "<cofl:value",
              "</cofl:value>", '">', "city", "true", "false", "null"]
    tokens: list[bytes | None] = [bytes([b]) for b in range(256)]
    tokens += [p.encode() for p in pieces]
    tokens.append(b"</s>")
    return Vocabulary.from_token_bytes(tokens, len(tokens) - 1)


VOCAB = _vocabulary()


def _compile(style: str, schema: Any = SCHEMA, vocab: Vocabulary = VOCAB,  # type: ignore[no-untyped-def]
             any_order: bool = False):
    return compile_structural_tag({"type": "structural_tag", "format": {
        "type": "json_schema", "json_schema": schema, "style": style,
        "any_order": any_order}}, vocab)


def _accepted(compiled, ids: list[int]) -> bool:  # type: ignore[no-untyped-def]
    m = Matcher(compiled)
    return all(m.accept_token(i) for i in ids) and m.can_terminate()


@pytest.mark.parametrize("style", STYLES)
def test_rendered_instances_are_accepted(style: str) -> None:
    compiled = _compile(style)
    rng = random.Random(style)
    for _ in range(40):
        text = render(style, _instance(rng))
        assert accepts(style, SCHEMA, text), ("the reference rejects a rendering", text)
        ids = random_tokenization(VOCAB, text.encode(), rng)
        assert _accepted(compiled, ids), text


@pytest.mark.parametrize("style", STYLES)
def test_random_walks_are_sound(style: str) -> None:
    compiled = _compile(style)
    rng = random.Random(style)
    ended = 0
    for _ in range(60):
        guide = random_tokenization(VOCAB, render(style, _instance(rng)).encode(), rng)
        text, done = guided_walk(compiled, VOCAB, guide, rng, 1000, follow=0.99)
        if done:
            ended += 1
            assert accepts(style, SCHEMA, text.decode()), text
    assert ended >= 10


def _misses(style: str) -> list[str]:
    good = {"city": "Oslo", "days": 3, "note": None}
    return [
        render(style, {"days": 3}),  # city is required
        render(style, {"days": 3, "city": "Oslo"}),  # declared order
        render(style, {"city": "Oslo", "days": 0}),  # minimum
        render(style, {"city": "Oslo", "days": "three"}),
        render(style, {"city": "Oslo", "unit": "k"}),
        render(style, {"city": "Oslo", "code": "ABCD"}),
        render(style, {"city": "Oslo", "tags": ["abcd"]}),
        render(style, {"city": "Oslo", "wind": 3}),
        render(style, {"city": "Oslo", "cfg": {"on": True}}),
        render(style, {"city": "Oslo", "city2": "x"}),
        render(style, good) + render(style, {"city": "Bergen"}),
    ]


@pytest.mark.parametrize("style", STYLES)
def test_near_misses_are_rejected(style: str) -> None:
    compiled = _compile(style)
    for text in _misses(style):
        assert not accepts(style, SCHEMA, text), ("the reference accepts a miss", text)
        assert not _accepted(compiled, VOCAB.encode(text)), text


def test_labels_are_pinned() -> None:
    """DeepSeek's string="true" only for raw text, Kimi-K3's type the value's, Cohere's kind
    the value's."""
    for style, good, bad in [
        ("deepseek_xml", '<｜DSML｜parameter name="city" string="true">3</｜DSML｜parameter>',
         '<｜DSML｜parameter name="city" string="false">3</｜DSML｜parameter>'),
        ("kimi_k3_xml", '<|open|>argument key="city" type="string"<|sep|>x<|close|>argument'
                        '<|sep|><|open|>argument key="days" type="number"<|sep|>3<|close|>'
                        'argument<|sep|>',
         '<|open|>argument key="city" type="string"<|sep|>x<|close|>argument<|sep|>'
         '<|open|>argument key="days" type="integer"<|sep|>3<|close|>argument<|sep|>'),
        ("cohere_xml", '<cofl:value name="city" type="raw">x</cofl:value>'
                       '<cofl:value name="note" type="json">null</cofl:value>',
         '<cofl:value name="city" type="raw">x</cofl:value>'
         '<cofl:value name="note" type="raw">null</cofl:value><cofl:value name="days" '
         'type="json">"3"</cofl:value>'),
    ]:
        compiled = _compile(style)
        assert accepts(style, SCHEMA, good) and _accepted(compiled, VOCAB.encode(good))
        assert not _accepted(compiled, VOCAB.encode(bad)), bad


def test_markers_that_are_control_tokens_are_matched_as_tokens() -> None:
    """In a vocabulary where Kimi-K3's `<|open|>`, `<|close|>`, `<|sep|>` are control tokens,
    the style's markers are those tokens (text cannot spell them)."""
    tokens: list[bytes | None] = [bytes([b]) for b in range(256)]
    marks = [b"<|open|>", b"<|close|>", b"<|sep|>"]
    tokens += [*marks, b"</s>"]
    vocab = Vocabulary.from_token_bytes(tokens, 259, special_token_ids=[256, 257, 258, 259])
    compiled = _compile("kimi_k3_xml", {"type": "object", "properties": {
        "q": {"type": "string"}}, "required": ["q"]}, vocab)
    o, c, s = 256, 257, 258
    ids = [o, *vocab.encode('argument key="q" type="string"'), s, *vocab.encode("x"), c,
           *vocab.encode("argument"), s]
    assert _accepted(compiled, ids)
    assert not _accepted(compiled, vocab.encode('<|open|>argument key="q" type="string"'
                                                '<|sep|>x<|close|>argument<|sep|>'))


@pytest.mark.parametrize("schema,pointer", [
    ({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True},
     "/format/json_schema/additionalProperties"),
    ({"anyOf": [{"type": "object"}]}, "/format/json_schema/anyOf"),
    ({"type": "object", "properties": {"a": {"anyOf": [{"type": "string"},
                                                       {"type": "string"}]}}},
     "/format/json_schema/properties/a/anyOf"),
    ({"type": "object", "properties": {"a": {"type": "string", "not": {"const": "x"}}}},
     "/format/json_schema/properties/a/not"),
    ({"type": "object", "properties": {"a": {"$ref": "http://x/y"}}},
     "/format/json_schema/properties/a/$ref"),
])
def test_xml_style_errors(schema: dict, pointer: str) -> None:
    with pytest.raises(GrammarError) as info:
        _compile("qwen_xml", schema)
    assert info.value.pointer == pointer and info.value.code == "unsupported-structural-tag"


def test_typed_styles_need_a_type() -> None:
    with pytest.raises(GrammarError) as info:
        _compile("kimi_k3_xml", {"type": "object", "properties": {"a": {"minimum": 3}}})
    assert info.value.pointer == "/format/json_schema/properties/a"
    assert "give this property a 'type'" in info.value.message


@pytest.mark.parametrize("fmt", ["deepseek_v3_2", "deepseek_v4", "deepseek_v4_1", "minimax",
                                 "cohere", "kimi_k3", "mimo"])
def test_tool_call_formats_with_xml_styles(fmt: str) -> None:
    """Each format's call holds its style's arguments; an error names the tool's pointer."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": SCHEMA}}]
    compile_tool_calls(tools, VOCAB, format=fmt, tool_choice="required")
    bad = [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"a": {"type": "string", "minLength": -1}}}}}]
    with pytest.raises(GrammarError) as info:
        compile_tool_calls(bad, VOCAB, format=fmt)
    assert info.value.pointer.startswith("/tools/0/function/parameters/properties/a")


def test_excluded_texts() -> None:
    """`excludes` on a json_schema item: no string without pattern or format, and no key,
    contains an excluded text as written; raw XML strings likewise."""
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "n": {"type": "integer"},
                                               "p": {"type": "string", "pattern": "^<.>$"}},
              "required": ["a"]}

    def compiled(style: str):  # type: ignore[no-untyped-def]
        return compile_structural_tag({"type": "structural_tag", "format": {
            "type": "json_schema", "json_schema": schema, "style": style,
            "excludes": ["<|", "STOP"]}}, VOCAB)

    json_item = compiled("json")
    assert _accepted(json_item, VOCAB.encode('{"a": "x<y|"}'))
    assert not _accepted(json_item, VOCAB.encode('{"a": "x<|y"}'))
    assert not _accepted(json_item, VOCAB.encode('{"a": "STOP"}'))
    assert _accepted(json_item, VOCAB.encode('{"a": "\\u003c|"}'))  # as written, not decoded
    assert _accepted(json_item, VOCAB.encode('{"a": "", "p": "<|>"}'))  # a pattern binds instead
    qwen = compiled("qwen_xml")
    assert _accepted(qwen, VOCAB.encode("<parameter=a>ok</parameter>"))
    assert not _accepted(qwen, VOCAB.encode("<parameter=a>a STOP b</parameter>"))
    with pytest.raises(GrammarError) as info:
        compile_structural_tag({"type": "structural_tag", "format": {
            "type": "json_schema", "json_schema": schema, "excludes": [""]}}, VOCAB)
    assert info.value.pointer == "/format/excludes"


def test_xgrammar_item_forms() -> None:
    """XGrammar's `grammar` item in Lark syntax and its deprecated `qwen_xml_parameter`."""
    lark = compile_structural_tag({"type": "structural_tag", "format": {
        "type": "grammar", "syntax": "lark", "grammar": 'start: "a"{2} B\nB: /[0-9]+/'}}, VOCAB)
    assert _accepted(lark, VOCAB.encode("aa12")) and not _accepted(lark, VOCAB.encode("a1"))
    qwen = compile_structural_tag({"type": "structural_tag", "format": {
        "type": "qwen_xml_parameter", "json_schema": SCHEMA}}, VOCAB)
    text = render("qwen_xml", {"city": "Oslo", "days": 3})
    assert _accepted(qwen, VOCAB.encode(text))
    with pytest.raises(GrammarError) as info:
        compile_structural_tag({"type": "structural_tag", "format": {
            "type": "grammar", "syntax": "yacc", "grammar": "x"}}, VOCAB)
    assert info.value.pointer == "/format/syntax"


@pytest.mark.parametrize("inner", [
    {"type": "object", "properties": {"y": {"$ref": "#/$defs/x"}}},
    {"type": "array", "items": {"$ref": "#/$defs/x"}},
    {"anyOf": [{"type": "object", "properties": {"y": {"$ref": "#/$defs/x"}}},
               {"type": "string"}]},
    {"anyOf": [{"$ref": "#/$defs/x"}, {"type": "string"}]},
    {"$ref": "#/$defs/x"},
])
def test_recursive_schemas_are_refused_in_nested_styles(inner: dict) -> None:
    """Cohere's nested values are built inline: a schema inside itself is an error at its
    place, never a hang; a reference used twice side by side is fine."""
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}},
              "$defs": {"x": inner}}
    with pytest.raises(GrammarError) as info:
        _compile("cohere_xml", schema)
    assert info.value.code == "unsupported-structural-tag"
    assert info.value.pointer.startswith("/format/json_schema/properties/a")
    twice = {"type": "object", "properties": {"a": {"$ref": "#/$defs/t"},
                                              "b": {"$ref": "#/$defs/t"}},
             "$defs": {"t": {"type": "object", "properties": {"z": {"type": "string"}}}}}
    _compile("cohere_xml", twice)


@pytest.mark.parametrize("style", STYLES)
def test_any_order(style: str) -> None:
    """`any_order`: the properties in every order, each at most once, every required one
    present (a state per subset of the seven properties, each a rule); walks are sound."""
    compiled = _compile(style, any_order=True)
    rng = random.Random(style)
    for _ in range(30):
        items = list(_instance(rng).items())
        rng.shuffle(items)
        text = render(style, dict(items))
        assert accepts(style, SCHEMA, text, any_order=True), text
        assert _accepted(compiled, random_tokenization(VOCAB, text.encode(), rng)), text
    for text in (render(style, {"days": 3}), render(style, {"days": 3, "city": "a"})
                 + render(style, {"days": 4}), render(style, {"wind": 1, "city": "a"})):
        assert not accepts(style, SCHEMA, text, any_order=True), text
        assert not _accepted(compiled, VOCAB.encode(text)), text
    ended = 0
    for _ in range(30):
        items = list(_instance(rng).items())
        rng.shuffle(items)
        guide = random_tokenization(VOCAB, render(style, dict(items)).encode(), rng)
        text, done = guided_walk(compiled, VOCAB, guide, rng, 1000, follow=0.99)
        if done:
            ended += 1
            assert accepts(style, SCHEMA, text.decode(), any_order=True), text
    assert ended >= 5


def test_any_order_is_bounded() -> None:
    """Past `max_unordered_properties` listed properties, an error names the bound."""
    schema = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(5)}}
    spec = {"type": "structural_tag", "format": {"type": "json_schema", "json_schema": schema,
                                                 "style": "qwen_xml", "any_order": True}}
    with pytest.raises(BudgetExceeded) as info:
        compile_structural_tag(spec, VOCAB, limits=Limits(max_unordered_properties=4))
    assert info.value.limit == "max_unordered_properties" and info.value.pointer == \
        "/format/json_schema"
    compiled = compile_structural_tag(spec, VOCAB)
    text = render("qwen_xml", {"p3": 1, "p0": 2})
    assert _accepted(compiled, VOCAB.encode(text))
