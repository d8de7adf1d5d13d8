"""Structural tags: the compiled language equals the plain-Python reference's, token by token.

Soundness: random constrained walks end only in texts the reference accepts. Completeness: the
texts the reference accepts are accepted under the usual tokenization, random tokenizations and
with added tokens (`<tool_call>` as one token and as pieces). Errors name the spec's pointer.
"""
from __future__ import annotations

import json
import random

import pytest

from grammask.compiler import GrammarError, compile_structural_tag
from grammask.runtime import Matcher, Vocabulary
from tests.support.masks import guided_walk, mask_of, random_tokenization
from tests.support.structural_reference import Reference

WEATHER = {"type": "object", "properties": {"city": {"type": "string"},
                                            "days": {"type": "integer"}},
           "required": ["city"]}
TIME = {"type": "object", "properties": {"zone": {"enum": ["utc", "local"]}},
        "required": ["zone"]}


def _call(name: str, schema: dict) -> dict:
    return {"type": "tag", "begin": f'<tool_call>\n{{"name": "{name}", "arguments": ',
            "content": {"type": "json_schema", "json_schema": schema},
            "end": "}\n</tool_call>"}


def _spec(fmt: dict) -> dict:
    return {"type": "structural_tag", "format": fmt}


QWEN = _spec({"type": "sequence", "elements": [
    {"type": "tag", "begin": "", "content": {"type": "any_text"}, "end": "</think>"},
    {"type": "const_string", "value": "\n\n"},
    {"type": "triggered_tags", "triggers": ["<tool_call>"],
     "tags": [_call("get_weather", WEATHER), _call("get_time", TIME)],
     "excludes": ["<think>", "</think>"]}]})

CASES: list[tuple[str, dict, list[str], list[str]]] = [
    ("qwen", QWEN, [
        "Hmm.</think>\n\nSure.",
        "</think>\n\n",
        'x</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        '</tool_call>',
        'a</think>\n\nLet me see <tool_call>\n{"name": "get_time", "arguments": {"zone": '
        '"utc"}}\n</tool_call>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": '
        '"Oslo", "days": 3}}\n</tool_call> ok',
    ], [
        "no think end",
        "a</think>b</think>\n\n",
        "a</think>\n\n</think>",
        'a</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"town": "x"}}\n'
        '</tool_call>',
        'a</think>\n\n<tool_call>\n{"name": "nope", "arguments": {}}\n</tool_call>',
        "a</think>\n\n<tool_call> just text",
        'a</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"days": 1, '
        '"city": "x"}}\n</tool_call>',
    ]),
    ("required-once", _spec({"type": "triggered_tags", "triggers": ["<tool_call>"],
                             "tags": [_call("get_time", TIME)], "at_least_one": True,
                             "stop_after_first": True}), [
        '<tool_call>\n{"name": "get_time", "arguments": {"zone": "local"}}\n</tool_call>',
    ], [
        "", "text", 'x<tool_call>\n{"name": "get_time", "arguments": {"zone": "local"}}\n'
        '</tool_call>',
        '<tool_call>\n{"name": "get_time", "arguments": {"zone": "local"}}\n</tool_call>x',
    ]),
    ("at-least-one-loop", _spec({"type": "triggered_tags", "triggers": ["<f="],
                                 "tags": [{"begin": "<f=a>", "content": {"type": "any_text"},
                                           "end": "</f>"}], "at_least_one": True}),
     ["<f=a></f>", "<f=a>x</f> text <f=a>y</f>z"],
     ["", "x<f=a></f>", "<f=a>x</f>y<f=a>", "<f=b></f>", "<f=a></f> <f="]),
    ("separator", _spec({"type": "tags_with_separator", "separator": ",",
                         "tags": [{"type": "tag", "begin": "<a>",
                                   "content": {"type": "regex", "pattern": "[0-9]+"},
                                   "end": "</a>"},
                                  {"type": "tag", "begin": "<b>",
                                   "content": {"type": "const_string", "value": "x"},
                                   "end": ["</b>", "</B>"]}]}),
     ["", "<a>1</a>", "<a>12</a>,<b>x</b>,<b>x</B>"],
     ["<a></a>", "<a>1</a>,", ",<a>1</a>", "<a>1</a><b>x</b>"]),
    ("separator-one", _spec({"type": "tags_with_separator", "separator": ";",
                             "at_least_one": True, "stop_after_first": True,
                             "tags": [{"begin": "[", "content": {"type": "any_text"},
                                       "end": "]"}]}),
     ["[]", "[ab]"], ["", "[a][b]", "[a];[b]", "[a]]"]),
    ("composition", _spec({"type": "sequence", "elements": [
        {"type": "or", "elements": [{"type": "const_string", "value": "yes"},
                                    {"type": "const_string", "value": "no"}]},
        {"type": "optional", "content": {"type": "const_string", "value": "!"}},
        {"type": "repeat", "min": 1, "max": 3,
         "content": {"type": "regex", "pattern": "[a-c]"}},
        {"type": "star", "content": {"type": "const_string", "value": "."}},
        {"type": "plus", "content": {"type": "grammar",
                                     "grammar": 'root ::= "(" root? ")"'}}]}),
     ["yesa()", "no!abc..(())()"], ["yes()", "maybea()", "yesabcd()", "yesa", "yesa(()"]),
    ("any-text", _spec({"type": "any_text", "excludes": ["STOP", "🛑"], "max_chars": 5}),
     ["", "abc", "ST0P", "中文éa!"], ["STOP", "aSTOPb", "abcdef", "a🛑"]),
    ("dispatch", _spec({"type": "sequence", "elements": [
        {"type": "dispatch", "loop": False, "excludes": ["END"],
         "rules": [["#n:", {"type": "regex", "pattern": "[0-9]{2}"}]]},
        {"type": "const_string", "value": "END"}]}),
     ["END", "text END", "a #n:42END", "#n:42END"],
     ["a #n:4END", "#n:42 END", "#n:42 #n:11END", "x END END", "no end"]),
    ("self-overlapping-trigger", _spec({"type": "triggered_tags", "triggers": ["aa"],
                                        "tags": [{"begin": "aab", "content":
                                                  {"type": "const_string", "value": ""},
                                                  "end": "!"}]}),
     ["", "a", "b", "aab!", "baab!c", "ab"], ["aaab!", "aa", "baa"]),
    ("legacy", {"structures": [{"begin": "<fn=t>", "schema": TIME, "end": "</fn>"}],
                "triggers": ["<fn="]},
     ['<fn=t>{"zone": "utc"}</fn>', 'hi <fn=t>{"zone":"local"}</fn> bye', "plain"],
     ["<fn=x></fn>", '<fn=t>{"zone": "gmt"}</fn>']),
]

END_TOKENS = [b"<tool_call>", b"</tool_call>", b"<think>", b"</think>", b"</f>", b"<f=a>"]


def _vocabulary() -> Vocabulary:
    """Every byte, some pieces, added tokens spelling tags, EOS and a control token."""
    pieces = [b'{"', b'": ', b'"}', b"ci", b"ty", b"\n{", b"}\n", b"</", b"name", b"args",
              b"get_weather", b"get_time", b'"utc"', b"zone", *END_TOKENS]
    tokens: list[bytes | None] = [bytes([b]) for b in range(256)] + pieces
    eos = len(tokens)
    tokens += [b"<|endoftext|>", b"<|im_end|>"]
    return Vocabulary.from_token_bytes(tokens, eos, special_token_ids=[eos, eos + 1])


VOCAB = _vocabulary()


def _accepts(vocab: Vocabulary, compiled, ids: list[int]) -> bool:  # type: ignore[no-untyped-def]
    m = Matcher(compiled)
    return all(m.accept_token(i) for i in ids) and m.can_terminate()


@pytest.mark.parametrize("name,spec,good,bad", CASES, ids=[c[0] for c in CASES])
def test_language_equals_reference(name: str, spec: dict, good: list[str],
                                   bad: list[str]) -> None:
    ref = Reference(spec)
    compiled = compile_structural_tag(spec, VOCAB)
    rng = random.Random(name)
    for text in good:
        assert ref.matches(text), ("reference rejects a listed good text", text)
        for _ in range(3):
            ids = random_tokenization(VOCAB, text.encode(), rng)
            assert _accepts(VOCAB, compiled, ids), (text, ids)
    for text in bad:
        assert not ref.matches(text), ("reference accepts a listed bad text", text)
        assert not _accepts(VOCAB, compiled, random_tokenization(VOCAB, text.encode(), rng)), \
            text


@pytest.mark.parametrize("name,spec,good", [c[:3] for c in CASES], ids=[c[0] for c in CASES])
def test_random_walks_are_sound(name: str, spec: dict, good: list[str]) -> None:
    ref = Reference(spec)
    compiled = compile_structural_tag(json.dumps(spec), VOCAB)
    rng = random.Random(name)
    ended = 0
    for i in range(60):
        guide = random_tokenization(VOCAB, rng.choice(good).encode(), rng)
        text, done = guided_walk(compiled, VOCAB, guide, rng, 120)
        if done:
            ended += 1
            assert ref.matches(text.decode()), text
    assert ended >= 10


def test_control_tokens_never_allowed_in_free_text() -> None:
    compiled = compile_structural_tag(QWEN, VOCAB)
    m = Matcher(compiled)
    control = VOCAB.size - 1
    for piece in ("a", "b", "</think>", "\n\n", "x"):
        assert control not in mask_of(m)
        for tid in VOCAB.encode(piece):
            assert m.accept_token(tid)
    assert control not in mask_of(m)


def test_added_tokens_spell_tags_in_the_default_vocabulary() -> None:
    vocab = Vocabulary.default(eos_token_ids=[151643, 151645])
    compiled = compile_structural_tag(QWEN, vocab)
    text = ('Let me check.</think>\n\n<tool_call>\n{"name": "get_time", "arguments": '
            '{"zone": "utc"}}\n</tool_call>')
    as_pieces = vocab.encode(text)
    assert 151657 not in as_pieces
    assert _accepts(vocab, compiled, as_pieces)
    head, rest = text.split("</think>")
    call = rest.removeprefix("\n\n").removeprefix("<tool_call>").removesuffix("</tool_call>")
    with_added = [*vocab.encode(head), 151668, *vocab.encode("\n\n"), 151657,
                  *vocab.encode(call), 151658]
    assert _accepts(vocab, compiled, with_added)
    m = Matcher(compiled)
    assert {151667, 151668} <= mask_of(m) and 151645 not in mask_of(m)
    for tid in [*vocab.encode(head), 151668, *vocab.encode("\n\n")]:
        assert m.accept_token(tid)
    mask = mask_of(m)
    assert {151657, 151645, 151643} <= mask  # a call, or the turn ends
    assert 151667 not in mask and 151668 not in mask  # excluded from the answer's text


ERRORS = [
    ({"type": "structural_tag"}, "", "missing field 'format'"),
    (_spec({"type": "nope"}), "/format/type", "unknown format type 'nope'"),
    (_spec({"type": "const_string", "value": "a", "valeu": 1}), "/format/valeu",
     "unknown field 'valeu'"),
    (_spec({"type": "token", "token": -1}), "/format/token", "must be a token id"),
    (_spec({"type": "sequence", "elements": [{"type": "regex", "pattern": "("}]}),
     "/format/elements/0/pattern", ""),
    (_spec({"type": "json_schema", "json_schema": {"type": "object", "minProperties": "x"}}),
     "/format/json_schema/minProperties", ""),
    (_spec({"type": "triggered_tags", "triggers": ["<a"],
            "tags": [{"begin": "<b>", "content": {"type": "any_text"}, "end": "</b>"}]}),
     "/format/tags/0/begin", "starts with no trigger"),
    (_spec({"type": "triggered_tags", "triggers": ["<a", "<"],
            "tags": [{"begin": "<a>", "content": {"type": "any_text"}, "end": "</a>"}]}),
     "/format/tags/0/begin", "starts with 2 triggers"),
    (_spec({"type": "any_text", "max_tokens": -3}), "/format/max_tokens", "integer"),
    (_spec({"type": "repeat", "min": 3, "max": 2, "content": {"type": "any_text"}}),
     "/format/max", "below 'min'"),
    (_spec({"type": "tag", "begin": {"type": "const_string", "value": "a"},
            "content": {"type": "any_text"}, "end": "x"}), "/format/begin/type",
     "expected a 'token' format"),
    (_spec({"type": "triggered_tags", "triggers": ["<a"],
            "tags": [{"begin": {"type": "token", "token": 1}, "content": {"type": "any_text"},
                      "end": "x"}]}), "/format/tags/0/begin", "begin with a string"),
    (_spec({"type": "any_tokens", "max_tokens": 2**40}), "/format/max_tokens", "integer"),
    (_spec({"type": "json_schema", "json_schema": {}, "style": "yaml"}), "/format/style",
     "unknown style"),
    ("[1, 2]", "", "must be a JSON object"),
    ('{"type": "structural_tag", "format": ', None, "not valid JSON"),
]


@pytest.mark.parametrize("spec,pointer,message", ERRORS)
def test_errors_name_the_pointer(spec: object, pointer: str | None, message: str) -> None:
    with pytest.raises(GrammarError) as info:
        compile_structural_tag(spec, VOCAB)
    assert info.value.pointer == pointer, str(info.value)
    assert message in str(info.value)


TOKEN_SPEC = _spec({"type": "sequence", "elements": [
    {"type": "tag", "begin": {"type": "token", "token": "<think>"},
     "content": {"type": "any_tokens"}, "end": {"type": "token", "token": 151668}},
    {"type": "token_triggered_tags", "trigger_tokens": ["<|box_start|>"],
     "exclude_tokens": ["<|im_start|>"],
     "tags": [{"begin": {"type": "token", "token": "<|box_start|>"},
               "content": {"type": "json_schema", "json_schema": {"type": "integer"}},
               "end": {"type": "token", "token": "<|box_end|>"}}]}]})


def test_token_level_formats() -> None:
    vocab = Vocabulary.default(eos_token_ids=[151643, 151645])
    compiled = compile_structural_tag(TOKEN_SPEC, vocab)
    assert compiled.named_tokens == (151667, 151668)
    think, end_think, im_start, box, box_end = 151667, 151668, 151644, 151648, 151649
    good = [think, *vocab.encode("a </think> in text"), end_think, *vocab.encode("x "), box,
            *vocab.encode("42"), box_end, box, *vocab.encode("7"), box_end]
    assert _accepts(vocab, compiled, good)
    m = Matcher(compiled)
    assert mask_of(m) == {think}
    assert m.accept_token(think)
    inside = mask_of(m)
    assert {end_think, im_start, box} <= inside and think in inside
    assert 151643 not in inside  # the tag must end first
    for bad in ([think, end_think, im_start], [think, end_think, box, box_end],
                [think, end_think, box, *vocab.encode("x"), box_end]):
        assert not _accepts(vocab, compiled, bad)


def test_tokens_across_free_text_and_a_trigger() -> None:
    """A trigger split over tokens, and one token ending the free text and opening the tag."""
    tokens: list[bytes | None] = [bytes([b]) for b in range(256)]
    tokens += [b"hi <f", b"=a>1", b"</f> ok", b"<f=a>", b"<f", b"hi "]
    tokens.append(b"</s>")
    vocab = Vocabulary.from_token_bytes(tokens, len(tokens) - 1)
    spec = _spec({"type": "triggered_tags", "triggers": ["<f="],
                  "tags": [{"begin": "<f=a>", "content": {"type": "regex", "pattern": "[0-9]"},
                            "end": "</f>"}]})
    compiled = compile_structural_tag(spec, vocab)
    ids = {t: i for i, t in enumerate(tokens) if t}
    for pieces in ([b"hi <f", b"=a>1", b"</f> ok"], [b"h", b"i", b" ", b"<f", b"=a>1", b"</f> ok"],
                   [b"hi ", b"<f=a>", b"1", b"</f> ok"]):
        assert _accepts(vocab, compiled, [ids[p] for p in pieces]), pieces
    m = Matcher(compiled)
    assert m.accept_token(ids[b"hi <f"])
    assert ids[b"=a>1"] in mask_of(m) and ids[b"x"] in mask_of(m)  # "<fx" is free text
    assert m.accept_token(ids[b"="]) and ids[b"x"] not in mask_of(m)  # "<f=" opened a tag


