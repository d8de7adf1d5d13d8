"""The `grammask` command line: `demo`, `compile`, `check` and `lint`.

Exit status: 0 success, 1 `check` found a text that does not match or `lint` found errors,
2 bad input (a pattern or grammar that does not compile, a missing or unreadable file, a bad
option). Errors in user input are reported as diagnostics, never as tracebacks.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TypeVar

from ..runtime import Vocabulary
from ..runtime.compiled import CompiledGrammar
from ..runtime.pushdown_token_sets import PushdownTokenSets
from ..runtime.token_sets import DFATokenSets
from ..runtime.token_trie import token_trie
from .analyses.size import automata_sizes, compile_structure
from .diagnostics import render_diagnostic
from .errors import GrammarError
from .ir import Grammar
from .limits import Limits
from .lint import (
    EXTENSIONS,
    LANGUAGES,
    STDIN,
    exit_status,
    format_json,
    format_sarif,
    format_text,
    language_for,
    lint_file,
    parse_source,
)
from .pipeline import compile_grammar, compile_regex, ir_to_dfa
from .regex import parse_regex
from .text_check import Automaton, check_text

__all__ = ["main"]

T = TypeVar("T")
_BAR = 30


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


def _read_text(path: str) -> str:
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not valid UTF-8 (byte {exc.start}: {exc.reason})") from None


def _pattern_source(regex: str | None, path: str | None) -> Source:
    if regex is not None and path is not None:
        raise InputError(f"give either --regex PATTERN or a pattern file, not both ({path})")
    if regex is not None:
        return Source("<regex>", regex)
    if path is None:
        raise InputError("no pattern: give --regex PATTERN or a FILE.regex")
    text = _read_text(path).removeprefix("\ufeff")
    text = text[:-2] if text.endswith("\r\n") else text.removesuffix("\n")
    return Source(path, text)


def _relocate(error: GrammarError, text: str) -> GrammarError:
    """The error with line:col inside a multi-line pattern (the regex frontend counts the
    whole pattern as line 1)."""
    if error.line != 1 or error.column is None or "\n" not in text:
        return error
    offset = min(error.column - 1, len(text))
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return type(error)(error.message, line=line, column=column, pointer=error.pointer,
                       source=error.source, code=error.code)


def _build(source: Source, build: Callable[[str], T], relocate: bool = True) -> T:
    """`build(source.text)`, a GrammarError becoming a SourceError (located inside a
    multi-line regex when `relocate`)."""
    try:
        return build(source.text)
    except GrammarError as exc:
        raise SourceError(source.path, source.text,
                          _relocate(exc, source.text) if relocate else exc) from None


def parse_limits(pairs: Sequence[str]) -> Limits:
    """`Limits` from `NAME=VALUE` strings; `InputError` for a malformed pair or unknown name."""
    known = [f.name for f in fields(Limits)]
    values: dict[str, int] = {}
    for pair in pairs:
        name, sep, value = (part.strip() for part in pair.partition("="))
        if not sep or not name:
            raise InputError(f"--limit {pair!r}: expected NAME=VALUE, e.g. max_dfa_states=50000")
        if name not in known:
            raise InputError(f"--limit {name}: unknown limit; the limits are {', '.join(known)}")
        try:
            values[name] = int(value)
        except ValueError:
            raise InputError(f"--limit {name}={value}: the value must be an integer") from None
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


def _source(args: argparse.Namespace, path: str | None) -> tuple[Source, str]:
    """The pattern or grammar to compile (--regex or the file `path`) and its language:
    --language, else the file's extension; other extensions are read as a regex."""
    language = "regex" if args.regex is not None else args.language
    if language is None and path is not None:
        language = EXTENSIONS.get(Path(path).suffix.lower())
    if language in (None, "regex"):
        return _pattern_source(args.regex, path), "regex"
    assert path is not None
    return Source(path, _read_text(path).removeprefix("\ufeff")), language


def _compile_file(source: Source, language: str, start: str | None, limits: Limits,
                  compile_: Callable[[Grammar], CompiledGrammar]) -> CompiledGrammar:
    """The GBNF or Lark grammar of `source` parsed and compiled by `compile_`; errors become
    diagnostics located in the file."""

    def build(text: str) -> CompiledGrammar:
        grammar, _notes = parse_source(language, source.path, text, start, limits)
        return compile_(grammar)

    return _build(source, build, relocate=False)


def _precompute(compiled: CompiledGrammar) -> float:
    """Compute every token set now; the seconds it took. For a pushdown grammar (slower: a
    trie walk per state) with a progress bar on stderr when it is a terminal, and a one-line
    summary there either way."""
    sets = compiled.token_sets
    t0 = time.perf_counter()
    if isinstance(sets, DFATokenSets):
        sets.precompute()
        return time.perf_counter() - t0
    sys.stdout.flush()
    tty = sys.stderr.isatty()
    drawn_at, width = 0.0, 0

    def progress(done: int, total: int) -> None:
        nonlocal drawn_at, width
        now = time.perf_counter()
        if done < total and now - drawn_at < 0.1:
            return
        filled = _BAR * done // total
        line = f"token sets [{'#' * filled}{'.' * (_BAR - filled)}] {done:,}/{total:,} states"
        print("\r" + line, end="", file=sys.stderr, flush=True)
        drawn_at, width = now, len(line)

    sets.precompute(progress if tty else None)
    seconds = time.perf_counter() - t0
    summary = f"token sets: {sets.n_computed:,} states computed in {seconds:.2f} s"
    print(("\r" + summary.ljust(width)) if tty else summary, file=sys.stderr, flush=True)
    return seconds


def _token_sets_line(sets: DFATokenSets | PushdownTokenSets, seconds: float) -> str:
    done = f"{sets.n_computed:,} states in {seconds * 1e3:.1f} ms"
    if isinstance(sets, DFATokenSets):
        allowed = [sets.get(s).n_allowed for s in range(sets.dfa.n_states)]
        return (f"{done}, {sets.nbytes():,} bytes; allowed tokens per state: min"
                f" {min(allowed):,}, median {statistics.median(allowed):,.0f}, max"
                f" {max(allowed):,}")
    n = max(sets.n_computed, 1)
    return (f"{done}, {sets.nbytes():,} bytes; tokens per state on average:"
            f" {sets.n_accepted / n:,.0f} accepted, {sets.n_uncertain / n:,.0f} uncertain"
            " (checked against the stack when a mask is filled)")


def _cmd_compile(args: argparse.Namespace) -> int:
    source, language = _source(args, args.file)
    limits = parse_limits(args.limit)
    t0 = time.perf_counter()
    vocab, vocab_name = load_vocabulary(args.vocab)
    token_trie(vocab)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    if language == "regex":
        compiled = _build(source, lambda p: compile_regex(p, vocab, limits=limits))
    else:
        compiled = _compile_file(source, language, args.start, limits,
                                 lambda g: compile_grammar(g, vocab, limits=limits))
    compile_ms = (time.perf_counter() - t0) * 1e3
    eos = ", ".join(map(str, vocab.eos_token_ids.tolist())) or "none"
    print(f"{source.path}: compiled in {compile_ms:.1f} ms")
    print(f"  backend       {'; '.join(compiled.notes) or compiled.kind}")
    print(f"  vocabulary    {vocab_name}: {vocab.size:,} ids, {vocab.n_tokens:,} tokens,"
          f" EOS {eos}; loaded and indexed in {load_s:.2f} s")
    dfa = compiled.dfa
    if dfa is not None:
        print(f"  DFA           {dfa.n_states:,} states ({int(dfa.accepting.sum()):,} accepting),"
              f" {dfa.n_classes} byte classes, {dfa.nbytes():,} bytes")
    else:
        assert compiled.pushdown is not None
        print(f"  automata      {automata_sizes(compiled)}, {compiled.pushdown.nbytes():,} bytes")
    if args.precompute:
        seconds = _precompute(compiled)
        print(f"  token sets    {_token_sets_line(compiled.token_sets, seconds)}")
    else:
        print("  token sets    computed on first use (--precompute builds them now)")
    print(f"  memory        {compiled.nbytes():,} bytes in all")
    return 0


def _check_texts(args: argparse.Namespace, positional: list[str]) -> list[tuple[str, str]]:
    given = positional + list(args.text)
    texts = [(f"<text {i}>" if len(given) > 1 else "<text>", t) for i, t in enumerate(given, 1)]
    texts += [(f, _read_text(f)) for f in args.text_file]
    if not texts:
        if sys.stdin is None or sys.stdin.isatty():
            raise InputError("nothing to check: give --text TEXT, TEXT arguments, --text-file"
                             " FILE, or pipe the text to stdin")
        texts.append(("<stdin>", _read_text("-")))
    return texts


def _cmd_check(args: argparse.Namespace) -> int:
    inputs = list(args.inputs)
    path = None if args.regex is not None else (inputs.pop(0) if inputs else None)
    limits = parse_limits(args.limit)
    source, language = _source(args, path)
    texts = _check_texts(args, inputs)
    automaton: Automaton | None
    if language == "regex":
        automaton = _build(source, lambda p: ir_to_dfa(parse_regex(p, limits=limits), limits))
    else:
        compiled = _compile_file(source, language, args.start, limits,
                                 lambda g: compile_structure(g, limits))
        automaton = compiled.dfa or compiled.pushdown
        assert automaton is not None, "a compiled grammar holds a DFA or rule automata"
    matched = 0
    for label, text in texts:
        problem = check_text(automaton, text)
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
        if path != STDIN and not Path(path).is_file():
            continue
        try:
            language_for(path, args.language)
        except ValueError as exc:
            raise InputError(str(exc)) from None
    reports = [lint_file(path, args.language, limits, args.start, stats=args.stats)
               for path in args.files]
    formatter = {"text": format_text, "json": format_json, "sarif": format_sarif}[args.format]
    output = formatter(reports)
    if output:
        print(output)
    return exit_status(reports, args.strict)


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    source = Source("<regex>", args.pattern)
    try:
        result = _build(source, lambda p: run_demo(args.n, args.seed, p,
                                                   None if args.json else sys.stdout))
    except re.error as exc:
        raise InputError(f"--pattern: Python's re rejects it, so answers cannot be checked:"
                         f" {exc}") from None
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    return 0


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the `grammask` command."""
    from .demo import DEFAULT_PATTERN

    parser = argparse.ArgumentParser(
        prog="grammask", description="Compile grammars to token masks for constrained decoding.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    demo = sub.add_parser("demo", help="sample a toy model with and without a grammar mask",
                          description="Sample a toy model that mostly answers {\"age\": 42},"
                          " freely and through a compiled pattern, and compare validity.")
    demo.add_argument("--n", type=_positive_int, default=200, help="answers per run (200)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (0)")
    demo.add_argument("--pattern", default=DEFAULT_PATTERN,
                      help="regex the answers must fully match (checked with Python's re)")
    demo.add_argument("--json", action="store_true", help="print the result as JSON")
    demo.set_defaults(func=_cmd_demo)

    limit_help = ("override a compile bound, e.g. max_dfa_states=50000 (repeatable; names: "
                  + ", ".join(f.name for f in fields(Limits)) + ")")
    comp = sub.add_parser("compile", help="compile a regex or grammar and print its statistics",
                          description="Compile a regex or a GBNF/Lark grammar against a"
                          " vocabulary and print the backend it compiles to (a DFA, or rule"
                          " automata for the pushdown runtime), why, and the statistics. A"
                          " FILE.regex holds the pattern (one trailing newline is ignored).")
    comp.add_argument("file", nargs="?", metavar="FILE",
                      help="file holding the pattern (.regex) or grammar (.gbnf, .lark)")
    comp.add_argument("--regex", metavar="PATTERN", help="the pattern itself")
    comp.add_argument("--vocab", default="default",
                      help="'default' (Qwen2.5), a tokenizer.json or a .tiktoken file")
    comp.add_argument("--precompute", action="store_true",
                      help="compute every state's token set now and report its memory (for"
                      " a pushdown grammar with a progress bar on stderr)")
    _grammar_options(comp, limit_help)
    comp.set_defaults(func=_cmd_compile)

    check = sub.add_parser("check", help="check texts against a regex or grammar",
                           description="Check whether texts fully match a regex or grammar;"
                           " for one that does not, report where it stops being a viable"
                           " prefix. Texts are checked byte by byte; text files verbatim (a"
                           " trailing newline is part of the text). Exits 1 if any text does"
                           " not match.")
    check.add_argument("inputs", nargs="*", metavar="[FILE] TEXT",
                       help="with --regex: the texts; otherwise the grammar file (.regex,"
                       " .gbnf or .lark), then texts")
    check.add_argument("--regex", metavar="PATTERN", help="the pattern itself")
    check.add_argument("--text", action="append", default=[], metavar="TEXT",
                       help="a text to check (repeatable); with no text at all, stdin is read")
    check.add_argument("--text-file", action="append", default=[], metavar="FILE",
                       help="a file whose whole content is one text ('-': stdin; repeatable)")
    _grammar_options(check, limit_help)
    check.set_defaults(func=_cmd_check)

    lint = sub.add_parser("lint", help="report problems in grammar files",
                          description="Check grammars (.gbnf, .lark, .regex) for errors"
                          " (undefined or unproductive rules, ...), warnings (unused rules,"
                          " unbounded whitespace, ambiguity, state budgets) and notes"
                          " (recursion, regularity, sizes); codes are documented in"
                          " grammask/specs/diagnostics.md. Exits 0 without errors, 1 with"
                          " errors (or warnings with --strict), 2 for unusable input.")
    lint.add_argument("files", nargs="+", metavar="FILE", help="grammar files ('-': stdin)")
    lint.add_argument("--language", choices=LANGUAGES,
                      help="the grammar language (default: from the extension; needed for -)")
    lint.add_argument("--format", choices=("text", "json", "sarif"), default="text",
                      help="text (default; diagnostics then a summary line, on stdout), json"
                      " (one object per line) or sarif (a SARIF 2.1.0 log)")
    lint.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    lint.add_argument("--start", metavar="NAME",
                      help="start rule (default: root for GBNF, start for Lark)")
    lint.add_argument("--limit", action="append", default=[], metavar="NAME=VALUE",
                      help=limit_help)
    lint.add_argument("--stats", action="store_true",
                      help="also compile each grammar (within the limits) and report its"
                      " backend (dfa or pushdown), why, and the sizes of its automata")
    lint.set_defaults(func=_cmd_lint)
    return parser


def _grammar_options(parser: argparse.ArgumentParser, limit_help: str) -> None:
    """--language, --start and --limit, as `compile` and `check` take them."""
    parser.add_argument("--language", choices=LANGUAGES,
                        help="the file's language (default: from its extension; other"
                        " extensions are read as a regex)")
    parser.add_argument("--start", metavar="NAME",
                        help="start rule of a grammar (default: root for GBNF, start for Lark)")
    parser.add_argument("--limit", action="append", default=[], metavar="NAME=VALUE",
                        help=limit_help)


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
