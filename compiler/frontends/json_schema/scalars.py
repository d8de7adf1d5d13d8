"""Numbers, strings and fixed values of a merged conjunction.

Strings: every `format` and `pattern` of the conjunction and the length bounds are intersected
on the decoded value, then JSON-encoded (`strings.json_string`). Numbers: the bounds and
`multipleOf` go to `numbers.number_node`. Values excluded by `not` (single values, or the
strings and numbers a negated subschema accepts) are removed by automaton difference, each
complement taken inside its `relaxations` domain. `enum`/`const` members are kept when their
value satisfies every scalar sibling keyword, checked here on the values themselves; what a
value cannot settle (the members of arrays and objects, integer spellings in drafts 3-4) is
settled on the spellings by `members.py`.
"""
from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

from ...automata.language_ops import as_dfa, difference, intersect
from ...ir.nodes import Automaton, Choice, Node
from ...support import deadline
from ...support.caches import memo
from ...support.errors import BudgetExceeded, GrammarError
from ..regex import parse_regex
from .conjunctions import Constraints, lenient_warning
from .literals import string_content
from .numbers import number_automaton, number_node
from .regex_syntax import regex_grammar
from .relaxations import format_language, number_domain
from .strings import (
    ANY_STRING,
    CHUNKED_FROM,
    chunked_string,
    counted,
    ecma_pattern,
    excluding,
    json_string,
    raw_spellings_note,
)
from .translation import Translation
from .values import exact_number, json_type

PLAIN_INTEGER = "-?(0|[1-9][0-9]*)"
"""The number texts drafts 3 and 4 call integers."""


@memo(maxsize=4)
def _number_texts(pattern: str) -> Node:
    """A fixed regex over number texts, parsed once, so its automaton and the products with
    it are found in the caches of `language_ops` by the node's identity."""
    return parse_regex(pattern)


def number_text(t: "Translation", c: "Constraints") -> Node | None:
    """The number texts `c` allows, or None if there are none. Values a complement removes
    (`not`, `else`, `oneOf` overlaps) are removed inside the `number-exponent` domain
    (`relaxations.py`), so no spelling of a removed value survives."""
    try:
        node = number_automaton(integer=c.numbers == "integer", minimum=c.minimum,
                                maximum=c.maximum, exclusive_minimum=c.exclusive_minimum,
                                exclusive_maximum=c.exclusive_maximum, multiple_of=c.multiple_of,
                                pointer=c.number_pointer, limits=t.limits)
    except GrammarError as exc:
        if exc.code == "empty-language":
            return None
        raise
    if c.numbers == "integer" and t.doc.plain_integers:
        node = intersect(node, _number_texts(PLAIN_INTEGER), limits=t.limits, label="integer")
    removed = [number_node(minimum=v, maximum=v, limits=t.limits) for v in c.excluded_numbers]
    removed += [n for s in c.excluded_number_sets if (n := number_text(t, s)) is not None]
    if c.not_integer:
        if c.numbers == "integer":
            return None
        # Drafts 3-4 call only the texts without fraction integers (`1.0` is not one).
        removed.append(_number_texts(PLAIN_INTEGER) if t.doc.plain_integers else
                       number_automaton(integer=True, minimum=c.minimum, maximum=c.maximum,
                                        exclusive_minimum=c.exclusive_minimum,
                                        exclusive_maximum=c.exclusive_maximum,
                                        limits=t.limits))
    if removed:
        node = difference(intersect(node, number_domain(), limits=t.limits, label="number"),
                          Choice(tuple(removed)), limits=t.limits, label="number")
        if node.dfa.is_empty_language:
            return None
    return node


def string_content_node(t: "Translation", c: "Constraints", *,
                        removed: bool = False) -> Node | None:
    """The decoded string values `c` allows by format, pattern and exclusions (None: any);
    `removed`: for a complement to remove, so formats give their supersets (`relaxations`)."""
    contents: list[Node] = []
    for name, where in c.formats:
        try:
            contents.append(format_language(name, removed=removed, span_pointer=where))
        except GrammarError as exc:
            if exc.code != "unsupported-format" or not t.options.lenient:
                raise
            t.warn(lenient_warning(where, f"format {name!r} is not supported"))
    for pattern, where in c.patterns:
        contents.append(ecma_pattern(pattern, pointer=where, limits=t.limits))
    excluded = [string_content(s) for s in c.excluded_strings]
    excluded += [_string_values(t, s) for s in c.excluded_string_sets]
    if excluded:
        contents.append(difference(ANY_STRING, Choice(tuple(excluded)), limits=t.limits,
                                   label="string"))
    if not contents:
        return None
    return contents[0] if len(contents) == 1 else intersect(*contents, limits=t.limits,
                                                             label="string")


def _string_values(t: "Translation", s: "Constraints") -> Node:
    """The decoded strings `s` accepts, length bounds included (as an automaton), for a
    complement to remove: formats as their supersets."""
    content = string_content_node(t, s, removed=True)
    if not s.min_length and s.max_length is None:
        return ANY_STRING if content is None else content
    values = as_dfa(ANY_STRING if content is None else content, t.limits)
    try:
        return Automaton(counted(values, s.min_length, s.max_length, t.limits),
                         label="string length")
    except BudgetExceeded as exc:
        raise exc.located(pointer=s.string_pointer) from None


def string_text(t: "Translation", c: "Constraints") -> Node | None:
    """The JSON string literals `c` allows, or None if there are none."""
    if c.max_length is not None and c.max_length < c.min_length:
        return None
    if any(name == "regex" for name, _ in c.formats):
        if _regex_alone(t, c):
            return _regex_text(t, c)
        c = dataclasses.replace(c, formats=[f for f in c.formats if f[0] != "regex"])
    content = string_content_node(t, c)
    excludes = () if c.patterns or c.formats else t.options.string_excludes
    if content is None and max(c.min_length, c.max_length or 0) >= CHUNKED_FROM and \
            not excludes:
        return chunked_string(c.min_length, c.max_length, t.kept_rule)
    try:
        node = json_string(content, min_length=c.min_length,
                           max_length=c.max_length, pointer=c.string_pointer, limits=t.limits)
        return excluding(node, excludes, t.limits) if excludes else node
    except GrammarError as exc:
        if exc.code == "empty-language":
            return None
        raise


def _regex_alone(t: "Translation", c: "Constraints") -> bool:
    """Whether `format: "regex"` stands alone in `c`: its language is context-free, so nothing
    regular can be intersected with it. Otherwise an `unsupported-format` error, or, lenient,
    a warning and the format ignored (False)."""
    where = next(w for name, w in c.formats if name == "regex")
    if not (c.patterns or c.min_length or c.max_length is not None or len(c.formats) > 1 or
            c.excluded_strings or c.excluded_string_sets or t.options.string_excludes):
        return True
    message = ("format 'regex' is supported alone: its language is context-free, so a pattern, "
               "a length bound, another format or excluded strings beside it are not "
               "expressible")
    if not t.options.lenient:
        raise GrammarError(message + "; compile with lenient=True to ignore it", pointer=where,
                           code="unsupported-format")
    t.warn(lenient_warning(where, message))
    return False


def _regex_text(t: "Translation", c: "Constraints") -> Node:
    """The literals of `format: "regex"` (`regex_syntax.py`), in raw spellings."""
    where = next(w for name, w in c.formats if name == "regex")
    t.warn(raw_spellings_note(where, "with every escape the automata of the pattern syntax's "
                              "classes and quantifiers would grow several times"))
    return t.kept_grammar("format-regex", regex_grammar())


def _number_ok(c: "Constraints", v: Fraction, plain: bool) -> bool:
    """Whether value v satisfies `c`'s numeric keywords; `plain` (drafts 3-4): whether a
    spelling of v is an integer is left to the spellings (`members.py`), so only the rest is
    checked here."""
    if c.not_integer and v.denominator == 1 and not plain:
        return False
    if c.minimum is not None and (v < c.minimum or (c.exclusive_minimum and v == c.minimum)):
        return False
    if c.maximum is not None and (v > c.maximum or (c.exclusive_maximum and v == c.maximum)):
        return False
    if c.multiple_of is not None and (v / c.multiple_of).denominator != 1:
        return False
    if v in c.excluded_numbers:
        return False
    return not any((v.denominator == 1 or "number" in s.types) and _number_ok(s, v, plain)
                   and not (plain and s.numbers == "integer") for s in c.excluded_number_sets)


def _string_ok(t: "Translation", c: "Constraints", content: Node | None, v: str) -> bool:
    if len(v) < c.min_length or (c.max_length is not None and len(v) > c.max_length):
        return False
    if content is None:
        return True
    try:
        data = v.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return as_dfa(content, t.limits).fullmatch(data)


def enum_members(t: "Translation", c: "Constraints", *, removed: bool = False) -> list[Any]:
    """The `enum`/`const` members that satisfy every other keyword of `c` (`removed`: for a
    complement to remove, so string formats are read as their supersets)."""
    assert c.values is not None
    kept: list[Any] = []
    content: Node | None = None
    content_known = False
    plain = t.doc.plain_integers
    for i, (key, v) in enumerate(c.values.items()):
        if not i & 1023:
            deadline.check()
        kind = json_type(v)
        if key in c.excluded_values:
            continue
        if kind == "integer":
            if c.numbers is None or not _number_ok(c, exact_number(v), plain):
                continue
        elif kind == "number":
            if c.numbers != "number" or not _number_ok(c, exact_number(v), plain):
                continue
        elif kind not in c.types:
            continue
        elif kind == "string":
            if not content_known:
                content, content_known = string_content_node(t, c, removed=removed), True
            if not _string_ok(t, c, content, v):
                continue
        kept.append(v)
    return kept


__all__ = ["enum_members", "number_text", "string_content_node", "string_text"]
