"""Fixed JSON values (`const`, `enum`) as IR: every spelling of one value.

A string value matches every JSON spelling of it: each character raw where JSON allows it,
or escaped (`\\n`, `\\u00e9` in either hex case, a surrogate pair above U+FFFF). A number
matches every spelling the number frontend accepts for that exact value (`1`, `1.0`, `1.00`).
Arrays and objects match their members in the given order, with the layout's whitespace.
Values are read as `values.py` reads them (exactly).
"""
from __future__ import annotations

from typing import Any

from ...ir.nodes import CharClass, Choice, Literal, Node, Seq
from ...support.caches import memo
from .numbers import number_node
from .options import Layout
from .values import exact_number, is_number

SHORT_ESCAPES = {0x22: b'\\"', 0x5C: b"\\\\", 0x2F: b"\\/", 0x08: b"\\b", 0x0C: b"\\f",
                 0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t"}


def _hex_digit(d: int) -> Node:
    text = "0123456789abcdef"[d]
    return Literal(text.encode()) if d < 10 else CharClass(((ord(text.upper()),) * 2,
                                                             (ord(text),) * 2))


def _u_escape(unit: int) -> Node:
    return Seq((Literal(b"\\u"), *(_hex_digit((unit >> s) & 15) for s in (12, 8, 4, 0))))


@memo(maxsize=8192)
def character(cp: int) -> Node:
    """Every JSON spelling of one code point inside a string literal (one shared node per
    code point: IR nodes are immutable, and a shared node is lowered once)."""
    forms: list[Node] = []
    if cp >= 0x20 and cp not in (0x22, 0x5C):
        forms.append(Literal(chr(cp).encode("utf-8")))
    if cp in SHORT_ESCAPES:
        forms.append(Literal(SHORT_ESCAPES[cp]))
    if cp < 0x10000:
        forms.append(_u_escape(cp))
    else:
        v = cp - 0x10000
        forms.append(Seq((_u_escape(0xD800 | (v >> 10)), _u_escape(0xDC00 | (v & 0x3FF)))))
    return forms[0] if len(forms) == 1 else Choice(tuple(forms))


_QUOTE = Literal(b'"')
SHARED_LITERAL_CHARACTERS = 64
"""Strings of at most this many characters get one shared node each (`_short_literal`)."""


def string_literal(text: str) -> Node:
    """Every JSON spelling of the string `text`, quotes included."""
    if len(text) <= SHARED_LITERAL_CHARACTERS:
        return _short_literal(text)
    return Seq((_QUOTE, *(character(ord(c)) for c in text), _QUOTE))


@memo(maxsize=4096)
def _short_literal(text: str) -> Node:
    """`string_literal` of a short text, one shared node per text: property names and enum
    values that many schemas share (every tool's `query`) are then lowered and analysed
    once."""
    return Seq((_QUOTE, *(character(ord(c)) for c in text), _QUOTE))


def string_content(text: str) -> Node:
    """The decoded content `text` as a code-point language (for key-set operations)."""
    return Literal(text.encode("utf-8")) if text else Seq(())


def value_node(value: Any, layout: Layout, depth: int) -> Node:
    """Every spelling of the JSON value `value` at nesting `depth` (built without recursion)."""
    done: list[Node] = []
    stack: list[tuple[Any, int, bool]] = [(value, depth, False)]
    while stack:
        v, d, ready = stack.pop()
        if not isinstance(v, (list, dict)) or not v:
            done.append(_scalar_node(v, layout))
        elif not ready:
            stack.append((v, d, True))
            stack.extend((x, d + 1, False) for x in reversed(list(v.values())
                                                             if isinstance(v, dict) else v))
        else:
            kids = done[len(done) - len(v):]
            del done[len(done) - len(v):]
            open_, close = (b"{", b"}") if isinstance(v, dict) else (b"[", b"]")
            items: list[Node] = [Literal(open_), layout.open(d)]
            for i, (key, kid) in enumerate(zip(v if isinstance(v, dict) else [None] * len(v),
                                               kids)):
                if i:
                    items.append(layout.item(d))
                if key is not None:
                    items.extend((string_literal(key), layout.key()))
                items.append(kid)
            done.append(Seq((*items, layout.close(d), Literal(close))))
    return done[0]


def _scalar_node(value: Any, layout: Layout) -> Node:
    """Every spelling of a JSON value that is not a non-empty array or object."""
    if value is None:
        return Literal(b"null")
    if isinstance(value, bool):
        return Literal(b"true" if value else b"false")
    if is_number(value):
        v = exact_number(value)
        return number_node(minimum=v, maximum=v, limits=layout.limits)
    if isinstance(value, str):
        return string_literal(value)
    if isinstance(value, list):
        return Seq((Literal(b"["), layout.empty(), Literal(b"]")))
    if isinstance(value, dict):
        return Seq((Literal(b"{"), layout.empty(), Literal(b"}")))
    raise TypeError(f"not a JSON value: {type(value).__name__}")
