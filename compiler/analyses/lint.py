"""Linting grammar files: read a file, pick the frontend by extension or by an explicit
language (`frontends.registry`), run the analyses of `compiler.analyses`, and write the
findings as compiler-style text, JSON lines or a SARIF 2.1.0 log.

Input that cannot be linted at all (missing or unreadable file, a directory, bytes that are not
UTF-8, a NUL byte, more characters than `Limits.max_pattern_length`) becomes one error
diagnostic and marks the file as rejected (exit status 2).
"""
from __future__ import annotations

import importlib.metadata
import json
import sys
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from ..frontends.registry import language_for, read
from ..ir.nodes import Grammar
from ..support.diagnostics import Diagnostic, Span, render
from ..support.errors import GrammarError
from ..support.limits import DEFAULT_LIMITS, Limits
from . import CODES, Analysis, lint_grammar, sort_diagnostics
from .size import analyse_backend

__all__ = ["FileReport", "exit_status", "format_json", "format_sarif", "format_text",
           "lint_file", "lint_source", "read_source", "summary"]

STDIN = "-"
STDIN_LABEL = "<stdin>"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


@dataclass
class FileReport:
    """The findings for one input: its label, its text (for carets) and diagnostics;
    `rejected` when the input itself could not be linted (unreadable, not UTF-8, too big)."""

    path: str
    text: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    rejected: bool = False


def _point(text: str, offset: int) -> Span:
    """The span of the character at `offset` in `text`."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return Span(line, column, line, column)


def _oversize(text: str, limits: Limits) -> Diagnostic | None:
    if len(text) <= limits.max_pattern_length:
        return None
    error = limits.exceeded("max_pattern_length", len(text), "input size in characters")
    return Diagnostic("error", "budget", error.message)


def read_source(path: str, limits: Limits = DEFAULT_LIMITS,
                stdin: BinaryIO | None = None) -> FileReport:
    """The text of `path` ('-': stdin), or a rejected report with one error diagnostic."""
    label = STDIN_LABEL if path == STDIN else path
    try:
        if path == STDIN:
            data = (stdin or sys.stdin.buffer).read()
        elif Path(path).is_dir():
            return FileReport(label, "", [Diagnostic("error", "unreadable",
                                                     "cannot read: it is a directory")], True)
        else:
            data = Path(path).read_bytes()
    except OSError as exc:
        return FileReport(label, "", [Diagnostic(
            "error", "unreadable", f"cannot read: {exc.strerror or exc}")], True)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        shown = data.decode("utf-8", "replace")
        prefix = data[:exc.start].decode("utf-8", "replace")
        return FileReport(label, shown, [Diagnostic(
            "error", "invalid-utf8",
            f"not valid UTF-8: byte 0x{data[exc.start]:02X} at byte offset {exc.start}"
            f" ({exc.reason})", _point(prefix, len(prefix)))], True)
    nul = data.find(b"\0")
    if nul >= 0:
        offset = len(data[:nul].decode("utf-8"))
        return FileReport(label, text, [Diagnostic(
            "error", "nul-byte", f"NUL byte at byte offset {nul}: a grammar file must be text",
            _point(text, offset))], True)
    text = text.removeprefix("\ufeff")
    too_big = _oversize(text, limits)
    if too_big is not None:
        return FileReport(label, "", [too_big], True)
    return FileReport(label, text)


def _relocate(span: Span | None, text: str) -> Span | None:
    """A regex span (line 1, columns counting through the whole pattern) as line:column."""
    if span is None or span.line != 1 or "\n" not in text:
        return span
    start = _point(text, max(span.column - 1, 0))
    end = _point(text, max(span.end_column - 1, 0))
    return Span(start.line, start.column, end.line, end.column, span.source)


def _relocated(diag: Diagnostic, text: str) -> Diagnostic:
    return Diagnostic(diag.severity, diag.code, diag.message, _relocate(diag.span, text),
                      diag.pointer)


def lint_source(path: str, text: str, fmt: str | None = None, limits: Limits = DEFAULT_LIMITS,
                start: str | None = None, *, stats: bool = False) -> list[Diagnostic]:
    """Lint grammar `text` read from `path`: `fmt` is its language (gbnf, lark, regex; None:
    from the extension of `path`), `start` overrides the start rule. A frontend error becomes
    one error diagnostic; otherwise every analysis runs, with the Lark frontend's notes added,
    and with `stats` the grammar is compiled (under `limits`) to report its backend and sizes.
    ValueError when the language cannot be told."""
    language = language_for(path, fmt)
    too_big = _oversize(text, limits)
    if too_big is not None:
        return [too_big]
    try:
        grammar, notes = read(language, text, source=path, start=start, limits=limits)
    except GrammarError as exc:
        diag = Diagnostic.from_error(exc)
        if not diag.code:
            diag = Diagnostic(diag.severity, "syntax", diag.message, diag.span, diag.pointer)
        return [_relocated(diag, text) if language == "regex" else diag]
    except RecursionError:
        return [Diagnostic("error", "syntax", "the grammar is too deeply nested")]
    except Exception as exc:  # noqa: BLE001 - a frontend bug must not become a traceback
        return [_internal(f"the {language} frontend", exc)]
    found = _run(lint_grammar, grammar, limits) + list(notes)
    if stats:
        found += _run(analyse_backend, grammar, limits)
    if language == "regex":
        found = [_relocated(d, text) for d in found]
    return sort_diagnostics(found)


def _internal(what: str, exc: BaseException) -> Diagnostic:
    return Diagnostic("error", "internal-error",
                      f"{what} failed on this input ({type(exc).__name__}: {exc}); this is a"
                      " bug in grammask, please report it with the input")


def _run(analysis: Analysis, grammar: Grammar, limits: Limits) -> list[Diagnostic]:
    try:
        return analysis(grammar, limits)
    except Exception as exc:  # noqa: BLE001 - an analysis bug must not become a traceback
        return [_internal("an analysis", exc)]


def lint_file(path: str, language: str | None = None, limits: Limits = DEFAULT_LIMITS,
              start: str | None = None, stdin: BinaryIO | None = None, *,
              stats: bool = False) -> FileReport:
    """Read and lint one file ('-': stdin, which needs `language`); `stats` as for
    `lint_source`."""
    report = read_source(path, limits, stdin)
    if not report.rejected:
        report.diagnostics = lint_source(path, report.text, language or language_for(path),
                                         limits, start, stats=stats)
    return report


def _counts(reports: list[FileReport]) -> dict[str, int]:
    counts = {severity: 0 for severity in _LEVELS}
    for report in reports:
        for diag in report.diagnostics:
            counts[diag.severity] += 1
    return counts


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary(reports: list[FileReport]) -> str:
    """`N errors, M warnings, K notes` (info diagnostics are counted as notes)."""
    c = _counts(reports)
    return ", ".join([_plural(c["error"], "error"), _plural(c["warning"], "warning"),
                      _plural(c["info"], "note")])


def exit_status(reports: list[FileReport], strict: bool = False) -> int:
    """2 when an input was rejected, 1 for errors (or warnings when `strict`), else 0."""
    if any(r.rejected for r in reports):
        return 2
    c = _counts(reports)
    return 1 if c["error"] or (strict and c["warning"]) else 0


def format_text(reports: list[FileReport]) -> str:
    """Every diagnostic rendered compiler-style (location, source line, caret), then the
    summary line."""
    blocks = [render(r.path, r.text, d) for r in reports for d in r.diagnostics]
    return "\n".join(blocks + [summary(reports)])


def _location(diag: Diagnostic) -> dict[str, int | None]:
    span = diag.span
    if span is None:
        return {"line": None, "column": None, "end_line": None, "end_column": None}
    return {"line": span.line, "column": span.column or None,
            "end_line": span.end_line, "end_column": span.end_column or None}


def format_json(reports: list[FileReport]) -> str:
    """One JSON object per diagnostic per line: path, line, column, end_line, end_column
    (null when unknown), severity, code, message."""
    lines = []
    for report in reports:
        for diag in report.diagnostics:
            obj = {"path": report.path, **_location(diag), "severity": diag.severity,
                   "code": diag.code, "message": diag.message}
            lines.append(json.dumps(obj, ensure_ascii=False))
    return "\n".join(lines)


def _uri(path: str) -> str:
    if path == STDIN_LABEL:
        return "stdin"
    p = Path(path)
    if p.is_absolute():
        return p.as_uri()
    return urllib.parse.quote(p.as_posix(), safe="/")


def _region(span: Span) -> dict[str, int]:
    region = {"startLine": max(span.line, 1)}
    if span.column:
        region["startColumn"] = span.column
    end_line = max(span.end_line, region["startLine"])
    region["endLine"] = end_line
    if span.end_column and span.column:
        end = span.end_column + 1
        if end_line == region["startLine"]:
            end = max(end, span.column + 1)
        region["endColumn"] = end
    return region


def _version() -> str:
    try:
        return importlib.metadata.version("grammask")
    except importlib.metadata.PackageNotFoundError:
        return "0"


def format_sarif(reports: list[FileReport]) -> str:
    """A SARIF 2.1.0 log: one run, the rules used, one result per diagnostic (columns count
    Unicode code points; endColumn is exclusive, as SARIF requires)."""
    rules: list[dict[str, object]] = []
    index: dict[str, int] = {}
    results = []
    for report in reports:
        for diag in report.diagnostics:
            code = diag.code or "syntax"
            if code not in index:
                index[code] = len(rules)
                text = CODES[code][1] if code in CODES else f"Reported by the frontend: {code}."
                rules.append({"id": code, "shortDescription": {"text": text}})
            physical: dict[str, object] = {"artifactLocation": {"uri": _uri(report.path)}}
            if diag.span is not None:
                physical["region"] = _region(diag.span)
            message = f"at {diag.pointer}: {diag.message}" if diag.pointer else diag.message
            results.append({"ruleId": code, "ruleIndex": index[code],
                            "level": _LEVELS[diag.severity], "message": {"text": message},
                            "locations": [{"physicalLocation": physical}]})
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "grammask", "version": _version(), "rules": rules}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    return json.dumps(log, indent=2, ensure_ascii=False)
