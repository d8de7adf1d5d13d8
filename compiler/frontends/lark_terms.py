"""Terminal expressions of the Lark additions: `&` (intersection), prefix `~` (complement) and
`%regex {…}` inside a terminal definition, parsed into an `Expr` whose maximal parts without
them stay Lark text (each becomes a terminal of its own, which Lark reads).

`alt := conj ('|' conj)*; conj := seq ('&' seq)*; seq := unary+; unary := '~'* atom postfix?`:
`&` binds tighter than `|`, and `~` tighter than a postfix operator (`~A+` is `(~A)+`), as
llguidance documents. `lark_rewrite` drives the parse over its token list; `lark_dialect`
gives each `Expr` its automaton.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ..support.errors import GrammarError

__all__ = ["DECODER", "REPEAT", "Expr", "TermParser", "has_operator", "plain_repeats",
           "position", "syntax_error"]

REPEAT = re.compile(r"\{[ \t]*([0-9]*)[ \t]*(?:(,)[ \t]*([0-9]*)[ \t]*)?\}")
"""A `{m,n}` repetition (`{n}`, `{m,}`, `{,n}`)."""
DECODER = json.JSONDecoder()

Expr = tuple
"""A terminal expression with `&`/`~`/`%regex`: ("leaf", name) | ("regex", value, offset) |
("and"|"or"|"seq", [Expr]) | ("not", Expr) | ("repeat", Expr, lo, hi)."""


def position(text: str, at: int) -> tuple[int, int]:
    """The 1-based line and column of offset `at`."""
    return text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)


def syntax_error(text: str, at: int, message: str, code: str = "lark-syntax") -> GrammarError:
    """A `GrammarError` at offset `at` of `text`."""
    line, column = position(text, at)
    return GrammarError(message, line=line, column=column, code=code)


class TermParser:
    """The parser of one terminal body (module docstring) over the token list of `p`, the
    rewriting pass; a maximal part without `&`/`~`/`%regex` becomes one operand."""

    def __init__(self, p: Any, body: list[int]) -> None:
        self.p, self.body, self.i = p, body, 0
        self.leaves: list[tuple[str, int, str]] = []  # (name, original offset, text)

    def peek(self, ahead: int = 0) -> str | None:
        at = self.i + ahead
        return self.p.text(self.body[at]) if at < len(self.body) else None

    def here(self) -> int:
        """The offset of the current token (past the end: of the last one's end)."""
        if self.i < len(self.body):
            return self.p.toks[self.body[self.i]][1]
        return self.p.toks[self.body[-1]][2] if self.body else 0

    def alt(self) -> Expr:
        return self.infix("|", self.conj, "or")

    def conj(self) -> Expr:
        return self.infix("&", self.seq, "and")

    def infix(self, op: str, operand: Callable[[], Expr], kind: str) -> Expr:
        """`operand (op operand)*` as one `kind` node (the operand alone when there is one)."""
        parts = [operand()]
        while self.peek() == op:
            self.i += 1
            parts.append(operand())
        return parts[0] if len(parts) == 1 else (kind, parts)

    def seq(self) -> Expr:
        parts = []
        while self.peek() not in (None, "|", "&", ")"):
            parts.append(self.unary())
        if not parts:
            raise syntax_error(self.p.src, self.here(), "an operand of '&' or '|' is missing")
        return parts[0] if len(parts) == 1 else ("seq", parts)

    def unary(self) -> Expr:
        """`~` binds tighter than a postfix operator: `~A+` is `(~A)+`."""
        negations = 0
        while self.p.negation(self.body, self.i):
            negations, self.i = negations + 1, self.i + 1
        start = self.i
        if self.peek() == "%regex":  # a structured regex: its JSON object follows
            at = self.p.toks[self.body[self.i]][2]
            while at < len(self.p.src) and self.p.src[at] in " \t":
                at += 1
            try:
                value, end = DECODER.raw_decode(self.p.src, at)
            except ValueError as exc:
                raise syntax_error(self.p.src, at, f"%regex needs a JSON object after it: {exc}"
                             ) from None
            while self.i < len(self.body) and self.p.toks[self.body[self.i]][1] < end:
                self.i += 1
            node: Expr = ("regex", value, at)
            for _ in range(negations):
                node = ("not", node)
            bounds = self.postfix()
            return node if bounds is None else ("repeat", node, *bounds)
        if self.peek() == "(":
            self.i += 1
            inner: Expr | None = self.alt()
            if self.peek() != ")":
                raise syntax_error(self.p.src, self.p.toks[self.body[start]][1],
                                   "'(' is never closed")
            self.i += 1
            if inner is not None and not has_operator(inner):
                inner = None
        elif self.peek() == "[":  # an optional group, kept whole as Lark text
            depth = 0
            while self.peek() is not None:
                depth += (self.peek() == "[") - (self.peek() == "]")
                self.i += 1
                if depth == 0:
                    break
            if depth:
                raise syntax_error(self.p.src, self.p.toks[self.body[start]][1],
                                   "'[' is never closed")
            inner = None
        else:
            if self.peek() in (None, ")", "]", "|", "&", ":"):
                raise syntax_error(self.p.src, self.here(), "an operand is missing here")
            self.i += 1
            if self.peek() == "." and self.peek(1) == "." and self.i + 2 < len(self.body) and \
                    self.p.toks[self.body[self.i + 2]][0] == "string":  # "a".."z"
                self.i += 3
            inner = None
        if negations:
            node = inner if inner is not None else ("leaf", self.leaf(start, self.i))
            for _ in range(negations):
                node = ("not", node)
            bounds = self.postfix()
            return node if bounds is None else ("repeat", node, *bounds)
        bounds = self.postfix()
        if inner is None:
            return ("leaf", self.leaf(start, self.i))
        return inner if bounds is None else ("repeat", inner, *bounds)

    def postfix(self) -> tuple[int, int | None] | None:
        op = self.peek()
        if op in ("*", "+", "?"):
            self.i += 1
            return {"*": (0, None), "+": (1, None), "?": (0, 1)}[op]
        if op == "{":
            m = REPEAT.match(self.p.src, self.p.toks[self.body[self.i]][1])
            if m is None or not (m.group(1) or m.group(3)):
                return None
            while self.i < len(self.body) and self.p.toks[self.body[self.i]][1] < m.end():
                self.i += 1
            lo = int(m.group(1) or 0)
            return (lo, int(m.group(3)) if m.group(3) else None) if m.group(2) else (lo, lo)
        if op != "~" or not self.number(1):
            return None  # a `~` not followed by a count is a complement
        lo = hi = int(self.p.text(self.body[self.i + 1]))
        self.i += 2
        if self.peek() == "." and self.p.text(self.body[self.i + 1]) == "." and \
                self.number(2):
            hi = int(self.p.text(self.body[self.i + 2]))
            self.i += 3
        if hi < lo:
            raise syntax_error(self.p.src, self.p.toks[self.body[self.i - 1]][1],
                               f"bad repetition ~ {lo}..{hi}: min above max", "lark-grammar")
        return lo, hi

    def number(self, ahead: int) -> bool:
        """Whether the token `ahead` places on is a count."""
        at = self.i + ahead
        return at < len(self.body) and self.p.toks[self.body[at]][0] == "number"

    def leaf(self, a: int, b: int) -> str:
        s, e = self.p.toks[self.body[a]][1], self.p.toks[self.body[b - 1]][2]
        name = self.p.hold("op", s, self.p.src[s:e], upper=True)
        self.leaves.append((name, s, self.p.src[s:e]))
        return name


def plain_repeats(piece: str) -> str:
    """`piece` with its bounded `{m,n}` repetitions as Lark's `~` (inside an operand)."""
    def one(m: re.Match[str]) -> str:
        lo, comma, hi = m.group(1), m.group(2), m.group(3)
        if not (lo or hi) or (comma and not hi and int(lo) > 1):
            return m.group()  # a template, or {m,} left for Lark to refuse
        if not comma:
            return f"~{lo}"
        return f"~{lo or 0}..{hi}" if hi else "*+"[int(lo)]
    return REPEAT.sub(one, piece)


def has_operator(expr: Expr) -> bool:
    return expr[0] != "leaf"
