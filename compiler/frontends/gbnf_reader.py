"""A direct reader of well-formed GBNF text, for speed; Lark's parser stays the definition.

`specs/gbnf.lark` defines the language and Lark's LALR(1) parser reads it (`gbnf.py`), at about
10 µs per token. This reader reads the same text in one regular-expression scan and one
recursive-descent pass over the meta-grammar's productions, and builds the IR through the very
callbacks Lark's parser calls, with the same tokens (type, text and position) in the same
order. So, on any text it reads, its grammar is Lark's, spans included.

It reads only what it is sure of: at anything else (a character no terminal matches, a token
the productions do not expect there, an XGrammar macro, nesting deeper than `MAX_DEPTH`) it
raises `Unread`, and the caller parses with Lark, which gives every diagnostic. A callback's
own `GrammarError` (a bad escape, a reversed range, a count over the budget) propagates; the
caller hands that text to Lark as well, so the error reported is always Lark's.

Tokens follow Lark's contextual lexer: a run of digits between `{` and `}` is an INT, a NAME
elsewhere; line breaks go through the same post-lexer (`gbnf.Lines`).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from lark import Token

from ..support import deadline

MAX_DEPTH = 100
"""Deepest nesting of parentheses read here; deeper text goes to Lark's (iterative) parser."""

_SCAN = re.compile(r"""
    [\ \t]* (?:\#[^\r\n]*)?
    (?: (?P<_NL>\r\n?|\n)
      | (?P<DEFINE>::=)
      | (?P<MACRO>(?:Regex|TagDispatch|Token|ExcludeToken|Substring)\()
      | (?P<STRING>"[^"\\]*(?:\\[\s\S][^"\\]*)*")
      | (?P<CLASS>\[[^\]\\]*(?:\\[\s\S][^\]\\]*)*\])
      | (?P<TOKEN_REF>!?<(?:\[[^\]\r\n>]*\]|[^\s<>\[\]][^\s<>]*)>)
      | (?P<NAME>[a-zA-Z0-9_-]+)
      | (?P<BAR>\|) | (?P<LPAR>\() | (?P<RPAR>\)) | (?P<DOT>\.) | (?P<OP>[*+?])
      | (?P<LBRACE>\{) | (?P<RBRACE>\}) | (?P<COMMA>,)
      | (?P<END>\Z))
""", re.VERBOSE)
_MULTILINE = frozenset(("STRING", "CLASS", "_NL"))
_IN_BOUNDS = frozenset(("INT", "COMMA", "RBRACE"))
_ATOMS = frozenset(("STRING", "CLASS", "DOT", "NAME", "LPAR", "TOKEN_REF", "MACRO"))


class Unread(Exception):
    """The reader is not sure of this text; parse it with Lark."""


def scan(text: str) -> Iterator[Token]:
    """The tokens of `text` as Lark's contextual lexer makes them (line breaks included,
    spaces and comments dropped), checking the compile deadline as it goes; `Unread` where it
    would differ or fail."""
    pos, line, line_start = 0, 1, 0
    in_bounds = False
    match = _SCAN.match
    count = 0
    # Anchored at each position (a search would retry every later start: quadratic time on
    # a long run of spaces before a character no token matches).
    while True:
        m = match(text, pos)
        if m is None:
            raise Unread
        kind = m.lastgroup
        if kind == "END":
            return
        start, pos = m.span(kind)
        value = text[start:pos]
        column = start - line_start + 1
        end_line, end_column = line, column + len(value)
        if kind in _MULTILINE:
            breaks = value.count("\n")
            if breaks:
                end_line = line + breaks
                line_start = start + value.rindex("\n") + 1
                end_column = pos - line_start + 1
        if in_bounds:
            if kind == "NAME" and value.isdigit():
                kind = "INT"
            if kind not in _IN_BOUNDS:
                raise Unread
            in_bounds = kind != "RBRACE"
        elif kind == "LBRACE":
            in_bounds = True
        yield Token(kind, value, start, line, column, end_line, end_column, pos)
        line = end_line
        count += 1
        if not count & 1023:
            deadline.check()


class _Reader:
    """Recursive descent over `specs/gbnf.lark`, calling the builder as Lark's parser would."""

    def __init__(self, tokens: Iterator[Token], builder: Any) -> None:
        self.next = tokens.__next__
        self.b = builder
        self.tok: Token | None = None
        self.type: str | None = None
        self.advance()

    def advance(self) -> Token | None:
        taken = self.tok
        try:
            self.tok = self.next()
            self.type = self.tok.type
        except StopIteration:
            self.tok = self.type = None
        return taken

    def kind(self) -> str | None:
        return self.type

    def expect(self, kind: str) -> Token:
        if self.kind() != kind:
            raise Unread
        taken = self.advance()
        assert taken is not None
        return taken

    def start(self) -> Any:
        rules = []
        if self.tok is not None:
            rules.append(self.rule())
            while self.kind() == "_NL":
                self.advance()
                if self.tok is None:
                    break
                rules.append(self.rule())
        if self.tok is not None:
            raise Unread
        return self.b.start(rules)

    def rule(self) -> Any:
        name = self.expect("NAME")
        define = self.expect("DEFINE")
        return self.b.rule([name, define, self.alternatives(0)])

    def alternatives(self, depth: int) -> Any:
        children = [self.sequence(depth)]
        while self.kind() == "BAR":
            children.append(self.advance())
            children.append(self.sequence(depth))
        return self.b.alternatives(children)

    def sequence(self, depth: int) -> Any:
        items = []
        while self.kind() in _ATOMS:
            item = self.atom(depth)
            while self.kind() in ("OP", "LBRACE"):
                quant = self.advance() if self.kind() == "OP" else self.bounds()
                item = self.b.repeat([item, quant])
            items.append(item)
        return self.b.sequence(items)

    def atom(self, depth: int) -> Any:
        kind = self.kind()
        if kind == "LPAR":
            if depth >= MAX_DEPTH:
                raise Unread
            lpar = self.advance()
            body = self.alternatives(depth + 1)
            return self.b.group([lpar, body, self.expect("RPAR")])
        if kind == "MACRO":  # XGrammar's macros: read by Lark's parser
            raise Unread
        tok = self.advance()
        if kind == "NAME":
            return self.b.ref([tok])
        callback: Callable[[Token], Any] = getattr(self.b, kind)  # type: ignore[arg-type]
        return callback(tok)

    def bounds(self) -> Any:
        children = [self.expect("LBRACE")]
        while self.kind() in ("INT", "COMMA"):
            children.append(self.advance())
        children.append(self.expect("RBRACE"))
        shape = [t.type for t in children[1:-1]]
        if shape not in (["INT"], ["INT", "COMMA"], ["COMMA", "INT"], ["INT", "COMMA", "INT"],
                         ["COMMA"]):
            raise Unread
        return self.b.bounds(children)


def read(text: str, builder: Any, postlex: Callable[[Iterator[Token]], Iterator[Token]]) -> Any:
    """What Lark's parser with `builder` as its transformer and `postlex` as its post-lexer
    returns for `text`; `Unread` where this reader is not sure of it."""
    return _Reader(postlex(scan(text)), builder).start()
