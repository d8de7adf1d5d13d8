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

import numpy as np

from ..runtime import Vocabulary
from ..runtime.dfa_kernels import walk_bytes
from ..runtime.dfa_table import DFATable
from ..runtime.token_trie import token_trie
from .diagnostics import render_diagnostic
from .errors import GrammarError
from .lowering import inline_regular
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
from .pipeline import compile_regex, ir_to_dfa
from .regex import parse_regex

__all__ = ["main"]

T = TypeVar("T")
_CHUNK = 4096


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


def _build(source: Source, build: Callable[[str], T]) -> T:
    try:
        return build(source.text)
    except GrammarError as exc:
        raise SourceError(source.path, source.text, _relocate(exc, source.text)) from None


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


def _cmd_compile(args: argparse.Namespace) -> int:
    source = _pattern_source(args.regex, args.file)
    limits = parse_limits(args.limit)
    t0 = time.perf_counter()
    vocab, vocab_name = load_vocabulary(args.vocab)
    token_trie(vocab)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    compiled = _build(source, lambda p: compile_regex(p, vocab, limits=limits))
    compile_ms = (time.perf_counter() - t0) * 1e3
    dfa = compiled.dfa
    eos = ", ".join(map(str, vocab.eos_token_ids.tolist())) or "none"
    print(f"{source.path}: compiled in {compile_ms:.1f} ms")
    print(f"  vocabulary    {vocab_name}: {vocab.size:,} ids, {vocab.n_tokens:,} tokens,"
          f" EOS {eos}; loaded and indexed in {load_s:.2f} s")
    print(f"  DFA           {dfa.n_states:,} states ({int(dfa.accepting.sum()):,} accepting),"
          f" {dfa.n_classes} byte classes, {dfa.nbytes():,} bytes")
    if args.precompute:
        t0 = time.perf_counter()
        compiled.token_sets.precompute()
        pre_ms = (time.perf_counter() - t0) * 1e3
        allowed = [compiled.token_sets.get(s).n_allowed for s in range(dfa.n_states)]
        print(f"  token sets    {dfa.n_states:,} states in {pre_ms:.1f} ms,"
              f" {compiled.token_sets.nbytes():,} bytes; allowed tokens per state:"
              f" min {min(allowed):,}, median {statistics.median(allowed):,.0f},"
              f" max {max(allowed):,}")
    else:
        print("  token sets    computed on first use (--precompute builds them now)")
    print(f"  memory        {compiled.nbytes():,} bytes in all")
    if dfa.is_empty_language:
        warning = GrammarError("the pattern matches no text at all", code="empty-language")
        print(render_diagnostic(source.path, source.text, warning, "warning"), file=sys.stderr)
    return 0


def _position(data: bytes, offset: int) -> tuple[int, int, str]:
    """1-based line and character column of the character holding byte `offset`, and it."""
    start = offset
    while 0 < start < len(data) and 0x80 <= data[start] < 0xC0:
        start -= 1
    line_start = data.rfind(b"\n", 0, start) + 1
    column = len(data[line_start:start].decode("utf-8", "replace")) + 1
    char = data[start:start + 4].decode("utf-8", "replace")[:1]
    return data.count(b"\n", 0, start) + 1, column, char


def _viable_length(dfa: DFATable, data: bytes) -> tuple[int, int, int]:
    """(bytes read before the walk died or len(data), the state reached or -1, the last live
    state: where the walk was before the byte that killed it)."""
    arr = np.frombuffer(data, dtype=np.uint8)
    state = dfa.start
    for begin in range(0, len(arr), _CHUNK):
        end = min(begin + _CHUNK, len(arr))
        nxt = int(walk_bytes(dfa.transitions, dfa.byte_class, arr, begin, end, state))
        if nxt < 0:
            for p in range(begin, end):
                before, state = state, dfa.step(state, data[p])
                if state < 0:
                    return p, -1, before
        state = nxt
    return len(data), state, state


def _show_byte(b: int) -> str:
    if 0x20 <= b < 0x7F and b != 0x27:
        return f"'{chr(b)}'"
    return {0x27: '"\'"', 0x0A: "'\\n'", 0x09: "'\\t'", 0x0D: "'\\r'"}.get(b, f"\\x{b:02x}")


def expected_bytes(dfa: DFATable, state: int, limit: int = 8) -> str:
    """The bytes that can follow in `state`, as ranges ('0'-'9', \\xc2-\\xdf), and "the end
    of the text" when `state` accepts; at most `limit` ranges are listed."""
    ok = dfa.transitions[state][dfa.byte_class] >= 0
    ranges: list[tuple[int, int]] = []
    for b in np.flatnonzero(ok).tolist():
        if ranges and ranges[-1][1] == b - 1:
            ranges[-1] = (ranges[-1][0], b)
        else:
            ranges.append((b, b))
    parts = [_show_byte(lo) if lo == hi else f"{_show_byte(lo)}-{_show_byte(hi)}"
             for lo, hi in ranges[:limit]]
    if len(ranges) > limit:
        parts.append(f"... ({len(ranges) - limit} more ranges)")
    if dfa.accepting[state]:
        parts.append("the end of the text")
    if not parts:
        return "nothing"
    return parts[0] if len(parts) == 1 else "one of " + ", ".join(parts)


def check_text(dfa: DFATable, text: str) -> GrammarError | None:
    """None if `text` (as UTF-8; undecodable argv bytes kept as they were) fully matches;
    otherwise why not, located at the first byte that cannot continue a match (code
    "no-match") or at the end of a viable but incomplete prefix (code "incomplete"), with the
    bytes that were expected there."""
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        data = text.encode("utf-8", "surrogatepass")
    if dfa.is_empty_language:
        return GrammarError("no match: the pattern matches no text at all", code="empty-language")
    read, state, last = _viable_length(dfa, data)
    line, column, char = _position(data, read)
    if state < 0:
        return GrammarError(
            f"no match: at byte offset {read}, {char!r} cannot continue any match (after a"
            f" viable prefix of {read} byte{'' if read == 1 else 's'}); expected"
            f" {expected_bytes(dfa, last)}", line=line, column=column, code="no-match")
    if not dfa.accepting[state]:
        return GrammarError(
            f"incomplete: all {read} bytes are a viable prefix, but the text ends before a"
            f" complete match; expected next {expected_bytes(dfa, state)}", line=line,
            column=column, code="incomplete")
    return None


def _grammar_dfa(source: Source, language: str, start: str | None, limits: Limits) -> DFATable:
    """The DFA of a GBNF or Lark grammar file; recursive grammars raise `recursive-grammar`."""
    try:
        grammar, _notes = parse_source(language, source.path, source.text, start, limits)
        return ir_to_dfa(inline_regular(grammar), limits)
    except GrammarError as exc:
        raise SourceError(source.path, source.text, exc) from None


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
    language = args.language
    if language is None and path is not None:
        language = EXTENSIONS.get(Path(path).suffix.lower())
    if args.regex is not None or language in (None, "regex"):
        source = _pattern_source(args.regex, path)
        texts = _check_texts(args, inputs)
        dfa = _build(source, lambda p: ir_to_dfa(parse_regex(p, limits=limits), limits))
    else:
        assert path is not None
        source = Source(path, _read_text(path).removeprefix("\ufeff"))
        texts = _check_texts(args, inputs)
        dfa = _grammar_dfa(source, language, args.start, limits)
    matched = 0
    for label, text in texts:
        problem = check_text(dfa, text)
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
    reports = [lint_file(path, args.language, limits, args.start) for path in args.files]
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
    comp = sub.add_parser("compile", help="compile a regex and print its statistics",
                          description="Compile a regex against a vocabulary and print the"
                          " automaton's statistics. A FILE.regex holds the pattern (one"
                          " trailing newline is ignored).")
    comp.add_argument("file", nargs="?", metavar="FILE.regex", help="file holding the pattern")
    comp.add_argument("--regex", metavar="PATTERN", help="the pattern itself")
    comp.add_argument("--vocab", default="default",
                      help="'default' (Qwen2.5), a tokenizer.json or a .tiktoken file")
    comp.add_argument("--precompute", action="store_true",
                      help="compute every state's token set now and report its memory")
    comp.add_argument("--limit", action="append", default=[], metavar="NAME=VALUE",
                      help=limit_help)
    comp.set_defaults(func=_cmd_compile)

    check = sub.add_parser("check", help="check texts against a regex",
                           description="Check whether texts fully match a regex; for one that"
                           " does not, report where it stops being a viable prefix. Text"
                           " files are checked verbatim (a trailing newline is part of the"
                           " text). Exits 1 if any text does not match.")
    check.add_argument("inputs", nargs="*", metavar="[FILE] TEXT",
                       help="with --regex: the texts; otherwise the grammar file (.regex,"
                       " .gbnf or .lark), then texts")
    check.add_argument("--regex", metavar="PATTERN", help="the pattern itself")
    check.add_argument("--text", action="append", default=[], metavar="TEXT",
                       help="a text to check (repeatable); with no text at all, stdin is read")
    check.add_argument("--text-file", action="append", default=[], metavar="FILE",
                       help="a file whose whole content is one text ('-': stdin; repeatable)")
    check.add_argument("--language", choices=LANGUAGES,
                       help="the grammar file's language (default: from its extension; other"
                       " extensions are read as a regex)")
    check.add_argument("--start", metavar="NAME",
                       help="start rule of a grammar (default: root for GBNF, start for Lark)")
    check.add_argument("--limit", action="append", default=[], metavar="NAME=VALUE",
                       help=limit_help)
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
    lint.set_defaults(func=_cmd_lint)
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
