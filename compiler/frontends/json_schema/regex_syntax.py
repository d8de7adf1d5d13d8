"""The JSON Schema format `regex`: JSON string literals whose value is an ECMA-262 regular
expression, as a grammar (`regex_grammar`).

The value is read as `new RegExp(value, "u")` reads its pattern (unicode mode, the reading
`ecma_regex.py` gives `pattern`). Groups nest, so the syntax is context-free, and a few of its
early errors are not context-free at all (a `\\k<name>` names a group anywhere in the pattern,
`\\3` needs three groups, a name is declared once, `{m,n}` and `[x-y]` need m ≤ n and x ≤ y on
unbounded numbers and on any two characters). The grammar is the syntax exactly, minus what
would need those checks, so every value it accepts is a valid pattern (sound), and the common
patterns are accepted:

- accepted: alternatives, groups `( )`, `(?: )`, lookahead and lookbehind `(?= )`, `(?! )`,
  `(?<= )`, `(?<! )` (never quantified), `^ $ \\b \\B`, `.`, pattern characters (anything but
  `^ $ \\ . * + ? ( ) [ ] { } |`), quantifiers `* + ? {m} {m,}` and `{m,n}` where m and n are
  written without leading zeros and either both have at most three digits and m ≤ n, or m has
  at most three and n more, each optionally lazy (`?`); escapes `\\f \\n \\r \\t \\v`, `\\cX`,
  `\\xHH`, `\\uHHHH`, `\\u{H…}` (at most 10FFFF), identity escapes of the syntax characters and
  `/`, `\\d \\D \\s \\S \\w \\W`, `\\p{…}`/`\\P{…}` with the names `ecma_regex.property_names`
  gives; character classes `[…]`, `[^…]` (`[]` too) of those escapes, `\\b`, `\\-` and raw
  characters, with ranges whose ends are two raw characters (exactly below U+0800; above, when
  they lie in different blocks of 256, or of 4096 above U+FFFF), two `\\xHH` (exactly), or two
  `\\uHHHH` (first hex digit smaller, or equal and the second smaller, or both below U+0100,
  exactly);
- at most one named group `(?<name> )`, its name ASCII (`[A-Za-z_$][A-Za-z0-9_$]*`), so no
  name is declared twice;
- refused though valid: `\\k<name>`, `\\1`…, `\\0`, other range ends, other names, modifiers.

Each regular piece (a class, an escape, a quantifier) is one automaton of its JSON spellings
(`spellings.json_string_automaton(quoted=False)`: every spelling, or raw ones where those exceed
the budget), so the value is decoded exactly as for any string; the nesting is the grammar's.
The grammar is built once per process (its names its own; `Translator.kept_grammar` adds it).
"""
from __future__ import annotations

from ...automata.language_ops import as_dfa
from ...ir.nodes import (
    MAX_CODE_POINT,
    Automaton,
    CharClass,
    Choice,
    Grammar,
    Literal,
    Node,
    Repeat,
    Rule,
    RuleRef,
    Seq,
)
from ...support.caches import memo
from ...support.limits import DEFAULT_LIMITS
from .ecma_regex import property_names
from .spellings import json_string_automaton
from .strings import RAW_SPELLINGS

__all__ = ["regex_grammar"]

SYNTAX = "^$\\.*+?()[]{}|"
_DIGIT = CharClass.of([(0x30, 0x39)])
_NONZERO = CharClass.of([(0x31, 0x39)])
_HEX = CharClass.of([(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)])
_LETTER = CharClass.of([(0x41, 0x5A), (0x61, 0x7A)])
_RAW_IN_CLASS = CharClass.of([(ord("\\"), ord("\\")), (ord("]"), ord("]")), (ord("-"), ord("-"))],
                             negated=True)
"""A class atom written raw, not `-` (a code point other than `\\`, `]` and `-`)."""


def _text(text: str) -> Node:
    return Literal(text.encode("utf-8"))


def _one_of(chars: str) -> CharClass:
    return CharClass.of([(ord(c), ord(c)) for c in chars])


def _hex_digit(value: int) -> CharClass:
    return _one_of("0123456789abcdef"[value] + "0123456789ABCDEF"[value])


def _hex_digits(lo: int, hi: int) -> Node:
    """One hex digit of value lo..hi, either case."""
    return Choice(tuple(_hex_digit(v) for v in range(lo, hi + 1))) if lo <= hi else Choice(())


def _character_escape(in_class: bool) -> Node:
    """What follows `\\` in a character escape (`CharacterEscape[+UnicodeMode]`), but `\\0`."""
    code_point = Seq((Repeat(_text("0"), 0, None), Choice((
        Repeat(_HEX, 1, 5), Seq((_text("10"), Repeat(_HEX, 4, 4)))))))
    identity = SYNTAX + "/" + ("-" if in_class else "")
    return Choice((_one_of("fnrtv"), Seq((_text("c"), _LETTER)), Seq((_text("x"), _HEX, _HEX)),
                   Seq((_text("u"), Repeat(_HEX, 4, 4))), Seq((_text("u{"), code_point,
                                                                _text("}"))),
                   _one_of(identity)))


def _class_escape() -> Node:
    """What follows `\\` in a class escape (`\\d`, `\\p{Letter}`, …)."""
    names = Choice(tuple(_text(n) for n in property_names()))
    return Choice((_one_of("dDsSwW"), Seq((_one_of("pP"), _text("{"), names, _text("}")))))


def _raw_ranges() -> list[Node]:
    """`x-y` over two raw characters with x ≤ y (see the module docstring)."""
    out: list[Node] = []
    for c in range(0x80):
        if c not in (ord("\\"), ord("]")):
            first = _text("-") if c == ord("-") else CharClass.of([(c, c)])
            out.append(Seq((first, _text("-"), _range_end(c))))
    for lo, hi, size in _BLOCKS:
        for start in range(lo, hi + 1, size):
            block = CharClass.of([(start, start + size - 1)])
            if block.ranges:
                out.append(Seq((block, _text("-"), _range_end(start + size))))
    return out


_BLOCKS = ((0x80, 0x7FF, 0x40), (0x800, 0xFFFF, 0x1000), (0x10000, MAX_CODE_POINT, 0x40000))
"""Above U+007F, raw range ends are compared by their UTF-8 lead byte (a block each)."""


def _range_end(lo: int) -> Node:
    """A raw range end of code point lo or more (not `\\` or `]`)."""
    out, start = [], lo
    for excluded in (ord("\\"), ord("]")):
        if excluded >= start:
            if excluded > start:
                out.append((start, excluded - 1))
            start = excluded + 1
    if start <= MAX_CODE_POINT:
        out.append((start, MAX_CODE_POINT))
    return CharClass.of(out) if out else Choice(())


def _escaped_ranges() -> list[Node]:
    """`\\xHH-\\xHH` and `\\uHHHH-\\uHHHH` with a smaller first end: the first hex digit
    smaller, or for `\\u`, after equal leading `0` or `00`, the next one."""
    any_hex = _hex_digits(0, 15)
    out: list[Node] = []
    for kind, zeros in (("\\x", ""), ("\\u", ""), ("\\u", "0"), ("\\u", "00")):
        rest = [any_hex] * ((2 if kind == "\\x" else 4) - len(zeros) - 1)
        for a in range(15):
            out.append(Seq((_text(kind + zeros), _hex_digit(a), *rest, _text("-" + kind + zeros),
                            _hex_digits(a + 1, 15), *rest)))
    return out


def _class() -> Node:
    """A character class `[…]` or `[^…]`: atoms parsed left to right, an atom, `-` and an
    atom being a range (`NonemptyClassRanges`), each range one of the checked forms."""
    escape = Seq((_text("\\"), Choice((_one_of("b-"), _class_escape(),
                                        _character_escape(True)))))
    atom_no_dash = Choice((_RAW_IN_CLASS, escape))
    atom = Choice((_text("-"), atom_no_dash))
    ranges = [*_raw_ranges(), *_escaped_ranges()]
    dashless = Choice(tuple(r for r in ranges if not _starts_with_dash(r)))
    every = Choice(tuple(ranges))
    loose = Seq((atom, Repeat(atom_no_dash, 0, None)))
    body = Seq((Repeat(Choice((every, Seq((loose, dashless)))), 0, None),
                Repeat(Seq((loose, Repeat(_text("-"), 0, 1))), 0, 1)))
    return Seq((_text("["), Repeat(_text("^"), 0, 1), body, _text("]")))


def _starts_with_dash(node: Node) -> bool:
    return isinstance(node, Seq) and node.items[0] == _text("-")


def _digits(count: int) -> Node:
    """A number of `count` digits without leading zeros."""
    return _DIGIT if count == 1 else Seq((_NONZERO, Repeat(_DIGIT, count - 1, count - 1)))


def _quantifier() -> Node:
    """`* + ? {m} {m,} {m,n}` (m ≤ n in the checked forms), each optionally lazy."""
    number = Repeat(_DIGIT, 1, None)
    short = Choice(tuple(_digits(k) for k in (1, 2, 3)))
    pairs: list[Node] = [Seq((short, _text(","), _NONZERO, Repeat(_DIGIT, 3, None)))]
    pairs += [Seq((_digits(a), _text(","), _digits(b))) for a in (1, 2) for b in (2, 3) if a < b]
    for k in (1, 2, 3):  # k digits each: equal up to position i, then m's digit d is smaller
        for i in range(k):
            prefixes = [""] if i == 0 else [str(x) for x in range(10 ** (i - 1), 10 ** i)]
            rest = Repeat(_DIGIT, k - i - 1, k - i - 1)
            for prefix in prefixes:
                for d in range(1 if i == 0 and k > 1 else 0, 10):
                    least = d if i == k - 1 else d + 1  # the last digit may be equal
                    if least <= 9:
                        pairs.append(Seq((_text(prefix + str(d)), rest, _text("," + prefix),
                                          CharClass.of([(0x30 + least, 0x39)]), rest)))
    braces = Seq((_text("{"), Choice((number, Seq((number, _text(","))), *pairs)), _text("}")))
    return Seq((Choice((_one_of("*+?"), braces)), Repeat(_text("?"), 0, 1)))


def _pieces() -> dict[str, Node]:
    """The regular pieces of the syntax, by terminal name, over decoded characters."""
    escape = Seq((_text("\\"), Choice((_class_escape(), _character_escape(False)))))
    name = Seq((CharClass.of([(0x41, 0x5A), (0x61, 0x7A), (0x5F, 0x5F), (0x24, 0x24)]),
                Repeat(CharClass.of([(0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A), (0x5F, 0x5F),
                                     (0x24, 0x24)]), 0, None)))
    pattern_character = CharClass.of([(ord(c), ord(c)) for c in SYNTAX], negated=True)
    return {
        "atom": Choice((pattern_character, _text("."), escape, _class())),
        "assertion": Choice((_one_of("^$"), _text("\\b"), _text("\\B"))),
        "quantifier": _quantifier(),
        "look": Choice(tuple(_text(t) for t in ("(?=", "(?!", "(?<=", "(?<!"))),
        "open": Choice((_text("("), _text("(?:"))),
        "named": Seq((_text("(?<"), name, _text(">"))),
        "bar": _text("|"),
        "close": _text(")"),
    }


def _spelled(node: Node) -> Automaton:
    """The raw JSON spellings of the values of `node`, without quotes (`RAW_SPELLINGS`: the
    escapes of every character would multiply the states of the classes and quantifiers)."""
    return Automaton(json_string_automaton(as_dfa(node, DEFAULT_LIMITS), DEFAULT_LIMITS,
                                           escape_raw=False, quoted=False), RAW_SPELLINGS)


@memo(maxsize=1, static=True)
def regex_grammar() -> Grammar:
    """The grammar of the JSON string literals (quotes included) holding a pattern of the
    accepted subset (module docstring); start rule `literal`."""
    p = {name: _spelled(node) for name, node in _pieces().items()}
    quote = Literal(b'"')

    def many(node: Node) -> Node:
        return Repeat(node, 0, None)

    def alternatives(alt: str) -> Node:
        return Seq((RuleRef(alt), many(Seq((p["bar"], RuleRef(alt))))))

    def group(opening: Node, inner: str, quantified: bool) -> Node:
        body = Seq((opening, RuleRef(inner), p["close"]))
        return Seq((body, Repeat(p["quantifier"], 0, 1))) if quantified else body

    rules = {
        "literal": Seq((quote, Choice((RuleRef("disjunction"), RuleRef("disjunction-named"))),
                        quote)),
        "disjunction": alternatives("alternative"),
        "disjunction-named": Seq((many(Seq((RuleRef("alternative"), p["bar"]))),
                                  RuleRef("alternative-named"),
                                  many(Seq((p["bar"], RuleRef("alternative")))))),
        "alternative": many(RuleRef("term")),
        "alternative-named": Seq((many(RuleRef("term")), RuleRef("term-named"),
                                  many(RuleRef("term")))),
        "term": Choice((p["assertion"], Seq((p["atom"], Repeat(p["quantifier"], 0, 1))),
                        group(p["look"], "disjunction", False),
                        group(p["open"], "disjunction", True))),
        "term-named": Choice((group(p["look"], "disjunction-named", False),
                              group(p["open"], "disjunction-named", True),
                              group(p["named"], "disjunction", True))),
    }
    return Grammar(tuple(Rule(name, body) for name, body in rules.items()), start="literal")
