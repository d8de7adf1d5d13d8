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
| `%json {…}`, `%regex {…}`, `%lark {…}`, `<…>` token reference, `@name` | a rule reference `P` (a fresh name), `P: "\\x00P"` defined after the text | `placeholders[P]` |
| `%llguidance {…}`, `%grammar_options {…}` | nothing | `notes`, `grammar_options` |
| `x{m,n}`, `x{n}`, `x{,n}`, `x{0,}`, `x{1,}`, `x{m,}` | `x~m..n`, `x~n`, `x~0..n`, `x*`, `x+`, `x~m x*` | |
| `name[opts]:` | `name:` | `rule_options[name]` |
| a name with `-` (`my-rule`) | `my_rule` (underscores added until no name has it) | `renames` |
| a terminal using `&`, prefix `~` or `%regex {…}` | `T: "\\x00P"`, each operand without them a terminal of its own | `operators[T]` (the expression over operand names) |
"""
from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from .lark_terms import DECODER, REPEAT, Expr, TermParser, plain_repeats, syntax_error
from .rule_options import parse_options

__all__ = ["Rewritten", "rewrite"]

_TOKEN = re.compile(r"<(?:\[([^\]\n]*)\]|([^\s<>\[\]][^\s<>]*))>")
_LEX = re.compile(r"""
    (?P<nl>\r?\n) | (?P<ws>[ \t\f]+) | (?P<comment>//[^\n]*|\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"i?) | (?P<regex>/(?:[^/\\\n]|\\.)+/[imslux]*)
  | (?P<directive>%[a-z_]+) | (?P<at>@[A-Za-z0-9_-]+) | (?P<name>[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*)
  | (?P<number>[0-9]+) | (?P<punct>.)""", re.VERBOSE | re.DOTALL)


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
    renames: dict[str, str] = field(default_factory=dict)
    """Lark's name of each name written with `-` (llguidance allows it) → the name as written."""
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
                    self.renames or self.grammar_options is not None or
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
        names = {src[a:b] for kind, a, b in self.toks if kind == "name"}
        self.lark_names: dict[str, str] = {}  # a name with `-` → the name Lark reads
        for name in sorted(n for n in names if "-" in n):
            plain = name.replace("-", "_")
            while plain in names or plain in self.r.renames:
                plain += "_"
            self.lark_names[name] = plain
            self.r.renames[plain] = name

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
            if kind == "directive" and word == "%lark":
                last_atom = self.r._size
                k = self._lark(k)
                continue
            if kind == "directive" and word == "%if" or kind == "name" and \
                    self.src.startswith("::", e):
                raise syntax_error(self.src, s, "llguidance's parametric rules (name::param, %if) "
                                          "are not supported", "lark-dialect")
            if kind == "at":
                last_atom = self.r._size
                self.r.put(self.hold("grammar", s, word[1:]), s)
                k += 1
                continue
            if kind == "punct" and word == "{" and last_atom >= 0:
                m = REPEAT.match(self.src, s)
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
            self.r.put(self.lark_names.get(word, word), s, word not in self.lark_names)
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
        self.r.put(self.lark_names.get(name, name), s, name not in self.lark_names)
        name = self.lark_names.get(name, name)
        k += 1
        if k < len(self.toks) and self.text(k) == "[":
            close = self.src.find("]", s)
            colon = re.compile(r"\][ \t]*:").match(self.src, close) if close > 0 else None
            if colon is not None and "\n" not in self.src[e:close]:
                if name[:1].isupper() or name.lstrip("_")[:1].isupper():
                    raise syntax_error(self.src, e, f"terminal {name} cannot take options "
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
            raise syntax_error(self.src, options, "malformed rule options: write name[key, "
                                            "key=value, ...], each key once, values a string, "
                                            "regex, name or number")
        return options

    def _token(self, k: int) -> int:
        s = self.toks[k][1]
        t = _TOKEN.match(self.src, s)
        if t is None:
            raise syntax_error(self.src, s, "malformed token reference: write <|name|>, <[id]>, "
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
            value, end = DECODER.raw_decode(self.src, start)
        except ValueError as exc:
            raise syntax_error(self.src, start, f"{word} needs a JSON object after it: {exc}") from None
        if word in ("%json", "%regex"):
            self.r.put(self.hold(word[1:], at, value), at)
        elif not isinstance(value, dict):
            raise syntax_error(self.src, start, f"{word} takes a JSON object of options")
        elif word == "%llguidance":
            self.r.notes.append((at, "%llguidance options are ignored: "
                                 + (", ".join(sorted(value)) or "none given")))
        else:
            unknown = sorted(set(value) - {"allow_initial_skip"})
            if unknown or not isinstance(value.get("allow_initial_skip", False), bool):
                raise syntax_error(self.src, start, "%grammar_options takes {\"allow_initial_skip\": "
                             f"true|false}}; got {json.dumps(value)}", "lark-dialect")
            self.r.grammar_options = {**(self.r.grammar_options or {}), **value}
        if word not in ("%json", "%regex"):  # a statement: its lines stay lines
            self.r.put("\n" * self.src.count("\n", at, end), at)
        while k < len(self.toks) and self.toks[k][1] < end:
            k += 1
        return k

    def _lark(self, k: int) -> int:
        """`%lark { grammar }`: a placeholder for the nested grammar's start."""
        at = self.toks[k][1]
        j = k + 1
        while j < len(self.toks) and self.toks[j][0] in ("ws", "nl", "comment"):
            j += 1
        if j >= len(self.toks) or self.text(j) != "{":
            raise syntax_error(self.src, self.toks[k][2], "%lark needs a grammar in braces after it")
        depth, end = 0, j
        while end < len(self.toks):
            word = self.text(end)
            depth += (word == "{") - (word == "}")
            if depth == 0:
                break
            end += 1
        if end >= len(self.toks):
            raise syntax_error(self.src, self.toks[j][1], "%lark's '{' is never closed")
        start = self.toks[j][2]
        self.r.put(self.hold("lark", at, (start, self.src[start:self.toks[end][1]])), at)
        return end + 1

    def _repeat(self, k: int, m: re.Match[str], atom: int) -> int:
        lo, comma, hi = m.group(1), m.group(2), m.group(3)
        s = self.toks[k][1]
        if not comma:
            piece = f"~{lo}"
        elif hi:
            piece = f"~{lo or 0}..{hi}"
            if int(lo or 0) > int(hi):
                raise syntax_error(self.src, s, f"bad repetition {m.group()}: min above max",
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
        if not any(self.text(j) in ("&", "%regex") or self.negation(body, i)
                   for i, j in enumerate(body)):
            return False
        name, at = term
        parser = TermParser(self, body)
        expr = parser.alt()
        if parser.i != len(body):
            raise syntax_error(self.src, self.toks[body[parser.i]][1],
                         f"unexpected {self.text(body[parser.i])!r} in terminal {name}")
        self.r.operators[name] = (at, expr)
        self.r.put(f': "\\x00{self.base}_{name}"', self.toks[k][1])
        for leaf, start, piece in parser.leaves:
            self.r.put(f"\n{leaf}: ", start)
            plain = plain_repeats("".join(
                self.lark_names.get(m.group(), m.group()) if m.lastgroup == "name"
                else m.group() for m in _LEX.finditer(piece)))
            self.r.put(plain, start, plain == piece)
        return True

    def negation(self, body: list[int], i: int) -> bool:
        """Whether body[i] is a prefix `~` (not Lark's `x ~ n`)."""
        return i < len(body) and self.text(body[i]) == "~" and (i + 1 >= len(body) or
                                              self.toks[body[i + 1]][0] != "number")


def rewrite(text: str) -> Rewritten:
    """The dialect text `text` as plain Lark (module docstring)."""
    return _Pass(text).run()
