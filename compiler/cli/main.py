"""The `grammask` command line: `demo`, `compile`, `check` and `lint`, for regexes, GBNF and
Lark grammars, and JSON Schemas (whose handling is in `schema.py`); `extract` and `diff`
(`extract_diff.py`); `warmup` (`warmup.py`).

Exit status: 0 success, 1 `check` found a text that does not match or `lint` found errors,
2 bad input (a pattern, grammar or schema that does not compile, a missing or unreadable file,
a bad option). Errors in user input are reported as diagnostics, never as tracebacks.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ...runtime.vocab.trie import token_trie
from ..analyses.lint import (
    STDIN,
    exit_status,
    format_json,
    format_sarif,
    format_text,
    lint_file,
)
from ..analyses.size import automata_sizes
from ..frontends.registry import language_for
from ..pipeline import compile_grammar, compile_regex
from ..support.diagnostics import Diagnostic, render_diagnostic
from .check import check_text
from .demo import DEFAULT_PATTERN, run_demo
from .demo_schema import SCHEMA_N
from .demo_tools import TOOLS_N
from .extract_diff import add_diff, add_extract
from .inputs import (
    InputError,
    Source,
    SourceError,
    from_source,
    load_vocabulary,
    parse_limits,
    read_text,
    write_output,
)
from .languages import (
    LANGUAGE_CHOICES,
    LIMIT_HELP,
    checking_automaton,
    compile_file,
    grammar_options,
    schema_options_for,
    source_of,
    warn,
)
from .report import precompute_token_sets, token_sets_line
from .schema import (
    add_schema_options,
    compile_schema,
    is_schema,
    lint_schema_file,
    schema_options,
)
from .warmup import run_warmup

__all__ = ["main"]

def _cmd_compile(args: argparse.Namespace) -> int:
    source, language = source_of(args, args.file)
    options = schema_options_for(args, language)
    limits = parse_limits(args.limit)
    t0 = time.perf_counter()
    vocab, vocab_name = load_vocabulary(args.vocab)
    token_trie(vocab)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    warnings: list[Diagnostic] = []
    if language == "regex":
        compiled = from_source(source, lambda p: compile_regex(p, vocab, limits=limits))
    elif options is not None:
        compiled, warnings = from_source(source, lambda t: compile_schema(t, vocab, options, limits),
                                    relocate=False)
    else:
        compiled = compile_file(source, language, args.start, limits,
                                 lambda g: compile_grammar(g, vocab, limits=limits))
    compile_ms = (time.perf_counter() - t0) * 1e3
    eos = ", ".join(map(str, vocab.eos_token_ids.tolist())) or "none"
    warn(source, warnings)
    print(f"{source.path}: compiled in {compile_ms:.1f} ms")
    print(f"  backend       {compiled.notes[0] if compiled.notes else compiled.kind}")
    print(f"  vocabulary    {vocab_name}: {vocab.size:,} ids, {vocab.n_tokens:,} tokens,"
          f" EOS {eos}; loaded and indexed in {load_s:.2f} s")
    dfa = compiled.dfa
    if dfa is not None:
        print(f"  DFA           {dfa.n_states:,} states ({int(dfa.accepting.sum()):,} accepting),"
              f" {dfa.n_classes} byte classes, {dfa.nbytes():,} bytes")
    else:
        assert compiled.pushdown is not None
        print(f"  automata      {automata_sizes(compiled)}, {compiled.token_sets.table.nbytes():,}"
              " bytes")
    if args.precompute:
        seconds = from_source(source, lambda _: precompute_token_sets(compiled, limits))
        print(f"  token sets    {token_sets_line(compiled.token_sets, seconds)}")
    else:
        print("  token sets    computed on first use (--precompute builds them now)")
    print(f"  memory        {compiled.nbytes():,} bytes in all")
    if args.out is not None:
        data = compiled.to_bytes()
        write_output(args.out, data)
        print(f"  written       {args.out}: {len(data):,} bytes (CompiledGrammar.from_bytes"
              f" loads it for this vocabulary)")
    return 0


def _check_texts(args: argparse.Namespace, positional: list[str]) -> list[tuple[str, str]]:
    given = positional + list(args.text)
    texts = [(f"<text {i}>" if len(given) > 1 else "<text>", t) for i, t in enumerate(given, 1)]
    texts += [(f, read_text(f)) for f in args.text_file]
    if not texts:
        if sys.stdin is None or sys.stdin.isatty():
            raise InputError("nothing to check: give --text TEXT, TEXT arguments, --text-file"
                             " FILE, or pipe the text to stdin")
        texts.append(("<stdin>", read_text("-")))
    return texts


def _cmd_check(args: argparse.Namespace) -> int:
    inputs = list(args.inputs)
    path = None if args.regex is not None else (inputs.pop(0) if inputs else None)
    limits = parse_limits(args.limit)
    source, language = source_of(args, path)
    options = schema_options_for(args, language)
    texts = _check_texts(args, inputs)
    automaton = checking_automaton(args, source, language, options, limits)
    matched = 0
    for label, text in texts:
        problem = check_text(automaton, text, limits.runtime())
        if problem is None:
            matched += 1
            print(f"{label}: match")
        else:
            print(render_diagnostic(label, text, problem))
    print(f"{matched} of {len(texts)} {'text matches' if len(texts) == 1 else 'texts match'}")
    return 0 if matched == len(texts) else 1


def _cmd_lint(args: argparse.Namespace) -> int:
    limits = parse_limits(args.limit)
    if args.files.count(STDIN) > 1:
        raise InputError("'-' (stdin) can be given only once")
    for path in args.files:
        if is_schema(path, args.language) or (path != STDIN and not Path(path).is_file()):
            continue
        try:
            language_for(path, args.language)
        except ValueError as exc:
            raise InputError(f"{exc} (or jsonschema: a JSON Schema, named *.json)") from None
    try:
        options = schema_options(args)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    reports = [lint_schema_file(path, options, limits, stats=args.stats)
               if is_schema(path, args.language)
               else lint_file(path, args.language, limits, args.start, stats=args.stats)
               for path in args.files]
    for report in reports:
        report.diagnostics = [d for d in report.diagnostics
                              if d.severity == "error" or d.code not in args.no_warn]
    formatter = {"text": format_text, "json": format_json, "sarif": format_sarif}[args.format]
    output = formatter(reports)
    if output:
        print(output)
    return exit_status(reports, args.strict)


def _cmd_demo(args: argparse.Namespace) -> int:
    source = Source("<regex>", args.pattern)
    try:
        result = from_source(source, lambda p: run_demo(args.n, args.seed, p,
                                                   None if args.json else sys.stdout,
                                                   schema_n=args.schema_n,
                                                   tools_n=args.tools_n))
    except re.error as exc:
        raise InputError(f"--pattern: Python's re rejects it, so answers cannot be checked:"
                         f" {exc}") from None
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    return 0


def _cmd_warmup(args: argparse.Namespace) -> int:
    result = run_warmup(show_progress=not args.quiet)
    if args.quiet:
        print(result.summary())
    return 0


def _int_from(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least `minimum`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the `grammask` command."""
    parser = argparse.ArgumentParser(
        prog="grammask", description="Compile grammars to token masks for constrained decoding.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    demo = sub.add_parser("demo", help="sample a toy model with and without a grammar mask",
                          description="Sample a toy model that mostly answers {\"age\": 42},"
                          " freely and through a compiled pattern, and compare validity; then"
                          " one that answers {\"name\": \"Ada\"} in JSON mode and through a"
                          " strict person schema, and compare what each guarantees; then one"
                          " that answers in text or calls a tool in Qwen3's format, freely and"
                          " through compile_tool_calls.")
    demo.add_argument("--n", type=_int_from(1), default=200, help="answers per run (200)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (0)")
    demo.add_argument("--pattern", default=DEFAULT_PATTERN,
                      help="regex the answers must fully match (checked with Python's re)")
    demo.add_argument("--schema-n", type=_int_from(0), default=SCHEMA_N,
                      help=f"answers per JSON Schema run ({SCHEMA_N}; 0 skips that part)")
    demo.add_argument("--tools-n", type=_int_from(0), default=TOOLS_N,
                      help=f"answers per tool-calling run ({TOOLS_N}; 0 skips that part)")
    demo.add_argument("--json", action="store_true", help="print the result as JSON")
    demo.set_defaults(func=_cmd_demo)

    limit_help = LIMIT_HELP
    comp = sub.add_parser("compile", help="compile a regex, grammar or JSON Schema and print"
                          " its statistics",
                          description="Compile a regex, a GBNF/Lark grammar or a JSON Schema"
                          " against a vocabulary and print the backend it compiles to (a DFA,"
                          " or rule automata for the pushdown runtime), why, and the"
                          " statistics. A FILE.regex holds the pattern (one trailing newline"
                          " is ignored).")
    comp.add_argument("file", nargs="?", metavar="FILE",
                      help="file holding the pattern (.regex), grammar (.gbnf, .lark) or JSON"
                      " Schema (.json)")
    comp.add_argument("--regex", metavar="PATTERN", help="the pattern itself")
    comp.add_argument("--vocab", default="default",
                      help="'default' (Qwen2.5), a tokenizer.json or a .tiktoken file")
    comp.add_argument("--precompute", action="store_true",
                      help="compute every state's token set now and report its memory (for"
                      " a pushdown grammar with a progress bar on stderr)")
    comp.add_argument("--out", metavar="FILE",
                      help="also write the compiled grammar (CompiledGrammar.to_bytes) to FILE")
    grammar_options(comp, limit_help)
    add_schema_options(comp)
    comp.set_defaults(func=_cmd_compile)

    check = sub.add_parser("check", help="check texts against a regex, grammar or JSON Schema",
                           description="Check whether texts fully match a regex, grammar or"
                           " JSON Schema (byte for byte as a compiled one generates them);"
                           " for one that does not, report where it stops being a viable"
                           " prefix. Texts are checked byte by byte; text files verbatim (a"
                           " trailing newline is part of the text). Exits 1 if any text does"
                           " not match.")
    check.add_argument("inputs", nargs="*", metavar="[FILE] TEXT",
                       help="with --regex: the texts; otherwise the grammar file (.regex,"
                       " .gbnf, .lark) or JSON Schema (.json), then texts")
    check.add_argument("--regex", metavar="PATTERN", help="the pattern itself")
    check.add_argument("--text", action="append", default=[], metavar="TEXT",
                       help="a text to check (repeatable); with no text at all, stdin is read")
    check.add_argument("--text-file", action="append", default=[], metavar="FILE",
                       help="a file whose whole content is one text ('-': stdin; repeatable)")
    grammar_options(check, limit_help)
    add_schema_options(check, property_order="any")
    check.set_defaults(func=_cmd_check)

    add_extract(sub)
    add_diff(sub)

    lint = sub.add_parser("lint", help="report problems in grammar and JSON Schema files",
                          description="Check grammars (.gbnf, .lark, .regex) and JSON Schemas"
                          " (.json) for errors (undefined or unproductive rules, unsupported"
                          " keywords, ...), warnings (unused rules or definitions, unbounded"
                          " whitespace, strings or arrays, ambiguity, state budgets) and notes"
                          " (recursion, regularity, sizes, required values a model may have"
                          " to invent); codes are documented in grammask/specs/diagnostics.md."
                          " Exits 0 without errors, 1 with errors (or warnings with --strict),"
                          " 2 for unusable input.")
    lint.add_argument("files", nargs="+", metavar="FILE",
                      help="grammar or schema files ('-': stdin)")
    lint.add_argument("--language", choices=LANGUAGE_CHOICES,
                      help="the grammar language (default: from the extension; needed for -)")
    lint.add_argument("--format", choices=("text", "json", "sarif"), default="text",
                      help="text (default; diagnostics then a summary line, on stdout), json"
                      " (one object per line) or sarif (a SARIF 2.1.0 log)")
    lint.add_argument("--strict", action="store_true",
                      help="exit 1 on warnings too; for a JSON Schema also compile it with"
                      " --strict and report objects without additionalProperties")
    lint.add_argument("--no-warn", action="append", default=[], metavar="CODE",
                      help="leave out warnings and notes with this code (repeatable; errors"
                      " are always reported)")
    lint.add_argument("--start", metavar="NAME",
                      help="start rule (default: root for GBNF, start for Lark)")
    lint.add_argument("--limit", action="append", default=[], metavar="NAME=VALUE",
                      help=limit_help)
    lint.add_argument("--stats", action="store_true",
                      help="also compile each grammar (within the limits) and report its"
                      " backend (dfa or pushdown), why, and the sizes of its automata")
    add_schema_options(lint, strict=False)
    lint.set_defaults(func=_cmd_lint)
    warmup = sub.add_parser("warmup", help="compile every Numba kernel now (a one-time cost,"
                            " cached on disk)",
                            description="Compile every Numba kernel of grammask now, with a"
                            " progress bar, and print where the compiled code is cached"
                            " (NUMBA_CACHE_DIR, else a per-user cache folder: see the README)."
                            " With an empty cache this takes about a minute; later processes"
                            " load each kernel from the cache as they first need it.")
    warmup.add_argument("--quiet", action="store_true",
                        help="no progress bar; print the summary on stdout")
    warmup.set_defaults(func=_cmd_warmup)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the `grammask` command with `argv` (default: sys.argv[1:]); the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    try:
        return int(args.func(args))
    except InputError as exc:
        print(f"grammask: error: {exc}", file=sys.stderr)
    except SourceError as exc:
        print(render_diagnostic(exc.path, exc.text, exc.error), file=sys.stderr)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1
    return 2


if __name__ == "__main__":
    sys.exit(main())
