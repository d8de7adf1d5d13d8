"""Lark terminals to grammar IR, with Python `re`'s meaning (what Lark's lexers match).

A terminal is Lark's compiled pattern: a string (`"abc"`, `"abc"i`) or one regex, which Lark
joins from the terminal's definition (flagged parts become `(?i:...)` groups). Strings become
literals; a regex is rewritten for `grammask.compiler.frontends.regex.parse_regex` so that it means what
Python's `re` makes of it: the Unicode shorthands `\\d \\w \\s` (and complements) become
explicit ranges, the flags `i` (ignore case, with Python's own folding), `s` (dot-all) and `x`
(verbose) are applied to the text within their scope, and a `{` that does not form a quantifier
is a literal brace. The exact behaviour is documented in `grammask/specs/lark.md`.
"""
from __future__ import annotations

import re
import warnings as warnings_module
from dataclasses import dataclass
from typing import Any

from lark import Token, Tree
from lark.lexer import Pattern, PatternStr

from ..ir.nodes import (
    CharClass,
    Choice,
    Literal,
    Node,
    Ranges,
    Repeat,
    Seq,
    children,
    complement_ranges,
    normalize_ranges,
)
from ..support.caches import memo
from ..support.diagnostics import Span
from ..support.errors import GrammarError
from ..support.limits import Limits
from .regex import parse_regex

__all__ = [
    "REWRITES",
    "TerminalIR",
    "cased_characters",
    "check_lexable",
    "choice",
    "fold_char",
    "pattern_ir",
    "repeat_bounds",
    "seq",
    "shorthand_ranges",
    "string_ir",
    "terminal_ir",
    "tree_size",
]

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


@memo(maxsize=1, static=True)
def _universe() -> str:
    """Every code point, at its own index (lone surrogates included, as Python allows)."""
    return "".join(map(chr, range(0x110000)))


@memo(maxsize=len(_SHORTHAND), static=True)
def shorthand_ranges(letter: str) -> Ranges:
    """The scalar values Python's `re` (Unicode mode) matches with `\\<letter>`."""
    runs = re.finditer("\\" + letter.lower() + "+", _universe())
    ranges = normalize_ranges((m.start(), m.end() - 1) for m in runs)
    return complement_ranges(ranges) if letter.isupper() else ranges


def _class_body(ranges: Ranges) -> str:
    return "".join(f"\\U{lo:08X}" if lo == hi else f"\\U{lo:08X}-\\U{hi:08X}" for lo, hi in ranges)


@memo(maxsize=1, static=True)
def cased_characters() -> str:
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


@memo(maxsize=4096)
def fold_char(ch: str) -> Ranges:
    """The ranges of the characters Python's `re` matches for `ch` under IGNORECASE."""
    if ch not in _cased_set():
        return ((ord(ch), ord(ch)),)
    matcher = re.compile("(?i:" + re.escape(ch) + ")")
    return normalize_ranges([(ord(ch), ord(ch))] + [(ord(m.group()),) * 2 for m in matcher.finditer(cased_characters())])


@memo(maxsize=1, static=True)
def _cased_set() -> frozenset[str]:
    return frozenset(cased_characters())


@memo(maxsize=1024)
def _fold_ranges(ranges: Ranges) -> Ranges:
    if not ranges:
        return ranges
    matcher = re.compile("(?i:[" + _class_body(ranges) + "])")
    return normalize_ranges(list(ranges) + [(ord(m.group()),) * 2 for m in matcher.finditer(cased_characters())])


def _fold_text(text: str) -> Node:
    """`text` matched as Python's `re` does under IGNORECASE: one class per cased character."""
    items: list[Node] = []
    run: list[str] = []
    for ch in text:
        ranges = fold_char(ch)
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


def _strip_spans(node: Node) -> Node:
    """`node` rebuilt without spans (they would be regex columns), without recursion."""
    memo: dict[int, Node] = {}
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        n, ready = stack.pop()
        if id(n) in memo:
            continue
        kids = children(n)
        if kids and not ready:
            stack.append((n, True))
            stack.extend((k, False) for k in kids)
            continue
        new = tuple(memo[id(k)] for k in kids)
        if isinstance(n, Literal):
            memo[id(n)] = Literal(n.data)
        elif isinstance(n, CharClass):
            memo[id(n)] = CharClass(n.ranges)
        elif isinstance(n, Seq):
            memo[id(n)] = Seq(new)
        elif isinstance(n, Choice):
            memo[id(n)] = Choice(new)
        elif isinstance(n, Repeat):
            memo[id(n)] = Repeat(new[0], n.min, n.max)
        else:
            memo[id(n)] = n
    return memo[id(node)]


_ESCAPE_DIGITS = {"x": 2, "u": 4, "U": 8}
_FLAG_GROUP = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?:")
_GLOBAL_FLAGS = re.compile(r"\(\?([a-zA-Z]+)\)")
_SUPPORTED_FLAGS = frozenset("imsux")


def _escape_end(p: str, i: int) -> int:
    """Index just past the escape that starts at p[i] == '\\'."""
    c = p[i + 1:i + 2]
    if c in _ESCAPE_DIGITS:
        return min(i + 2 + _ESCAPE_DIGITS[c], len(p))
    if c == "N" and p.startswith("{", i + 2) and "}" in p[i:]:
        return p.index("}", i) + 1
    if c.isdigit():
        j = i + 2
        while j < len(p) and j < i + 4 and p[j].isdigit():
            j += 1
        return j
    return min(i + 2, len(p))


class _Scanner:
    """One pass over a valid Python regex: the equivalent text for `parse_regex`, and the
    features found (lazy quantifiers, anchors)."""

    def __init__(self, pattern: str, flags: frozenset[str], what: str, span: Span | None) -> None:
        self.p = pattern
        self.flags = flags
        self.what = what
        self.shown = _show_regex(pattern, flags)
        self.span = span
        self.found: set[str] = set()

    def _unsupported(self, flags: str) -> GrammarError:
        return _fail(f"{self.what}: inline flags '{flags}' are not supported (only i, m, s, u, x)",
                     self.span, "lark-flag")

    def run(self) -> str:
        p, out, n = self.p, [], len(self.p)
        flags, stack = self.flags, []
        i = 0
        m = _GLOBAL_FLAGS.match(p)
        if m:
            if not set(m[1]) <= _SUPPORTED_FLAGS:
                raise self._unsupported(m[1])
            flags, i = flags | set(m[1]), m.end()
        while i < n:
            c = p[i]
            if c == "\\":
                j = _escape_end(p, i)
                out.append(self._escape(p[i:j], flags))
                i = j
            elif c == "[":
                text, i = self._char_class(i, flags)
                out.append(text)
            elif "x" in flags and c in _WHITESPACE:
                i += 1
            elif "x" in flags and c == "#":
                end = p.find("\n", i)
                i = n if end < 0 else end + 1
            elif c == "(":
                stack.append(flags)
                m = _FLAG_GROUP.match(p, i)
                if m:
                    if not set(m[1] + (m[2] or "")) <= _SUPPORTED_FLAGS:
                        raise self._unsupported(m.group())
                    flags = (flags | set(m[1])) - set(m[2] or "")
                    out.append("(?:")
                    i = m.end()
                else:
                    out.append("(?" if p.startswith("(?", i) else "(")
                    i += len(out[-1])
            elif c == ")":
                flags = stack.pop() if stack else flags
                out.append(c)
                i += 1
            elif c == ".":
                out.append("(?:.|\\n)" if "s" in flags else ".")
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
            elif c in "^$":
                self._anchor(flags)
                out.append(c)
                i += 1
            else:
                out.append(self._literal(c, flags))
                i += 1
        return "".join(out)

    def _anchor(self, flags: frozenset[str]) -> None:
        if "m" in flags:
            raise _fail(f"{self.what}: regex {self.shown} uses anchors with the flag 'm' (multiline), "
                        "which match after any newline in the input; rewrite without anchors",
                        self.span, "lark-flag")
        self.found.add(ANCHOR)

    def _lazy(self, i: int, out: list[str]) -> int:
        if self.p.startswith("?", i):
            self.found.add(LAZY)
            out.append("?")
            return i + 1
        return i

    def _escape(self, esc: str, flags: frozenset[str]) -> str:
        if len(esc) == 2 and esc[1] in _SHORTHAND:
            return self._ranges(shorthand_ranges(esc[1]), flags)
        if esc in ("\\A", "\\Z"):
            self._anchor(flags)
        if esc[1:2] == "u" and len(esc) == 6 and 0xD800 <= int(esc[2:], 16) <= 0xDFFF:
            raise _fail(f"{self.what}: the escape {esc} is a lone surrogate, which no UTF-8 text "
                        "contains", self.span, "lark-terminal")
        return self._literal(esc, flags)

    def _literal(self, text: str, flags: frozenset[str]) -> str:
        """One literal character (or its escape), folded under IGNORECASE."""
        if "i" not in flags:
            return text
        try:
            node = parse_regex(text)
        except GrammarError:
            return text
        if not isinstance(node, Literal):
            return text
        chars = node.data.decode("utf-8")
        if len(chars) != 1:
            return text
        ranges = fold_char(chars)
        return text if ranges == ((ord(chars),) * 2,) else self._ranges(ranges, frozenset())

    def _ranges(self, ranges: Ranges, flags: frozenset[str]) -> str:
        ranges = _fold_ranges(ranges) if "i" in flags else ranges
        return "[" + _class_body(ranges) + "]" if ranges else "[^\\U00000000-\\U0010FFFF]"

    def _char_class(self, i: int, flags: frozenset[str]) -> tuple[str, int]:
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
        text, end = "".join(body), min(j + 1, n)
        if "i" not in flags:
            return "[" + "^" * negated + text + "]", end
        try:
            node = parse_regex("[" + text + "]")
        except GrammarError:
            return "[" + "^" * negated + text + "]", end
        assert isinstance(node, CharClass)
        folded = _fold_ranges(node.ranges)
        return self._ranges(complement_ranges(folded) if negated else folded, frozenset()), end


@dataclass(frozen=True)
class TerminalIR:
    """The IR of one terminal and the warnings about it (code -> message)."""

    node: Node
    warnings: dict[str, str]


def _fail(message: str, span: Span | None, code: str) -> GrammarError:
    return GrammarError(message, line=span.line if span else None,
                        column=span.column if span else None,
                        source=span.source if span else None, code=code)


def _show_regex(value: str, flags: frozenset[str]) -> str:
    text = f"/{value}/{''.join(sorted(flags))}"
    return text if len(text) <= 120 else text[:117] + "..."


def _show(pattern: Pattern) -> str:
    return _show_regex(pattern.value, frozenset(pattern.flags))


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
    """The IR of one Lark pattern (a string, or a regex with its flags) as Python's `re` reads it.

    `what` names the terminal in messages; warnings are added to `warnings` (code -> message).
    """
    flags = frozenset(pattern.flags)
    if isinstance(pattern, PatternStr):
        return string_ir(pattern.value, "i" in flags, what, span)
    shown = _show(pattern)
    try:
        with warnings_module.catch_warnings():
            warnings_module.simplefilter("ignore")
            re.compile(pattern.to_regexp())
    except (re.error, OverflowError, RecursionError, ValueError) as e:
        raise _fail(f"{what}: regex {shown} is not a valid Python regex: {e}", span, "lark-terminal") from None
    scanner = _Scanner(pattern.value, flags, what, span)
    text = scanner.run()
    try:
        node = parse_regex(text, limits=limits)
    except GrammarError as e:
        where = f" (column {e.column} of the regex)" if text == pattern.value and e.column else ""
        raise e.located(message=f"{what}: regex {shown}{where}: {e.message}",
                        line=span.line if span else None, column=span.column if span else None,
                        source=span.source if span else None) from None
    if LAZY in scanner.found:
        warnings["lark-lazy"] = (
            f"{what}: regex {shown} has a lazy quantifier; grammask accepts every full match of the "
            "regex, while Lark's lexer stops at the shortest one, so some accepted tokens would be "
            "split by Lark")
    if ANCHOR in scanner.found:
        warnings["lark-anchor"] = (
            f"{what}: regex {shown} has an anchor, which grammask ignores (every token is matched "
            "whole); in Lark '^' only matches at the start of the input and '$' at its end")
    return _strip_spans(node)


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


def terminal_ir(name: str, pattern: Pattern, span: Span | None, limits: Limits) -> TerminalIR:
    """The IR of terminal `name` from Lark's compiled pattern: an exact rewrite when the pattern
    is in `REWRITES`, otherwise the pattern as Python's `re` reads it."""
    warnings: dict[str, str] = {}
    rewrite = REWRITES.get((pattern.type, pattern.value, frozenset(pattern.flags)))
    if rewrite is not None:
        return TerminalIR(_strip_spans(parse_regex(rewrite, limits=limits)), warnings)
    return TerminalIR(pattern_ir(pattern, f"terminal {name}", span, limits, warnings), warnings)


def check_lexable(name: str, pattern: Pattern, span: Span | None, empty: bool = False) -> None:
    """Refuse what every Lark lexer refuses when it builds a parser: a terminal whose regex is
    invalid, or (unless `empty`: llguidance's lexemes may) that can match the empty string."""
    if "l" in pattern.flags:
        raise _fail(f"terminal {name}: regex {_show(pattern)} uses the flag 'l' (locale), which "
                    "Python's re rejects for text patterns", span, "lark-flag")
    try:
        width = pattern.min_width
    except Exception as e:  # noqa: BLE001 - Lark's width probe raises whatever sre/regex raise
        raise _fail(f"terminal {name}: regex {_show(pattern)} is not a valid Python regex ({e})",
                    span, "lark-terminal") from None
    if width == 0 and not empty:
        raise _fail(f"terminal {name} matches the empty string; Lark's lexers reject zero-width "
                    "terminals", span, "lark-terminal")
