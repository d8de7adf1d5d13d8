"""Reading a structural-tag spec: typed fields of the JSON objects, each error at its pointer.

A spec is JSON data (dicts, lists, strings, numbers, booleans). `Obj` wraps one object with its
JSON pointer inside the spec; every accessor checks the field's type and raises `GrammarError`
(code `invalid-structural-tag`) naming the field's pointer, and `done()` rejects fields the
format does not define, so that a misspelt field (`exclude` for `excludes`) is an error rather
than a constraint silently dropped.
"""
from __future__ import annotations

from typing import Any

from ...support.errors import GrammarError
from ..json_schema.document import join

__all__ = ["MISSING", "Obj", "invalid"]

MISSING: Any = object()
"""The default of a required field."""

MAX_COUNT = 2_147_483_647
"""The largest count a field takes (XGrammar's bound on `max_tokens`, `max_chars`, `repeat`)."""


def invalid(pointer: str, message: str) -> GrammarError:
    """The error for a spec that does not say something compilable, at `pointer`."""
    return GrammarError(message, pointer=pointer, code="invalid-structural-tag")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, dict) else type(value).__name__


class Obj:
    """One JSON object of the spec and its pointer; fields are read once each."""

    def __init__(self, data: Any, pointer: str, what: str = "a format") -> None:
        if not isinstance(data, dict):
            raise invalid(pointer, f"expected {what} (an object), got {_kind(data)}")
        self.data = data
        self.pointer = pointer
        self.read: set[str] = set()

    def at(self, name: str) -> str:
        """The pointer of field `name`."""
        return join(self.pointer, name)

    def raw(self, name: str, default: Any = MISSING) -> Any:
        """Field `name` as is; `default` when absent (an error when there is none)."""
        self.read.add(name)
        if name in self.data:
            return self.data[name]
        if default is MISSING:
            raise invalid(self.pointer, f"missing field {name!r}")
        return default

    def string(self, name: str, default: Any = MISSING) -> str:
        value = self.raw(name, default)
        if not isinstance(value, str):
            raise invalid(self.at(name), f"{name!r} must be a string, got {_kind(value)}")
        return value

    def boolean(self, name: str, default: bool) -> bool:
        value = self.raw(name, default)
        if not isinstance(value, bool):
            raise invalid(self.at(name), f"{name!r} must be a boolean, got {_kind(value)}")
        return value

    def count(self, name: str, default: Any = MISSING, *, minimum: int = 0) -> int | None:
        """A non-negative int field (`null` allowed when the default is None)."""
        value = self.raw(name, default)
        if value is None and default is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not (
                minimum <= value <= MAX_COUNT):
            raise invalid(self.at(name), f"{name!r} must be an integer in [{minimum}, "
                                         f"{MAX_COUNT}], got {value!r}")
        return value

    def strings(self, name: str, default: Any = MISSING, *, non_empty: bool = False
                ) -> tuple[str, ...]:
        """A list of strings (a single string is not accepted where a list is meant)."""
        value = self.raw(name, default)
        if not isinstance(value, list):
            raise invalid(self.at(name), f"{name!r} must be an array of strings, got "
                                         f"{_kind(value)}")
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise invalid(join(self.at(name), i), f"expected a string, got {_kind(item)}")
            if non_empty and not item:
                raise invalid(join(self.at(name), i), "expected a non-empty string")
        return tuple(value)

    def objects(self, name: str, what: str = "a format", *, at_least: int = 0) -> list[Obj]:
        """A list of objects, each wrapped with its pointer."""
        value = self.raw(name)
        if not isinstance(value, list):
            raise invalid(self.at(name), f"{name!r} must be an array, got {_kind(value)}")
        if len(value) < at_least:
            raise invalid(self.at(name), f"{name!r} needs at least {at_least} element"
                                         f"{'s' if at_least > 1 else ''}")
        return [Obj(item, join(self.at(name), i), what) for i, item in enumerate(value)]

    def object(self, name: str, what: str = "a format") -> Obj:
        return Obj(self.raw(name), self.at(name), what)

    def done(self) -> None:
        """Reject any field that was not read."""
        extra = sorted(set(self.data) - self.read - {"type"})
        if extra:
            raise invalid(self.at(extra[0]), f"unknown field {extra[0]!r} here")
