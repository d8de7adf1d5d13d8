"""The `minimax_m3_xml` argument style (MiniMax-M3's namespaced, nested XML), against a
schema-guided reader checked by `jsonschema` (`tests/support/m3_reference.py`): rendered
instances are accepted on random tokenizations, near misses rejected (whitespace alone for an
empty object, a namespace inside a raw string, order, repeats), constrained walks end in
instances, in schema order and in any order; what the style cannot say is an error naming it.
"""
from __future__ import annotations

import random
from typing import Any

import pytest

from grammask.compiler import GrammarError, compile_structural_tag
from grammask.runtime import Matcher, Vocabulary
from tests.support.m3_reference import NS, accepts, render
from tests.support.masks import guided_walk, random_tokenization

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "count": {"type": "integer"},
        "unit": {"enum": ["c", "f k"]},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        "spot": {"type": "object", "properties": {"x": {"type": "number"},
                                                  "on": {"type": "boolean"}},
                 "required": ["x"]},
        "rows": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}},
                 "maxItems": 2},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
    "required": ["name"],
}


def _vocabulary() -> Vocabulary:
    tokens: list[bytes | None] = [bytes([b]) for b in range(256)]
    tokens += [p.encode() for p in (NS, NS + "<", NS + "</", "item>", "name>", "null")]
    tokens.append(b"</s>")
    return Vocabulary.from_token_bytes(tokens, len(tokens) - 1)


VOCAB = _vocabulary()


def _compile(schema: Any = SCHEMA, any_order: bool = False, **more: Any):  # type: ignore[no-untyped-def]
    return compile_structural_tag({"type": "structural_tag", "format": {
        "type": "json_schema", "json_schema": schema, "style": "minimax_m3_xml",
        "any_order": any_order, **more}}, VOCAB)


def _instance(rng: random.Random) -> dict[str, Any]:
    def text() -> str:
        return "".join(rng.choice("ab <>/\n]é") for _ in range(rng.randint(0, 6)))

    out: dict[str, Any] = {"name": text()}
    for key, make in (("count", lambda: rng.randint(-5, 99)), ("unit", lambda: rng.choice(
            ["c", "f k"])), ("tags", lambda: [text() for _ in range(rng.randint(0, 2))]),
            ("spot", lambda: {"x": rng.choice([1.5, -2, 0]), **(
                {"on": rng.random() < 0.5} if rng.random() < 0.5 else {})}),
            ("rows", lambda: [[rng.randint(0, 9) for _ in range(rng.randint(0, 2))]
                              for _ in range(rng.randint(0, 2))]),
            ("note", lambda: rng.choice([None, text()]))):
        if rng.random() < 0.5:
            out[key] = make()
    return out


def _accepted(compiled, text: str, rng: random.Random) -> bool:  # type: ignore[no-untyped-def]
    m = Matcher(compiled)
    return all(m.accept_token(t) for t in random_tokenization(VOCAB, text.encode(), rng)) \
        and m.can_terminate()


@pytest.mark.parametrize("any_order", [False, True])
def test_rendered_instances_and_walks(any_order: bool) -> None:
    compiled = _compile(any_order=any_order)
    rng = random.Random(int(any_order))
    for _ in range(40):
        items = list(_instance(rng).items())
        if any_order:
            rng.shuffle(items)
        text = render(dict(items), rng.choice(["", " ", "\n"]))
        assert accepts(SCHEMA, text, any_order), ("the reference rejects a rendering", text)
        assert _accepted(compiled, text, rng), text
    ended = 0
    for _ in range(40):
        guide = random_tokenization(VOCAB, render(_instance(rng)).encode(), rng)
        text, done = guided_walk(compiled, VOCAB, guide, rng, 600, follow=0.97)
        if done:
            ended += 1
            assert accepts(SCHEMA, text.decode(), any_order), text
    assert ended >= 10


@pytest.mark.parametrize("text", [
    " ",                                                 # whitespace alone is no object
    render({"count": 3}),                                # name is required
    render({"count": 3, "name": "a"}),                   # schema order
    render({"name": "a"}) + render({"name": "b"}),       # a property twice
    render({"name": f"a{NS}b"}),                         # the namespace inside a raw string
    render({"name": "a", "unit": "f"}),                  # not an enum member
    render({"name": "a", "count": " 3"}),                # whitespace around a number
    render({"name": "a", "spot": {}}),                   # x is required
    render({"name": "a", "tags": ["x", "y", "z"]}),      # maxItems
    render({"name": "a", "wind": 3}),                    # not a listed property
    f"{NS}<name>a{NS}</name> {NS}<tags> {NS}</tags>",    # an empty array is nothing at all
])
def test_near_misses(text: str) -> None:
    assert not accepts(SCHEMA, text), ("the reference accepts a miss", text)
    assert not _accepted(_compile(), text, random.Random(0)), text


def test_empty_containers_are_nothing() -> None:
    compiled = _compile({"type": "object", "properties": {"a": {"type": "integer"}}})
    assert _accepted(compiled, "", random.Random(0))
    assert _accepted(compiled, f" {NS}<a>1{NS}</a> ", random.Random(0))
    assert not _accepted(compiled, "\n", random.Random(0))


@pytest.mark.parametrize("schema, more, pointer", [
    ({"type": "object", "properties": {"a": {}}}, {}, "/format/json_schema/properties/a"),
    ({"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}}, {},
     "/format/json_schema/properties/a/maxLength"),
    ({"type": "object", "properties": {"a": {"type": "object"}}}, {},
     "/format/json_schema/properties/a"),
    ({"type": "object", "properties": {"a": {"enum": [f"x{NS}"]}}}, {},
     "/format/json_schema/properties/a"),
    ({"type": "object", "properties": {"a": {"type": "string"}}}, {"excludes": ["zz"]},
     "/format/json_schema"),
])
def test_what_the_style_cannot_say(schema: dict, more: dict, pointer: str) -> None:
    with pytest.raises(GrammarError) as info:
        _compile(schema, **more)
    assert info.value.code == "unsupported-structural-tag" and info.value.pointer == pointer


def test_the_gemma_style_is_refused() -> None:
    """XGrammar's `gemma` style (bare keys, `<|"|>` strings) is not read: an error at it."""
    with pytest.raises(GrammarError) as info:
        compile_structural_tag({"type": "structural_tag", "format": {
            "type": "json_schema", "json_schema": SCHEMA, "style": "gemma"}}, VOCAB)
    assert info.value.code == "unsupported-structural-tag"
    assert info.value.pointer == "/format/style"
