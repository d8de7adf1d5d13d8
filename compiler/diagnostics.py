"""Compiler-style rendering of a `GrammarError`: location, message, source line and caret."""
from __future__ import annotations

import unicodedata

from .errors import GrammarError

__all__ = ["render_diagnostic"]

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


def render_diagnostic(path: str, source_text: str, error: GrammarError,
                      severity: str = "error") -> str:
    """`path:line:col: severity: message [code]`, then the source line with a caret under the
    column (when the error has a line inside `source_text`). No trailing newline."""
    where = path
    if error.line is not None:
        where += f":{error.line}"
        if error.column is not None:
            where += f":{error.column}"
    message = error.message
    if error.pointer:
        message = f"at {error.pointer}: {message}"
    head = f"{where}: {severity}: {message}"
    if error.code:
        head += f" [{error.code}]"
    lines = source_text.split("\n")
    if error.line is None or not 1 <= error.line <= len(lines):
        return head
    shown, caret = _snippet(lines[error.line - 1], error.column)
    gutter = str(error.line)
    out = [head, f" {gutter} | {shown}"]
    if caret is not None:
        out.append(f" {' ' * len(gutter)} | {caret}")
    return "\n".join(out)
