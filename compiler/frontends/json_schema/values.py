"""Fixed JSON values (`const`, `enum`) as IR, and JSON equality.

A string value matches every JSON spelling of it: each character raw where JSON allows it,
or escaped (`\\n`, `\\u00e9` in either hex case, a surrogate pair above U+FFFF). A number
matches every spelling the number frontend accepts for that exact value (`1`, `1.0`, `1.00`).
Arrays and objects match their members in the given order, with the layout's whitespace.
JSON equality (`canonical`) is the specification's: numbers by mathematical value (so
`1 == 1.0`), `true` distinct from `1`, objects regardless of key order.

A number is an `int`, a finite `float` or a finite `Decimal` (never a `bool`), read exactly: a
`Decimal` (what a schema text's fractions and exponents parse to) at its own value, a float at
its shortest repr (0.1 is 1/10). Keys, types and digit counts are computed from the decimal
digits and exponent, so `1e1000000000` costs no more than `1`; only `exact_number` builds the
rational, once the caller has bounded `number_digits`.
"""
from __future__ import annotations

import json
import math
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from typing import Any

from ...ir.nodes import CharClass, Choice, Literal, Node, Seq
from .options import Layout

SHORT_ESCAPES = {0x22: b'\\"', 0x5C: b"\\\\", 0x2F: b"\\/", 0x08: b"\\b", 0x0C: b"\\f",
                 0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t"}


def canonical(value: Any) -> str:
    """A key equal for JSON-equal values: a canonical text (objects by sorted key, numbers by
    exact value), built without recursion and flat, so values nested deeper than the stack
    hash and compare like any string."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, _Text):
            out.append(v.text)
        elif v is None:
            out.append("null")
        elif isinstance(v, bool):
            out.append("true" if v else "false")
        elif is_number(v):
            sign, digits, exponent = _normal(v)
            out.append(f"#{'-' * sign}{digits}e{exponent}")
        elif isinstance(v, str):
            out.append(json.dumps(v))
        elif isinstance(v, list):
            parts: list[Any] = [_Text("[")]
            for i, item in enumerate(v):
                parts += [_Text(",")] * bool(i) + [item]
            stack.extend(reversed([*parts, _Text("]")]))
        elif isinstance(v, dict):
            parts = [_Text("{")]
            for i, key in enumerate(sorted(v)):
                parts += [_Text(("," if i else "") + json.dumps(key) + ":"), v[key]]
            stack.extend(reversed([*parts, _Text("}")]))
        else:
            raise TypeError(f"not a JSON value: {type(v).__name__}")
    return "".join(out)


class _Text:
    """Literal text in `canonical`'s work list (told apart from JSON strings)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def is_number(value: Any) -> bool:
    """Whether `value` is a JSON number: an int, float or Decimal that is not a bool."""
    return isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)


def _decimal(value: int | float | Decimal) -> Decimal:
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value} is not a JSON number")
        return Decimal(repr(value))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"{value} is not a JSON number")
        return value
    return Decimal(value)


def _normal(value: int | float | Decimal) -> tuple[int, str, int]:
    """(sign, digits, exponent) with value = (-1)**sign * int(digits) * 10**exponent and no
    trailing zero in digits; zero is (0, "0", 0)."""
    if isinstance(value, int) and value.bit_length() < 10_000:
        text = str(abs(value))
        digits = text.rstrip("0")
        return (0, "0", 0) if not digits else (int(value < 0), digits, len(text) - len(digits))
    sign, coefficient, exponent = _decimal(value).as_tuple()
    text = "".join(map(str, coefficient))
    digits = text.rstrip("0")
    if not digits:
        return 0, "0", 0
    return sign, digits, int(exponent) + len(text) - len(digits)


def number_digits(value: int | float | Decimal) -> int:
    """The digits of the number written without exponent (`0.001` has 4, `1e3` has 4), as
    `numbers.py` counts them against `Limits.max_repeat`; cheap for any exponent."""
    if isinstance(value, int):
        n = abs(value)
        size = int(n.bit_length() * math.log10(2)) + 1
        while size > 1 and n < 10 ** (size - 1):
            size -= 1
        while n >= 10 ** size:
            size += 1
        return size
    _, digits, exponent = _normal(value)
    whole = max(len(digits) + exponent, 1)
    return whole + max(-exponent, 0)


def exact_number(value: int | float | Decimal) -> Fraction:
    """The exact value of a JSON number as parsed (a float is taken at its shortest repr, a
    Decimal at its own value). The rational is built: bound `number_digits` first."""
    if isinstance(value, (float, Decimal)):
        return Fraction(_decimal(value))
    return Fraction(value)


def json_type(value: Any) -> str:
    """The JSON Schema type of a value ('integer' for integral numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if is_number(value):
        return "integer" if _normal(value)[2] >= 0 else "number"
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
        from .numbers import number_node

        v = exact_number(value)
        return number_node(minimum=v, maximum=v, limits=layout.limits)
    if isinstance(value, str):
        return string_literal(value)
    if isinstance(value, list):
        return Seq((Literal(b"["), layout.empty(), Literal(b"]")))
    if isinstance(value, dict):
        return Seq((Literal(b"{"), layout.empty(), Literal(b"}")))
    raise TypeError(f"not a JSON value: {type(value).__name__}")
