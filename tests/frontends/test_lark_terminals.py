"""Lark terminals: the `common` library against what Lark lexes, case-insensitive matching
as Python's `re` folds, regex flags and Unicode classes, and how terminals are read."""
from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Lark
from lark.exceptions import LarkError

from grammask.compiler.automata.build import ir_to_dfa
from grammask.compiler.frontends.lark_grammar import parse_lark
from grammask.compiler.frontends.lark_terminals import cased_characters, fold_char, shorthand_ranges
from grammask.compiler.ir.nodes import CharClass, Literal, Seq

from ..support.budget import examples
from ..support.cfg_strategies import generated_strings
from ..support.lark_frontend import code_of, dfa_of, inline, lark_accepts

COMMON = ["DIGIT", "HEXDIGIT", "INT", "SIGNED_INT", "DECIMAL", "FLOAT", "SIGNED_FLOAT", "NUMBER",
          "SIGNED_NUMBER", "ESCAPED_STRING", "LCASE_LETTER", "UCASE_LETTER", "LETTER", "WORD", "CNAME",
          "WS_INLINE", "WS", "CR", "LF", "NEWLINE", "SH_COMMENT", "CPP_COMMENT", "C_COMMENT", "SQL_COMMENT"]


def single(terminal: str) -> str:
    return f"%import common.{terminal}\nstart: {terminal}\n"


@pytest.mark.parametrize("terminal", COMMON)
def test_common_terminal_matches_what_lark_lexes(terminal: str) -> None:
    text = single(terminal)
    grammar, notes = parse_lark(text)
    assert notes == ()
    assert grammar.rule(terminal) is not None
    dfa = dfa_of(text)
    rng = random.Random(terminal)
    alphabet = "0a_Z.e+-\"\\ \t\n\r/*#x"
    samples = generated_strings(grammar, rng, 40) + ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
                                                     for _ in range(300)]
    for s in samples:
        assert dfa.fullmatch(s.encode()) == lark_accepts(text, s), (terminal, s)


def test_common_inner_string_terminals() -> None:
    assert code_of(single("_STRING_ESC_INNER")) == "lark-terminal"
    assert code_of(single("_STRING_INNER")) == "lark-terminal"


@pytest.mark.parametrize("s, ok", [
    ('""', True), ('"a"', True), ('"\\""', True), ('"\\\\"', True), ('"a\\\\"b"', False),
    ('"\\"', False), ('"a"b"', False), ('"a\nb"', False), ('"\\\n"', False), ('"é\\é"', True),
])
def test_escaped_string_rewrite_is_the_lexed_language(s: str, ok: bool) -> None:
    text = single("ESCAPED_STRING")
    assert lark_accepts(text, s) == ok
    assert dfa_of(text).fullmatch(s.encode()) == ok


@pytest.mark.parametrize("s, ok", [
    ("/**/", True), ("/***/", True), ("/* a */", True), ("/* a */ b */", False), ("/*/", False),
    ("/* \n * */", True), ("/**/*/", False), ("/*", False),
])
def test_c_comment_rewrite_stops_at_the_first_close(s: str, ok: bool) -> None:
    text = single("C_COMMENT")
    assert lark_accepts(text, s) == ok
    assert dfa_of(text).fullmatch(s.encode()) == ok


@given(st.text(alphabet='"\\a\n', max_size=7))
@settings(max_examples=examples(200))
def test_escaped_string_agrees_with_lark_everywhere(s: str) -> None:
    text = single("ESCAPED_STRING")
    assert dfa_of(text).fullmatch(s.encode()) == lark_accepts(text, s)


@given(st.text(alphabet="/* \n", max_size=8))
@settings(max_examples=examples(200))
def test_c_comment_agrees_with_lark_everywhere(s: str) -> None:
    text = single("C_COMMENT")
    assert dfa_of(text).fullmatch(s.encode()) == lark_accepts(text, s)


def test_case_insensitive_string() -> None:
    grammar, _ = parse_lark('start: "ab1"i\n')
    (name,) = [r.name for r in grammar.rules if r.name != "start"]
    assert grammar.rule(name).body == Seq((CharClass(((65, 65), (97, 97))), CharClass(((66, 66), (98, 98))),
                                           Literal(b"1")))
    dfa = ir_to_dfa(inline(grammar))
    assert all(dfa.fullmatch(s.encode()) for s in ("ab1", "AB1", "aB1"))
    assert not dfa.fullmatch(b"ab2")


def test_case_insensitive_uses_pythons_folding() -> None:
    text = 'start: "k"i "s"i /ß/i\n'
    dfa = dfa_of(text)
    for s in ("ksß", "KSẞ", "\u212a\u017fß"):
        assert lark_accepts(text, s)
        assert dfa.fullmatch(s.encode())


@pytest.mark.parametrize("ch", list("aZkKsSßẞİıµΣσςǅ") + ["\u212a", "\u017f", "\u0345", "\u1e9e", "\U00010400"])
def test_folding_one_character_matches_re(ch: str) -> None:
    universe = "".join(map(chr, range(0x110000)))
    expected = {m.group() for m in re.finditer("(?i:" + re.escape(ch) + ")", universe)}
    got = {chr(c) for lo, hi in fold_char(ch) for c in range(lo, hi + 1)}
    assert got == expected
    assert max(map(ord, cased_characters())) < 0x20000


@pytest.mark.parametrize("pattern, flags", [
    (r"[a-z]+", "i"), (r"[^k]x", "i"), (r"[^\W\d]\w*", ""), (r"\d+\s\D", ""), (r"[\w-]+", "i"),
    (r"a . b  [ ]c", "x"), (r"a.b", "s"), (r"a.b", ""), (r"[^\s]+", ""), (r"x{2}|\{", ""),
])
def test_regex_flags_and_unicode_classes_match_re(pattern: str, flags: str) -> None:
    text = f"start: A\nA: /{pattern}/{flags}\n"
    dfa = dfa_of(text)
    compiled = re.compile(f"(?{flags}:{pattern})" if flags else pattern)
    rng = random.Random(pattern)
    pool = "aAkK\u212ax٣7_é ß\n-{}\u00a0b.Ü"
    for _ in range(400):
        s = "".join(rng.choice(pool) for _ in range(rng.randint(0, 5)))
        assert dfa.fullmatch(s.encode()) == bool(compiled.fullmatch(s)), (pattern, flags, s)


@pytest.mark.parametrize("definition", [
    'A: ("k"i | /x./s) "y"+',
    'A: /a b # c\n/x "é"i /[^a-c]/i',
    'A: ("ab"i | /[α-γ]+/i) ~ 1..2 /\\d?/',
    'A: /(?i:k)x/ /(?s:.)/',
])
def test_flags_stay_in_their_part_of_a_terminal(definition: str) -> None:
    text = f"start: A\n{definition}\n"
    dfa = dfa_of(text)
    rng = random.Random(definition)
    pool = "aAbBkK\u212axXyY\néÉ7γΓ _#"
    samples = ["".join(rng.choice(pool) for _ in range(rng.randint(1, 6))) for _ in range(1500)]
    samples += generated_strings(parse_lark(text)[0], rng, 100)
    for s in samples:
        assert dfa.fullmatch(s.encode()) == lark_accepts(text, s), (definition, s)


def test_terminals_follow_the_regex_lark_joins() -> None:
    text = 'start: A\nA: /x|yz/ "k"\n'
    assert re.compile(Lark(text).get_terminal("A").pattern.to_regexp()).pattern == "x|yzk"
    dfa = dfa_of(text)
    assert dfa.fullmatch(b"x") and dfa.fullmatch(b"yzk") and not dfa.fullmatch(b"xk")
    assert lark_accepts(text, "x") and not lark_accepts(text, "xk")


def test_unicode_shorthands_are_pythons() -> None:
    def has(letter: str, ch: str) -> bool:
        return any(lo <= ord(ch) <= hi for lo, hi in shorthand_ranges(letter))

    assert has("d", "\u0663") and has("w", "é") and has("s", "\u00a0") and not has("W", "é")
    assert not has("d", "a") and has("D", "a")


def test_imports_of_common() -> None:
    text = ("%import common (NUMBER, WS, CNAME, ESCAPED_STRING, SIGNED_NUMBER, INT, WORD, LETTER, DIGIT, NEWLINE)\n"
            "start: NUMBER CNAME ESCAPED_STRING SIGNED_NUMBER INT WORD LETTER DIGIT NEWLINE WS\n")
    grammar, notes = parse_lark(text)
    assert notes == ()
    names = [r.name for r in grammar.rules]
    assert names[0] == "start" and set(names[1:]) == set(re.findall(r"[A-Z_]+", text.split("\n")[1]))
    assert grammar.rule("NUMBER").span.line == 1


def test_terminals_are_read_as_full_match_languages() -> None:
    text = "start: AB\nAB: /a|ab/\n"
    assert dfa_of(text).fullmatch(b"ab")
    assert not lark_accepts(text, "ab")


def test_scannerless_reading_differs_from_maximal_munch() -> None:
    text = "start: NAME NAME\nNAME: /[a-z]+/\n"
    assert dfa_of(text).fullmatch(b"ab")
    assert lark_accepts(text, "ab")
    for parser in (Lark(text, parser="lalr"), Lark(text, parser="earley", lexer="dynamic")):
        with pytest.raises(LarkError):
            parser.parse("ab")
