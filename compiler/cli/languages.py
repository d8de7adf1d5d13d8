"""The language a command reads: a regex, a GBNF or Lark grammar, or a JSON Schema, from
`--regex` or a file, with the options that go with it (`--language`, `--start`, `--limit`
and the schema options of `schema.py`), as an IR grammar or as the automaton that checks texts.
Errors in the input become diagnostics located in it (`inputs.SourceError`).
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

from ...runtime.compiled import CompiledGrammar
from ..analyses.size import compile_structure
from ..automata.build import ir_to_dfa
from ..frontends.json_schema import schema_to_grammar
from ..frontends.json_schema.options import JsonSchemaOptions
from ..frontends.regex import parse_regex
from ..frontends.registry import EXTENSIONS, LANGUAGES, read
from ..ir.nodes import Grammar, Rule
from ..support.diagnostics import Diagnostic, render
from ..support.limits import Limits
from .check import CompiledTable
from .inputs import InputError, Source, from_source, pattern_source, read_grammar
from .schema import (
    SCHEMA_LANGUAGE,
    check_automaton,
    given_schema_options,
    is_schema,
    schema_options,
)

__all__ = ["LANGUAGE_CHOICES", "LIMIT_HELP", "checking_automaton", "compile_file",
           "grammar_options", "language_grammar", "schema_options_for", "source_of", "warn"]

LANGUAGE_CHOICES = (*LANGUAGES, SCHEMA_LANGUAGE)
LIMIT_HELP = ("override a compile bound, e.g. max_dfa_states=50000 (repeatable; names: "
              + ", ".join(f.name for f in fields(Limits)) + ")")


def grammar_options(parser: argparse.ArgumentParser, limit_help: str = LIMIT_HELP) -> None:
    """--language, --start and --limit, as `compile`, `check`, `extract` and `diff` take
    them."""
    parser.add_argument("--language", choices=LANGUAGE_CHOICES,
                        help="the file's language (default: from its extension, .json being"
                        " a JSON Schema; other extensions are read as a regex)")
    parser.add_argument("--start", metavar="NAME",
                        help="start rule of a grammar (default: root for GBNF, start for Lark)")
    parser.add_argument("--limit", action="append", default=[], metavar="NAME=VALUE",
                        help=limit_help)


def source_of(args: argparse.Namespace, path: str | None) -> tuple[Source, str]:
    """The pattern, grammar or schema to compile (--regex or the file `path`) and its
    language: --language, else the file's extension (.json: a JSON Schema); other extensions
    are read as a regex."""
    language = "regex" if getattr(args, "regex", None) is not None else args.language
    if language is None and path is not None:
        language = SCHEMA_LANGUAGE if is_schema(path, None) else \
            EXTENSIONS.get(Path(path).suffix.lower())
    if language in (None, "regex"):
        return pattern_source(getattr(args, "regex", None), path), "regex"
    assert path is not None
    return Source(path, read_grammar(path)), language


def compile_file(source: Source, language: str, start: str | None, limits: Limits,
                 compile_: Callable[[Grammar], CompiledGrammar]) -> CompiledGrammar:
    """The GBNF or Lark grammar of `source` parsed and compiled by `compile_`; errors become
    diagnostics located in the file."""

    def make(text: str) -> CompiledGrammar:
        grammar, _notes = read(language, text, source=source.path, start=start, limits=limits)
        return compile_(grammar)

    return from_source(source, make, relocate=False)


def schema_options_for(args: argparse.Namespace, language: str) -> JsonSchemaOptions | None:
    """The schema options for a schema input, None for another; InputError when schema
    options are given for a grammar or do not combine."""
    if language != SCHEMA_LANGUAGE:
        given = given_schema_options(args)
        if given:
            raise InputError(f"{', '.join(given)}: only for JSON Schemas (a .json file or"
                             " --language jsonschema)")
        return None
    try:
        return schema_options(args)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def warn(source: Source, warnings: list[Diagnostic]) -> None:
    """Print `warnings` about `source` on stderr."""
    for diag in warnings:
        print(render(source.path, source.text, diag), file=sys.stderr)


def checking_automaton(args: argparse.Namespace, source: Source, language: str,
                       options: JsonSchemaOptions | None, limits: Limits) -> CompiledTable:
    """The automaton that checks texts against `source` (a DFA, or rule automata), without
    token sets; a schema read in any property order unless --property-order says otherwise
    (past `max_unordered_properties`, schema order with a warning)."""
    if language == "regex":
        return from_source(source, lambda p: ir_to_dfa(parse_regex(p, limits=limits), limits))
    if options is not None:
        fallback = args.property_order is None
        automaton, warnings = from_source(
            source, lambda t: check_automaton(t, options, limits, fallback=fallback),
            relocate=False)
        warn(source, warnings)
        return automaton
    compiled = compile_file(source, language, args.start, limits,
                            lambda g: compile_structure(g, limits))
    table = compiled.automaton
    assert table is not None, "a compiled grammar holds a DFA or rule automata"
    return table


def language_grammar(args: argparse.Namespace, source: Source, language: str,
                     options: JsonSchemaOptions | None, limits: Limits) -> Grammar:
    """`source` as an IR grammar (a regex: one rule `root`)."""
    if language == "regex":
        return from_source(source, lambda p: Grammar((Rule("root", parse_regex(p,
                                                                               limits=limits)),),
                                                     "root"))
    if options is not None:
        return from_source(source, lambda t: schema_to_grammar(t, options, limits).grammar,
                           relocate=False)
    return from_source(source, lambda t: read(language, t, source=source.path,
                                              start=args.start, limits=limits)[0],
                       relocate=False)
