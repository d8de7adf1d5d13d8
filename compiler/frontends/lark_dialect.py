"""llguidance's and XGrammar's additions to Lark, given their meaning around Lark's own reading:
inline JSON Schemas (`%json {...}`), token references (`<|im_end|>`, `<[151657]>`,
`<[100-200,300]>`, `<[^...]>`, `<[*]>`), named grammars (`@name`), `{m,n}` repetitions, rule
options (`name[lazy]`, `suffix=`, `stop=`, `max_chars=`), `&` and `~` of terminals, and the
`%llguidance {...}` and `%grammar_options {...}` blocks.

None of these parse as Lark, so a grammar using them has one meaning only, and a grammar
without them is read exactly as before. `lark_rewrite` turns the text into plain Lark with
placeholder rules and a map back to the original positions; Lark's reader builds the IR; then
each placeholder takes its meaning here: a schema's or a named grammar's placeholder its start
(merged in with `ir.merge`), a token reference's uses the `TokenRef` itself, a terminal with
`&`/`~` the automaton of its expression over its operands, and a rule with options the
language those options give its (regular) body. `specs/lark.md` states each meaning.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..automata.language_ops import difference, intersect
from ..ir.merge import MergedRules
from ..ir.nodes import Choice, Grammar, Node, Repeat, Rule, RuleRef, Seq, TokenRef, references
from ..ir.rewrite import rewrite as rewrite_ir
from ..ir.rewrite import substitute
from ..support.diagnostics import Diagnostic, Span
from ..support.errors import GrammarError
from ..support.limits import Limits
from .json_schema import JsonSchemaOptions, schema_to_grammar
from .json_schema.ecma_regex import ANY_STRING
from .lark_dispatch import dispatch_pattern
from .lark_grammar import IGNORE_RULE
from .lark_rewrite import Rewritten, rewrite
from .lark_terms import Expr, position
from .parsed import Parsed
from .rule_options import with_options
from .substring import chunk_words, substring

__all__ = ["read_with_dialect", "uses_dialect"]

_MARKS = re.compile(r"%json\b|%regex\b|%lark\b|%if\b|::|%llguidance\b|%grammar_options\b|<|@|&|~|\w-[A-Za-z_]|"
                    r"\{[ \t]*[0-9,]|^[ \t]*[?!]?[_A-Za-z][_A-Za-z0-9]*\[", re.MULTILINE)
_ID = re.compile(r"\s*([0-9]{1,9})\s*(?:-\s*([0-9]{1,9})\s*)?")
Read = Callable[[str, Sequence[str], str | None, bool], Parsed]
"""Lark's reading of a plain Lark text (keeping the named unused terminals too) from a start
rule (None: the caller's), with llguidance's lexemes (empty terminals allowed) or not."""


def uses_dialect(text: str) -> bool:
    """Whether `text` may use the additions (a cheap test; `rewrite` finds them exactly)."""
    return _MARKS.search(text) is not None


def _error(text: str, at: int, message: str, code: str = "lark-dialect") -> GrammarError:
    line, column = position(text, at)
    return GrammarError(message, line=line, column=column, code=code)


def _tokens(text: str, at: int, body: str | None, name: str | None) -> TokenRef:
    line, column = position(text, at)
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
                                   f"ranges such as <[128010]>, <[100-200,300]>, <[^...]>",
                         "lark-syntax")
        lo = int(m.group(1))
        ranges.append((lo, int(m.group(2)) if m.group(2) is not None else lo))
    return TokenRef(ids=tuple(ranges), negated=negated, span=span)


def _relocated(exc: GrammarError, r: Rewritten, text: str) -> GrammarError:
    """`exc`, positioned in the rewritten text, at the original place."""
    if r.renames:
        exc = exc.located(message=_names(exc.message, r))
    if exc.line is None or exc.source not in (None, r.source):
        return exc
    starts = [0] + [m.end() for m in re.finditer("\n", r.text)]
    offset = starts[min(exc.line, len(starts)) - 1] + max((exc.column or 1) - 1, 0)
    line, column = position(text, r.origin(min(offset, len(r.text))))
    return exc.located(line=line, column=column)


def _span(span: Span | None, r: Rewritten, text: str) -> Span | None:
    if span is None or span.source != r.source:
        return span
    moved = _relocated(GrammarError("", line=span.line, column=span.column, source=span.source),
                       r, text)
    assert moved.line is not None and moved.column is not None
    width = span.end_column - span.column if span.end_line == span.line else 0
    return Span(moved.line, moved.column, moved.line, moved.column + width, span.source)


def read_with_dialect(text: str, read: Read, limits: Limits, source: str | None = None,
                      grammars: Mapping[str, Any] | None = None,
                      chain: tuple[str, ...] = (), start: str | None = None) -> Parsed:
    """The grammar of dialect `text`: `read` on its rewriting, each addition then given its
    meaning; `grammars` are the grammars `@name` refers to (Lark texts or JSON Schemas),
    `chain` the named grammars being read (a cycle is an error)."""
    r = rewrite(text)
    r.source = source
    keep = [n for n, (_, kind, _v) in r.placeholders.items() if kind == "op"]
    try:
        grammar, diagnostics = read(r.text, keep, start, r.changed)
    except GrammarError as exc:
        raise _relocated(exc, r, text) from None
    diagnostics = tuple(Diagnostic(d.severity, d.code, d.message, _span(d.span, r, text),
                                   d.pointer) for d in diagnostics)
    notes = [Diagnostic("info", "lark-dialect", message,
                        Span(*position(text, at), *position(text, at), source))
             for at, message in r.notes]
    rules = {rule.name: rule for rule in grammar.rules}
    merged = MergedRules(reserved=list(rules))
    meaning: dict[str, Node] = {}
    for name, (at, kind, value) in r.placeholders.items():
        if kind == "token":
            meaning[name] = _tokens(text, at, *value)
        elif kind == "json":
            meaning[name] = _schema(text, at, value, merged, limits)
        elif kind == "regex":
            meaning[name] = _substring(text, at, value, limits)
        elif kind == "grammar":
            meaning[name] = _named(text, at, value, read, merged, limits, source, grammars,
                                   chain)
        elif kind == "lark":
            meaning[name] = _nested(text, value, read, merged, limits, source, grammars, chain)
        elif name in rules:
            meaning[name] = rules[name].body
    for term, (at, expr) in r.operators.items():
        if term in rules:
            rules[term] = Rule(term, _operators(expr, meaning, limits, text, at),
                               rules[term].span)
    tokens = {n: v for n, v in meaning.items() if isinstance(v, TokenRef)}
    out: dict[str, Rule] = {}
    ignoring = IGNORE_RULE in rules
    for rule in rules.values():
        if rule.name in meaning:
            if r.placeholders[rule.name][1] in ("json", "grammar", "regex", "lark"):
                # it stands where a lexeme stands: %ignore'd text may follow it
                body = Seq((meaning[rule.name], RuleRef(IGNORE_RULE))) if ignoring \
                    else meaning[rule.name]
                out[rule.name] = Rule(rule.name, body, _span(rule.span, r, text), rule.kept)
                continue
            if r.placeholders[rule.name][1] != "op":  # an operand may also be a rule's terminal
                continue
        out[rule.name] = Rule(rule.name, substitute(rule.body, tokens),
                              _span(rule.span, r, text), rule.kept)
    if not ignoring and grammar.start in out:
        lowered = dispatch_pattern(out, grammar.start, r.rule_options, meaning, limits)
        if lowered is not None:
            start_rule = out[grammar.start]
            out[grammar.start] = Rule(start_rule.name, lowered, start_rule.span,
                                      start_rule.kept)
    _apply_options(out, merged, r, meaning, text, limits, notes, source)
    if r.grammar_options is not None and not r.grammar_options.get("allow_initial_skip"):
        start = out[grammar.start]
        body = start.body
        if isinstance(body, Seq) and body.items and body.items[0] == RuleRef(IGNORE_RULE):
            out[grammar.start] = Rule(start.name, Seq(body.items[1:]), start.span, start.kept)
    rules_out = [*out.values(), *merged.rules]
    if r.renames:  # the names written with `-`, as written
        def name(n: str) -> str:
            return r.renames.get(n, n)
        rules_out = [Rule(name(rule.name), rewrite_ir(rule.body, lambda n: RuleRef(
            name(n.name)) if isinstance(n, RuleRef) and n.name in r.renames else None),
            rule.span, rule.kept) for rule in rules_out]
        diagnostics = tuple(Diagnostic(d.severity, d.code, _names(d.message, r), d.span,
                                       d.pointer) for d in diagnostics)
        return Parsed(Grammar(tuple(rules_out), name(grammar.start), grammar.source),
                      (*diagnostics, *notes))
    return Parsed(Grammar(tuple(rules_out), grammar.start, grammar.source),
                  (*diagnostics, *notes))


def _names(message: str, r: Rewritten) -> str:
    """`message` with the names Lark read for names written with `-` put back."""
    for plain, written in sorted(r.renames.items(), key=lambda kv: -len(kv[0])):
        message = re.sub(rf"(?<![\w-]){re.escape(plain)}(?![\w-])", written, message)
    return message


def _apply_options(out: dict[str, Rule], merged: MergedRules, r: Rewritten,
                   meaning: dict[str, Node], text: str, limits: Limits,
                   notes: list[Diagnostic], source: str | None) -> None:
    """Each rule's options (`rule_options.with_options`), the rules it uses first, so that a
    lazy rule inside another is read with its own options."""
    every = {**out, **{rule.name: rule for rule in merged.rules}}
    ignore = IGNORE_RULE if IGNORE_RULE in every else None
    done: set[str] = set()

    def apply(name: str) -> None:
        done.add(name)
        for ref in references(every[name].body):
            if ref.name in r.rule_options and ref.name in out and ref.name not in done:
                apply(ref.name)
        at, options = r.rule_options[name]
        try:
            body, ignored, bounded = with_options(every, name, options, meaning, limits, ignore)
        except GrammarError as exc:
            line, column = position(text, at)
            code = "lark-dialect" if exc.code == "rule-options" else exc.code
            raise exc.located(line=line, column=column, code=code) from None
        out[name] = every[name] = Rule(name, body, out[name].span, out[name].kept)
        if bounded is not None:
            out[bounded.name] = every[bounded.name] = Rule(
                bounded.name, bounded.body, out[name].span, max_tokens=bounded.max_tokens)
        if ignored:
            line, column = position(text, at)
            notes.append(Diagnostic("info", "lark-dialect", f"rule {name}: "
                                    f"{', '.join(ignored)} ignored (they do not change the "
                                    "language)", Span(line, column, line, column, source)))

    for name in r.rule_options:
        if name in out and name not in done:
            apply(name)


def _schema(text: str, at: int, schema: Any, merged: MergedRules, limits: Limits) -> Node:
    line, column = position(text, at)
    try:
        parsed = schema_to_grammar(schema, JsonSchemaOptions(), limits)
    except GrammarError as exc:
        raise exc.located(line=line, column=column,
                          message=f"in %json: {exc.message}") from None
    return merged.add(parsed.grammar, "json")


def _substring(text: str, at: int, value: Any, limits: Limits) -> Node:
    """llguidance's structured `%regex {...}`: one of `substring_chunks` (a list of texts),
    `substring_words`, `substring_chars` (a text)."""
    if not isinstance(value, dict) or len(value) != 1:
        raise _error(text, at, "%regex takes one of substring_chunks, substring_words, "
                               "substring_chars")
    ((key, arg),) = value.items()
    if key == "substring_chunks" and isinstance(arg, list) and \
            all(isinstance(c, str) for c in arg):
        chunks = arg
    elif key in ("substring_words", "substring_chars") and isinstance(arg, str):
        chunks = chunk_words(arg) if key == "substring_words" else list(arg)
    else:
        raise _error(text, at, f"%regex: {key!r} is not supported (substring_chunks takes a "
                               "list of texts; substring_words and substring_chars a text)")
    try:
        return substring(chunks, limits)
    except GrammarError as exc:
        raise _error(text, at, f"%regex: {exc.message}", exc.code) from None


def _nested(text: str, value: tuple[int, str], read: Read, merged: MergedRules,
            limits: Limits, source: str | None, grammars: Mapping[str, Any] | None,
            chain: tuple[str, ...]) -> Node:
    """The start of a `%lark { ... }` grammar (its own namespace, `start` rule, imports and
    `%ignore`); its errors are placed in the outer text."""
    offset, inner = value
    try:
        parsed = read_with_dialect(inner, read, limits, source, grammars, chain, "start")
    except GrammarError as exc:
        if exc.line is None:
            raise
        starts = [0] + [m.end() for m in re.finditer("\n", inner)]
        at = offset + starts[min(exc.line, len(starts)) - 1] + max((exc.column or 1) - 1, 0)
        line, column = position(text, at)
        raise exc.located(line=line, column=column, message=f"in %lark: {exc.message}") \
            from None
    return merged.add(parsed.grammar, "lark")


def _named(text: str, at: int, name: str, read: Read, merged: MergedRules, limits: Limits,
           source: str | None, grammars: Mapping[str, Any] | None,
           chain: tuple[str, ...]) -> Node:
    """The start of the grammar `@name` refers to."""
    if grammars is None or name not in grammars:
        known = ", ".join(sorted(grammars or ())) or "none given"
        raise _error(text, at, f"@{name} names no grammar (grammars: {known}); pass "
                               "grammars={name: lark_text_or_json_schema}")
    if name in chain:
        raise _error(text, at, "named grammars refer to each other in a cycle: "
                               + " -> ".join(f"@{n}" for n in (*chain, name)))
    value = grammars[name]
    try:
        if isinstance(value, str):
            parsed = read_with_dialect(value, read, limits, f"@{name}", grammars,
                                       (*chain, name), "start")
        elif isinstance(value, (dict, bool)):
            parsed = schema_to_grammar(value, JsonSchemaOptions(), limits)
        else:
            raise GrammarError(f"a named grammar is a Lark text or a JSON Schema, got "
                               f"{type(value).__name__}", code="lark-dialect")
    except GrammarError as exc:
        line, column = position(text, at)
        inner = f", {exc.line}:{exc.column}" if exc.line is not None else ""
        raise exc.located(line=line, column=column, source=None,
                          message=f"in @{name}{inner}: {exc.message}") from None
    return merged.add(parsed.grammar, "named")


def _operators(expr: Expr, leaves: dict[str, Node], limits: Limits, text: str,
               at: int) -> Node:
    """The language of a terminal expression with `&` and `~` (over valid UTF-8 text)."""
    kind = expr[0]
    if kind == "leaf":
        return leaves[expr[1]]
    if kind == "regex":
        return _substring(text, expr[2], expr[1], limits)
    if kind == "not":
        return difference(ANY_STRING, _operators(expr[1], leaves, limits, text, at),
                          limits=limits, label="~")
    if kind == "repeat":
        return Repeat(_operators(expr[1], leaves, limits, text, at), expr[2], expr[3])
    parts = [_operators(e, leaves, limits, text, at) for e in expr[1]]
    if kind == "and":
        return intersect(*parts, limits=limits, label="&")
    return Choice(tuple(parts)) if kind == "or" else Seq(tuple(parts))
