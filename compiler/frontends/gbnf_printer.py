"""Grammar IR printed as GBNF text that `parse_gbnf` reads back to the same IR.

Printing walks the IR with an explicit stack. Literals print as strings with llama.cpp's
escapes, classes in whichever of the plain and negated forms is shorter, and `Choice(())`
(never matches) as `[^\\x00-\\U0010FFFF]`. A literal that is not valid UTF-8 cannot be written
in GBNF (whose escapes are code points) and raises ValueError.
"""
from __future__ import annotations

import re

from ..ir.nodes import (
    Automaton,
    CharClass,
    Choice,
    Grammar,
    Literal,
    Node,
    Ranges,
    Repeat,
    Rule,
    RuleRef,
    Seq,
    complement_ranges,
)
from ..ir.normalize import simplify

__all__ = ["is_gbnf_name", "to_gbnf"]


_ANY: Ranges = complement_ranges(())
_NAME = re.compile(r"[a-zA-Z0-9_-]+")


def is_gbnf_name(name: str) -> bool:
    """Whether `name` can be written as a GBNF rule name (letters, digits, '-' and '_', as the
    reader takes them; llama.cpp itself allows no '_')."""
    return isinstance(name, str) and _NAME.fullmatch(name) is not None


_NAMED = {0x0A: "\\n", 0x09: "\\t", 0x0D: "\\r"}


def _escape(cp: int, specials: str) -> str:
    """One code point as GBNF text: itself if printable, else the shortest escape."""
    c = chr(cp)
    if c in specials:
        return "\\" + c
    if cp in _NAMED or not c.isprintable():
        return _NAMED.get(cp) or (f"\\x{cp:02X}" if cp < 0x100 else
                                  f"\\u{cp:04X}" if cp < 0x10000 else f"\\U{cp:08X}")
    return c


def _literal_text(lit: Literal) -> str:
    try:
        text = lit.data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"Literal {lit.data!r} is not valid UTF-8 and cannot be written in GBNF, "
                         "whose strings are Unicode code points (\\xNN is U+00NN, not a byte)") from None
    return '"' + "".join(_escape(ord(c), '"\\') for c in text) + '"'


def _bridge(ranges: Ranges) -> list[tuple[int, int]]:
    """Ranges with the surrogate gap bridged where that joins two ranges (surrogates never match)."""
    out: list[tuple[int, int]] = []
    for lo, hi in ranges:
        if out and out[-1][1] == 0xD7FF and lo == 0xE000:
            out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def _class_char(cp: int) -> str:
    return "\\x2D" if cp == 0x2D else _escape(cp, "]\\")


def _class_body(ranges: Ranges, negated: bool) -> str:
    parts: list[str] = []
    for lo, hi in _bridge(ranges):
        first = "\\x5E" if lo == 0x5E and not parts and not negated else _class_char(lo)
        if lo == hi:
            parts.append(first)
        else:
            parts.append(first + ("-" if hi > lo + 1 else "") + _class_char(hi))
    return "".join(parts)


def _class_text(cls: CharClass) -> str:
    if cls.ranges == _ANY:
        return "."
    negated = "[^" + _class_body(complement_ranges(cls.ranges), True) + "]"
    if not cls.ranges:
        return negated
    positive = "[" + _class_body(cls.ranges, False) + "]"
    return positive if len(positive) <= len(negated) else negated


_TOP, _IN_SEQ, _IN_REPEAT = range(3)


def _checked_name(name: str) -> str:
    if not is_gbnf_name(name):
        raise ValueError(f"rule name {name!r} cannot be written in GBNF: names are letters, digits, '-' and '_'")
    return name


def _emit(node: Node, out: list[str]) -> None:
    """Append the GBNF text of a simplified expression to `out`."""
    stack: list[str | tuple[Node, int]] = [(node, _TOP)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        n, where = item
        if isinstance(n, Literal):
            out.append(_literal_text(n))
        elif isinstance(n, CharClass):
            out.append(_class_text(n))
        elif isinstance(n, RuleRef):
            out.append(_checked_name(n.name))
        elif isinstance(n, Automaton):
            raise ValueError(f"the {n.label} is a DFA, which has no GBNF expression form")
        elif isinstance(n, Repeat):
            q = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((n.min, n.max))
            if q is None:
                q = f"{{{n.min}}}" if n.min == n.max else f"{{{n.min},{'' if n.max is None else n.max}}}"
            stack.append(q)
            stack.append((n.item, _IN_REPEAT))
        elif isinstance(n, Seq) and not n.items:
            out.append("()" if where == _IN_REPEAT else '""')
        else:
            parts: tuple[Node, ...] = n.items if isinstance(n, Seq) else n.alternatives
            sep, inner = (" ", _IN_SEQ) if isinstance(n, Seq) else (" | ", _TOP)
            wrap = where == _IN_REPEAT or (where == _IN_SEQ and isinstance(n, Choice))
            if wrap:
                stack.append(")")
            for k in range(len(parts) - 1, -1, -1):
                stack.append((parts[k], inner))
                if k:
                    stack.append(sep)
            if wrap:
                stack.append("(")


def to_gbnf(obj: Grammar | Node) -> str:
    """GBNF text for a Grammar (one `name ::= body` line per rule, in order) or for an
    expression (as the body of `root ::= ...`).

    Round trip: `parse_gbnf(to_gbnf(g), start=g.start) == g` for a Grammar whose bodies are
    simplified (see `simplify`), and in general the re-parsed bodies equal `simplify(body)`.
    Raises ValueError for a rule name that is not a GBNF name, a Literal that is not UTF-8 or an
    `Automaton` leaf.
    """
    rules = obj.rules if isinstance(obj, Grammar) else (Rule("root", obj),)
    out: list[str] = []
    for r in rules:
        out.append(f"{_checked_name(r.name)} ::= ")
        _emit(simplify(r.body), out)
        out.append("\n")
    return "".join(out)
