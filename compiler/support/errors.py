"""The one error type every frontend and compiler stage raises for bad input."""
from __future__ import annotations

from typing import TypeVar

E = TypeVar("E", bound="GrammarError")


class GrammarError(ValueError):
    """A grammar, regex or schema that cannot be compiled, with where it went wrong.

    `line` and `column` are 1-based; `pointer` is a JSON pointer for schemas; `code` names the
    diagnostic kind. str() gives `line:col: message`, the compiler convention.
    """

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        pointer: str | None = None,
        source: str | None = None,
        code: str | None = None,
    ) -> None:
        self.message = message
        self.line = line
        self.column = column
        self.pointer = pointer
        self.source = source
        self.code = code
        super().__init__(self._render())

    def located(self: E, **changes: object) -> E:
        """A copy of this error (same type, same fields) with `changes` to `message`, `line`,
        `column`, `pointer`, `source` or `code`: the error re-raised at a new location or
        with context added to its message, its other fields kept."""
        unknown = set(changes) - set(_LOCATED_FIELDS)
        if unknown:
            raise TypeError(f"located() got unexpected fields {sorted(unknown)}")
        copy = type(self).__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.__dict__.update(changes)
        ValueError.__init__(copy, copy._render())
        return copy

    def _render(self) -> str:
        where = []
        if self.source:
            where.append(self.source)
        if self.line is not None:
            where.append(str(self.line))
            if self.column is not None:
                where.append(str(self.column))
        prefix = ":".join(where)
        if self.pointer is not None:
            prefix = f"{prefix} {self.pointer}".strip() if prefix else self.pointer
        return f"{prefix}: {self.message}" if prefix else self.message


_LOCATED_FIELDS = ("message", "line", "column", "pointer", "source", "code")


class BudgetExceeded(GrammarError):
    """A configured bound (states, repetitions, size) was exceeded; the message names the bound.

    `limit` is the name of the `Limits` field exceeded (e.g. "max_dfa_states"), `value` its
    configured bound and `measured` what was measured (a number, or a text such as
    "more than 4097" or "1.2 s" where no exact count is known). All three are None for a bound
    that is not a `Limits` field (a number whose exponent is past what can be read exactly).
    `Limits.exceeded` sets them; `located` keeps them.
    """

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        pointer: str | None = None,
        source: str | None = None,
        code: str | None = None,
        limit: str | None = None,
        value: int | float | None = None,
        measured: int | float | str | None = None,
    ) -> None:
        self.limit = limit
        self.value = value
        self.measured = measured
        super().__init__(message, line=line, column=column, pointer=pointer, source=source,
                         code=code)
