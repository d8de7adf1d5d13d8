"""The `grammask` command line: `demo`, `compile` and `check`.

Exit status: 0 success, 1 `check` found a text that does not match, 2 bad input (a pattern that
does not compile, a missing or unreadable file, a bad option). Errors in user input are
reported as diagnostics, never as tracebacks.
"""
from __future__ import annotations

import argparse
import json
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
from .limits import Limits
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


def _viable_length(dfa: DFATable, data: bytes) -> tuple[int, int]:
    """(bytes read before the walk died or len(data), the state reached or -1)."""
    arr = np.frombuffer(data, dtype=np.uint8)
    state = dfa.start
    for begin in range(0, len(arr), _CHUNK):
        end = min(begin + _CHUNK, len(arr))
        nxt = int(walk_bytes(dfa.transitions, dfa.byte_class, arr, begin, end, state))
        if nxt < 0:
            for p in range(begin, end):
                state = dfa.step(state, data[p])
                if state < 0:
                    return p, -1
        state = nxt
    return len(data), state


def check_text(dfa: DFATable, text: str) -> GrammarError | None:
    """None if `text` (as UTF-8; undecodable argv bytes kept as they were) fully matches;
    otherwise why not, located at the first byte that cannot continue a match (code
    "no-match") or at the end of a viable but incomplete prefix (code "incomplete")."""
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        data = text.encode("utf-8", "surrogatepass")
    if dfa.is_empty_language:
        return GrammarError("no match: the pattern matches no text at all", code="empty-language")
    read, state = _viable_length(dfa, data)
    line, column, char = _position(data, read)
    if state < 0:
        return GrammarError(
            f"no match: at byte offset {read}, {char!r} cannot continue any match (after a"
            f" viable prefix of {read} byte{'' if read == 1 else 's'})", line=line,
            column=column, code="no-match")
    if not dfa.accepting[state]:
        return GrammarError(
            f"incomplete: all {read} bytes are a viable prefix, but the text ends before a"
            " complete match", line=line, column=column, code="incomplete")
    return None


def _cmd_check(args: argparse.Namespace) -> int:
    inputs = list(args.inputs)
    path = None if args.regex is not None else (inputs.pop(0) if inputs else None)
    source = _pattern_source(args.regex, path)
    limits = parse_limits(args.limit)
    texts: list[tuple[str, str]] = []
    for i, text in enumerate(inputs, 1):
        texts.append((f"<text {i}>" if len(inputs) > 1 else "<text>", text))
    texts += [(f, _read_text(f)) for f in args.text_file]
    if not texts:
        raise InputError("nothing to check: give TEXT arguments or --text-file FILE")
    dfa = _build(source, lambda p: ir_to_dfa(parse_regex(p, limits=limits), limits))
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
    check.add_argument("inputs", nargs="*", metavar="[FILE.regex] TEXT",
                       help="with --regex: the texts; otherwise the pattern file, then texts")
    check.add_argument("--regex", metavar="PATTERN", help="the pattern itself")
    check.add_argument("--text-file", action="append", default=[], metavar="FILE",
                       help="a file whose whole content is one text ('-': stdin; repeatable)")
    check.add_argument("--limit", action="append", default=[], metavar="NAME=VALUE",
                       help=limit_help)
    check.set_defaults(func=_cmd_check)
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
    return 2


if __name__ == "__main__":
    sys.exit(main())
