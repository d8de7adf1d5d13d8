"""Tests for the regex frontend (grammask.compiler.frontends.regex.parse_regex): the IR of
structure, escapes, shorthands and classes, and spans (errors: `test_regex_errors.py`;
properties against Python's `re`: `test_regex_properties.py`)."""
from __future__ import annotations

import re

import pytest

from grammask.compiler.ir.nodes import (
    EMPTY,
    CharClass,
    Choice,
    Node,
    Repeat,
    Seq,
    complement_ranges,
)
from grammask.compiler.support.diagnostics import Span
from grammask.compiler.frontends.regex import parse_regex

from ..support.regex_ir import MAX, cls, error_of, lit, member

DIGIT = cls((0x30, 0x39))
WORD = cls((0x30, 0x39), (0x41, 0x5A), "_", (0x61, 0x7A))
SPACE = cls((0x09, 0x0D), " ")
DOT = cls("\n", negated=True)


# ---------------------------------------------------------------------------- structure

@pytest.mark.parametrize(
    "pattern, expected",
    [
        ("", EMPTY),
        ("a", lit("a")),
        ("abc", lit("abc")),
        ("a|b", Choice((lit("a"), lit("b")))),
        ("a|", Choice((lit("a"), EMPTY))),
        ("|", Choice((EMPTY, EMPTY))),
        ("()", EMPTY),
        ("a()b", lit("ab")),
        ("ab*c", Seq((lit("a"), Repeat(lit("b"), 0, None), lit("c")))),
        ("(?:ab)+c", Seq((Repeat(lit("ab"), 1, None), lit("c")))),
        ("(ab)c(d)", lit("abcd")),
        ("(?P<x>a)(?<y>b)", lit("ab")),
        ("a(?:b|c)d", Seq((lit("a"), Choice((lit("b"), lit("c"))), lit("d")))),
        ("(?:a|b)|c", Choice((lit("a"), lit("b"), lit("c")))),
        ("a?", Repeat(lit("a"), 0, 1)),
        ("a+?", Repeat(lit("a"), 1, None)),
        ("a*?", Repeat(lit("a"), 0, None)),
        ("a??", Repeat(lit("a"), 0, 1)),
        ("a{3}", Repeat(lit("a"), 3, 3)),
        ("a{3,}", Repeat(lit("a"), 3, None)),
        ("a{2,5}", Repeat(lit("a"), 2, 5)),
        ("a{2,5}?", Repeat(lit("a"), 2, 5)),
        ("a{,4}", Repeat(lit("a"), 0, 4)),
        ("a{,}", Repeat(lit("a"), 0, None)),
        ("a{1}", lit("a")),
        ("a{1,1}", lit("a")),
        ("xa{0}y", lit("xy")),
        ("(?:)*", EMPTY),
        ("(a*)*", Repeat(lit("a"), 0, None)),
        ("(a+)*", Repeat(lit("a"), 0, None)),
        ("(a+)+", Repeat(lit("a"), 1, None)),
        ("(a+){2,}", Repeat(lit("a"), 2, None)),
        ("(a?)*", Repeat(lit("a"), 0, None)),
        ("(a*){2,3}", Repeat(lit("a"), 0, None)),
        ("(a{2}){3}", Repeat(Repeat(lit("a"), 2, 2), 3, 3)),
        ("ab+", Seq((lit("a"), Repeat(lit("b"), 1, None)))),
        ("é+", Repeat(lit("é"), 1, None)),
        ("a}", lit("a}")),
        ("]", lit("]")),
        ("a\x00b", lit("a\x00b")),
        ("a\nb", lit("a\nb")),
        ("😀", lit("😀")),
        (".", DOT),
        ("^abc$", lit("abc")),
        ("^a|b$", Choice((lit("a"), lit("b")))),
        ("a$|^b", Choice((lit("a"), lit("b")))),
        (r"\Aa\Z", lit("a")),
        (r"a\z", lit("a")),
        ("^", EMPTY),
        ("^$", EMPTY),
        ("^^a$$", lit("a")),
        (
            r"[a-z]+@\w+\.com",
            Seq((Repeat(cls((97, 122)), 1, None), lit("@"),
                 Repeat(WORD, 1, None), lit(".com"))),
        ),
    ],
)
def test_parse_structure(pattern: str, expected: Node) -> None:
    assert parse_regex(pattern) == expected


def test_adjacent_literals_merge_across_escapes_and_groups() -> None:
    assert parse_regex(r"a\x41(?:bc)\n") == lit("aAbc\n")


# ---------------------------------------------------------------------------- escapes

@pytest.mark.parametrize(
    "pattern, text",
    [
        (r"\n", "\n"), (r"\t", "\t"), (r"\r", "\r"), (r"\f", "\f"), (r"\v", "\v"), (r"\a", "\a"),
        (r"\0", "\x00"), (r"\x41", "A"), (r"\xe9", "é"), (r"\xFF", "\xff"),
        (r"\u00e9", "é"), (r"\u20AC", "€"), (r"\ud83d\ude00", "😀"), (r"\uD83D\uDE00", "😀"),
        (r"\u{41}", "A"), (r"\u{1F600}", "😀"), (r"\u{10FFFF}", "\U0010ffff"), (r"\u{000041}", "A"),
        (r"\U0001F600", "😀"), (r"\N{LATIN SMALL LETTER E WITH ACUTE}", "é"),
        (r"\/", "/"), (r"\.", "."), (r"\*", "*"), (r"\+", "+"), (r"\?", "?"), (r"\(", "("),
        (r"\)", ")"), (r"\[", "["), (r"\]", "]"), (r"\{", "{"), (r"\}", "}"), (r"\|", "|"),
        (r"\\", "\\"), (r"\^", "^"), (r"\$", "$"), (r"\-", "-"), (r"\ ", " "), (r"\#", "#"),
        ("\\é", "é"), ("\\\n", "\n"),
    ],
)
def test_escape(pattern: str, text: str) -> None:
    assert parse_regex(pattern) == lit(text)
    assert parse_regex(f"[{pattern}]") == cls(text)


def test_surrogate_pair_is_one_code_point_for_quantifiers_and_ranges() -> None:
    assert parse_regex(r"\ud83d\ude00+") == Repeat(lit("😀"), 1, None)
    assert parse_regex(r"[\ud83d\ude00-\ud83d\ude4f]") == cls((0x1F600, 0x1F64F))


@pytest.mark.parametrize(
    "pattern, column, fragment",
    [
        (r"\ud800", 1, "lone surrogate"),
        (r"a\udc00", 2, "lone surrogate"),
        ("\ud800", 1, "lone surrogate"),
        ("ab\udfff", 3, "lone surrogate"),
        ("[\ud800]", 2, "lone surrogate"),
        (r"\x4", 1, "two hex digits"),
        (r"\xg1", 1, "two hex digits"),
        (r"\u12", 1, "four hex digits"),
        (r"\u{}", 1, "1 to 6 hex digits"),
        (r"\u{1234567}", 1, "1 to 6 hex digits"),
        (r"\u{41", 1, "closing"),
        (r"\u{110000}", 1, "above U+10FFFF"),
        (r"\U0011FFFF", 1, "above U+10FFFF"),
        (r"\U1234", 1, "eight hex digits"),
        (r"\N{NOT A REAL NAME}", 1, "unknown Unicode character name"),
        (r"\N", 1, "character name"),
        (r"\q", 1, "unknown escape"),
        (r"ab\e", 3, "unknown escape"),
        (r"\012", 1, "octal"),
        ("\\", 1, "lone '\\'"),
        ("abc\\", 4, "lone '\\'"),
        ("[a\\", 3, "lone '\\'"),
    ],
)
def test_bad_escape(pattern: str, column: int, fragment: str) -> None:
    err = error_of(pattern)
    assert (err.line, err.column) == (1, column)
    assert fragment in err.message


# ---------------------------------------------------------------------------- shorthands

@pytest.mark.parametrize(
    "pattern, expected",
    [
        (r"\d", DIGIT), (r"\w", WORD), (r"\s", SPACE),
        (r"\D", cls((0x30, 0x39), negated=True)),
        (r"\W", CharClass(complement_ranges(WORD.ranges))),
        (r"\S", CharClass(complement_ranges(SPACE.ranges))),
        (r"[\d_-]", cls((0x30, 0x39), "_", "-")),
        (r"[^\s]", CharClass(complement_ranges(SPACE.ranges))),
        (r"[\W\d]", CharClass(complement_ranges(cls((0x41, 0x5A), "_", (0x61, 0x7A)).ranges))),
        (r"[^\W\d]", cls((0x41, 0x5A), "_", (0x61, 0x7A))),
        (r"[\s\S]", CharClass(((0, 0xD7FF), (0xE000, MAX)))),
        (r"[^\s\S]", CharClass(())),
    ],
)
def test_shorthand(pattern: str, expected: CharClass) -> None:
    assert parse_regex(pattern) == expected


SAMPLE_CODE_POINTS = [*range(0, 0x3100), 0xD7FF, 0xE000, 0xFEFF, 0xFFFF, 0x10000, 0x1F600, MAX]


@pytest.mark.parametrize("pattern", [r"\d", r"\w", r"\s", r"\D", r"\W", r"\S", ".", r"[^\d\s]"])
def test_shorthands_agree_with_python_ascii_mode(pattern: str) -> None:
    node = parse_regex(pattern)
    assert isinstance(node, CharClass)
    oracle = re.compile(pattern, re.ASCII)
    for cp in SAMPLE_CODE_POINTS:
        assert member(node, cp) == bool(oracle.fullmatch(chr(cp))), (pattern, hex(cp))
    assert not any(lo <= 0xDFFF and hi >= 0xD800 for lo, hi in node.ranges)


# ---------------------------------------------------------------------------- classes

@pytest.mark.parametrize(
    "pattern, expected",
    [
        ("[abc]", cls("a", "b", "c")),
        ("[a-cx-z]", cls((97, 99), (120, 122))),
        ("[^a]", cls("a", negated=True)),
        ("[-a]", cls("-", "a")),
        ("[a-]", cls("-", "a")),
        ("[-]", cls("-")),
        ("[^-]", cls("-", negated=True)),
        ("[]a]", cls("]", "a")),
        ("[^]a]", cls("]", "a", negated=True)),
        ("[]]", cls("]")),
        ("[]-a]", cls((0x5D, 0x61))),
        ("[]-]", cls("]", "-")),
        ("[a-b-c]", cls((97, 98), "-", "c")),
        ("[--/]", cls((0x2D, 0x2F))),
        ("[!--]", cls((0x21, 0x2D))),
        ("[[]", cls("[")),
        ("[.*+?(){}|^$]", cls(*".*+?(){}|^$")),
        (r"[\]\\\-\^]", cls("]", "\\", "-", "^")),
        (r"[\x41-\x43]", cls((65, 67))),
        (r"[\u{1F600}-\U0001F64F]", cls((0x1F600, 0x1F64F))),
        (r"[\b]", cls("\b")),
        ("[\x00-\U0010ffff]", CharClass(((0, 0xD7FF), (0xE000, MAX)))),
        ("[a-a]", cls("a")),
        ("[aa]", cls("a")),
        ("[\n]", cls("\n")),
        ("[é-ë]", cls((0xE9, 0xEB))),
        ("[^\n]", DOT),
    ],
)
def test_class(pattern: str, expected: CharClass) -> None:
    assert parse_regex(pattern) == expected


@pytest.mark.parametrize(
    "pattern, column, fragment",
    [
        ("[z-a]", 2, "reversed character range 'z-a'"),
        ("ab[xz-a]", 5, "reversed character range"),
        (r"[\x43-\x41]", 2, "reversed"),
        ("[a--]", 2, "reversed"),
        (r"[\d-z]", 2, "shorthand class cannot be a range endpoint"),
        (r"[a-\w]", 2, "shorthand class cannot be a range endpoint"),
        ("[[:alpha:]]", 2, "POSIX character class '[:alpha:]' is not supported"),
        ("[a[:digit:]]", 3, "POSIX"),
        ("[a-z&&[^x]]", 5, "set operation '&&' is not supported"),
        ("[a~~b]", 3, "set operation"),
        ("[a||b]", 3, "set operation"),
        ("[]", 1, "unterminated character class"),
        ("[", 1, "unterminated character class"),
        ("[^", 1, "unterminated character class"),
        ("[^]", 1, "unterminated character class"),
        ("ab[cd", 3, "unterminated character class"),
        ("([a)", 2, "unterminated character class"),
        (r"[\A]", 2, "cannot appear inside a character class"),
        (r"[a\Z]", 3, "cannot appear inside a character class"),
        (r"[\B]", 2, "word boundary"),
        (r"[\p{L}]", 2, "Unicode property"),
        (r"[\1]", 2, "backreference"),
    ],
)
def test_bad_class(pattern: str, column: int, fragment: str) -> None:
    err = error_of(pattern)
    assert (err.line, err.column) == (1, column)
    assert fragment in err.message


# ---------------------------------------------------------------------------- spans

def test_spans() -> None:
    node = parse_regex("ab|c(d)*[x-z]")
    assert isinstance(node, Choice)
    assert node.span == Span(1, 1, 1, 13)
    first, second = node.alternatives
    assert first.span == Span(1, 1, 1, 2)
    assert isinstance(second, Seq)
    assert second.span == Span(1, 4, 1, 13)
    c, star, klass = second.items
    assert c.span == Span(1, 4, 1, 4)
    assert star.span == Span(1, 5, 1, 8)
    assert isinstance(star, Repeat) and star.item.span == Span(1, 5, 1, 7)
    assert klass.span == Span(1, 9, 1, 13)
    assert parse_regex(r"x\x41{2,3}").items[1].span == Span(1, 2, 1, 10)  # type: ignore[union-attr]
