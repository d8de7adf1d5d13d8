"""Lark terminals to grammar IR, with Python `re`'s meaning (what Lark's lexers match).

A terminal is a tree of string and regex atoms (`"abc"i`, `/[a-z]+/x`) or, after Lark's
compilation, one joined regex. Atoms are read by `grammask.compiler.regex.parse_regex` after a
text rewrite that gives it Python's semantics: the Unicode shorthands `\\d \\w \\s` (and their
complements) become explicit code-point ranges, the flags `x` (verbose) and `s` (dot-all) are
applied to the text, `i` (ignore case) is applied to the IR with Python's own case-folding, and a
`{` that does not form a quantifier is a literal brace. The exact behaviour is documented in
`grammask/specs/lark.md`.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lark import Token, Tree
from lark.exceptions import LarkError
from lark.lexer import Pattern, PatternRE, PatternStr
from lark.load_grammar import _literal_to_pattern

from .errors import GrammarError
from .ir import (
    CharClass,
    Choice,
    Literal,
    Node,
    Repeat,
    Seq,
    Span,
    children,
    complement_ranges,
    normalize_ranges,
)
from .limits import Limits
from .regex import parse_regex

__all__ = [
    "REWRITES",
    "TerminalIR",
    "fold_case",
    "literal_pattern",
    "pattern_ir",
    "range_pattern",
    "repeat_bounds",
    "string_ir",
    "terminal_ir",
    "tree_size",
]

Ranges = tuple[tuple[int, int], ...]
LAZY = "lazy"
ANCHOR = "anchor"


def _escaped_string_rewrite(quote: str) -> tuple[tuple[str, str, frozenset[str]], str]:
    r"""`Q _STRING_ESC_INNER Q` from common.lark, as Lark joins it, and its exact token language."""
    q = re.escape(quote)
    key: tuple[str, str, frozenset[str]] = ("re", q + r".*?(?<!\\)(\\\\)*?" + q, frozenset())
    cls = "[^" + q + "\\\\\\n]"
    return key, q + "(?:" + cls + "|\\\\.)*" + q


# Exact rewrites, keyed by (pattern type, the regex text Lark produces, flags). Each maps to the
# language of the tokens Lark's lexer can produce for that terminal; why each is exact is in
# specs/lark.md.
REWRITES: dict[tuple[str, str, frozenset[str]], str] = dict(
    [_escaped_string_rewrite(q) for q in ('"', "'", "`")]
    + [(("re", "/\\*(.|\n)*?\\*/", frozenset()), r"/\*(?:[^*]|\*+[^*/])*\*+/")]
)

_SHORTHAND = "dwsDWS"
_WHITESPACE = " \t\n\r\v\f"
_QUANTIFIER = re.compile(r"\{[0-9]*(?:,[0-9]*)?\}")


@functools.cache
def _universe() -> str:
    """Every code point, at its own index (lone surrogates included, as Python allows)."""
    return "".join(map(chr, range(0x110000)))


@functools.cache
def shorthand_ranges(letter: str) -> Ranges:
    """The scalar values Python's `re` (Unicode mode) matches with `\\<letter>`."""
    runs = re.finditer("\\" + letter.lower() + "+", _universe())
    ranges = normalize_ranges((m.start(), m.end() - 1) for m in runs)
    return complement_ranges(ranges) if letter.isupper() else ranges


def _class_body(ranges: Ranges) -> str:
    return "".join(f"\\U{lo:08X}" if lo == hi else f"\\U{lo:08X}-\\U{hi:08X}" for lo, hi in ranges)


@functools.cache
def _cased() -> str:
    """Every character that has a case mapping, and their one-character images (all below
    U+20000): the only characters ignore-case matching can relate to another one."""
    cps: set[int] = set()
    for cp in range(0x20000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        images = (ch.lower(), ch.upper(), ch.casefold())
        if any(x != ch for x in images):
            cps.add(cp)
            cps.update(ord(x) for x in images if len(x) == 1)
    return "".join(map(chr, sorted(cps)))


@functools.lru_cache(maxsize=4096)
def _fold_char(ch: str) -> Ranges:
    if ch not in _cased_set():
        return ((ord(ch), ord(ch)),)
    matcher = re.compile("(?i:" + re.escape(ch) + ")")
    return normalize_ranges([(ord(ch), ord(ch))] + [(ord(m.group()),) * 2 for m in matcher.finditer(_cased())])


@functools.cache
def _cased_set() -> frozenset[str]:
    return frozenset(_cased())


@functools.lru_cache(maxsize=1024)
def _fold_ranges(ranges: Ranges) -> Ranges:
    if not ranges:
        return ranges
    matcher = re.compile("(?i:[" + _class_body(ranges) + "])")
    return normalize_ranges(list(ranges) + [(ord(m.group()),) * 2 for m in matcher.finditer(_cased())])


def _fold_text(text: str) -> Node:
    """`text` matched as Python's `re` does under IGNORECASE: one class per cased character."""
    items: list[Node] = []
    run: list[str] = []
    for ch in text:
        ranges = _fold_char(ch)
        if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
            run.append(ch)
            continue
        if run:
            items.append(Literal("".join(run).encode("utf-8")))
            run.clear()
        items.append(CharClass(ranges))
    if run:
        items.append(Literal("".join(run).encode("utf-8")))
    return items[0] if len(items) == 1 else Seq(tuple(items))


def _rebuild(node: Node, leaf: Callable[[Node], Node]) -> Node:
    """`node` with every Literal/CharClass mapped by `leaf` and every span dropped, without
    recursion; shared sub-expressions stay shared."""
    memo: dict[int, Node] = {}
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        n, ready = stack.pop()
        if id(n) in memo:
            continue
        kids = children(n)
        if isinstance(n, (Literal, CharClass)):
            memo[id(n)] = leaf(n)
        elif not kids or ready:
            new = tuple(memo[id(k)] for k in kids)
            if isinstance(n, Seq):
                memo[id(n)] = Seq(new)
            elif isinstance(n, Choice):
                memo[id(n)] = Choice(new)
            elif isinstance(n, Repeat):
                memo[id(n)] = Repeat(new[0], n.min, n.max)
            else:
                memo[id(n)] = n
        else:
            stack.append((n, True))
            stack.extend((k, False) for k in kids)
    return memo[id(node)]


def fold_case(node: Node) -> Node:
    """`node` matched case-insensitively, with Python's `re` IGNORECASE rules (Unicode)."""

    def leaf(n: Node) -> Node:
        if isinstance(n, Literal):
            return _fold_text(n.data.decode("utf-8"))
        assert isinstance(n, CharClass)
        return CharClass(_fold_ranges(n.ranges))

    return _rebuild(node, leaf)


def _strip_spans(node: Node) -> Node:
    return _rebuild(node, lambda n: Literal(n.data) if isinstance(n, Literal) else CharClass(n.ranges))  # type: ignore[union-attr]


def _escape_end(p: str, i: int) -> int:
    """Index just past the escape starting at p[i] == '\\' (enough of it to copy verbatim)."""
    if p.startswith("\\N{", i) and "}" in p[i:]:
        return p.index("}", i) + 1
    return min(i + 2, len(p))


class _Scanner:
    """One pass over a valid Python regex: rewrites it for `parse_regex` and records the
    features that matter (lazy quantifiers, anchors)."""

    def __init__(self, pattern: str, flags: frozenset[str]) -> None:
        self.p = pattern
        self.verbose = "x" in flags
        self.dotall = "s" in flags
        self.fold = "i" in flags
        self.found: set[str] = set()

    def run(self) -> str:
        p, out, i, n = self.p, [], 0, len(self.p)
        while i < n:
            c = p[i]
            if c == "\\":
                j = _escape_end(p, i)
                esc = p[i:j]
                if len(esc) == 2 and esc[1] in _SHORTHAND:
                    out.append("[" + _class_body(shorthand_ranges(esc[1])) + "]")
                else:
                    if esc in ("\\A", "\\Z"):
                        self.found.add(ANCHOR)
                    out.append(esc)
                i = j
            elif c == "[":
                text, i = self._char_class(i)
                out.append(text)
            elif self.verbose and c in _WHITESPACE:
                i += 1
            elif self.verbose and c == "#":
                end = p.find("\n", i)
                i = n if end < 0 else end + 1
            elif p.startswith("(?", i):
                out.append("(?")
                i += 2
            elif c == ".":
                out.append("(?:.|\\n)" if self.dotall else ".")
                i += 1
            elif c in "*+?":
                out.append(c)
                i = self._lazy(i + 1, out)
            elif c == "{":
                m = _QUANTIFIER.match(p, i)
                if m and m.group() != "{}":
                    out.append(m.group())
                    i = self._lazy(m.end(), out)
                else:
                    out.append("\\{")
                    i += 1
            else:
                if c in "^$":
                    self.found.add(ANCHOR)
                out.append(c)
                i += 1
        return "".join(out)

    def _lazy(self, i: int, out: list[str]) -> int:
        if self.p.startswith("?", i):
            self.found.add(LAZY)
            out.append("?")
            return i + 1
        return i

    def _char_class(self, i: int) -> tuple[str, int]:
        p, n = self.p, len(self.p)
        j = i + 1
        negated = p.startswith("^", j)
        j += negated
        body: list[str] = []
        if p.startswith("]", j):
            body.append("\\]")
            j += 1
        while j < n and p[j] != "]":
            if p[j] == "\\":
                k = _escape_end(p, j)
                esc = p[j:k]
                body.append(_class_body(shorthand_ranges(esc[1])) if len(esc) == 2 and esc[1] in _SHORTHAND else esc)
                j = k
            else:
                body.append("\\" + p[j] if p[j] in "[&~|" else p[j])
                j += 1
        text = "".join(body)
        end = min(j + 1, n)
        if negated and self.fold:
            return self._folded_negation(text), end
        return "[" + "^" * negated + text + "]", end

    def _folded_negation(self, body: str) -> str:
        """`[^body]` under IGNORECASE: Python excludes every character whose case-folded form is
        in the folded set, i.e. the complement of the folded positive class."""
        try:
            node = parse_regex("[" + body + "]")
        except GrammarError:
            return "[^" + body + "]"
        if not isinstance(node, CharClass):
            return "[^" + body + "]"
        out = complement_ranges(_fold_ranges(node.ranges))
        return "[" + _class_body(out) + "]" if out else "[^\\U00000000-\\U0010FFFF]"


@dataclass(frozen=True)
class TerminalIR:
    """The IR of one terminal and the warnings about it (code -> message)."""

    node: Node
    warnings: dict[str, str]


def range_pattern(lo: Any, hi: Any) -> Pattern:
    """Lark's pattern for `"a".."z"`: the regex class it builds from the two strings' text."""
    return PatternRE(f"[{str(lo)[1:-1]}-{str(hi)[1:-1]}]")


def literal_pattern(token: Any, span: Span | None = None) -> Pattern:
    """Lark's pattern for a string or regex literal token (escapes and flags applied)."""
    try:
        return _literal_to_pattern(token)
    except LarkError as e:
        raise _fail(f"bad literal {str(token)[:60]}: {e}", span, "lark-grammar") from None


def _fail(message: str, span: Span | None, code: str) -> GrammarError:
    return GrammarError(message, line=span.line if span else None,
                        column=span.column if span else None,
                        source=span.source if span else None, code=code)


def string_ir(text: str, ignore_case: bool, what: str, span: Span | None) -> Node:
    """The IR of a Lark string literal (`"abc"` or `"abc"i`)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        raise _fail(f"{what}: the string {text!r} contains a lone surrogate; only Unicode scalar "
                    "values can be matched", span, "lark-terminal") from None
    return _fold_text(text) if ignore_case else Literal(data)


def pattern_ir(pattern: Pattern, what: str, span: Span | None, limits: Limits,
               warnings: dict[str, str]) -> Node:
    """The IR of one Lark pattern (a string or a regex with its flags), as Python's `re` reads it.

    `what` names the terminal in messages; warnings are added to `warnings` (code -> message).
    """
    flags = frozenset(pattern.flags)
    if isinstance(pattern, PatternStr):
        return string_ir(pattern.value, "i" in flags, what, span)
    shown = f"/{pattern.value}/{''.join(sorted(flags))}"
    try:
        re.compile(pattern.to_regexp())
    except (re.error, OverflowError, RecursionError, ValueError) as e:
        raise _fail(f"{what}: regex {shown} is not a valid Python regex: {e}", span, "lark-terminal") from None
    scanner = _Scanner(pattern.value, flags)
    text = scanner.run()
    if ANCHOR in scanner.found and "m" in flags:
        raise _fail(f"{what}: regex {shown} uses anchors with the flag 'm' (multiline), which match "
                    "after any newline in the input; rewrite without anchors", span, "lark-flag")
    try:
        node = parse_regex(text, limits=limits)
    except GrammarError as e:
        where = f" (column {e.column} of the regex)" if text == pattern.value and e.column else ""
        raise type(e)(f"{what}: regex {shown}{where}: {e.message}", line=span.line if span else None,
                      column=span.column if span else None, source=span.source if span else None,
                      code=e.code) from None
    if LAZY in scanner.found:
        warnings["lark-lazy"] = (
            f"{what}: regex {shown} has a lazy quantifier; grammask accepts every full match of the "
            "regex, while Lark's lexer stops at the shortest one, so some accepted tokens would be "
            "split by Lark")
    if ANCHOR in scanner.found:
        warnings["lark-anchor"] = (
            f"{what}: regex {shown} has an anchor, which grammask ignores (every token is matched "
            "whole); in Lark '^' only matches at the start of the input and '$' at its end")
    return fold_case(node) if "i" in flags else _strip_spans(node)


def tree_size(tree: Any, memo: dict[int, int]) -> int:
    """How large a terminal's definition is once Lark expands every terminal it references
    (a measure of the regex text Lark would build), without expanding it."""
    stack = [(tree, False)]
    while stack:
        t, ready = stack.pop()
        if id(t) in memo:
            continue
        if isinstance(t, Token):
            memo[id(t)] = len(t)
        elif not isinstance(t, Tree):
            memo[id(t)] = 1
        elif ready:
            memo[id(t)] = 4 + sum(memo[id(c)] for c in t.children)
        else:
            stack.append((t, True))
            stack.extend((c, False) for c in t.children)
    return memo[id(tree)]


def seq(items: list[Node]) -> Node:
    """Concatenation of `items`, nested sequences flattened, one item unwrapped."""
    flat: list[Node] = []
    for item in items:
        flat.extend(item.items if isinstance(item, Seq) else (item,))
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def choice(items: list[Node]) -> Node:
    """Alternation of `items`, nested alternations flattened, one item unwrapped."""
    flat: list[Node] = []
    for item in items:
        flat.extend(item.alternatives if isinstance(item, Choice) and item.alternatives else (item,))
    return flat[0] if len(flat) == 1 else Choice(tuple(flat))


def repeat_bounds(op: str, numbers: list[Any], what: str, span: Span | None) -> tuple[int, int | None]:
    """The bounds of a Lark operator: `?`, `*`, `+`, `~ n` or `~ n..m` (0 <= n <= m)."""
    if op != "~":
        return {"?": (0, 1), "*": (0, None), "+": (1, None)}[op]
    lo, hi = int(numbers[0]), int(numbers[-1])
    if not 0 <= lo <= hi:
        shown = f"~ {lo}" if len(numbers) == 1 else f"~ {lo}..{hi}"
        raise _fail(f"{what}: bad repetition '{shown}': counts must be 0 <= min <= max", span, "lark-grammar")
    return lo, hi


def _tree_ir(tree: Any, what: str, span: Span | None, limits: Limits,
             warnings: dict[str, str], memo: dict[int, Node]) -> Node:
    if id(tree) in memo:
        return memo[id(tree)]
    if not isinstance(tree, Tree):
        raise _fail(f"{what}: unexpected {tree!r} in a terminal definition", span, "lark-terminal")
    kids = tree.children

    def sub(t: Any) -> Node:
        return _tree_ir(t, what, span, limits, warnings, memo)

    kind = tree.data
    if kind == "expansions":
        node = choice([sub(k) for k in kids])
    elif kind == "expansion":
        node = seq([sub(k) for k in kids])
    elif kind == "value":
        node = sub(kids[0])
    elif kind == "maybe":
        node = Repeat(sub(kids[0]), 0, 1)
    elif kind == "expr":
        lo, hi = repeat_bounds(str(kids[1]), kids[2:], what, span)
        node = Repeat(sub(kids[0]), lo, hi)
    elif kind == "literal":
        node = pattern_ir(literal_pattern(kids[0], span), what, span, limits, warnings)
    elif kind == "range":
        node = pattern_ir(range_pattern(kids[0], kids[1]), what, span, limits, warnings)
    else:
        raise _fail(f"{what}: '{kind}' cannot appear in a terminal definition", span, "lark-terminal")
    memo[id(tree)] = node
    return node


def terminal_ir(name: str, tree: Any, compiled: Pattern, span: Span | None, limits: Limits) -> TerminalIR:
    """The IR of terminal `name`: an exact rewrite when Lark's joined regex is in `REWRITES`,
    otherwise its definition tree (named terminals) or its pattern (anonymous ones)."""
    what = f"terminal {name}"
    warnings: dict[str, str] = {}
    rewrite = REWRITES.get((compiled.type, compiled.value, frozenset(compiled.flags)))
    if rewrite is not None:
        return TerminalIR(_strip_spans(parse_regex(rewrite, limits=limits)), warnings)
    if tree is None:
        node = pattern_ir(compiled, what, span, limits, warnings)
    else:
        node = _tree_ir(tree, what, span, limits, warnings, {})
    return TerminalIR(node, warnings)


def check_lexable(name: str, pattern: Pattern, span: Span | None) -> None:
    """Refuse what every Lark lexer refuses when it builds a parser: a terminal whose regex is
    invalid, or that can match the empty string."""
    try:
        width = pattern.min_width
    except Exception as e:  # noqa: BLE001 - Lark's width probe raises whatever sre/regex raise
        raise _fail(f"terminal {name}: regex /{pattern.value}/ is not a valid Python regex ({e})",
                    span, "lark-terminal") from None
    if width == 0:
        raise _fail(f"terminal {name} matches the empty string; Lark's lexers reject zero-width "
                    "terminals", span, "lark-terminal")
