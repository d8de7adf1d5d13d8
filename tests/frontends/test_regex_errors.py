"""The regex frontend's rejections and errors: constructs that are not regular, syntax errors,
limits, bad inputs, and deep or large patterns."""
from __future__ import annotations

import pytest

from grammask.compiler.support.errors import BudgetExceeded
from grammask.compiler.ir.nodes import Choice, Repeat
from grammask.compiler.support.limits import Limits
from grammask.compiler.frontends.regex import parse_regex

from ..support.regex_ir import error_of, lit


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
