"""The command line's inputs: files and patterns read as `grammask lint` reads them, `--limit`
and `--vocab` values, and the two errors that become messages rather than tracebacks
(`InputError`: bad input that is not a grammar's text; `SourceError`: a `GrammarError` with
the text it points into).
"""
from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TypeVar

from ...runtime import Vocabulary
from ..analyses.lint import read_source
from ..support.errors import GrammarError
from ..support.limits import Limits

__all__ = ["InputError", "Source", "SourceError", "from_source", "load_vocabulary", "parse_limits",
           "pattern_source", "read_grammar", "read_text", "relocated"]

T = TypeVar("T")


class InputError(Exception):
    """Bad user input that is not about a grammar's text: reported as `grammask: error: ...`."""


class SourceError(Exception):
    """A `GrammarError` together with the source it points into, for a diagnostic."""

    def __init__(self, path: str, text: str, error: GrammarError) -> None:
        super().__init__(str(error))
        self.path, self.text, self.error = path, text, error


@dataclass(frozen=True)
class Source:
    """A pattern and where it came from (`<regex>` for --regex)."""

    path: str
    text: str


def read_text(path: str) -> str:
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not valid UTF-8 (byte {exc.start}: {exc.reason})") from None


def write_output(path: str, data: bytes) -> None:
    """Write `data` to `path` whole: into a temporary file beside it, then renamed over it,
    so a reader never sees part of it."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None


def read_grammar(path: str) -> str:
    """The text of a grammar or schema file, read as `grammask lint` reads it (UTF-8, no NUL
    byte, no BOM); a located error otherwise."""
    report = read_source(path)
    if report.rejected:
        d = report.diagnostics[0]
        if d.span is None:
            raise InputError(f"{report.path}: {d.message}")
        raise SourceError(report.path, report.text, GrammarError(
            d.message, line=d.span.line, column=d.span.column, code=d.code))
    return report.text


def pattern_source(regex: str | None, path: str | None) -> Source:
    if regex is not None and path is not None:
        raise InputError(f"give either --regex PATTERN or a pattern file, not both ({path})")
    if regex is not None:
        return Source("<regex>", regex)
    if path is None:
        raise InputError("no pattern: give --regex PATTERN or a FILE.regex")
    text = read_grammar(path)
    text = text[:-2] if text.endswith("\r\n") else text.removesuffix("\n")
    return Source(path, text)


def relocated(error: GrammarError, text: str) -> GrammarError:
    """The error with line:col inside a multi-line pattern (the regex frontend counts the
    whole pattern as line 1)."""
    if error.line != 1 or error.column is None or "\n" not in text:
        return error
    offset = min(error.column - 1, len(text))
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return error.located(line=line, column=column)


def from_source(source: Source, make: Callable[[str], T], relocate: bool = True) -> T:
    """`make(source.text)`, a GrammarError becoming a SourceError (located inside a
    multi-line regex when `relocate`)."""
    try:
        return make(source.text)
    except GrammarError as exc:
        raise SourceError(source.path, source.text,
                          relocated(exc, source.text) if relocate else exc) from None


def parse_limits(pairs: Sequence[str]) -> Limits:
    """`Limits` from `NAME=VALUE` strings; `InputError` for a malformed pair or unknown name."""
    known = [f.name for f in fields(Limits)]
    values: dict[str, int | float] = {}
    for pair in pairs:
        name, sep, value = (part.strip() for part in pair.partition("="))
        if not sep or not name:
            raise InputError(f"--limit {pair!r}: expected NAME=VALUE, e.g. max_dfa_states=50000")
        if name not in known:
            raise InputError(f"--limit {name}: unknown limit; the limits are {', '.join(known)}")
        kind = float if name == "max_compile_seconds" else int
        try:
            values[name] = kind(value)
        except ValueError:
            raise InputError(f"--limit {name}={value}: the value must be "
                             f"{'a number' if kind is float else 'an integer'}") from None
    try:
        return Limits(**values)
    except ValueError as exc:
        raise InputError(f"--limit: {exc}") from None


def load_vocabulary(spec: str) -> tuple[Vocabulary, str]:
    """The vocabulary for `--vocab`: "default", a tokenizer.json (or its directory), or a
    .tiktoken file; with a short description."""
    if spec == "default":
        return Vocabulary.default(), "default (Qwen2.5)"
    path = Path(spec)
    if not path.exists():
        raise InputError(f"{spec}: no such file (--vocab takes 'default', a tokenizer.json or a"
                         " .tiktoken file)")
    try:
        if path.suffix == ".tiktoken":
            vocab = Vocabulary.from_tiktoken_file(path)
        else:
            vocab = Vocabulary.from_huggingface(path)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise InputError(f"{spec}: cannot read a vocabulary: {reason}") from None
    return vocab, spec
