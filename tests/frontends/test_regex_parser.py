"""Tests for the regex frontend (grammask.compiler.frontends.regex.parse_regex)."""
from __future__ import annotations

import re
import warnings
from bisect import bisect_right

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grammask.compiler.support.errors import BudgetExceeded, GrammarError
from grammask.compiler.ir.nodes import (
    EMPTY,
    CharClass,
    Choice,
    Literal,
    Node,
    Repeat,
    Seq,
    complement_ranges,
)
from grammask.compiler.support.diagnostics import Span
from grammask.compiler.support.limits import Limits
from grammask.compiler.frontends.regex import parse_regex

from .support.budget import examples

MAX = 0x10FFFF


def lit(text: str) -> Literal:
    return Literal(text.encode("utf-8"))


def cls(*ranges: tuple[int, int] | str, negated: bool = False) -> CharClass:
    rs = [(ord(r), ord(r)) if isinstance(r, str) else r for r in ranges]
    return CharClass.of(rs, negated)


DIGIT = cls((0x30, 0x39))
WORD = cls((0x30, 0x39), (0x41, 0x5A), "_", (0x61, 0x7A))
SPACE = cls((0x09, 0x0D), " ")
DOT = cls("\n", negated=True)


def error_of(pattern: str, **kw: object) -> GrammarError:
    with pytest.raises(GrammarError) as info:
        parse_regex(pattern, **kw)  # type: ignore[arg-type]
    return info.value


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


def _member(node: CharClass, cp: int) -> bool:
    i = bisect_right(node.ranges, (cp, MAX + 1)) - 1
    return i >= 0 and node.ranges[i][0] <= cp <= node.ranges[i][1]


SAMPLE_CODE_POINTS = [*range(0, 0x3100), 0xD7FF, 0xE000, 0xFEFF, 0xFFFF, 0x10000, 0x1F600, MAX]


@pytest.mark.parametrize("pattern", [r"\d", r"\w", r"\s", r"\D", r"\W", r"\S", ".", r"[^\d\s]"])
def test_shorthands_agree_with_python_ascii_mode(pattern: str) -> None:
    node = parse_regex(pattern)
    assert isinstance(node, CharClass)
    oracle = re.compile(pattern, re.ASCII)
    for cp in SAMPLE_CODE_POINTS:
        assert _member(node, cp) == bool(oracle.fullmatch(chr(cp))), (pattern, hex(cp))
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


# ---------------------------------------------------------------------------- rejections

NOT_REGULAR = "grammask compiles regular languages to automata"


@pytest.mark.parametrize(
    "pattern, column, fragment",
    [
        ("ab(?=c)", 3, "lookahead '(?=' is not supported"),
        ("a(?!c)", 2, "negative lookahead '(?!'"),
        ("(?<=a)b", 1, "lookbehind '(?<='"),
        ("(?<!a)b", 1, "negative lookbehind '(?<!'"),
        (r"(a)\1", 4, "backreference '\\1'"),
        (r"(a)\9", 4, "backreference '\\9'"),
        ("(?P<x>a)(?P=x)", 9, "backreference '(?P='"),
        (r"(?<x>a)\k<x>", 8, "backreference '\\k<x>'"),
        ("(?>ab)", 1, "atomic group '(?>'"),
        ("a*+", 2, "possessive quantifier '*+'"),
        ("xa++", 3, "possessive quantifier '++'"),
        ("a?+", 2, "possessive quantifier '?+'"),
        ("a{2}+", 2, "possessive quantifier '{2}+'"),
        ("a{2,3}+", 2, "possessive quantifier"),
        ("(?i)a", 1, "inline flags"),
        ("a(?i:b)", 2, "inline flags"),
        ("(?x)a b", 1, "inline flags"),
        ("(?-i:a)", 1, "inline flags"),
        ("(?(1)a|b)", 1, "conditional group '(?('"),
        ("a(?#note)", 2, "comment group '(?#'"),
        ("(?|a|b)", 1, "branch reset"),
        ("(?R)", 1, "recursion"),
        ("(?1)", 1, "recursion"),
        ("(?&name)", 1, "recursion"),
        ("(?P>name)", 1, "recursion"),
        (r"a\b", 2, "word boundary '\\b'"),
        (r"\Ba", 1, "word boundary '\\B'"),
        (r"\p{L}", 1, "Unicode property class '\\p{L}' is not supported"),
        (r"x\P{Lu}", 2, "Unicode property class"),
        (r"\pL", 1, "Unicode property class"),
        (r"\G", 1, "'\\G' is not supported"),
    ],
)
def test_rejected_construct(pattern: str, column: int, fragment: str) -> None:
    err = error_of(pattern)
    assert (err.line, err.column) == (1, column)
    assert fragment in err.message
    assert NOT_REGULAR in err.message
    assert str(err).startswith(f"1:{column}: ")


def test_rejection_message_format() -> None:
    assert str(error_of("abc(?=x)")) == (
        "1:4: lookahead '(?=' is not supported: grammask compiles regular languages to "
        "automata; rewrite without lookaround"
    )


@pytest.mark.parametrize(
    "pattern, column, fragment",
    [
        ("a^", 2, "anchor '^' is only supported at the start of the pattern"),
        ("a^b", 2, "anchor '^' is only supported at the start"),
        ("(^a)", 2, "anchor '^' is only supported at the start"),
        ("x(?:a|^b)", 7, "anchor '^'"),
        ("$a", 1, "anchor '$' is only supported at the end"),
        ("a$b", 2, "anchor '$'"),
        ("(a$)", 3, "anchor '$'"),
        (r"a\Ab", 2, "anchor '\\A'"),
        (r"\Za", 1, "anchor '\\Z'"),
        (r"(a\z)", 3, "anchor '\\z'"),
        ("$^", 1, "anchor '$'"),
        ("^*", 2, "nothing to repeat"),
        ("a$+", 3, "nothing to repeat"),
        ("*a", 1, "nothing to repeat"),
        ("a|*", 3, "nothing to repeat"),
        ("(|*)", 3, "nothing to repeat"),
        ("(*)", 2, "nothing to repeat"),
        ("+", 1, "nothing to repeat"),
        ("{2}", 1, "nothing to repeat"),
        ("a**", 3, "nothing to repeat"),
        ("a{2}{3}", 5, "nothing to repeat"),
        ("a*?*", 4, "nothing to repeat"),
        ("a+++", 2, "possessive"),
        ("a{", 2, "write '\\{'"),
        ("{", 1, "write '\\{'"),
        ("a{x}", 2, "write '\\{'"),
        ("a{}", 2, "write '\\{'"),
        ("a{1,2", 2, "write '\\{'"),
        ("x{ 1}", 2, "write '\\{'"),
        ("a{3,2}", 2, "minimum 3 is greater than maximum 2"),
        ("(", 1, "unbalanced parenthesis"),
        ("ab(c", 3, "unbalanced parenthesis"),
        ("((a)", 1, "unbalanced parenthesis"),
        ("(?:a|(b)", 1, "unbalanced parenthesis"),
        (")", 1, "unbalanced parenthesis: ')' has no matching '('"),
        ("ab)", 3, "unbalanced parenthesis"),
        ("(a))", 4, "unbalanced parenthesis"),
        ("(?", 1, "incomplete group extension"),
        ("(?)", 1, "unknown group extension"),
        ("(?P<1a>x)", 1, "bad group name"),
        ("(?<a-b>x)", 1, "bad group name"),
        ("(?P<>x)", 1, "bad group name"),
        ("(?P<a", 1, "bad group name"),
    ],
)
def test_syntax_error(pattern: str, column: int, fragment: str) -> None:
    err = error_of(pattern)
    assert (err.line, err.column) == (1, column)
    assert fragment in err.message


def test_errors_report_the_leftmost_problem() -> None:
    assert error_of(r"a(?=b)\1").column == 2
    assert error_of(r"\1(?=b)").column == 1


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


# ---------------------------------------------------------------------------- limits and inputs

def test_max_repeat() -> None:
    assert parse_regex("a{10000}") == Repeat(lit("a"), 10000, 10000)
    err = error_of("xa{10001}")
    assert isinstance(err, BudgetExceeded)
    assert err.column == 3 and "max_repeat" in err.message and "10001" in err.message
    assert error_of("a{2,10001}").column == 2
    assert error_of("a{10001,}").column == 2
    small = Limits(max_repeat=5)
    assert parse_regex("a{5}", limits=small) == Repeat(lit("a"), 5, 5)
    assert isinstance(error_of("a{0,6}", limits=small), BudgetExceeded)
    assert parse_regex("a*", limits=small) == Repeat(lit("a"), 0, None)
    huge = error_of("a{" + "9" * 5000 + "}")
    assert isinstance(huge, BudgetExceeded) and "5000 digits" in huge.message


def test_max_pattern_length() -> None:
    limits = Limits(max_pattern_length=10)
    assert parse_regex("a" * 10, limits=limits) == lit("a" * 10)
    err = error_of("a" * 11, limits=limits)
    assert isinstance(err, BudgetExceeded) and "max_pattern_length" in err.message


@pytest.mark.parametrize("bad", [b"abc", None, 3, ["a"]])
def test_non_string_pattern(bad: object) -> None:
    with pytest.raises(TypeError, match="str pattern"):
        parse_regex(bad)  # type: ignore[arg-type]


def test_bad_limits_type() -> None:
    with pytest.raises(TypeError, match="Limits"):
        parse_regex("a", limits={"max_repeat": 3})  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- size and depth

def test_deep_unclosed_parentheses() -> None:
    err = error_of("(" * 100_000)
    assert "unbalanced parenthesis" in err.message and err.column == 100_000
    assert error_of("(" * 20_000 + ")" * 19_999).column == 1
    assert error_of("[" + "(" * 100_000).column == 1


def test_deep_balanced_parentheses() -> None:
    depth = 100_000
    assert parse_regex("(" * depth + "a" + ")" * depth) == lit("a")
    node = parse_regex("(?:" * 20_000 + "a" + ")*" * 20_000)
    assert node == Repeat(lit("a"), 0, None)


def test_many_alternatives() -> None:
    words = [f"word{i}" for i in range(10_000)]
    node = parse_regex("|".join(words))
    assert isinstance(node, Choice) and node.alternatives == tuple(lit(w) for w in words)


def test_long_literal_pattern() -> None:
    text = "abc\\.def" * 10_000
    assert parse_regex(text) == lit("abc.def" * 10_000)


# ---------------------------------------------------------------------------- properties

def _ends(node: Node, s: str, starts: set[int]) -> set[int]:
    """Positions in `s` where `node` can finish, having started at one of `starts`."""
    if not starts:
        return set()
    if isinstance(node, Literal):
        t = node.data.decode("utf-8")
        return {i + len(t) for i in starts if s.startswith(t, i)}
    if isinstance(node, CharClass):
        return {i + 1 for i in starts if i < len(s) and _member(node, ord(s[i]))}
    if isinstance(node, Seq):
        for item in node.items:
            starts = _ends(item, s, starts)
        return starts
    if isinstance(node, Choice):
        return set().union(*(_ends(a, s, starts) for a in node.alternatives))
    assert isinstance(node, Repeat)
    current = set(starts)
    for _ in range(node.min):
        current = _ends(node.item, s, current)
    seen, frontier, count = set(current), current, node.min
    while frontier and (node.max is None or count < node.max):
        frontier = _ends(node.item, s, frontier) - seen
        seen |= frontier
        count += 1
    return seen


def fullmatch(node: Node, s: str) -> bool:
    return len(s) in _ends(node, s, {0})


ATOMS = st.sampled_from(
    ["a", "b", "c", ".", r"\d", r"\w", r"\s", r"\W", r"\.", r"\n", r"\-", "[abc]", "[a-c]", "[^a]",
     r"[\d_-]", r"[^\sb]", "[]a]", "[-c]", r"\x61", r"\u0062", r"\u{63}"]
)
QUANTIFIERS = st.sampled_from(["*", "+", "?", "{2}", "{1,}", "{0,2}", "{,2}", "{1,3}"])


def _asts() -> st.SearchStrategy[tuple]:
    def extend(children: st.SearchStrategy[tuple]) -> st.SearchStrategy[tuple]:
        return st.one_of(
            st.tuples(st.just("seq"), st.lists(children, max_size=4).map(tuple)),
            st.tuples(st.just("alt"), st.lists(children, min_size=2, max_size=3).map(tuple)),
            st.tuples(st.just("rep"), children, QUANTIFIERS, st.booleans()),
            st.tuples(st.just("group"), children, st.sampled_from(["(", "(?:", "(?P<g>"])),
        )

    return st.recursive(st.tuples(st.just("atom"), ATOMS), extend, max_leaves=12)


def render(ast: tuple, wrap: bool = False, counter: list[int] | None = None) -> str:
    """Regex text for `ast`; with `wrap`, every subexpression gets a redundant (?:...)."""
    counter = counter if counter is not None else [0]
    text, _ = _render(ast, wrap, counter)
    return text


def _render(ast: tuple, wrap: bool, counter: list[int]) -> tuple[str, str]:
    kind = ast[0]
    if kind == "atom":
        text, prec = ast[1], "atom"
    elif kind == "group":
        inner, _ = _render(ast[1], wrap, counter)
        opener = ast[2]
        if opener == "(?P<g>":
            counter[0] += 1
            opener = f"(?P<g{counter[0]}>"
        text, prec = f"{opener}{inner})", "atom"
    elif kind == "rep":
        inner, p = _render(ast[1], wrap, counter)
        if p != "atom":
            inner = f"(?:{inner})"
        text, prec = inner + ast[2] + ("?" if ast[3] else ""), "rep"
    elif kind == "seq":
        parts = []
        for child in ast[1]:
            t, p = _render(child, wrap, counter)
            parts.append(f"(?:{t})" if p == "alt" else t)
        text, prec = "".join(parts), "seq"
    else:
        text, prec = "|".join(_render(c, wrap, counter)[0] for c in ast[1]), "alt"
    if wrap:
        return f"(?:{text})", "atom"
    return text, prec


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_asts())
def test_redundant_groups_do_not_change_the_ir(ast: tuple) -> None:
    plain = parse_regex(render(ast))
    assert parse_regex(render(ast, wrap=True)) == plain
    assert parse_regex(f"(?:{render(ast)})") == plain
    assert parse_regex(f"^{render(ast)}$") == plain


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_asts(), st.lists(st.text(alphabet="abc0_ \n-.é", max_size=6), min_size=1, max_size=8))
def test_fullmatch_semantics_agree_with_python_re(ast: tuple, samples: list[str]) -> None:
    pattern = render(ast)
    node = parse_regex(pattern)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle = re.compile(pattern.replace(r"\u{63}", r"\x63"), re.ASCII)  # re lacks \u{...}
    for s in samples:
        assert fullmatch(node, s) == bool(oracle.fullmatch(s)), (pattern, s)


META_TEXT = st.text(alphabet=list("ab()[]{}|*+?^$\\.-,:=!<>P019xuUdDwsbkNpAZ&#") + ["\x00", "é", "😀", "\ud800", "\n"],
                    max_size=20)


@settings(max_examples=examples(1000), deadline=None)
@given(st.one_of(st.text(max_size=30), META_TEXT))
def test_arbitrary_text_parses_or_raises_grammar_error(pattern: str) -> None:
    try:
        parse_regex(pattern)
    except GrammarError as err:
        assert err.line == 1
        assert err.column is not None and 1 <= err.column <= len(pattern) + 1
        assert str(err).startswith(f"1:{err.column}: ")


DIFF_TEXT = st.text(alphabet=list("abc()[]{}|*+?^$\\.-,:0129xdDwWsSbn_ ") + ["é", "\n"], min_size=1,
                    max_size=9)


@settings(max_examples=examples(500), deadline=None)
@given(DIFF_TEXT, st.lists(st.text(alphabet="abc-]^[\\.,{}09_ \né|x:", max_size=5), max_size=10))
def test_accepted_patterns_agree_with_python_re(pattern: str, samples: list[str]) -> None:
    try:
        node = parse_regex(pattern)
    except GrammarError:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle = re.compile(pattern, re.ASCII)  # everything accepted here is valid for re
    for s in samples:
        assert fullmatch(node, s) == bool(oracle.fullmatch(s)), (pattern, s)
