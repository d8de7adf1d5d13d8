"""Diagnostics (errors, warnings, notes about a grammar) and their compiler-style rendering:
location (`Span`, or a JSON pointer), message, source line and caret."""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from .errors import GrammarError

__all__ = ["SEVERITIES", "Diagnostic", "Span", "render", "render_diagnostic"]

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True, init=False)
class Span:
    """Where a node came from: 1-based line and column of its first and last character."""

    line: int
    column: int
    end_line: int
    end_column: int
    source: str | None = None

    def __init__(self, line: int, column: int, end_line: int, end_column: int,
                 source: str | None = None) -> None:
        # One per token of a parsed grammar: stored directly, without the frozen
        # dataclass's setattr call per field.
        fields = self.__dict__
        fields["line"], fields["column"] = line, column
        fields["end_line"], fields["end_column"] = end_line, end_column
        fields["source"] = source


@dataclass(frozen=True)
class Diagnostic:
    """One finding about a grammar: severity, a stable code (documented in
    specs/diagnostics.md), a message, and where (a span, and a JSON pointer for schemas)."""

    severity: str
    code: str
    message: str
    span: Span | None = None
    pointer: str | None = None

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, got {self.severity!r}")

    @classmethod
    def from_error(cls, error: GrammarError, severity: str = "error") -> "Diagnostic":
        """The diagnostic of a raised `GrammarError`."""
        span = None
        if error.line is not None:
            col = error.column if error.column is not None else 0
            span = Span(error.line, col, error.line, col, error.source)
        return cls(severity, error.code or "", error.message, span, error.pointer)

_WINDOW = 100
_CONTEXT = 60


def _visible(ch: str) -> str:
    if ch == "\t":
        return ch
    if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
        return "?"
    return ch


def _pad(ch: str) -> str:
    if ch == "\t":
        return "\t"
    if unicodedata.combining(ch):
        return ""
    return "  " if unicodedata.east_asian_width(ch) in ("W", "F") else " "


def _snippet(line_text: str, column: int | None) -> tuple[str, str | None]:
    """The line as shown (windowed around `column` when long) and the caret line, if any."""
    shown = "".join(map(_visible, line_text.rstrip("\r")))
    col = None if column is None else max(1, min(column, len(shown) + 1))
    start = 0
    if len(shown) > _WINDOW:
        start = 0 if col is None else max(0, min(col - 1 - _CONTEXT, len(shown) - _WINDOW))
        end = start + _WINDOW
        head = "..." if start else ""
        tail = "..." if end < len(shown) else ""
        body = shown[start:end]
        shown = head + body + tail
        if col is not None:
            col = col - start + len(head)
    if col is None:
        return shown, None
    return shown, "".join(map(_pad, shown[: col - 1])) + "^"


def render(path: str, source_text: str, diag: Diagnostic) -> str:
    """`path:line:col: severity: message [code]`, then the source line with a caret under the
    column (when the span has a line inside `source_text`). No trailing newline."""
    line = diag.span.line if diag.span else None
    column = diag.span.column if diag.span and diag.span.column else None
    where = path
    if line is not None:
        where += f":{line}"
        if column is not None:
            where += f":{column}"
    message = diag.message
    if diag.pointer:
        message = f"at {diag.pointer}: {message}"
    head = f"{where}: {diag.severity}: {message}"
    if diag.code:
        head += f" [{diag.code}]"
    lines = source_text.split("\n")
    if line is None or not 1 <= line <= len(lines):
        return head
    shown, caret = _snippet(lines[line - 1], column)
    gutter = str(line)
    out = [head, f" {gutter} | {shown}"]
    if caret is not None:
        out.append(f" {' ' * len(gutter)} | {caret}")
    return "\n".join(out)


def render_diagnostic(path: str, source_text: str, error: GrammarError,
                      severity: str = "error") -> str:
    """`render` for a raised `GrammarError`."""
    return render(path, source_text, Diagnostic.from_error(error, severity))
