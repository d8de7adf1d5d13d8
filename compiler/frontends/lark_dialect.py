"""llguidance's additions to Lark, read around Lark's own syntax: inline JSON Schemas
(`%json {...}`), token references (`<|im_end|>`, `<[151657]>`, `<[100-200,300]>`,
`<[^...]>`, `<[*]>`) and the `%llguidance {...}` option block.

None of these parse as Lark, so a grammar using them has one meaning only, and a grammar
without them is read exactly as before. Each construct (outside strings, regexes and comments)
is replaced by a rule reference of the same length, spaces in place of its other characters
and its line breaks kept, so every line and column Lark reports stays the original's; the
placeholder rules are defined after the last line and, once Lark's reader has built the IR,
take their meaning: a schema's placeholder rule its grammar's start (merged in with
`ir.merge`), a token reference's uses the `TokenRef` itself.
The option block is read as JSON and ignored, with a note saying so.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ..ir.merge import MergedRules
from ..ir.nodes import Grammar, Node, Rule, TokenRef
from ..ir.rewrite import substitute
from ..support.diagnostics import Diagnostic, Span
from ..support.errors import GrammarError
from ..support.limits import Limits
from .json_schema import JsonSchemaOptions, schema_to_grammar
from .parsed import Parsed

__all__ = ["read_with_dialect", "uses_dialect"]

_MARKS = re.compile(r"%json\b|%llguidance\b|<")
_TOKEN = re.compile(r"<(?:\[([^\]\n]*)\]|([^\s<>\[\]][^\s<>]*))>")
_ID = re.compile(r"\s*([0-9]{1,9})\s*(?:-\s*([0-9]{1,9})\s*)?")
_DECODER = json.JSONDecoder()


def uses_dialect(text: str) -> bool:
    """Whether `text` may use llguidance's additions (a cheap test; `read_with_dialect` finds
    them exactly)."""
    return _MARKS.search(text) is not None


def _position(text: str, at: int) -> tuple[int, int]:
    return text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)


def _error(text: str, at: int, message: str, code: str = "lark-syntax") -> GrammarError:
    line, column = _position(text, at)
    return GrammarError(message, line=line, column=column, code=code)


def _skip(text: str, i: int) -> int:
    """The end of the string, regex or comment starting at `i` (i itself if none does)."""
    c = text[i]
    if c == "/" and text.startswith("//", i) or c == "#":
        end = text.find("\n", i)
        return len(text) if end < 0 else end
    if c in "\"/":
        j = i + 1
        while j < len(text) and text[j] != c and text[j] != "\n":
            j += 2 if text[j] == "\\" else 1
        return min(j + 1, len(text))
    return i


def _blank(piece: str, name: str = "") -> str:
    """`name` then spaces over `piece`, its line breaks kept."""
    out = list(re.sub(r"[^\n]", " ", piece))
    out[:len(name)] = name
    return "".join(out)


def _tokens(text: str, at: int, body: str | None, name: str | None) -> TokenRef:
    line, column = _position(text, at)
    width = len(body if body is not None else name or "") + 2 + 2 * (body is not None)
    span = Span(line, column, line, column + width)
    if name is not None:
        return TokenRef(texts=(f"<{name}>",), span=span)
    assert body is not None
    negated = body.startswith("^")
    ids = body[negated:]
    if ids.strip() == "*":
        return TokenRef(negated=True, span=span)
    ranges = []
    for part in ids.split(","):
        m = _ID.fullmatch(part)
        if m is None or (m.group(2) is not None and int(m.group(2)) < int(m.group(1))):
            raise _error(text, at, f"malformed token id list '<[{body}]>': expected ids and "
                                   f"ranges such as <[128010]>, <[100-200,300]>, <[^...]>")
        lo = int(m.group(1))
        ranges.append((lo, int(m.group(2)) if m.group(2) is not None else lo))
    return TokenRef(ids=tuple(ranges), negated=negated, span=span)


def read_with_dialect(text: str, read: Callable[[str], Parsed], limits: Limits) -> Parsed:
    """`read(text)` with llguidance's additions replaced and then given their meaning."""
    out: list[str] = []
    bodies: dict[str, tuple[int, Any]] = {}
    notes: list[Diagnostic] = []
    base = "gm_dialect"
    while base in text:
        base += "_"
    i = 0
    while i < len(text):
        m = _MARKS.search(text, i)
        j = i
        while j < (m.start() if m else len(text)):  # strings, regexes and comments before it
            end = _skip(text, j)
            if end > j:
                out.append(text[i:end])
                i = j = end
                m = _MARKS.search(text, i) if m and m.start() < end else m
                continue
            j += 1
        if m is None:
            out.append(text[i:])
            break
        out.append(text[i:m.start()])
        at, word = m.start(), m.group()
        if word == "<":
            t = _TOKEN.match(text, at)
            if t is None:
                raise _error(text, at, "malformed token reference: write <|name|>, <[id]>, "
                                       "<[lo-hi,id]>, <[^...]> or <[*]>")
            name = f"{base}_{len(bodies)}"
            bodies[name] = (at, _tokens(text, at, t.group(1), t.group(2)))
            out.append(_blank(t.group(), name))
            i = t.end()
            continue
        start = at + len(word)
        while start < len(text) and text[start] in " \t":
            start += 1
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError as exc:
            raise _error(text, start, f"{word} needs a JSON object after it: {exc}") from None
        if word == "%llguidance":
            if not isinstance(value, dict):
                raise _error(text, start, "%llguidance takes a JSON object of options")
            line, column = _position(text, at)
            notes.append(Diagnostic("info", "lark-dialect", "%llguidance options are ignored: "
                                    + (", ".join(sorted(value)) or "none given"),
                                    Span(line, column, line, column + len(word))))
            out.append(_blank(text[at:end]))
        else:
            name = f"{base}_{len(bodies)}"
            bodies[name] = (at, value)
            out.append(_blank(text[at:end], name))
        i = end
    if not bodies:
        grammar, diagnostics = read("".join(out))
        return Parsed(grammar, (*diagnostics, *notes))
    defined = "".join(f'\n{name}: "\\x00"' for name in bodies)
    grammar, diagnostics = read("".join(out) + defined)
    merged = MergedRules(reserved=[r.name for r in grammar.rules])
    # Token references go where they stand (`!<...>*` is exact only as a repetition of the
    # reference itself); each inline schema stays a rule.
    tokens: dict[str, Node] = {n: v for n, (_, v) in bodies.items() if isinstance(v, TokenRef)}
    rules: list[Rule] = []
    for rule in grammar.rules:
        if rule.name in tokens:
            continue
        body = substitute(rule.body, tokens)
        if rule.name in bodies:
            at, value = bodies[rule.name]
            body = _schema(text, at, value, merged, limits)
        rules.append(Rule(rule.name, body, rule.span, rule.kept))
    return Parsed(Grammar((*rules, *merged.rules), grammar.start, grammar.source),
                  (*diagnostics, *notes))


def _schema(text: str, at: int, schema: Any, merged: MergedRules, limits: Limits) -> Node:
    line, column = _position(text, at)
    try:
        parsed = schema_to_grammar(schema, JsonSchemaOptions(), limits)
    except GrammarError as exc:
        raise exc.located(line=line, column=column,
                          message=f"in %json: {exc.message}") from None
    return merged.add(parsed.grammar, "json")
