"""A schema's JSON text parsed within the limits: its size, its nesting (json.loads recurses,
so deep texts are parsed with room for their depth), valid UTF-8, and strings of Unicode
scalar values only (a lone surrogate escape could never be generated).

Numbers are read exactly, never as floats: an integer as `int` (past Python's limit on
parsing ints, `sys.get_int_max_str_digits()`, as a `Decimal` with exponent 0), every other
number as a finite `Decimal`, so `1e-400` is not 0 and `1e400` is not infinite. `NaN` and
`Infinity` are not JSON and are refused with their line and column, as is a number whose
exponent is past what a `Decimal` holds (over 10**18 digits, except a zero). A number (in a
text or a dict) of more digits, written without exponent, than `Limits.max_repeat` is
`BudgetExceeded` with its JSON pointer, before any value is computed from it.
"""
from __future__ import annotations

import json
import re
import sys
import threading
from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np

from ...support import deadline
from ...support.errors import BudgetExceeded, GrammarError
from ...support.limits import DEFAULT_LIMITS, Limits
from .values import is_number, number_digits

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SURROGATE = re.compile("[\ud800-\udfff]")
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?(?:Infinity|(?:0|[1-9][0-9]*)(?:\.[0-9]+)?'
                    r'(?:[eE][+-]?[0-9]+)?)|NaN', re.DOTALL)
_recursion = threading.Lock()
# Frames json.loads may use without asking for more room (the default limit is 1,000).
_SHALLOW = 200


def nesting(text: str) -> int:
    """The deepest nesting of arrays and objects in a JSON text."""
    data = np.frombuffer(_STRING.sub("", text).encode("utf-8", "replace"), dtype=np.uint8)
    step = np.isin(data, (0x5B, 0x7B)).astype(np.int64) - np.isin(data, (0x5D, 0x7D))
    return int(np.cumsum(step).max(initial=0))


def parse_schema_text(text: str | bytes, limits: Limits) -> Any:
    """The JSON data of a schema text; `GrammarError` for invalid UTF-8 or JSON,
    `BudgetExceeded` past `max_pattern_length` or, for nesting, `max_schema_depth`."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise GrammarError(f"the schema is not valid UTF-8 (byte {exc.start}: {exc.reason})",
                               code="invalid-utf8") from None
    if len(text) > limits.max_pattern_length:
        raise limits.exceeded("max_pattern_length", len(text), "schema text length")
    depth = nesting(text)
    # A subschema level is at most three JSON levels deep ({"properties": {"a": {...}}}).
    if depth > 3 * limits.max_schema_depth + 3:
        raise limits.exceeded("max_schema_depth", depth, "schema text",
                              shown=f"JSON nesting {depth}")
    try:
        if depth < _SHALLOW:
            return _loads(text)
        with _recursion:
            old = sys.getrecursionlimit()
            sys.setrecursionlimit(old + depth)
            try:
                return _loads(text)
            finally:
                sys.setrecursionlimit(old)
    except json.JSONDecodeError as exc:
        raise GrammarError(f"the schema is not valid JSON: {exc.msg}", code="invalid-schema",
                           line=exc.lineno, column=exc.colno) from None
    except _Unreadable as exc:
        line, column = _position(text, exc.token)
        if exc.token in ("NaN", "Infinity", "-Infinity"):
            raise GrammarError(f"the schema is not valid JSON: {exc.token} is not a JSON number",
                               code="invalid-schema", line=line, column=column) from None
        raise BudgetExceeded(f"the number {exc.token[:40]}{'...' * (len(exc.token) > 40)} has "
                             "an exponent too large to read exactly (more than 10**18 digits)",
                             code="budget", line=line, column=column) from None


class _Unreadable(Exception):
    """A number token that is not JSON (`NaN`, `Infinity`) or past a `Decimal`'s exponents."""

    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.token = token


def _loads(text: str) -> Any:
    return json.loads(text, parse_float=_decimal, parse_int=_integer, parse_constant=_constant)


def _constant(token: str) -> Any:
    raise _Unreadable(token)


def _integer(token: str) -> int | Decimal:
    try:
        return int(token)
    except ValueError:  # past sys.get_int_max_str_digits()
        return Decimal(token)


def _decimal(token: str) -> Decimal:
    try:
        return Decimal(token)
    except InvalidOperation:
        mantissa = re.split("[eE]", token)[0]
        if mantissa.strip("-0.") == "":
            return Decimal(mantissa)
        raise _Unreadable(token) from None


def _position(text: str, token: str) -> tuple[int, int]:
    """The line and column (1-based, in code points) of the first `token` outside strings."""
    for found in _TOKEN.finditer(text):
        if found.group() == token:
            start = found.start()
            return text.count("\n", 0, start) + 1, start - text.rfind("\n", 0, start)
    return 1, 1


def check_scalar_values(data: Any, limits: Limits = DEFAULT_LIMITS) -> None:
    """`GrammarError` naming the JSON pointer of a member name that is not a string, or of a
    string (or member name) holding a lone surrogate, which no UTF-8 output can spell;
    `BudgetExceeded` for a number of more than `limits.max_repeat` digits written without
    exponent."""
    if _suspect(data, limits.max_repeat):
        _locate(data, limits)


def _suspect(data: Any, max_digits: int) -> bool:
    """Whether some member name in `data` is not a string or holds a lone surrogate, or some
    string does, or some number is too long (no pointers made: almost every schema has
    none of these)."""
    stack = [data]
    visited = 0
    while stack:
        value = stack.pop()
        visited += 1
        if not visited & 4095:
            deadline.check()
        if isinstance(value, dict):
            if any(not isinstance(k, str) or not k.isascii() and _SURROGATE.search(k)
                   for k in value):
                return True
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str) and not value.isascii() and _SURROGATE.search(value):
            return True
        elif is_number(value) and _too_long(value, max_digits):
            return True
    return False


def _too_long(value: Any, max_digits: int) -> bool:
    try:
        return number_digits(value) > max_digits
    except ValueError:  # a float or Decimal that is not finite: refused where it is read
        return False


def _locate(data: Any, limits: Limits) -> None:
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        pointer, value = stack.pop()
        deadline.check()
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise GrammarError(f"member name {key!r} is not a string: JSON object "
                                       "keys are strings", pointer=pointer or "/",
                                       code="invalid-schema")
                _check_string(pointer, key)
                stack.append((f"{pointer}/{_escape(key)}", item))
        elif isinstance(value, list):
            stack.extend((f"{pointer}/{i}", item) for i, item in enumerate(value))
        elif isinstance(value, str):
            _check_string(pointer, value)
        elif is_number(value) and _too_long(value, limits.max_repeat):
            raise BudgetExceeded(
                f"this number has more than {limits.max_repeat} digits written without "
                "exponent, the budget Limits.max_repeat; raise it with "
                "limits=Limits(max_repeat=...)", pointer=pointer or "/", code="budget",
                limit="max_repeat", value=limits.max_repeat, measured=number_digits(value))


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _check_string(pointer: str, text: str) -> None:
    if text.isascii():
        return
    found = _SURROGATE.search(text)
    if found is not None:
        raise GrammarError(f"lone surrogate U+{ord(found.group()):04X} in a string: only "
                           "Unicode scalar values can be matched", pointer=pointer or "/",
                           code="invalid-schema")
