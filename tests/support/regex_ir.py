"""Regex IR in tests: leaves written briefly (`lit`, `cls`), membership of a code point in a
class, and the GrammarError `parse_regex` raises."""
from __future__ import annotations

from bisect import bisect_right

import pytest

from grammask.compiler.frontends.regex import parse_regex
from grammask.compiler.ir.nodes import CharClass, Literal
from grammask.compiler.support.errors import GrammarError

MAX = 0x10FFFF
"""The largest code point."""


def lit(text: str) -> Literal:
    """A literal for `text` as UTF-8."""
    return Literal(text.encode("utf-8"))


def cls(*ranges: tuple[int, int] | str, negated: bool = False) -> CharClass:
    """A class of code point ranges, a one-character string standing for itself."""
    rs = [(ord(r), ord(r)) if isinstance(r, str) else r for r in ranges]
    return CharClass.of(rs, negated)


def member(node: CharClass, cp: int) -> bool:
    """Whether code point `cp` is in the class."""
    i = bisect_right(node.ranges, (cp, MAX + 1)) - 1
    return i >= 0 and node.ranges[i][0] <= cp <= node.ranges[i][1]


def error_of(pattern: str, **kw: object) -> GrammarError:
    """The GrammarError `parse_regex(pattern, **kw)` raises (the test fails if it raises none)."""
    with pytest.raises(GrammarError) as info:
        parse_regex(pattern, **kw)  # type: ignore[arg-type]
    return info.value
