"""llguidance's Lark: `%json {...}`, token references and `%llguidance {...}`, read around
Lark's syntax with every line and column kept."""
from __future__ import annotations

import pytest

from grammask.compiler import GrammarError, compile_lark
from grammask.compiler.frontends.registry import read
from grammask.runtime import Matcher, Vocabulary
from tests.support.masks import mask_of

QWEN = Vocabulary.default(eos_token_ids=[151643, 151645])
LLAMA_CALL = r'''
%llguidance {}
start: TEXT | fun_call
TEXT: /[^{](.|\n)*/
fun_call: %json {
  "type": "object",
  "properties": {
    "name": { "const": "get_weather" },
    "parameters": {
      "type": "object",
      "properties": { "city": { "type": "string" } },
      "required": ["city"]
    }
  },
  "required": ["name", "parameters"]
}
'''


def _accepts(compiled, text: str) -> bool:  # type: ignore[no-untyped-def]
    m = Matcher(compiled)
    return m.accept_string(text) and m.can_terminate()


def test_inline_json_schema() -> None:
    compiled = compile_lark(LLAMA_CALL, QWEN)
    assert _accepts(compiled, "There is no function I can call")
    assert _accepts(compiled, '{"name":"get_weather", "parameters": {"city":"Seattle"}}')
    assert not _accepts(compiled, '{"name": "get_time", "parameters": {}}')
    assert not _accepts(compiled, '{"name": "get_weather", "parameters": {}}')
    assert any("%llguidance options are ignored" in n for n in compiled.notes)


def test_token_references() -> None:
    grammar = "start: <think> thinking </think> answer\n" \
              "thinking: <[^151668]>*\n" \
              'answer: "ok" <|im_start|>? <[151657-151658]>*\n'
    compiled = compile_lark(grammar, QWEN)
    assert compiled.named_tokens == (151657, 151658, 151667, 151668)
    m = Matcher(compiled)
    assert mask_of(m) == {151667}
    for t in [151667, *QWEN.encode("hmm </think>"), 151644]:
        assert m.accept_token(t)
    assert 151668 in mask_of(m) and 151643 not in mask_of(m)
    for t in [151668, *QWEN.encode("ok"), 151644, 151658, 151657]:
        assert m.accept_token(t)
    assert m.can_terminate()


def test_wildcard_and_text_untouched_in_strings_regexes_comments() -> None:
    compiled = compile_lark('start: "<x>" /%json[<]/ <[*]>+ // a <comment> %json {\n', QWEN)
    m = Matcher(compiled)
    assert m.accept_string("<x>%json<")
    assert 151644 in mask_of(m) and 27 in mask_of(m)  # any token, control tokens too


def test_lines_and_columns_are_kept() -> None:
    grammar, _ = read("lark", 'start: %json {"type": "integer"}\n  | <[5]> x\nx: "y"')
    assert grammar.rule("x").span.line == 3  # type: ignore[union-attr]


@pytest.mark.parametrize("text,message", [
    ("start: <[1-a]>", "1:8: malformed token id list '<[1-a]>'"),
    ("start: \"a\"\n  | <oops", "2:5: malformed token reference"),
    ('start: %json {"type": 1}', "1:8 /type: in %json: type must be one of"),
    ("start: %json", "1:13: %json needs a JSON object"),
    ("start: <nope>", "1:8: token <nope>: '<nope>' is not the text of any token"),
    ("start: x\nx[max_tokens=3.5]: /[a-z]+/", "2:2: max_tokens must be an integer"),
    ("start: x\nx[max_tokens=3]: /[a-z]+/ x?", "2:2: rule x's options need a regular body"),
    ("start: x\nx[colour=3]: /[a-z]+/", "2:2: unknown rule option 'colour'"),
    ("start: x\nx[lazy]: x \"a\" | \"b\"", "2:2: rule x's options need a regular body"),
    ("start: x\nx[stop=\"\"]: /a/", "2:2: an empty marker"),
    ("start: A\nA[lazy]: /a/", "2:2: terminal A cannot take options"),
    ("start: @sub", "1:8: @sub names no grammar"),
    ('start: "a" & "b"', "1:12: syntax error: unexpected character '&' (& intersects terminals"),
    ("start: <[5]> \"a\" )", "1:18: syntax error"),
    ('start: "a"{,2} "b" )', "1:20: syntax error"),
    ('%grammar_options {"skip": 1}\nstart: "a"', "1:18: %grammar_options takes"),
])
def test_errors(text: str, message: str) -> None:
    with pytest.raises(GrammarError) as info:
        compile_lark(text, QWEN)
    assert str(info.value).startswith(message)
