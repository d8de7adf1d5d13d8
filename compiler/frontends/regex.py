"""The regex frontend: pattern text to grammar IR, with fullmatch semantics.

The meta-grammar lives in `grammask/specs/regex.lark` (LALR(1), contextual lexer); the exact
language and what is rejected is documented in `grammask/specs/regex.md`. The IR is built by
parser callbacks while Lark parses, so nesting depth never turns into Python recursion.
"""
from __future__ import annotations

import contextvars
import dataclasses
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.resources import files
from typing import Union

from lark import Lark, Token, UnexpectedInput, UnexpectedToken
from lark.lark import PostLex

from ..ir.nodes import CharClass, Choice, Literal, Node, Ranges, Repeat, Seq, complement_ranges
from ..ir.normalize import concat, cover
from ..support import deadline
from ..support.caches import memo
from ..support.diagnostics import Span
from ..support.errors import GrammarError
from ..support.limits import DEFAULT_LIMITS, Limits

__all__ = ["parse_regex"]


_DIGIT: Ranges = ((0x30, 0x39),)
_WORD: Ranges = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
_SPACE: Ranges = ((0x09, 0x0D), (0x20, 0x20))
_SHORTHANDS: dict[str, Ranges] = {
    "d": _DIGIT, "w": _WORD, "s": _SPACE,
    "D": complement_ranges(_DIGIT), "W": complement_ranges(_WORD), "S": complement_ranges(_SPACE),
}
_DOT: Ranges = complement_ranges(((0x0A, 0x0A),))
_CONTROLS = {"n": 0x0A, "t": 0x09, "r": 0x0D, "f": 0x0C, "v": 0x0B, "a": 0x07}
_WHY = "grammask compiles regular languages to automata"

# (prefix, construct, advice) for `(?` extensions that are recognised but rejected.
_GROUP_EXTENSIONS = (
    ("(?<=", "lookbehind", "rewrite without lookaround"),
    ("(?<!", "negative lookbehind", "rewrite without lookaround"),
    ("(?=", "lookahead", "rewrite without lookaround"),
    ("(?!", "negative lookahead", "rewrite without lookaround"),
    ("(?>", "atomic group", "use a plain group (?:...) if the language is the same"),
    ("(?P=", "backreference", "backreferences do not describe a regular language"),
    ("(?P>", "recursion", "use an EBNF grammar for recursive structure"),
    ("(?&", "recursion", "use an EBNF grammar for recursive structure"),
    ("(?R", "recursion", "use an EBNF grammar for recursive structure"),
    ("(?#", "comment group", "remove the comment"),
    ("(?(", "conditional group", "rewrite as an alternation"),
    ("(?|", "branch reset group", "use a plain group (?:...)"),
)


@dataclass(frozen=True)
class _Anchor:
    text: str
    start: int
    at_start: bool


@dataclass(frozen=True)
class _Open:
    start: int
    negated: bool = False
    ranges: Ranges = ()


@dataclass(frozen=True)
class _Quant:
    min: int
    max: int | None
    start: int
    end: int


@dataclass(frozen=True)
class _Branch:
    node: Node
    anchor: _Anchor | None


_LIMITS: contextvars.ContextVar[Limits] = contextvars.ContextVar("grammask_regex_limits")

_Item = Union[Node, _Anchor]


def _err(message: str, pos: int, code: str = "regex-syntax") -> GrammarError:
    return GrammarError(message, line=1, column=pos + 1, code=code)


def _unsupported(what: str, construct: str, pos: int, advice: str) -> GrammarError:
    return _err(f"{what} {_show(construct)} is not supported: {_WHY}; {advice}", pos, "regex-unsupported")


def _span(start: int, end: int) -> Span:
    """Span of pattern[start:end] (0-based, end exclusive)."""
    return Span(1, start + 1, 1, max(end, start + 1))




def _show(text: str) -> str:
    text = text if len(text) <= 40 else text[:40] + "..."
    return f"'{text}'" if text.isprintable() else repr(text)


def _scalar(cp: int, pos: int, escape: str | None = None) -> int:
    where = f" in {_show(escape)}" if escape else ""
    if cp > 0x10FFFF:
        raise _err(f"code point{where} is above U+10FFFF", pos)
    if 0xD800 <= cp <= 0xDFFF:
        raise _err(f"lone surrogate U+{cp:04X}{where}: only Unicode scalar values can be matched "
                   "(write a surrogate pair \\uD83D\\uDE00 or \\u{1F600})", pos)
    return cp


def _escape(text: str, pos: int, in_class: bool) -> int | Ranges | str:
    """Decode one escape token: a code point, shorthand ranges, or an anchor letter."""
    if len(text) == 1:
        raise _err("incomplete escape: the pattern ends with a lone '\\'", pos)
    c = text[1]
    if c == "x":
        if len(text) != 4:
            raise _err(f"escape {_show(text)} needs exactly two hex digits, e.g. \\x41", pos)
        return int(text[2:], 16)
    if c == "u" and text.startswith("\\u{"):
        if not text.endswith("}") or not 4 < len(text) <= 10:
            raise _err(f"escape {_show(text)} needs 1 to 6 hex digits and a closing '}}'", pos)
        return _scalar(int(text[3:-1], 16), pos, text)
    if c == "u":
        if len(text) == 12:
            hi, lo = int(text[2:6], 16), int(text[8:12], 16)
            return 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
        if len(text) != 6:
            raise _err(f"escape {_show(text)} needs exactly four hex digits, e.g. \\u00e9", pos)
        return _scalar(int(text[2:], 16), pos, text)
    if c == "U":
        if len(text) != 10:
            raise _err(f"escape {_show(text)} needs exactly eight hex digits, e.g. \\U0001F600", pos)
        return _scalar(int(text[2:], 16), pos, text)
    if c == "N":
        if not (text.startswith("\\N{") and text.endswith("}")):
            raise _err(f"escape {_show(text)} needs a character name: \\N{{LATIN SMALL LETTER A}}", pos)
        try:
            named = unicodedata.lookup(text[3:-1])
        except KeyError:
            raise _err(f"unknown Unicode character name in {_show(text)}", pos) from None
        if len(named) != 1:
            raise _err(f"{_show(text)} names a sequence, not one character", pos)
        return _scalar(ord(named), pos, text)
    if c in "pP":
        raise _unsupported("Unicode property class", text, pos,
                           "write the code-point ranges explicitly, e.g. [\\u0041-\\u005a]")
    if c == "k":
        raise _unsupported("backreference", text, pos, "backreferences do not describe a regular language")
    if c.isdigit():
        if text == "\\0":
            return 0
        if c == "0":
            raise _err(f"octal escape {_show(text)} is not supported; use \\xNN", pos)
        raise _unsupported("backreference", text, pos, "backreferences do not describe a regular language")
    if c in _CONTROLS:
        return _CONTROLS[c]
    if c == "b" and in_class:
        return 0x08
    if c in "bB":
        raise _unsupported("word boundary", text, pos, "spell the boundary out with classes such as \\w and \\W")
    if c in "AZz":
        if in_class:
            raise _err(f"anchor {_show(text)} cannot appear inside a character class", pos)
        return c
    if c == "G":
        raise _unsupported("match-start anchor", text, pos, "remove it")
    if c in _SHORTHANDS:
        return _SHORTHANDS[c]
    if c.isascii() and c.isalpha():
        raise _err(f"unknown escape {_show(text)}; escape only punctuation, or write the letter itself", pos)
    return _scalar(ord(c), pos, text)


def _encode(text: str, pos: int) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        _scalar(ord(text[e.start]), pos + e.start)
        raise  # unreachable: only surrogates fail to encode


def _class_atom(text: str, pos: int) -> int | Ranges:
    if text.startswith("\\"):
        value = _escape(text, pos, in_class=True)
        assert not isinstance(value, str)
        return value
    return _scalar(ord(text), pos)


def _range(lo_text: str, hi_text: str, pos: int) -> Ranges:
    lo = _class_atom(lo_text, pos)
    hi = _class_atom(hi_text, pos + len(lo_text) + 1)
    shown = f"{lo_text}-{hi_text}"
    if not isinstance(lo, int) or not isinstance(hi, int):
        raise _err(f"bad character range {_show(shown)}: a shorthand class cannot be a range endpoint; "
                   "write '-' first or last to mean a literal hyphen", pos)
    if lo > hi:
        raise _err(f"reversed character range {_show(shown)}: U+{lo:04X} is after U+{hi:04X}", pos)
    return ((lo, hi),)


def _as_ranges(value: int | Ranges) -> Ranges:
    return ((value, value),) if isinstance(value, int) else value




def _repeat(item: Node, lo: int, hi: int | None, span: Span) -> Node:
    """`item{lo,hi}` with trivial cases folded (x{1} = x, x{0} = (), (x*)* = x*, ...)."""
    if lo == hi == 1:
        return item
    if hi == 0 or (isinstance(item, Seq) and not item.items):
        return Seq((), span)
    if isinstance(item, Repeat) and hi is None and (item.min, item.max) in ((0, None), (1, None), (0, 1)):
        return Repeat(item.item, lo * item.min, None, span)
    if isinstance(item, Repeat) and (item.min, item.max) == (0, None):
        return dataclasses.replace(item, span=span)
    return Repeat(item, lo, hi, span)


def _count(digits: str, pos: int, limits: Limits) -> int:
    if len(digits) > 9 or int(digits) > limits.max_repeat:
        shown = digits if len(digits) <= 20 else f"{digits[:12]}... ({len(digits)} digits)"
        budget = limits.exceeded("max_repeat", int(digits) if len(digits) <= 20 else shown,
                                 "repetition count", shown=shown)
        raise budget.located(line=1, column=pos + 1)
    return int(digits)


def _misplaced(anchor: _Anchor) -> GrammarError:
    where = "start" if anchor.at_start else "end"
    return _err(f"anchor {_show(anchor.text)} is only supported at the {where} of the pattern "
                "(or of a top-level alternative), where it has no effect: matching is always "
                "against the whole string", anchor.start)


class _Builder:
    """Parser callbacks: terminals become IR leaves, rules combine them bottom-up."""

    # ---- terminals
    def LITERAL_RUN(self, tok: Token) -> Literal:
        return Literal(_encode(str(tok), tok.start_pos), _span(tok.start_pos, tok.end_pos))

    LITERAL = LITERAL_RUN

    def DOT(self, tok: Token) -> CharClass:
        return CharClass(_DOT, _span(tok.start_pos, tok.end_pos))

    def CARET(self, tok: Token) -> _Anchor:
        return _Anchor("^", tok.start_pos, True)

    def DOLLAR(self, tok: Token) -> _Anchor:
        return _Anchor("$", tok.start_pos, False)

    def ESCAPE(self, tok: Token) -> _Item:
        value = _escape(str(tok), tok.start_pos, in_class=False)
        span = _span(tok.start_pos, tok.end_pos)
        if isinstance(value, str):
            return _Anchor(str(tok), tok.start_pos, value == "A")
        if isinstance(value, int):
            return Literal(chr(value).encode("utf-8"), span)
        return CharClass(value, span)

    def LBRACE(self, tok: Token) -> _Item:
        raise _err("'{' does not start a valid quantifier {m}, {m,}, {,n} or {m,n}; "
                   "write '\\{' for a literal brace", tok.start_pos)

    def QUANT(self, tok: Token) -> _Quant:
        text, pos = str(tok), tok.start_pos
        body = text[0] if text[0] in "*+?" else text[: text.index("}") + 1]
        if text[len(body):] == "+":
            raise _unsupported("possessive quantifier", text, pos,
                               "use the plain quantifier if the language is the same")
        if body in ("*", "+", "?"):
            lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[body]
        else:
            limits = _LIMITS.get()
            lo_s, comma, hi_s = body[1:-1].partition(",")
            lo = _count(lo_s, pos, limits) if lo_s else 0
            hi = (_count(hi_s, pos, limits) if hi_s else None) if comma else lo
            if hi is not None and lo > hi:
                raise _err(f"bad repetition {_show(body)}: minimum {lo} is greater than maximum {hi}", pos)
        return _Quant(lo, hi, pos, tok.end_pos)

    def GROUP_OPEN(self, tok: Token) -> _Open:
        text, pos = str(tok), tok.start_pos
        if text in ("(", "(?:"):
            return _Open(pos)
        named = text.startswith("(?P<") or (text.startswith("(?<") and text[3:4] not in ("=", "!"))
        if named:
            name = text[4 if text[2] == "P" else 3:-1]
            if not text.endswith(">") or not name.isidentifier():
                raise _err(f"bad group name in {_show(text)}: a name must be an identifier, "
                           "as in (?P<name>...)", pos)
            return _Open(pos)
        rest = text[2:3]
        for prefix, what, advice in _GROUP_EXTENSIONS:
            if text.startswith(prefix):
                raise _unsupported(what, prefix, pos, advice)
        if rest.isdigit() or rest in ("+", "-") and text[3:4].isdigit():
            raise _unsupported("recursion", text, pos, "use an EBNF grammar for recursive structure")
        if rest.isascii() and (rest.isalpha() or rest == "-"):
            raise _unsupported("inline flags", text, pos, "write the alternatives out, e.g. [Aa] instead of (?i)a")
        if text == "(?":
            raise _err("incomplete group extension '(?' at the end of the pattern", pos)
        raise _err(f"unknown group extension {_show(text)}", pos)

    def CLASS_OPEN(self, tok: Token) -> _Open:
        return _Open(tok.start_pos, negated=str(tok) == "[^")

    def CLASS_OPEN_RB(self, tok: Token) -> _Open:
        text, pos = str(tok), tok.start_pos
        negated = text[1] == "^"
        bracket = 1 + negated
        ranges = _range("]", text[bracket + 2:], pos + bracket) if len(text) > bracket + 1 else ((0x5D, 0x5D),)
        return _Open(pos, negated, ranges)

    def CLASS_RANGE(self, tok: Token) -> Ranges:
        m = _range_splitter().fullmatch(str(tok))
        assert m is not None
        return _range(m["lo"], m["hi"], tok.start_pos)

    def CLASS_ESCAPE(self, tok: Token) -> Ranges:
        return _as_ranges(_class_atom(str(tok), tok.start_pos))

    def CLASS_CHAR(self, tok: Token) -> Ranges:
        return _as_ranges(_scalar(ord(tok), tok.start_pos))

    def POSIX_CLASS(self, tok: Token) -> Ranges:
        raise _unsupported("POSIX character class", str(tok), tok.start_pos,
                           "write the ranges explicitly, e.g. [A-Za-z] for [[:alpha:]]")

    def SET_OPERATION(self, tok: Token) -> Ranges:
        raise _unsupported("character class set operation", str(tok), tok.start_pos,
                           "write the resulting set explicitly, or escape the characters")

    # ---- rules
    def char_class(self, children: list) -> CharClass:
        opener: _Open = children[0]
        ranges = list(opener.ranges)
        for item in children[1:-1]:
            ranges.extend(item)
        return CharClass.of(ranges, opener.negated, _span(opener.start, children[-1].end_pos))

    def repeat(self, children: list) -> Node:
        item, quant = children
        if isinstance(item, _Anchor):
            raise _err(f"nothing to repeat: a quantifier cannot follow the anchor {_show(item.text)}", quant.start)
        start = item.span.column if item.span else quant.start + 1
        return _repeat(item, quant.min, quant.max, Span(1, start, 1, quant.end))

    def sequence(self, items: list[_Item]) -> _Branch:
        i, j = 0, len(items)
        while i < j and isinstance(items[i], _Anchor) and items[i].at_start:
            i += 1
        while j > i and isinstance(items[j - 1], _Anchor) and not items[j - 1].at_start:
            j -= 1
        body: list[Node] = []
        for item in items[i:j]:
            if isinstance(item, _Anchor):
                raise _misplaced(item)
            body.append(item)
        anchors = items[:i] + items[j:]
        return _Branch(concat(body), anchors[0] if anchors else None)  # type: ignore[arg-type]

    def alternation(self, branches: list[_Branch]) -> _Branch:
        if len(branches) == 1:
            return branches[0]
        alternatives: list[Node] = []
        for branch in branches:
            node = branch.node
            alternatives.extend(node.alternatives if isinstance(node, Choice) and node.alternatives else (node,))
        spans = [a.span for a in alternatives if a.span is not None]
        anchor = next((b.anchor for b in branches if b.anchor is not None), None)
        return _Branch(Choice(tuple(alternatives), cover(spans[0], spans[-1]) if spans else None), anchor)

    def group(self, children: list) -> Node:
        opener, branch, close = children
        if branch.anchor is not None:
            raise _misplaced(branch.anchor)
        return dataclasses.replace(branch.node, span=_span(opener.start, close.end_pos))

    def start(self, children: list) -> Node:
        return children[0].node


class _Interruptible(PostLex):
    """The token stream with the compile deadline checked as it goes."""

    always_accept = ()

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        return deadline.checked(stream)


@memo(maxsize=1, static=True)
def _parser() -> Lark:
    grammar = (files("grammask.specs") / "regex.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", lexer="contextual", postlex=_Interruptible(),
                transformer=_Builder(), maybe_placeholders=False)


@memo(maxsize=1, static=True)
def _range_splitter() -> re.Pattern[str]:
    esc = _parser().get_terminal("CLASS_ESCAPE").pattern.to_regexp()
    atom = f"(?:{esc}|[^\\\\\\]])"
    return re.compile(f"(?P<lo>{atom})-(?P<hi>{atom})")


_QUANT_AT = re.compile(r"[*+?]|\{(?:[0-9]*,[0-9]*|[0-9]+)\}")


def _syntax_error(e: UnexpectedInput, pattern: str) -> GrammarError:
    """A readable GrammarError for a Lark parse failure."""
    stack = getattr(getattr(e, "state", None), "value_stack", None) or []
    token = getattr(e, "token", None)
    if isinstance(e, UnexpectedToken) and token is not None and token.type == "$END":
        opener = next((v for v in reversed(stack) if isinstance(v, _Open)), None)
        if opener is not None and pattern[opener.start] == "[":
            return _err("unterminated character class: '[' is never closed by ']'", opener.start)
        if opener is not None:
            return _err("unbalanced parenthesis: '(' is never closed by ')'", opener.start)
        return _err("unexpected end of pattern", len(pattern))
    pos = token.start_pos if token is not None and token.start_pos is not None else e.pos_in_stream
    pos = min(pos or 0, max(len(pattern) - 1, 0))
    m = _QUANT_AT.match(pattern, pos)
    if m:
        if stack and isinstance(stack[-1], _Quant):
            return _err(f"multiple repeat: quantifier {_show(m.group())} follows another quantifier "
                        "(nothing to repeat)", pos)
        return _err(f"nothing to repeat: quantifier {_show(m.group())} must follow a character, "
                    "class or group", pos)
    if pattern[pos:pos + 1] == ")":
        return _err("unbalanced parenthesis: ')' has no matching '('", pos)
    expected = sorted(getattr(e, "expected", None) or getattr(e, "allowed", None) or ())
    names = [n.lower().replace("_", " ") for n in expected if not n.startswith("$")]
    hint = f", expected one of: {', '.join(names)}" if names else ""
    return _err(f"unexpected {pattern[pos:pos + 1]!r}{hint}", pos)


def parse_regex(pattern: str, *, limits: Limits = DEFAULT_LIMITS) -> Node:
    """Parse `pattern` into grammar IR matching exactly the strings it fully matches.

    Raises GrammarError (1-based column in `.column`, line 1) for malformed or unsupported
    syntax, BudgetExceeded for patterns or counts over `limits`, TypeError for non-str input.
    """
    if not isinstance(pattern, str):
        raise TypeError(f"parse_regex() needs a str pattern, got {type(pattern).__name__}")
    if not isinstance(limits, Limits):
        raise TypeError(f"parse_regex() needs limits to be a Limits, got {type(limits).__name__}")
    if len(pattern) > limits.max_pattern_length:
        raise limits.exceeded("max_pattern_length", len(pattern), "regex pattern length")
    parser = _parser()
    token = _LIMITS.set(limits)
    try:
        with deadline.compile_deadline(limits):
            return parser.parse(pattern)
    except UnexpectedInput as e:
        raise _syntax_error(e, pattern) from None
    except RecursionError:
        raise GrammarError("pattern is too deeply nested", line=1, code="regex-syntax") from None
    finally:
        _LIMITS.reset(token)
