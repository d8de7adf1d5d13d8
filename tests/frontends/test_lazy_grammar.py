"""Lazy GBNF grammars (llama.cpp's `grammar_lazy`): free text until a trigger word, then the
grammar from the trigger on."""
from __future__ import annotations

import re

import pytest

from grammask.compiler import GrammarError, compile_gbnf
from grammask.runtime import Matcher
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
    with pytest.raises(GrammarError, match="triggers must be non-empty strings"):
        compile_gbnf(CALL, VOCAB, triggers=[""])
