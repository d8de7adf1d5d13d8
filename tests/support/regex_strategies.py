"""Hypothesis strategies for regex pattern text that both grammask and Python's `regex` accept:
random patterns, a hand-picked list (`PATTERNS`), and a pattern with one string it fullmatches."""
from __future__ import annotations

import re

from hypothesis import strategies as st

ATOMS = [
    "a", "b", "c", "1", "2", " ", "中", "é", "😀", r"\{", '"', r"\.", r"\n",
    "[ab]", "[^a]", "[a-c]", r"\d", r"\w", r"\s", r"\D", ".", "[中é]", r"[^\x00-\x7f]",
    r"[\u4e00-\u4e0f]", r"\x41",
]
QUANTIFIERS = ["", "", "", "*", "+", "?", "{2}", "{1,3}", "{0,2}", "{2,}", "*?", "+?"]


def patterns(max_leaves: int = 8) -> st.SearchStrategy[str]:
    """Random patterns over literals, classes, groups, alternation and quantifiers."""

    def extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.lists(children, min_size=2, max_size=3).map("".join),
            st.lists(children, min_size=2, max_size=3).map(lambda xs: "(?:" + "|".join(xs) + ")"),
            st.tuples(children, st.sampled_from(QUANTIFIERS[3:])).map(
                lambda t: "(?:" + t[0] + ")" + t[1]
            ),
        )

    leaves = st.tuples(st.sampled_from(ATOMS), st.sampled_from(QUANTIFIERS)).map("".join)
    return st.recursive(leaves, extend, max_leaves=max_leaves)


PATTERNS = [
    r'\{"age": [0-9]+\}',
    r"[a-z]+( [a-z]+)*\.",
    r"(ab|a)*c?",
    r"中+文?",
    r"é{2,3}",
    r".",
    r"[^a]*",
    r"\d{3}-\d{4}",
    r"(a|b)*a(a|b){3}",
    r"",
    r"a?",
    r"[\u4e00-\u9fff]{1,3}",
    r"\w+@\w+\.com",
    r"(true|false|null)",
    r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?",
    r"\s*x\s*",
    r"[😀-😂]+",
    r"[^\x00-\x7f]{2}",
    r"a{0,2}b{2,}",
    r"(?:abc|abd|aef)+",
    r'"([^"\\]|\\.)*"',
    r"\D\W\S",
]
any_pattern = st.one_of(st.sampled_from(PATTERNS), patterns())
"""A hand-picked pattern or a random one."""

SHORTHANDS = {"d": "[0-9]", "w": "[A-Za-z0-9_]", "s": "[ \\t\\n\\r\\f\\v]",
              "D": "[^0-9]", "W": "[^A-Za-z0-9_]", "S": "[^ \\t\\n\\r\\f\\v]"}


def ascii_shorthands(pattern: str) -> str:
    """The pattern with shorthands (outside classes) spelled as ASCII classes.

    Hypothesis cannot draw non-ASCII characters under re.ASCII, so generation uses this form.
    """
    return re.sub(r"\\\\|\\([dwsDWS])", lambda m: SHORTHANDS[m[1]] if m[1] else m[0], pattern)


@st.composite
def pattern_and_string(draw: st.DrawFn, pool: st.SearchStrategy[str] = any_pattern) -> tuple[str, str]:
    """A pattern drawn from `pool` and a string it fullmatches."""
    pattern = draw(pool)
    text = draw(st.from_regex(re.compile(ascii_shorthands(pattern)), fullmatch=True))
    return pattern, text
