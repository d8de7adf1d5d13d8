"""The text pass of llguidance's and XGrammar's Lark additions: a grammar text in which every
addition is replaced by plain Lark, what each replacement stands for, and a map back to the
original positions.

Invariant: the rewritten text parses as Lark exactly where the original parses as the dialect,
and `Rewritten.origin(offset)` is, for every offset of the rewritten text, the offset of the
original character it came from (an inserted piece maps to the start of what it replaces), so
every line and column Lark reports is shown in the original. Strings, regexes and comments are
copied unchanged (the tokenizer skips them whole).

| addition | rewritten as | kept in |
|---|---|---|
| `%json {…}`, `%regex {…}`, `<…>` token reference, `@name` | a rule reference `P` (a fresh name), `P: "\\x00P"` defined after the text | `placeholders[P]` |
| `%llguidance {…}`, `%grammar_options {…}` | nothing | `notes`, `grammar_options` |
| `x{m,n}`, `x{n}`, `x{,n}`, `x{0,}`, `x{1,}`, `x{m,}` | `x~m..n`, `x~n`, `x~0..n`, `x*`, `x+`, `x~m x*` | |
| `name[opts]:` | `name:` | `rule_options[name]` |
| a terminal using `&` or prefix `~` | `T: "\\x00P"`, each operand without them a terminal of its own | `operators[T]` (the expression over operand names) |
"""
from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from ..support.errors import GrammarError
from .rule_options import parse_options

__all__ = ["Expr", "Rewritten", "position", "rewrite"]

_TOKEN = re.compile(r"<(?:\[([^\]\n]*)\]|([^\s<>\[\]][^\s<>]*))>")
_LEX = re.compile(r"""
    (?P<nl>\r?\n) | (?P<ws>[ \t\f]+) | (?P<comment>//[^\n]*|\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"i?) | (?P<regex>/(?:[^/\\\n]|\\.)+/[imslux]*)
  | (?P<directive>%[a-z_]+) | (?P<at>@[A-Za-z0-9_-]+) | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>[0-9]+) | (?P<punct>.)""", re.VERBOSE | re.DOTALL)
_REPEAT = re.compile(r"\{[ \t]*([0-9]*)[ \t]*(?:(,)[ \t]*([0-9]*)[ \t]*)?\}")
_DECODER = json.JSONDecoder()

Expr = tuple
"""A terminal expression with `&`/`~`: ("leaf", name) | ("and"|"or"|"seq", [Expr]) |
("not", Expr) | ("repeat", Expr, lo, hi)."""


def position(text: str, at: int) -> tuple[int, int]:
    """The 1-based line and column of offset `at`."""
    return text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)


def _error(text: str, at: int, message: str, code: str = "lark-syntax") -> GrammarError:
    line, column = position(text, at)
    return GrammarError(message, line=line, column=column, code=code)


@dataclass
class Rewritten:
    """The rewritten text and what its placeholders stand for."""

    text: str = ""
    placeholders: dict[str, tuple[int, str, Any]] = field(default_factory=dict)
    """name → (original offset, kind "json" | "token" | "grammar" | "op", value)."""
    rule_options: dict[str, tuple[int, dict[str, str | None]]] = field(default_factory=dict)
    operators: dict[str, tuple[int, Expr]] = field(default_factory=dict)
    grammar_options: dict[str, Any] | None = None
    notes: list[tuple[int, str]] = field(default_factory=list)
    source: str | None = None
    """The source name errors carry (set by the reader)."""
    _out: list[str] = field(default_factory=list)
    _size: int = 0
    _marks: list[tuple[int, int, bool]] = field(default_factory=list)

    def put(self, piece: str, origin: int, copied: bool = False) -> None:
        """Append `piece`: copied from the original at `origin`, or standing for it."""
        if piece:
            self._marks.append((self._size, origin, copied))
            self._out.append(piece)
            self._size += len(piece)

    def origin(self, offset: int) -> int:
        """The original offset of rewritten offset `offset`."""
        k = bisect_right(self._marks, (offset, float("inf"), True)) - 1
        if k < 0:
            return 0
        start, origin, copied = self._marks[k]
        return origin + (offset - start if copied else 0)

    def finish(self) -> None:
        self.text = "".join(self._out)

    @property
    def changed(self) -> bool:
        """Whether the text used any addition."""
        return bool(self.placeholders or self.rule_options or self.operators or self.notes or
                    self.grammar_options is not None or
                    any(not copied for _, _, copied in self._marks))


class _Pass:
    def __init__(self, src: str) -> None:
        self.src = src
        self.r = Rewritten()
        self.base = "gm_dialect"
        while self.base in src or self.base.upper() in src:
            self.base += "_"
        self.toks = [(m.lastgroup, m.start(), m.end()) for m in _LEX.finditer(src)]
        self.deferred: list[tuple[str, int, str]] = []  # terminals defined after the text

    def fresh(self, upper: bool = False) -> str:
        n = f"{self.base}_{len(self.r.placeholders)}"
        return n.upper() if upper else n

    def hold(self, kind: str, at: int, value: Any, upper: bool = False) -> str:
        name = self.fresh(upper)
        self.r.placeholders[name] = (at, kind, value)
        return name

    def text(self, k: int) -> str:
        _, s, e = self.toks[k]
        return self.src[s:e]

    # ------------------------------------------------------------------ the pass

    def run(self) -> Rewritten:
        k = 0
        atoms: list[int] = []  # output offsets where the last atom / open groups start
        last_atom = -1
        line_start = True
        term: tuple[str, int] | None = None  # the terminal whose definition is being copied
        while k < len(self.toks):
            kind, s, e = self.toks[k]
            word = self.src[s:e]
            if kind == "nl":
                if term is not None and not self._continues(k + 1):
                    term = None
                line_start = True
                self.r.put(word, s, True)
                k += 1
                continue
            if kind in ("ws", "comment"):
                self.r.put(word, s, True)
                k += 1
                continue
            if line_start and kind == "name":
                k, term = self._definition(k)
                line_start = False
                if term is not None and self._operators(k, term):
                    k = self._skip_statement(k)
                    term = None
                last_atom = -1
                continue
            line_start = line_start and kind == "punct" and word in "?!"
            if kind == "punct" and word == "<":
                k, last_atom = self._token(k), self.r._size
                continue
            if kind == "directive" and word in ("%json", "%regex", "%llguidance",
                                                "%grammar_options"):
                last_atom = self.r._size
                k = self._json(k, word)
                continue
            if kind == "at":
                last_atom = self.r._size
                self.r.put(self.hold("grammar", s, word[1:]), s)
                k += 1
                continue
            if kind == "punct" and word == "{" and last_atom >= 0:
                m = _REPEAT.match(self.src, s)
                if m and (m.group(1) or m.group(3)):
                    k = self._repeat(k, m, last_atom)
                    continue
            if kind == "punct" and word in "([":
                atoms.append(self.r._size)
            if kind == "punct" and word in ")]":
                last_atom = atoms.pop() if atoms else -1
            elif kind in ("string", "regex", "name"):
                prev = self._previous(k)
                if not (kind == "string" and prev is not None and self.text(prev) == "."):
                    last_atom = self.r._size
            elif not (kind == "punct" and word == "."):
                last_atom = -1 if word not in "*+?" else last_atom
            self.r.put(word, s, True)
            k += 1
        for name in self.r.placeholders:
            if not name.isupper() or self.r.placeholders[name][1] != "op":
                self.r.put(f'\n{name}: "\\x00{name}"', len(self.src))
        for name, at, value in self.deferred:
            self.r.put(f"\n{name}: {value}", at)
        self.r.finish()
        return self.r

    def _previous(self, k: int) -> int | None:
        j = k - 1
        while j >= 0 and self.toks[j][0] in ("ws",):
            j -= 1
        return j if j >= 0 else None

    def _continues(self, k: int) -> bool:
        """Whether the line starting at token k continues a definition (starts with `|`)."""
        while k < len(self.toks) and self.toks[k][0] in ("ws", "comment", "nl"):
            if self.toks[k][0] == "comment":
                return False
            k += 1
        return k < len(self.toks) and self.text(k) == "|"

    # ------------------------------------------------------------------ pieces

    def _definition(self, k: int) -> tuple[int, tuple[str, int] | None]:
        """A name at a line start: copy it, strip `[options]` before its colon."""
        kind, s, e = self.toks[k]
        name = self.src[s:e]
        self.r.put(name, s, True)
        k += 1
        if k < len(self.toks) and self.text(k) == "[":
            close = self.src.find("]", s)
            colon = re.compile(r"\][ \t]*:").match(self.src, close) if close > 0 else None
            if colon is not None and "\n" not in self.src[e:close]:
                if name[:1].isupper() or name.lstrip("_")[:1].isupper():
                    raise _error(self.src, e, f"terminal {name} cannot take options "
                                              "(rule options are for lowercase rules)")
                options = self._options(e + 1, close)
                for key in ("suffix", "stop"):  # a marker is a terminal of its own
                    value = options.get(key)
                    if value and value != '""':
                        options[key] = self.hold("op", e, value, upper=True)
                        self.deferred.append((options[key], e, value))
                self.r.rule_options[name] = (e, options)
                while self.toks[k][1] < close + 1:
                    k += 1
        upper = name.lstrip("_")[:1].isupper()
        return k, (name, s) if upper else None

    def _options(self, start: int, end: int) -> dict[str, str | None]:
        options = parse_options(self.src, start, end)
        if isinstance(options, int):
            raise _error(self.src, options, "malformed rule options: write name[key, "
                                            "key=value, ...], each key once, values a string, "
                                            "regex, name or number")
        return options

    def _token(self, k: int) -> int:
        s = self.toks[k][1]
        t = _TOKEN.match(self.src, s)
        if t is None:
            raise _error(self.src, s, "malformed token reference: write <|name|>, <[id]>, "
                                      "<[lo-hi,id]>, <[^...]> or <[*]>")
        self.r.put(self.hold("token", s, (t.group(1), t.group(2))), s)
        while k < len(self.toks) and self.toks[k][1] < t.end():
            k += 1
        return k

    def _json(self, k: int, word: str) -> int:
        at = self.toks[k][1]
        start = self.toks[k][2]
        while start < len(self.src) and self.src[start] in " \t":
            start += 1
        try:
            value, end = _DECODER.raw_decode(self.src, start)
        except ValueError as exc:
            raise _error(self.src, start, f"{word} needs a JSON object after it: {exc}") from None
        if word in ("%json", "%regex"):
            self.r.put(self.hold(word[1:], at, value), at)
        elif not isinstance(value, dict):
            raise _error(self.src, start, f"{word} takes a JSON object of options")
        elif word == "%llguidance":
            self.r.notes.append((at, "%llguidance options are ignored: "
                                 + (", ".join(sorted(value)) or "none given")))
        else:
            unknown = sorted(set(value) - {"allow_initial_skip"})
            if unknown or not isinstance(value.get("allow_initial_skip", False), bool):
                raise _error(self.src, start, "%grammar_options takes {\"allow_initial_skip\": "
                             f"true|false}}; got {json.dumps(value)}", "lark-dialect")
            self.r.grammar_options = {**(self.r.grammar_options or {}), **value}
        self.r.put("\n" * self.src.count("\n", at, end), at)
        while k < len(self.toks) and self.toks[k][1] < end:
            k += 1
        return k

    def _repeat(self, k: int, m: re.Match[str], atom: int) -> int:
        lo, comma, hi = m.group(1), m.group(2), m.group(3)
        s = self.toks[k][1]
        if not comma:
            piece = f"~{lo}"
        elif hi:
            piece = f"~{lo or 0}..{hi}"
            if int(lo or 0) > int(hi):
                raise _error(self.src, s, f"bad repetition {m.group()}: min above max",
                             "lark-grammar")
        elif int(lo) < 2:
            piece = "*+"[int(lo)]
        else:
            piece = f"~{lo} {''.join(self.r._out)[atom:]}*"
        self.r.put(piece, s)
        while k < len(self.toks) and self.toks[k][1] < m.end():
            k += 1
        return k

    def _skip_statement(self, k: int) -> int:
        while k < len(self.toks) and not (self.toks[k][0] == "nl" and
                                          not self._continues(k + 1)):
            k += 1
        return k

    # ------------------------------------------------------------------ & and ~ in terminals

    def _operators(self, k: int, term: tuple[str, int]) -> bool:
        """If terminal `term`'s body (its colon at or after token k) uses `&` or prefix `~`:
        replace the body by a placeholder, its operands by terminals of their own."""
        end = self._skip_statement(k)
        body = [j for j in range(k, end) if self.toks[j][0] not in ("ws", "comment", "nl")]
        colon = next((i for i, j in enumerate(body) if self.text(j) == ":"), None)
        if colon is None or any(self.text(j) not in (".", "-") and self.toks[j][0] != "number"
                                for j in body[:colon]):
            return False
        body = body[colon + 1:]
        if not any(self.text(j) == "&" or self._negation(body, i) for i, j in enumerate(body)):
            return False
        name, at = term
        parser = _ExprParser(self, body)
        expr = parser.alt()
        if parser.i != len(body):
            raise _error(self.src, self.toks[body[parser.i]][1],
                         f"unexpected {self.text(body[parser.i])!r} in terminal {name}")
        self.r.operators[name] = (at, expr)
        self.r.put(f': "\\x00{self.base}_{name}"', self.toks[k][1])
        for leaf, start, piece in parser.leaves:
            self.r.put(f"\n{leaf}: ", start)
            plain = _plain_repeats(piece)
            self.r.put(plain, start, plain == piece)
        return True

    def _negation(self, body: list[int], i: int) -> bool:
        """Whether body[i] is a prefix `~` (not Lark's `x ~ n`)."""
        return self.text(body[i]) == "~" and (i + 1 >= len(body) or
                                              self.toks[body[i + 1]][0] != "number")


class _ExprParser:
    """`alt := conj ('|' conj)*; conj := seq ('&' seq)*; seq := unary+;
    unary := '~' unary | postfix`; a maximal part without `&`/`~` becomes one operand."""

    def __init__(self, p: _Pass, body: list[int]) -> None:
        self.p, self.body, self.i = p, body, 0
        self.leaves: list[tuple[str, int, str]] = []  # (name, original offset, text)

    def peek(self) -> str | None:
        return self.p.text(self.body[self.i]) if self.i < len(self.body) else None

    def alt(self) -> Expr:
        parts = [self.conj()]
        while self.peek() == "|":
            self.i += 1
            parts.append(self.conj())
        return parts[0] if len(parts) == 1 else ("or", parts)

    def conj(self) -> Expr:
        parts = [self.seq()]
        while self.peek() == "&":
            self.i += 1
            parts.append(self.seq())
        return parts[0] if len(parts) == 1 else ("and", parts)

    def seq(self) -> Expr:
        parts = []
        while self.peek() not in (None, "|", "&", ")"):
            parts.append(self.unary())
        if not parts:
            at = self.p.toks[self.body[min(self.i, len(self.body) - 1)]][1]
            raise _error(self.p.src, at, "an operand of '&' or '|' is missing")
        return parts[0] if len(parts) == 1 else ("seq", parts)

    def unary(self) -> Expr:
        """`~` binds tighter than a postfix operator: `~A+` is `(~A)+`."""
        negations = 0
        while self.p._negation(self.body, self.i):
            negations, self.i = negations + 1, self.i + 1
        start = self.i
        if self.peek() == "(":
            self.i += 1
            inner: Expr | None = self.alt()
            if self.peek() != ")":
                raise _error(self.p.src, self.p.toks[self.body[start]][1], "unclosed '('")
            self.i += 1
            if inner is not None and not _has_operator(inner):
                inner = None
        else:
            if self.peek() is None:
                raise _error(self.p.src, self.p.toks[self.body[-1]][1], "'~' needs an operand")
            self.i += 1
            if self.peek() == "." and self.i + 2 <= len(self.body):  # "a".."z"
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
            m = _REPEAT.match(self.p.src, self.p.toks[self.body[self.i]][1])
            if m is None or not (m.group(1) or m.group(3)):
                return None
            while self.i < len(self.body) and self.p.toks[self.body[self.i]][1] < m.end():
                self.i += 1
            lo = int(m.group(1) or 0)
            return (lo, int(m.group(3)) if m.group(3) else None) if m.group(2) else (lo, lo)
        if op != "~":
            return None
        self.i += 1
        lo = hi = int(self.p.text(self.body[self.i]))
        self.i += 1
        if self.peek() == ".":
            self.i += 2
            hi = int(self.p.text(self.body[self.i]))
            self.i += 1
        return lo, hi

    def leaf(self, a: int, b: int) -> str:
        s, e = self.p.toks[self.body[a]][1], self.p.toks[self.body[b - 1]][2]
        name = self.p.hold("op", s, self.p.src[s:e], upper=True)
        self.leaves.append((name, s, self.p.src[s:e]))
        return name


def _plain_repeats(piece: str) -> str:
    """`piece` with its bounded `{m,n}` repetitions as Lark's `~` (inside an operand)."""
    def one(m: re.Match[str]) -> str:
        lo, comma, hi = m.group(1), m.group(2), m.group(3)
        if not (lo or hi) or (comma and not hi and int(lo) > 1):
            return m.group()  # a template, or {m,} left for Lark to refuse
        if not comma:
            return f"~{lo}"
        return f"~{lo or 0}..{hi}" if hi else "*+"[int(lo)]
    return _REPEAT.sub(one, piece)


def _has_operator(expr: Expr) -> bool:
    return expr[0] != "leaf"


def rewrite(text: str) -> Rewritten:
    """The dialect text `text` as plain Lark (module docstring)."""
    return _Pass(text).run()
