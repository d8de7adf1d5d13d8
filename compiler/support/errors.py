"""The one error type every frontend and compiler stage raises for bad input."""
from __future__ import annotations


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


class BudgetExceeded(GrammarError):
    """A configured bound (states, repetitions, size) was exceeded; the message names the bound."""
