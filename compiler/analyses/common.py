"""What the analyses share: the registry of diagnostic codes and message helpers (the
summaries they report from are `ir.summaries`)."""
from __future__ import annotations

from ..ir.nodes import Grammar
from ..support.diagnostics import Diagnostic, Span

CODES: dict[str, tuple[str, str]] = {
    "undefined-rule": ("error", "A rule is referenced but never defined."),
    "missing-start": ("error", "The start rule is not defined."),
    "unproductive": ("error", "A rule cannot derive any finite string."),
    "repeat-limit": ("error", "A repetition bound exceeds Limits.max_repeat."),
    "state-budget": ("warning", "The automaton would exceed (or exceeds) a state budget."),
    "unused-rule": ("warning", "A rule is defined but not reachable from the start rule."),
    "nullable-loop": ("warning", "A repetition whose item can match the empty string."),
    "unbounded-whitespace": ("warning", "An unbounded repetition that matches only whitespace."),
    "identical-alternatives": ("warning", "Two alternatives of one choice are identical."),
    "overlapping-literals": ("warning", "A literal alternative is a prefix of another."),
    "json-no-whitespace": ("warning", "A JSON-like grammar that never allows whitespace."),
    "left-recursion": ("info", "A rule can derive a string starting with itself."),
    "regular": ("info", "The grammar is regular: it compiles to a DFA."),
    "recursive": ("info", "The grammar is recursive: it needs the pushdown runtime."),
    "stats": ("info", "Rule and state counts."),
    "unreadable": ("error", "The input could not be read (missing file, directory, ...)."),
    "invalid-utf8": ("error", "The input is not valid UTF-8."),
    "nul-byte": ("error", "The input contains a NUL byte."),
    "budget": ("error", "A configured bound (input size, states, repetitions) was exceeded."),
    "syntax": ("error", "The grammar text could not be parsed."),
    "internal-error": ("error", "The linter failed on this input (a bug)."),
}

WHITESPACE_BYTES = frozenset({0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20})


def diagnostic(code: str, message: str, span: Span | None = None,
               severity: str | None = None) -> Diagnostic:
    """A diagnostic with the registered severity of `code` (or `severity`)."""
    return Diagnostic(severity or CODES[code][0], code, message, span)


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def show_bytes(data: bytes) -> str:
    """`data` as a double-quoted literal, escaping quotes, backslashes, control characters and
    bytes that are not UTF-8."""
    out = []
    for ch in data.decode("utf-8", "surrogateescape"):
        code = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02X}")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def rule_span(grammar: Grammar, name: str) -> Span | None:
    """The span of the rule called `name`, if it is defined and has one."""
    rule = grammar.rule(name)
    return rule.span if rule is not None else None
