"""A schema's JSON text parsed within the limits: its size, its nesting (json.loads recurses,
so deep texts are parsed with room for their depth), valid UTF-8, and strings of Unicode
scalar values only (a lone surrogate escape could never be generated)."""
from __future__ import annotations

import json
import re
import sys
import threading
from typing import Any

import numpy as np

from .. import deadline
from ..errors import GrammarError
from ..limits import Limits

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SURROGATE = re.compile("[\ud800-\udfff]")
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
        raise limits.exceeded("max_schema_depth", f"JSON nesting {depth}", "schema text")
    try:
        if depth < _SHALLOW:
            return json.loads(text)
        with _recursion:
            old = sys.getrecursionlimit()
            sys.setrecursionlimit(old + depth)
            try:
                return json.loads(text)
            finally:
                sys.setrecursionlimit(old)
    except json.JSONDecodeError as exc:
        raise GrammarError(f"the schema is not valid JSON: {exc.msg}", code="invalid-schema",
                           line=exc.lineno, column=exc.colno) from None


def check_scalar_values(data: Any) -> None:
    """`GrammarError` naming the JSON pointer of a member name that is not a string, or of a
    string (or member name) holding a lone surrogate, which no UTF-8 output can spell."""
    if _suspect(data):
        _locate(data)


def _suspect(data: Any) -> bool:
    """Whether some member name in `data` is not a string or holds a lone surrogate, or some
    string does (no pointers made: almost every schema has neither)."""
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
    return False


def _locate(data: Any) -> None:
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
