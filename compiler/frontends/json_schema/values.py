"""JSON values read exactly: equality, types, numbers.

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
from typing import Any


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
