"""`grammask extract` and `grammask diff`: the compiled automata as tools (`tools/`).

`extract LANGUAGE [FILE]`: the leftmost-longest match of the language in the text of FILE
(stdin by default), or every non-overlapping one with `--all`, as JSON lines (byte offsets and
line:col spans) or, with `--text`, the matched texts. Exit 0 when something was found, 1 when
nothing, 2 on unusable input.

`diff OLD NEW`: whether NEW accepts everything OLD did, and the other way round; for each
direction that fails, a shortest witness and where it parts. Exit 0 when NEW accepts all that
OLD did (backward compatible), 1 otherwise, 2 on unusable input.
"""
from __future__ import annotations

import argparse
import json
import sys

from ..ir.graph import find_cycle
from ..support.errors import GrammarError
from ..tools.diff import DEFAULT_DEPTH, Witness, difference
from ..tools.extract import extract
from .inputs import InputError, parse_limits, read_text
from .languages import (
    checking_automaton,
    grammar_options,
    language_grammar,
    schema_options_for,
    source_of,
)
from .schema import SCHEMA_LANGUAGE, add_schema_options

__all__ = ["add_diff", "add_extract"]


def _cmd_extract(args: argparse.Namespace) -> int:
    limits = parse_limits(args.limit)
    path = None if args.regex is not None else args.language_file
    text_file = args.text_file if args.regex is None else (args.language_file or args.text_file)
    if args.regex is not None and args.language_file and args.text_file:
        raise InputError("with --regex, give at most one FILE (the text)")
    if path is None and args.regex is None:
        raise InputError("give the language: a FILE (.regex, .gbnf, .lark, .json) or --regex")
    source, language = source_of(args, path)
    options = schema_options_for(args, language)
    if text_file is None and (sys.stdin is None or sys.stdin.isatty()):
        raise InputError("no text: give a FILE or pipe the text to stdin")
    text = read_text(text_file or "-")
    automaton = checking_automaton(args, source, language, options, limits)
    matches = extract(automaton, text, every=args.all, limits=limits.runtime())
    for m in matches:
        print(m.text if args.text else json.dumps(m.as_json(), ensure_ascii=False))
    return 0 if matches else 1


def add_extract(sub: argparse._SubParsersAction) -> None:
    """The `extract` command."""
    p = sub.add_parser("extract", help="find the answers of a language inside a free text",
                       description="Find the matches of a regex, grammar or JSON Schema inside"
                       " a text (a model's answer wrapped in prose, code fences or repeated):"
                       " the longest complete match that starts earliest, or with --all every"
                       " non-overlapping one, as JSON lines with byte offsets and line:col"
                       " spans. Exits 0 when something was found, 1 when nothing.")
    p.add_argument("language_file", nargs="?", metavar="LANGUAGE",
                   help="the language: a .regex, .gbnf, .lark or .json (JSON Schema) file")
    p.add_argument("text_file", nargs="?", metavar="FILE",
                   help="the text ('-' or absent: stdin)")
    p.add_argument("--regex", metavar="PATTERN", help="the pattern itself")
    p.add_argument("--all", action="store_true", help="every non-overlapping match")
    p.add_argument("--text", action="store_true",
                   help="print the matched texts instead of JSON lines")
    grammar_options(p)
    add_schema_options(p, property_order="any")
    p.set_defaults(func=_cmd_extract)


def _show(witness: Witness, schema: bool) -> str:
    return json.dumps(witness.value, ensure_ascii=False) if schema else repr(witness.text)


def _cmd_diff(args: argparse.Namespace) -> int:
    limits = parse_limits(args.limit)
    args.regex = None
    grammars, schema = [], True
    for path in (args.old, args.new):
        source, language = source_of(args, path)
        options = schema_options_for(args, language)
        schema = schema and language == SCHEMA_LANGUAGE
        grammars.append(language_grammar(args, source, language, options, limits))
    try:
        found = {"old-not-new": difference(grammars[0], grammars[1], depth=args.depth,
                                           json_texts=schema, limits=limits),
                 "new-not-old": difference(grammars[1], grammars[0], depth=args.depth,
                                           json_texts=schema, limits=limits)}
    except GrammarError as exc:
        raise InputError(f"cannot compare {args.old} and {args.new}: {exc}") from None
    cut = any(find_cycle(g) is not None for g in grammars)
    if args.format == "json":
        for direction, w in found.items():
            if w is not None:
                print(json.dumps({"direction": direction,
                                  "witness": w.value if schema else w.text,
                                  "pointer": w.pointer, "offset": w.offset, "depth": w.depth},
                                 ensure_ascii=False))
    else:
        names = {"old-not-new": (args.old, args.new), "new-not-old": (args.new, args.old)}
        for direction, w in found.items():
            accepts, rejects = names[direction]
            if w is None:
                print(f"{direction}: {rejects} accepts everything {accepts} does")
                continue
            where = f" at byte {w.offset}" if w.pointer is None else \
                f" at {'the root' if w.pointer == '' else w.pointer} (byte {w.offset})"
            print(f"{direction}: {_show(w, schema)} is accepted by {accepts} and rejected by"
                  f" {rejects}{where}")
        print(f"exact up to nesting depth {args.depth} (recursion followed at most that deep)"
              if cut else "exact")
    return 0 if found["old-not-new"] is None else 1


def _depth(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return value


def add_diff(sub: argparse._SubParsersAction) -> None:
    """The `diff` command."""
    p = sub.add_parser("diff", help="tell whether a schema or grammar change breaks old answers",
                       description="Decide whether NEW accepts every answer OLD accepts"
                       " (backward compatible) and the other way round; for each direction"
                       " that fails, print a shortest witness and the JSON pointer (or byte)"
                       " where it parts. Exact where both languages are regular; for"
                       " recursive ones exact up to --depth. Exits 0 when NEW accepts"
                       " everything OLD did, 1 otherwise, 2 on unusable input.")
    p.add_argument("old", metavar="OLD", help="the old schema or grammar file")
    p.add_argument("new", metavar="NEW", help="the new schema or grammar file")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text (default) or json: one object per failing direction with"
                   " direction, witness, pointer, offset and depth")
    p.add_argument("--depth", type=_depth, default=DEFAULT_DEPTH,
                   help=f"nesting depth for recursive languages (default {DEFAULT_DEPTH})")
    grammar_options(p)
    add_schema_options(p)
    p.set_defaults(func=_cmd_diff)
