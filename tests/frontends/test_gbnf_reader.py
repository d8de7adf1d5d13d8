"""The direct GBNF reader gives exactly Lark's parse (grammar, spans, errors), and reads the
well-formed text it meets."""
from __future__ import annotations

import random

import pytest
import grammask.compiler.frontends.gbnf as gbnf
from grammask.compiler.support.errors import GrammarError
from grammask.compiler.frontends.gbnf_reader import MAX_DEPTH, Unread, read
from grammask.compiler.ir.nodes import Grammar
from grammask.compiler.support.limits import DEFAULT_LIMITS, Limits
from hypothesis import given, settings
from hypothesis import strategies as st

from ..support import paths
from ..support.budget import examples
from ..support.parse_outcomes import outcome, random_gbnf

DATA = paths.DATA / "gbnf"
CORPUS = {p.name: p.read_text(encoding="utf-8") for p in sorted(DATA.glob("*.gbnf"))}


def direct(text: str, limits: Limits = DEFAULT_LIMITS) -> Grammar | None:
    """The reader's grammar of `text` (start "root"), or None where it hands the text on (or
    where `parse_gbnf` refuses it before reading: a NUL character)."""
    if "\0" in text:
        return None
    token = gbnf.PARSE_CONTEXT.set(gbnf.ParseContext(text, None, limits))
    try:
        g = read(text, gbnf.BUILDER, gbnf.Lines.lines)
    except (Unread, GrammarError):
        return None
    finally:
        gbnf.PARSE_CONTEXT.reset(token)
    return Grammar(g.rules, start="root")


def by_lark(text: str, limits: Limits = DEFAULT_LIMITS) -> tuple:
    return outcome(lambda: gbnf.parse_gbnf_with(text, None, "root", limits, direct=False))


def same_as_lark(text: str, limits: Limits = DEFAULT_LIMITS) -> bool:
    """Checks the reader against Lark on `text`; whether the reader read it."""
    mine = direct(text, limits)
    lark = by_lark(text, limits)
    if mine is not None:
        assert outcome(lambda: mine) == lark
    assert outcome(lambda: gbnf.parse_gbnf(text, limits=limits)) == lark
    return mine is not None


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_reader_reads_every_corpus_grammar_as_lark_does(name: str) -> None:
    assert same_as_lark(CORPUS[name])


@given(st.randoms(use_true_random=False))
@settings(max_examples=examples(400), deadline=None)
def test_reader_agrees_with_lark_on_random_text(rng: random.Random) -> None:
    same_as_lark(random_gbnf(rng))


def test_reader_reads_all_the_random_text_lark_accepts() -> None:
    rng = random.Random(7)
    texts = [random_gbnf(rng) for _ in range(600)]
    read_directly = sum(same_as_lark(t) for t in texts)
    accepted = sum(by_lark(t)[0] == "grammar" for t in texts)
    assert read_directly == accepted
    assert 100 <= accepted <= 500, accepted


@pytest.mark.parametrize("text", [
    'root ::= "a" {2,3} b\nb ::= [x-z]+ | "\\x41"? # c\n',
    "root ::= a\r\na ::= \"x\"\rb ::= a",
    "root ::= (\n  \"a\"\n  | \"b\"\n)*\n\n",
    'root ::= "multi\nline" [\n] "x"',
    "root ::= x{2}{3}*?",
])
def test_reader_reads_line_breaks_and_quantifiers(text: str) -> None:
    assert same_as_lark(text)


@pytest.mark.parametrize("text", [
    'root ::= "a" {,3}', 'root ::= "\\q"', "root ::= [z-a]", "root ::= <[12",
    "root ::= a\nroot ::= b", 'root ::= "a" ::= "b"', "root ::= (", "root ::= )",
    'root ::= "a"{9999999999}', "root ::= x{a}", "::= a", "root ::= @",
])
def test_errors_are_lark_s(text: str) -> None:
    assert direct(text) is None
    assert by_lark(text)[0] == "error"
    same_as_lark(text)


def test_deep_nesting_goes_to_lark() -> None:
    deep = "root ::= " + "(" * (MAX_DEPTH + 1) + '"a"' + ")" * (MAX_DEPTH + 1)
    assert direct(deep) is None
    assert same_as_lark(deep) is False
    shallow = "root ::= " + "(" * MAX_DEPTH + '"a"' + ")" * MAX_DEPTH
    assert same_as_lark(shallow)


def test_budget_errors_are_lark_s() -> None:
    small = Limits(max_repeat=10)
    assert by_lark('root ::= "a"{11}', small)[0] == "error"
    same_as_lark('root ::= "a"{11}', small)
