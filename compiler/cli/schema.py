"""JSON Schemas on the command line: which inputs are schemas, the schema options of
`compile`, `check` and `lint`, and compiling, checking against and linting a schema file.

An input is a JSON Schema when `--language jsonschema` is given or, without `--language`, when
its name ends in `.json` (so `NAME.schema.json` too). Its errors are reported like a grammar's:
`path:line:col: error: at POINTER: message [code]`, located at the JSON pointer's member name in
the file (at the offending character of a `pattern`); keywords lenient mode ignores are
warnings in the same form, on stderr for `compile` and `check`.
"""
from __future__ import annotations

import argparse
import dataclasses
from typing import BinaryIO

from ...runtime.compiled import CompiledGrammar
from ...runtime.vocab.vocabulary import Vocabulary
from ..analyses.json_schema import lenient_warnings, lint_schema, located_error
from ..analyses.lint import STDIN, FileReport, read_source
from ..analyses.size import compile_structure
from ..frontends.json_schema import schema_to_grammar
from ..frontends.json_schema.options import LAYOUTS, PROPERTY_ORDERS, JsonSchemaOptions
from ..pipeline import compile_parsed_schema
from ..support.deadline import compile_deadline
from ..support.diagnostics import Diagnostic
from ..support.errors import BudgetExceeded, GrammarError
from ..support.limits import Limits
from .check import CompiledTable

__all__ = ["SCHEMA_LANGUAGE", "add_schema_options", "check_automaton", "compile_schema",
           "given_schema_options", "is_schema", "lint_schema_file", "schema_options"]

SCHEMA_LANGUAGE = "jsonschema"


def is_schema(path: str | None, language: str | None) -> bool:
    """Whether the input `path` read as `language` (None: by extension) is a JSON Schema."""
    if language is not None:
        return language == SCHEMA_LANGUAGE
    return path is not None and path != STDIN and path.lower().endswith(".json")


def add_schema_options(parser: argparse.ArgumentParser, *, strict: bool = True,
                       property_order: str = "schema") -> None:
    """The JSON Schema options: --strict (unless the command has its own), --lenient,
    --strict-formats, --property-order (`property_order` by default), --whitespace and
    --indent."""
    parser.set_defaults(default_property_order=property_order)
    group = parser.add_argument_group("JSON Schema options (for a .json file or --language"
                                      " jsonschema)")
    if strict:
        group.add_argument("--strict", action="store_true",
                           help="read an absent additionalProperties as false, as"
                           " structured-output APIs do")
    group.add_argument("--lenient", action="store_true",
                       help="ignore unsupported keywords and formats with a warning (the"
                       " accepted language is then larger) and read an overlapping oneOf as"
                       " anyOf, instead of failing")
    group.add_argument("--strict-formats", action="store_true",
                       help="make a format grammask does not know an error (by default it is"
                       " an annotation, as JSON Schema reads it: any string, with a warning)")
    group.add_argument("--property-order", choices=PROPERTY_ORDERS,
                       help="the order of an object's listed properties: schema (as the"
                       " schema lists them) or any (every order, each at most once); default"
                       f" {property_order}")
    group.add_argument("--whitespace", choices=LAYOUTS,
                       help="whitespace between tokens: flexible (default: any JSON"
                       " whitespace, at most 24 characters per gap), compact (none) or indent"
                       " (exactly json.dumps(..., indent=N))")
    group.add_argument("--indent", type=int, metavar="N",
                       help="spaces per level for --whitespace indent (default 2; implies it)")


def given_schema_options(args: argparse.Namespace, *, strict: bool = True) -> list[str]:
    """The schema options given on the command line (to refuse them for a grammar)."""
    given = [("--strict", strict and args.strict), ("--lenient", args.lenient),
             ("--strict-formats", args.strict_formats),
             ("--property-order", args.property_order is not None),
             ("--whitespace", args.whitespace is not None), ("--indent", args.indent is not None)]
    return [name for name, present in given if present]


def schema_options(args: argparse.Namespace) -> JsonSchemaOptions:
    """The `JsonSchemaOptions` of the command line; ValueError for a bad combination."""
    whitespace = args.whitespace or ("indent" if args.indent is not None else "flexible")
    if args.indent is not None and whitespace != "indent":
        raise ValueError(f"--indent applies to --whitespace indent, not {whitespace}")
    indent = 2 if args.indent is None else args.indent
    return JsonSchemaOptions(strict=args.strict, lenient=args.lenient, whitespace=whitespace,
                             indent=indent, strict_formats=args.strict_formats,
                             property_order=args.property_order or args.default_property_order)


def compile_schema(text: str, vocab: Vocabulary, options: JsonSchemaOptions,
                   limits: Limits) -> tuple[CompiledGrammar, list[Diagnostic]]:
    """The schema `text` compiled against `vocab`, and the keywords lenient mode ignored as
    warnings. Raises GrammarError located in `text`."""
    try:
        with compile_deadline(limits):  # one budget for both, as in compile_json_schema
            parsed = schema_to_grammar(text, options, limits)
            compiled = compile_parsed_schema(parsed, vocab, limits=limits)
    except GrammarError as exc:
        raise located_error(exc, text) from None
    return compiled, lenient_warnings(parsed.diagnostics, text)


def check_automaton(text: str, options: JsonSchemaOptions, limits: Limits, *,
                    fallback: bool = False) -> tuple[CompiledTable, list[Diagnostic]]:
    """The automaton that checks texts against the schema `text` (a DFA or rule automata,
    as `compile` chooses, without token sets), and the keywords lenient mode ignored as warnings.
    With `fallback`, a schema with an object over `Limits.max_unordered_properties` in any
    property order is read in schema order instead, with a warning that says so.
    Raises GrammarError located in `text`."""
    notices: list[Diagnostic] = []
    try:
        try:
            grammar, warnings = schema_to_grammar(text, options, limits)
        except BudgetExceeded as exc:
            if not fallback or exc.limit != "max_unordered_properties":
                raise
            grammar, warnings = schema_to_grammar(
                text, dataclasses.replace(options, property_order="schema"), limits)
            message = f"{exc.message}, so every object is checked in schema order"
            notices.append(Diagnostic.from_error(located_error(exc.located(message=message),
                                                               text), "warning"))
        compiled = compile_structure(grammar, limits)
    except GrammarError as exc:
        if exc.code == "empty-language":
            exc = GrammarError("no JSON value satisfies this schema, so no text can match",
                               code="empty-language", pointer="")
        raise located_error(exc, text) from None
    automaton = compiled.automaton
    assert automaton is not None, "a compiled grammar holds a DFA or rule automata"
    return automaton, notices + lenient_warnings(warnings, text)


def lint_schema_file(path: str, options: JsonSchemaOptions, limits: Limits, *,
                     stats: bool = False, stdin: BinaryIO | None = None) -> FileReport:
    """Read the schema `path` ('-': stdin) and lint it as `lint_schema` does."""
    report = read_source(path, limits, stdin)
    if not report.rejected:
        report.diagnostics = lint_schema(report.text, report.path, options, limits=limits,
                                         stats=stats)
    return report
