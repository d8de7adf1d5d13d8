"""The grammar languages by name, and the one shape every frontend's result takes.

Invariant: each language has exactly one entry here: its name (the CLI's `--language`), its file
extensions, its default start rule and the function that reads it. Every reader returns a
`Parsed`: the grammar IR and the diagnostics found while reading (Lark's notes on what it
ignored; none for GBNF or a regex), in source order. A regex file is one rule named `regex` (one
trailing newline ignored; a start rule given for it is ignored). The pipeline, the linter and
the CLI read grammars only through `read`, so a new language is one entry here and nothing else.
JSON Schema is not a grammar language in this sense (it has options and its own linter) and is
read by `frontends.json_schema.schema_to_grammar`, which returns a `Parsed` too.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..ir.nodes import Grammar, Rule
from ..support.diagnostics import Span
from ..support.errors import GrammarError
from ..support.limits import DEFAULT_LIMITS, Limits
from .gbnf import parse_gbnf
from .lark_dialect import read_with_dialect, uses_dialect
from .lark_grammar import parse_lark
from .parsed import Parsed
from .regex import parse_regex

__all__ = ["EXTENSIONS", "LANGUAGES", "Language", "Parsed", "language_for", "read"]

Reader = Callable[[str, str | None, str, Sequence[str], Limits, Mapping[str, Any] | None],
                  Parsed]


@dataclass(frozen=True)
class Language:
    """One grammar language: its name, file extensions, default start rule and reader
    (text, source label, start rule, import folders, limits, named grammars) → `Parsed`."""

    name: str
    extensions: tuple[str, ...]
    start: str
    reader: Reader


def _no_grammars(language: str, grammars: Mapping[str, Any] | None) -> None:
    if grammars:
        raise GrammarError(f"named grammars (@name) are a Lark addition; {language} has none",
                           code="lark-dialect")


def _gbnf(text: str, source: str | None, start: str, paths: Sequence[str],
          limits: Limits, grammars: Mapping[str, Any] | None = None) -> Parsed:
    _no_grammars("GBNF", grammars)
    return Parsed(parse_gbnf(text, source=source, start=start, limits=limits))


def _lark(text: str, source: str | None, start: str, paths: Sequence[str],
          limits: Limits, grammars: Mapping[str, Any] | None = None) -> Parsed:
    def dialect(text: str, keep: Sequence[str], rule: str | None, changed: bool) -> Parsed:
        return parse_lark(text, start=rule or start, source=source, import_paths=paths,
                          limits=limits, keep=keep, empty_terminals=changed)

    if uses_dialect(text) or grammars:
        return read_with_dialect(text, dialect, limits, source, grammars)
    return parse_lark(text, start=start, source=source, import_paths=paths, limits=limits)


def _regex(text: str, source: str | None, start: str, paths: Sequence[str],
           limits: Limits, grammars: Mapping[str, Any] | None = None) -> Parsed:
    _no_grammars("a regex", grammars)
    pattern = text[:-2] if text.endswith("\r\n") else text.removesuffix("\n")
    node = parse_regex(pattern, limits=limits)
    span = Span(1, 1, 1, max(len(pattern), 1))
    return Parsed(Grammar((Rule("regex", node, span),), "regex", source))


LANGUAGES: dict[str, Language] = {
    language.name: language for language in (
        Language("gbnf", (".gbnf",), "root", _gbnf),
        Language("lark", (".lark",), "start", _lark),
        Language("regex", (".regex",), "regex", _regex),
    )
}
EXTENSIONS: dict[str, str] = {ext: lang.name for lang in LANGUAGES.values()
                              for ext in lang.extensions}


def language_for(path: str | None, language: str | None = None) -> str:
    """The grammar language of `path`: `language` when given, else from the extension.
    ValueError when neither tells (a path of None or '-', standard input, needs `language`)."""
    names = "|".join(LANGUAGES)
    if language is not None:
        if language not in LANGUAGES:
            raise ValueError(f"unknown language {language!r}; expected one of "
                             f"{', '.join(LANGUAGES)}")
        return language
    if path in (None, "-"):
        raise ValueError(f"reading stdin ('-') needs --language {names}")
    found = EXTENSIONS.get(Path(path).suffix.lower())
    if found is None:
        *first, last = EXTENSIONS
        raise ValueError(f"{path}: cannot tell the grammar language from the extension"
                         f" (expected {', '.join(first)} or {last}); use --language {names}")
    return found


def read(language: str, text: str, *, source: str | None = None, start: str | None = None,
         import_paths: Sequence[str] | None = None, limits: Limits = DEFAULT_LIMITS,
         grammars: Mapping[str, Any] | None = None) -> Parsed:
    """The grammar of `text` in `language` (a name of `LANGUAGES`), with the diagnostics
    found while reading. `start` defaults to the language's; `source` names the text in
    errors; `import_paths` are searched by `%import` (Lark; None: the folder of `source` when
    it names a file); `grammars` are the grammars Lark's `@name` refers to (Lark texts or
    JSON Schemas). Raises the frontend's GrammarError (BudgetExceeded for `limits`)."""
    entry = LANGUAGES[language_for(None, language)]
    if import_paths is None:
        import_paths = (str(Path(source).parent),) if source and Path(source).is_file() else ()
    return entry.reader(text, source, start or entry.start, tuple(import_paths), limits,
                        grammars)
