"""Fixed JSON values (`const`, `enum`) as IR, and JSON equality.

A string value matches every JSON spelling of it: each character raw where JSON allows it,
or escaped (`\\n`, `\\u00e9` in either hex case, a surrogate pair above U+FFFF). A number
matches every spelling the number frontend accepts for that exact value (`1`, `1.0`, `1.00`).
Arrays and objects match their members in the given order, with the layout's whitespace.
JSON equality (`canonical`) is the specification's: numbers by mathematical value (so
`1 == 1.0`), `true` distinct from `1`, objects regardless of key order.
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

from ..ir import CharClass, Choice, Literal, Node, Seq
from .options import Layout

SHORT_ESCAPES = {0x22: b'\\"', 0x5C: b"\\\\", 0x2F: b"\\/", 0x08: b"\\b", 0x0C: b"\\f",
                 0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t"}


def canonical(value: Any) -> Any:
    """A hashable key equal for JSON-equal values."""
    if value is None or isinstance(value, (bool, str)):
        return (type(value).__name__, value)
    if isinstance(value, (int, float)):
        return ("number", exact_number(value))
    if isinstance(value, list):
        return ("array", tuple(canonical(v) for v in value))
    if isinstance(value, dict):
        return ("object", frozenset((k, canonical(v)) for k, v in value.items()))
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def exact_number(value: int | float) -> Fraction:
    """The exact value of a JSON number as parsed (a float is taken at its shortest repr)."""
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{value} is not a JSON number")
        return Fraction(repr(value))
    return Fraction(value)


def json_type(value: Any) -> str:
    """The JSON Schema type of a value ('integer' for integral numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "integer" if exact_number(value).denominator == 1 else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _hex_digit(d: int) -> Node:
    text = "0123456789abcdef"[d]
    return Literal(text.encode()) if d < 10 else CharClass(((ord(text.upper()),) * 2,
                                                             (ord(text),) * 2))


def _u_escape(unit: int) -> Node:
    return Seq((Literal(b"\\u"), *(_hex_digit((unit >> s) & 15) for s in (12, 8, 4, 0))))


@lru_cache(maxsize=8192)
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


def string_literal(text: str) -> Node:
    """Every JSON spelling of the string `text`, quotes included."""
    return Seq((Literal(b'"'), *(character(ord(c)) for c in text), Literal(b'"')))


def string_content(text: str) -> Node:
    """The decoded content `text` as a code-point language (for key-set operations)."""
    return Literal(text.encode("utf-8")) if text else Seq(())


def value_node(value: Any, layout: Layout, depth: int) -> Node:
    """Every spelling of the JSON value `value` at nesting `depth`."""
    if value is None:
        return Literal(b"null")
    if isinstance(value, bool):
        return Literal(b"true" if value else b"false")
    if isinstance(value, (int, float)):
        from .numbers import number_node

        v = exact_number(value)
        return number_node(minimum=v, maximum=v)
    if isinstance(value, str):
        return string_literal(value)
    if isinstance(value, list):
        if not value:
            return Seq((Literal(b"["), layout.empty(), Literal(b"]")))
        items: list[Node] = [Literal(b"["), layout.open(depth)]
        for i, v in enumerate(value):
            if i:
                items.append(layout.item(depth))
            items.append(value_node(v, layout, depth + 1))
        return Seq((*items, layout.close(depth), Literal(b"]")))
    if isinstance(value, dict):
        if not value:
            return Seq((Literal(b"{"), layout.empty(), Literal(b"}")))
        items = [Literal(b"{"), layout.open(depth)]
        for i, (k, v) in enumerate(value.items()):
            if i:
                items.append(layout.item(depth))
            items.extend((string_literal(k), layout.key(), value_node(v, layout, depth + 1)))
        return Seq((*items, layout.close(depth), Literal(b"}")))
    raise TypeError(f"not a JSON value: {type(value).__name__}")
