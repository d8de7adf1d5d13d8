"""Lazy GBNF grammars (llama.cpp's `grammar_lazy`): free text until a trigger word or a
sampled trigger token, then the grammar from the trigger on."""
from __future__ import annotations

import re

import pytest

from grammask.compiler import GrammarError, compile_gbnf
from grammask.runtime import Matcher, Vocabulary
from tests.support.masks import mask_of
from tests.support.vocabularies import small_vocabulary

VOCAB = small_vocabulary()
CALL = 'root ::= "<call>" [0-9]+ "</call>" | "<call>x" | "!" [a-z]'


def _reference(text: str) -> bool:
    """llama.cpp's reading: no trigger in the text, or the text before the first trigger has
    none and the rest (from the trigger on) is a string of the grammar."""
    at = text.find("<call>")
    if at < 0:
        return True
    return re.fullmatch(r"<call>([0-9]+</call>|x)", text[at:]) is not None


@pytest.mark.parametrize("text", [
    "", "hello", "hi <call>12</call>", "<call>x", "a <call", "x <call>1", "<call>", "!a",
    "hi <call>12</call> more", "<ca<call>4</call>", "text !b", "<call><call>1</call>",
])
def test_lazy_language(text: str) -> None:
    m = Matcher(compile_gbnf(CALL, VOCAB, triggers=["<call>"]))
    assert (m.accept_string(text) and m.can_terminate()) == _reference(text), text


def test_masks_before_and_after_the_trigger() -> None:
    m = Matcher(compile_gbnf(CALL, VOCAB, triggers=["<call>"]))
    assert m.accept_string("free text <call>")
    assert not m.accept_string("y")
    assert m.accept_string("7</call>") and m.can_terminate()
    assert not m.accept_string(" more")


def test_several_triggers_and_a_recursive_grammar() -> None:
    grammar = 'root ::= "[" list "]"\nlist ::= item ("," item)*\nitem ::= [0-9] | "[" list "]"'
    compiled = compile_gbnf(grammar, VOCAB, triggers=["[", "[["])
    for text, ok in (("see [1,[2]]", True), ("[[1]]", True), ("a [1", False), ("plain", True),
                     ("x [1]]", False)):
        m = Matcher(compiled)
        assert (m.accept_string(text) and m.can_terminate()) == ok, text


def test_bad_triggers() -> None:
    with pytest.raises(GrammarError, match="trigger words must be non-empty strings"):
        compile_gbnf(CALL, VOCAB, triggers=[""])
    with pytest.raises(GrammarError, match="is a stop"):
        compile_gbnf(CALL, QWEN, trigger_tokens=[151643])
    with pytest.raises(GrammarError, match="not the text of any token"):
        compile_gbnf(CALL, QWEN, trigger_tokens=["<nope>"])
    with pytest.raises(GrammarError, match="lists"):
        compile_gbnf(CALL, QWEN, trigger_tokens=151657)


QWEN = Vocabulary.default(eos_token_ids=[151643, 151645])
TOOL_CALL, TOOL_END, BOX = 151657, 151658, 151648


def _accepts(compiled, ids: list[int]) -> bool:  # type: ignore[no-untyped-def]
    m = Matcher(compiled)
    return all(m.accept_token(t) for t in ids) and m.can_terminate()


def test_trigger_token_fires_only_when_sampled() -> None:
    """Qwen's `<tool_call>` (a text token): sampled, it opens the grammar; its text written in
    pieces is free text. The grammar may begin with the token or with its text."""
    for grammar in ('root ::= <tool_call> "{" [a-z]+ "}" </tool_call>',
                    'root ::= "<tool_call>{" [a-z]+ "}</tool_call>"'):
        compiled = compile_gbnf(grammar, QWEN, trigger_tokens=[TOOL_CALL])
        pieces = [QWEN.encode(c)[0] for c in "<tool_call>"]
        assert _accepts(compiled, QWEN.encode("hi ") + pieces + QWEN.encode("{x"))
        call = [TOOL_CALL, *QWEN.encode("{ab}")]
        end = [TOOL_END] if "</tool_call>\"" not in grammar else QWEN.encode("</tool_call>")
        assert _accepts(compiled, QWEN.encode("hi ") + call + end)
        assert not _accepts(compiled, [TOOL_CALL, *QWEN.encode("x")])
        m = Matcher(compiled)
        assert m.accept_token(TOOL_CALL) and QWEN.encode("{")[0] in mask_of(m)
        assert all(QWEN.token_bytes(t).startswith(b"{") for t in mask_of(m))


def test_control_trigger_token_and_words_together() -> None:
    compiled = compile_gbnf('root ::= <|box_start|> [0-9]+ | "N:" [0-9]', QWEN,
                            trigger_tokens=["<|box_start|>"], triggers=["N:"])
    assert _accepts(compiled, QWEN.encode("see ") + [BOX] + QWEN.encode("12"))
    assert _accepts(compiled, QWEN.encode("see N:4"))
    assert not _accepts(compiled, QWEN.encode("see N:44"))
    assert not _accepts(compiled, [BOX] + QWEN.encode("x"))
    assert _accepts(compiled, QWEN.encode("no trigger at all"))


def test_a_trigger_keeps_the_bound_of_the_rule_it_runs_into() -> None:
    # The trigger "<c>a" ends inside `body`; the derived rule keeps its bound of 2 tokens,
    # counted from the first token after the trigger.
    grammar = 'root ::= "<c>" body "</c>"\nbody[max_tokens=2] ::= [a-z]*'
    m = Matcher(compile_gbnf(grammar, VOCAB, triggers=["<c>a"]))
    assert m.accept_string("see <c>a")
    assert m.accept_token(ord("b")) and m.accept_token(ord("c"))
    allowed = mask_of(m)
    assert ord("d") not in allowed and ord("<") in allowed
    assert m.accept_string("</c>") and m.can_terminate()
