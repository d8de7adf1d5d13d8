"""ECMA-262 regular expressions (JSON Schema `pattern`) as grammar IR, with search semantics.

`ecma_pattern(p)` fullmatches exactly the strings s in which the ECMA-262 regex p, compiled with
the `u` flag and no other, finds a match (`new RegExp(p, "u").test(s)`). Strings are sequences
of Unicode scalar values, each matched as its UTF-8 bytes.

Semantics (ECMA-262 unicode mode), where they differ from grammask's own regex dialect:
- `\\d` is [0-9], `\\w` is [A-Za-z0-9_], `\\s` is WhiteSpace and LineTerminator (TAB, LF, VT, FF,
  CR, space, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF);
  `.` is any scalar value except LF, CR, U+2028 and U+2029.
- Escapes: `\\f \\n \\r \\t \\v`, `\\0` (not before a digit), `\\cX` (X an ASCII letter: its code
  mod 32), `\\xHH`, `\\uHHHH` (a high and a low surrogate escape in a row are one code point),
  `\\u{H...}`, `\\/`. `[^]` is any scalar value, `[]` nothing; `[\\b]` is U+0008.
- `\\p{...}` / `\\P{...}`: General_Category values (short or long names, also as `gc=...` or
  `General_Category=...`) and `Any`, `ASCII`, `Assigned`, from Python's `unicodedata` (its
  Unicode version).
- A lone surrogate (an escape, or in the pattern text) matches nothing: no scalar string has one.
- `^` and `$` assert the start and end of the whole string (no multiline flag), wherever they
  occur. A top-level alternative without a leading `^` may match after any prefix, one without
  a trailing `$` before any suffix.
- Deliberate leniency: an identity escape of any ASCII punctuation (`\\-`, `\\:`, `\\@`) is that
  character, as outside unicode mode; unicode mode allows only syntax characters and `/`.

Lookahead and lookbehind are exact (`lookaround.py`), unless nested or holding anchors other
than a `$` closing a lookahead's alternative or a `^` opening a lookbehind's.
Unsupported constructs raise `GrammarError(code="unsupported-pattern")`: nested lookarounds,
backreferences, `\\b` and `\\B` word boundaries, modifier groups `(?i:...)`, and `\\p` properties
other than the ones above. Malformed patterns (unicode-mode syntax errors) raise
`GrammarError(code="invalid-pattern")`. Both carry the 1-based column and the JSON pointer.

Anchors only at the edges of top-level alternatives give plain IR. Anchors anywhere else are
compiled exactly: `^` and `$` become the bytes 0xFE and 0xFF (never part of UTF-8), the marked
search language is intersected with "0xFE only before the first character, 0xFF only after
the last", and the markers are erased (as epsilon moves), giving an `Automaton`.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from ...automata.language_ops import as_dfa, intersect
from ...ir.nodes import (
    MAX_CODE_POINT,
    Automaton,
    CharClass,
    Choice,
    Literal,
    Node,
    Ranges,
    Repeat,
    Seq,
    complement_ranges,
)
from ...ir.normalize import alternation, concat
from ...support.caches import memo
from ...support.diagnostics import Span
from ...support.errors import GrammarError
from ...support.limits import DEFAULT_LIMITS, Limits
from .lookaround import MAX_LOOKAROUNDS, constraint, erase_markers, marker, with_markers

__all__ = ["ANY_CHAR", "ecma_pattern", "property_names"]


ANY_CHAR = CharClass(complement_ranges(()))
"""One Unicode scalar value."""
ANY_STRING = Repeat(ANY_CHAR, 0, None)
"""Any string of scalar values: one node, so that every use finds its DFA in the caches."""
_DIGIT: Ranges = ((0x30, 0x39),)
_WORD: Ranges = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
_SPACE: Ranges = ((0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
                  (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000),
                  (0xFEFF, 0xFEFF))
_SHORTHANDS: dict[str, Ranges] = {
    "d": _DIGIT, "w": _WORD, "s": _SPACE,
    "D": complement_ranges(_DIGIT), "W": complement_ranges(_WORD), "S": complement_ranges(_SPACE),
}
_DOT: Ranges = complement_ranges(((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)))
_CONTROLS = {"f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}
_BEGIN, _END = Literal(b"\xfe"), Literal(b"\xff")
_MARKERS_AT_ENDS = Choice((
    Repeat(Choice((_BEGIN, _END)), 0, None),
    Seq((Repeat(_BEGIN, 0, None), Repeat(ANY_CHAR, 1, None), Repeat(_END, 0, None))),
))
_QUANTIFIER = re.compile(r"[*+?]|\{([0-9]+)(?:(,)([0-9]*))?\}")
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")
_LOW_SURROGATE = re.compile(r"\\u([dD][c-fC-F][0-9A-Fa-f]{2})")
_BRACED_CODE_POINT = re.compile(r"\{([0-9A-Fa-f]+)\}")
_GROUP_NAME = re.compile(r"\(\?<([^>]*)>")
_MODIFIERS = re.compile(r"\(\?[A-Za-z]*(?:-[A-Za-z]*)?:")
_PROPERTY = re.compile(r"\\[pP]\{([A-Za-z_]+)(?:=([A-Za-z0-9_]+))?\}")
_LOOKAROUND = (("(?=", "lookahead"), ("(?!", "negative lookahead"), ("(?<=", "lookbehind"),
               ("(?<!", "negative lookbehind"))

# General_Category: short name -> long name and aliases (ECMA-262 table "Value aliases").
_CATEGORIES = {
    "Cc": "Control cntrl", "Cf": "Format", "Cn": "Unassigned", "Co": "Private_Use",
    "Cs": "Surrogate", "Ll": "Lowercase_Letter", "Lm": "Modifier_Letter", "Lo": "Other_Letter",
    "Lt": "Titlecase_Letter", "Lu": "Uppercase_Letter", "Mc": "Spacing_Mark",
    "Me": "Enclosing_Mark", "Mn": "Nonspacing_Mark", "Nd": "Decimal_Number digit",
    "Nl": "Letter_Number", "No": "Other_Number", "Pc": "Connector_Punctuation",
    "Pd": "Dash_Punctuation", "Pe": "Close_Punctuation", "Pf": "Final_Punctuation",
    "Pi": "Initial_Punctuation", "Po": "Other_Punctuation", "Ps": "Open_Punctuation",
    "Sc": "Currency_Symbol", "Sk": "Modifier_Symbol", "Sm": "Math_Symbol", "So": "Other_Symbol",
    "Zl": "Line_Separator", "Zp": "Paragraph_Separator", "Zs": "Space_Separator",
}
_CATEGORY_GROUPS = {"C": "Other", "L": "Letter", "LC": "Cased_Letter", "M": "Mark Combining_Mark",
                    "N": "Number", "P": "Punctuation punct", "S": "Symbol", "Z": "Separator"}
_SCRIPT_PROPERTIES = ("Script", "sc", "Script_Extensions", "scx")


@dataclass(frozen=True)
class _Anchor:
    char: str
    pos: int


_Item = Node | _Anchor


@dataclass
class _Frame:
    """An open group (or the whole pattern, start -1) while its alternatives are read."""

    start: int
    alternatives: list[list[_Item]] = field(default_factory=list)
    items: list[_Item] = field(default_factory=list)
    quantifiable: bool = False
    lookaround: str = ""
    """The opener of a lookaround group (`lookaround.py`), else empty."""


def _span(start: int, end: int) -> Span:
    return Span(1, start + 1, 1, max(end, start + 1))


def _show(text: str) -> str:
    return f"'{text}'" if text.isprintable() else repr(text)


def _literal(cp: int, span: Span) -> Node:
    if 0xD800 <= cp <= 0xDFFF:
        return CharClass((), span)
    return Literal(chr(cp).encode("utf-8"), span)


@memo(maxsize=1, static=True)
def _category_ranges() -> dict[str, Ranges]:
    """Code-point ranges of every two-letter General_Category."""
    out: dict[str, list[tuple[int, int]]] = {}
    category = unicodedata.category
    start, current = 0, category("\0")
    for cp in range(1, MAX_CODE_POINT + 2):
        c = category(chr(cp)) if cp <= MAX_CODE_POINT else ""
        if c != current:
            out.setdefault(current, []).append((start, cp - 1))
            start, current = cp, c
    return {k: tuple(v) for k, v in out.items()}


def property_names() -> tuple[str, ...]:
    """Every text `\\p{...}` may hold here: the General_Category names (also after `gc=` and
    `General_Category=`), `Any`, `ASCII` and `Assigned`."""
    names = tuple(_category_names())
    return (*names, *(f"{key}={n}" for key in ("gc", "General_Category") for n in names),
            "Any", "ASCII", "Assigned")


@memo(maxsize=1, static=True)
def _category_names() -> dict[str, tuple[str, ...]]:
    """Every General_Category name and alias -> the two-letter categories it covers."""
    names: dict[str, tuple[str, ...]] = {}
    for short, aliases in _CATEGORIES.items():
        for name in (short, *aliases.split()):
            names[name] = (short,)
    for short, aliases in _CATEGORY_GROUPS.items():
        members = ("Ll", "Lt", "Lu") if short == "LC" else tuple(
            c for c in _CATEGORIES if c[0] == short)
        for name in (short, *aliases.split()):
            names[name] = members
    return names


class _Parser:
    """Reads one pattern left to right, groups on an explicit stack (no recursion)."""

    def __init__(self, text: str, limits: Limits) -> None:
        self.text = text
        self.limits = limits
        self.marked = False
        self.lookarounds: list[tuple[str, list[tuple[bool, Node, bool]]]] = []
        self.looking: tuple[int, str] | None = None
        """(column, opener) of the lookaround being read."""

    def invalid(self, what: str, pos: int) -> GrammarError:
        return GrammarError(f"invalid pattern at column {pos + 1}: {what}", line=1,
                            column=pos + 1, code="invalid-pattern")

    def unsupported(self, what: str, pos: int, why: str) -> GrammarError:
        return GrammarError(f"{what} at column {pos + 1} of the pattern is not supported: {why}",
                            line=1, column=pos + 1, code="unsupported-pattern")

    def parse(self) -> list[tuple[bool, Node, bool]]:
        """The top-level alternatives as (anchored at start, body, anchored at end)."""
        text, i = self.text, 0
        stack = [_Frame(-1)]
        while i < len(text):
            c, frame = text[i], stack[-1]
            if c == "|":
                frame.alternatives.append(frame.items)
                frame.items, frame.quantifiable = [], False
                i += 1
            elif c == "(":
                stack.append(_Frame(i))
                i = self.group_open(i, stack)
            elif c == ")":
                if len(stack) == 1:
                    raise self.invalid("unmatched ')'", i)
                stack.pop()
                if frame.lookaround:
                    stack[-1].items.append(self.lookaround(frame))
                    stack[-1].quantifiable = False  # unicode mode quantifies no assertion
                    i += 1
                    continue
                node = alternation([self.branch(items) for items in
                                    frame.alternatives + [frame.items]], _span(frame.start, i + 1))
                stack[-1].items.append(node)
                stack[-1].quantifiable = True
                i += 1
            elif c in "*+?{":
                i = self.quantify(frame, i)
            elif c in "]}":
                raise self.invalid(f"lone {_show(c)}; write '\\{c}' for the character", i)
            else:
                item, i = self.atom(i)
                frame.items.append(item)
                frame.quantifiable = not isinstance(item, _Anchor)
        if len(stack) > 1:
            raise self.invalid("'(' is never closed", stack[-1].start)
        top = stack[0]
        return [self.top_branch(items) for items in top.alternatives + [top.items]]

    def branch(self, items: list[_Item]) -> Node:
        """A group's alternative: anchors inside become markers."""
        parts: list[Node] = []
        for item in items:
            if isinstance(item, _Anchor) and self.looking is not None:
                raise self.unsupported(f"an anchor inside {_show(self.looking[1])}",
                                       self.looking[0], "only $ closing a lookahead's "
                                       "alternative and ^ opening a lookbehind's are")
            if isinstance(item, _Anchor):
                self.marked = True
                parts.append(_BEGIN if item.char == "^" else _END)
            else:
                parts.append(item)
        return concat(parts)

    def top_branch(self, items: list[_Item]) -> tuple[bool, Node, bool]:
        marks = [item.char if isinstance(item, _Anchor) else "" for item in items]
        i, j = 0, len(items)
        while i < j and marks[i] == "^":
            i += 1
        while j > i and marks[j - 1] == "$":
            j -= 1
        return i > 0, self.branch(items[i:j]), j < len(items)

    def lookaround(self, frame: _Frame) -> Node:
        """The marker of a closed lookaround group, its alternatives recorded."""
        branches = []
        for items in frame.alternatives + [frame.items]:
            start, body, end = self.top_branch(items)  # an anchor inside raises (`branch`)
            if start if frame.lookaround in ("(?=", "(?!") else end:
                raise self.unsupported(f"an anchor inside {_show(frame.lookaround)}",
                                       frame.start, "only $ closing a lookahead's alternative "
                                       "and ^ opening a lookbehind's are")
            branches.append((start, body, end))
        self.looking = None
        self.lookarounds.append((frame.lookaround, branches))
        self.marked = True
        return marker(len(self.lookarounds) - 1)

    def group_open(self, i: int, stack: list[_Frame]) -> int:
        text = self.text
        if not text.startswith("(?", i):
            return i + 1
        if text.startswith("(?:", i):
            return i + 3
        for opener, what in _LOOKAROUND:
            if text.startswith(opener, i):
                if any(f.lookaround for f in stack) or len(self.lookarounds) >= MAX_LOOKAROUNDS:
                    raise self.unsupported(f"{what} {_show(opener)}", i, "a lookaround inside "
                                           f"another, or more than {MAX_LOOKAROUNDS} in one "
                                           "pattern, is not compiled here")
                stack[-1].lookaround = opener
                self.looking = (i, opener)
                return i + len(opener)
        if text.startswith("(?<", i):
            m = _GROUP_NAME.match(text, i)
            if not m or not re.fullmatch(r"[^\W\d]\w*", m[1].replace("$", "_")):
                raise self.invalid("a group name must be an identifier, as in (?<name>...)", i)
            return m.end()
        if _MODIFIERS.match(text, i):
            raise self.unsupported("modifier group", i, "write the alternatives out, e.g. [Aa]")
        raise self.invalid(f"unknown group {_show(text[i:i + 3])}", i)

    def quantify(self, frame: _Frame, i: int) -> int:
        m = _QUANTIFIER.match(self.text, i)
        if m is None:
            raise self.invalid("lone '{' (not a quantifier {n}, {n,} or {n,m}); write '\\{'", i)
        if not frame.quantifiable:
            raise self.invalid(f"quantifier {_show(m[0])} has nothing to repeat", i)
        if m[0] in ("*", "+", "?"):
            lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[m[0]]
        else:
            lo = self.count(m[1], i)
            hi = (self.count(m[3], i) if m[3] else None) if m[2] else lo
            if hi is not None and lo > hi:
                raise self.invalid(f"quantifier {_show(m[0])} has its numbers out of order", i)
        end = m.end() + (self.text.startswith("?", m.end()))
        item = frame.items.pop()
        span = _span(i, end)
        if hi == 0:
            node: Node = Seq((), span)
        elif lo == hi == 1:
            node = item  # type: ignore[assignment]
        else:
            node = Repeat(item, lo, hi, span)  # type: ignore[arg-type]
        frame.items.append(node)
        frame.quantifiable = False
        return end

    def count(self, digits: str, pos: int) -> int:
        if len(digits) > 9 or int(digits) > self.limits.max_repeat:
            shown = digits if len(digits) <= 20 else f"{len(digits)} digits"
            budget = self.limits.exceeded("max_repeat", int(digits) if len(digits) <= 20
                                          else shown, "repetition count", shown=shown)
            raise budget.located(line=1, column=pos + 1)
        return int(digits)

    def atom(self, i: int) -> tuple[_Item, int]:
        c = self.text[i]
        if c == "^" or c == "$":
            return _Anchor(c, i), i + 1
        if c == ".":
            return CharClass(_DOT, _span(i, i + 1)), i + 1
        if c == "[":
            return self.char_class(i)
        if c == "\\":
            value, j = self.escape(i, in_class=False)
            if isinstance(value, int):
                return _literal(value, _span(i, j)), j
            return CharClass(value, _span(i, j)), j
        return _literal(ord(c), _span(i, i + 1)), i + 1

    def char_class(self, start: int) -> tuple[Node, int]:
        text = self.text
        negated = text.startswith("[^", start)
        i = start + 1 + negated
        ranges: list[tuple[int, int]] = []
        while True:
            if i >= len(text):
                raise self.invalid("unterminated character class: '[' is never closed", start)
            if text[i] == "]":
                return CharClass.of(ranges, negated, _span(start, i + 1)), i + 1
            lo, j = self.class_atom(i)
            if text.startswith("-", j) and j + 1 < len(text) and text[j + 1] != "]":
                hi, k = self.class_atom(j + 1)
                if not isinstance(lo, int) or not isinstance(hi, int):
                    raise self.invalid("a class escape such as \\d cannot be a range endpoint; "
                                       "write '\\-' for a hyphen", i)
                if lo > hi:
                    raise self.invalid(f"range {_show(text[i:k])} is out of order", i)
                ranges.append((lo, hi))
                i = k
            else:
                ranges.extend(((lo, lo),) if isinstance(lo, int) else lo)
                i = j

    def class_atom(self, i: int) -> tuple[int | Ranges, int]:
        if self.text[i] == "\\":
            return self.escape(i, in_class=True)
        return ord(self.text[i]), i + 1

    def escape(self, i: int, in_class: bool) -> tuple[int | Ranges, int]:
        """One escape at `i` (the backslash): a code point or a set of ranges, and where it ends."""
        text = self.text
        if i + 1 >= len(text):
            raise self.invalid("the pattern ends with a lone '\\'", i)
        c = text[i + 1]
        if c in _SHORTHANDS:
            return _SHORTHANDS[c], i + 2
        if c in "pP":
            return self.property(i)
        if c == "b" and in_class:
            return 0x08, i + 2
        if c in "bB":
            raise self.unsupported(f"word boundary '\\{c}'", i,
                                   "spell the boundary out with classes such as \\w and \\W")
        if c == "-" and in_class:
            return 0x2D, i + 2
        if c == "0":
            if text[i + 2:i + 3].isdigit():
                raise self.invalid("octal escapes are not allowed in unicode mode; use \\xHH", i)
            return 0, i + 2
        if c.isdigit() or c == "k":
            raise self.unsupported("backreference", i, "backreferences are not regular")
        if c in _CONTROLS:
            return _CONTROLS[c], i + 2
        if c == "c":
            letter = text[i + 2:i + 3]
            if not (letter.isascii() and letter.isalpha()):
                raise self.invalid("\\c must be followed by an ASCII letter", i)
            return ord(letter) % 32, i + 3
        if c == "x":
            if not re.fullmatch(r"[0-9A-Fa-f]{2}", text[i + 2:i + 4]):
                raise self.invalid("\\x needs exactly two hex digits", i)
            return int(text[i + 2:i + 4], 16), i + 4
        if c == "u":
            return self.unicode_escape(i)
        if c.isascii() and not c.isalnum():
            return ord(c), i + 2
        raise self.invalid(f"unknown escape {_show(text[i:i + 2])}", i)

    def unicode_escape(self, i: int) -> tuple[int, int]:
        text = self.text
        m = _BRACED_CODE_POINT.match(text, i + 2)
        if m:
            if int(m[1], 16) > MAX_CODE_POINT:
                raise self.invalid("code point above U+10FFFF", i)
            return int(m[1], 16), m.end()
        m = _HEX4.match(text, i + 2)
        if m is None:
            raise self.invalid("\\u needs four hex digits or {code point}", i)
        cp = int(m[0], 16)
        low = _LOW_SURROGATE.match(text, m.end()) if 0xD800 <= cp <= 0xDBFF else None
        if low:
            return 0x10000 + ((cp - 0xD800) << 10) + (int(low[1], 16) - 0xDC00), low.end()
        return cp, m.end()

    def property(self, i: int) -> tuple[Ranges, int]:
        m = _PROPERTY.match(self.text, i)
        if m is None:
            raise self.invalid("\\p and \\P need a property in braces, e.g. \\p{Letter}", i)
        name, value = m[1], m[2]
        categories = _category_names()
        if value is None and name in ("Any", "ASCII", "Assigned"):
            ranges = {"Any": ((0, MAX_CODE_POINT),), "ASCII": ((0, 0x7F),),
                      "Assigned": complement_ranges(_category_ranges().get("Cn", ()))}[name]
        elif (value is None and name in categories) or (
                name in ("General_Category", "gc") and value in categories):
            table = _category_ranges()
            ranges = tuple(r for cat in categories[value or name] for r in table.get(cat, ()))
        elif value is not None and name in _SCRIPT_PROPERTIES:
            raise self.unsupported(f"script property {_show(m[0])}", i,
                                   "write the code-point ranges explicitly")
        elif value is None and re.fullmatch(r"[A-Z][A-Za-z_]*", name):
            raise self.unsupported(f"Unicode property {_show(m[0])}", i,
                                   "only General_Category values, Any, ASCII and Assigned are "
                                   "supported; write the code-point ranges explicitly")
        else:
            raise self.invalid(f"unknown Unicode property {_show(m[0])}", i)
        negated = m[0][1] == "P"
        return complement_ranges(ranges) if negated else CharClass.of(ranges).ranges, m.end()


def ecma_pattern(pattern: str, *, pointer: str = "", limits: Limits = DEFAULT_LIMITS) -> Node:
    """The strings in which the ECMA-262 regex `pattern` (unicode mode) finds a match, as IR
    for fullmatch use. `pointer` is the JSON pointer attached to every error."""
    if not isinstance(pattern, str):
        raise GrammarError(f"a pattern must be a string, got {type(pattern).__name__}",
                           pointer=pointer, code="invalid-schema")
    if len(pattern) > limits.max_pattern_length:
        budget = limits.exceeded("max_pattern_length", len(pattern), "pattern length")
        raise budget.located(pointer=pointer)
    try:
        return _pattern_node(pattern, limits)
    except GrammarError as exc:
        raise exc.located(pointer=pointer) from None


@memo(maxsize=512)
def _pattern_node(pattern: str, limits: Limits) -> Node:
    """`ecma_pattern` without the pointer, computed once per pattern (one node object, so
    results cached by node identity are found again)."""
    text = pattern.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    parser = _Parser(text, limits)
    branches = parser.parse()
    if not parser.marked:
        return alternation([concat(([] if start else [ANY_STRING]) + [body]
                                   + ([] if end else [ANY_STRING]))
                            for start, body, end in branches], None)
    marked = alternation([concat([_BEGIN] * start + [body] + [_END] * end)
                          for start, body, end in branches], None)
    ends = Automaton(with_markers(as_dfa(_MARKERS_AT_ENDS, limits), last=0xFD), "anchors")
    constraints = [constraint(k, opener, alternatives, ANY_CHAR, limits)
                   for k, (opener, alternatives) in enumerate(parser.lookarounds)]
    dfa = intersect(concat([ANY_STRING, marked, ANY_STRING]), ends, *constraints,
                    limits=limits).dfa
    return Automaton(erase_markers(dfa, limits), label=f"pattern {pattern!r}")
