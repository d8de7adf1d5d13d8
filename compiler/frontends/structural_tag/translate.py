"""Structural tag → grammar IR: one pass over the format tree, each format one expression.

Invariant: the language of the result is exactly the set of texts the spec describes, as
`specs/structural_tags.md` states per format; nothing is approximated. Embedded languages
(`json_schema`, `grammar`, `regex`) are read by their own frontends and merged into one rule
set (`ir.merge`: equal rules shared, the others renamed apart from each other and `root`). Free text is a regular language (`free_text`), an `Automaton` leaf.

The one piece of context passed down is `Ends`: the end of the nearest enclosing `tag`, its
strings (stops of `any_text` and `triggered_tags`) or its token (excluded by `any_tokens`,
`exclude_token` and `token_triggered_tags`), XGrammar's "automatic end detection": the content
of `<think>…</think>` cannot itself contain `</think>`. Token-level formats become `TokenRef`
leaves, resolved against the vocabulary by the pipeline (`lowering/tokens.py`).
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, NamedTuple

from ...ir.merge import MergedRules
from ...ir.nodes import (
    EMPTY,
    Choice,
    Grammar,
    Literal,
    Node,
    Repeat,
    Rule,
    RuleRef,
    Seq,
    TokenRef,
)
from ...support import deadline
from ...support.diagnostics import Diagnostic
from ...support.errors import GrammarError
from ...support.limits import Limits
from ..free_text import dispatched, free_text
from ..json_schema import JsonSchemaOptions, schema_to_grammar
from ..parsed import Parsed
from ..regex import parse_regex
from ..registry import read
from .spec import Obj, invalid
from .xml_params import xml_parameters

__all__ = ["Ends", "Translator"]


class Ends(NamedTuple):
    """The end of the nearest enclosing tag: its non-empty strings, or its token."""

    strings: tuple[str, ...] = ()
    tokens: tuple[int | str, ...] = ()

JSON_STYLES = ("json", "qwen_xml", "minimax_xml", "deepseek_xml", "deepseek_v4_1_xml",
               "glm_xml", "cohere_xml", "kimi_k3_xml", "minimax_m3_xml")


def _text(value: str) -> Node:
    return Literal(value.encode("utf-8")) if value else EMPTY


class Translator:
    """Builds the grammar of one spec: `root(format)` then `grammar()`."""

    def __init__(self, limits: Limits, controls: frozenset[str] = frozenset()) -> None:
        self.limits = limits
        self.controls = controls
        self.split = re.compile("|".join(map(re.escape, sorted(controls, key=len, reverse=True)))
                                ) if controls else None
        self.merged = MergedRules(reserved=("root",))
        self.diagnostics: list[Diagnostic] = []
        self.schema_roots: set[str] = set()
        self.formats: dict[str, Callable[[Obj, tuple[str, ...]], Node]] = {
            "const_string": self.const_string, "json_schema": self.json_schema,
            "grammar": self.grammar_format, "regex": self.regex, "any_text": self.any_text,
            "sequence": self.sequence, "or": self.alternatives, "optional": self.optional,
            "plus": self.plus, "star": self.star, "repeat": self.repeat, "tag": self.tag,
            "triggered_tags": self.triggered_tags,
            "tags_with_separator": self.tags_with_separator, "dispatch": self.dispatch,
            "token": self.token, "exclude_token": self.exclude_token,
            "any_tokens": self.any_tokens, "token_triggered_tags": self.token_triggered_tags,
            "token_dispatch": self.token_dispatch,
            "qwen_xml_parameter": self.qwen_xml_parameter,
        }

    def grammar(self, root: Node, source: str | None = None) -> Parsed:
        """The grammar whose start rule `root` matches `root`, with every embedded rule. With
        several JSON schemas (tools), each schema's start stays a rule of its own (`kept`):
        their union is a pushdown grammar of small automata, not one DFA of their product
        with the text around them, which goes over budget from a few tools on."""
        rules = self.merged.rules
        if len(self.schema_roots) > 1:
            rules = [dataclasses.replace(r, kept=True) if r.name in self.schema_roots else r
                     for r in rules]
        return Parsed(Grammar((*rules, Rule("root", root)), "root", source),
                      tuple(self.diagnostics))

    # ------------------------------------------------------------------ dispatch

    def format(self, obj: Obj, ends: Ends = Ends()) -> Node:
        """The expression of one format object."""
        deadline.check()
        kind = obj.raw("type")
        build = self.formats.get(kind) if isinstance(kind, str) else None
        if build is None:
            raise invalid(obj.at("type"), f"unknown format type {kind!r}; expected one of "
                                          f"{', '.join(sorted(self.formats))}")
        node = build(obj, ends)
        obj.done()
        return node

    def marker(self, text: str) -> Node:
        """A marker of an XML argument style: text, each control token of the vocabulary in
        it (Kimi-K3's `<|open|>`) as that token."""
        parts: list[Node] = []
        at = 0
        for m in self.split.finditer(text) if self.split else ():
            parts += [_text(text[at:m.start()]), TokenRef(texts=(m.group(),))]
            at = m.end()
        parts.append(_text(text[at:]))
        parts = [p for p in parts if p != EMPTY]
        return EMPTY if not parts else parts[0] if len(parts) == 1 else Seq(tuple(parts))

    def rule(self, name: str, body: Node) -> RuleRef:
        """A reference to a new rule of `body` (renamed apart if `name` is taken)."""
        return self.merged.add(Grammar((Rule(name, body),), name), "x")

    def embed(self, grammar: Grammar, kind: str) -> RuleRef:
        """A reference to `grammar`'s start, its rules merged in (`ir.merge`)."""
        return self.merged.add(grammar, kind)

    # ------------------------------------------------------------------ primitives

    def const_string(self, obj: Obj, ends: Ends) -> Node:
        return _text(obj.string("value"))

    def json_schema(self, obj: Obj, ends: Ends) -> Node:
        schema: Any = obj.raw("json_schema")
        if not isinstance(schema, (dict, bool)):
            raise invalid(obj.at("json_schema"), "'json_schema' must be an object or a boolean")
        style = obj.string("style", "json")
        if style == "gemma":
            raise GrammarError("the gemma style (Gemma 4's JSON with bare keys and <|\"|> around "
                               "strings) is not supported", pointer=obj.at("style"),
                               code="unsupported-structural-tag")
        if style not in JSON_STYLES:
            raise invalid(obj.at("style"), f"unknown style {style!r}; expected one of "
                                           f"{', '.join(JSON_STYLES)}")
        excludes = tuple(dict.fromkeys(obj.strings("excludes", [])))
        if "" in excludes:
            raise invalid(obj.at("excludes"), "an excluded string must not be empty")
        order = "any" if obj.boolean("any_order", False) else "schema"
        most = obj.count("max_whitespace_cnt", None)
        if most is not None and most > self.limits.max_repeat:
            raise self.limits.exceeded("max_repeat", most, "'max_whitespace_cnt'").located(
                pointer=obj.at("max_whitespace_cnt"))
        options = JsonSchemaOptions(strict=True, string_excludes=excludes, property_order=order)
        if most is not None:
            options = dataclasses.replace(options, max_whitespace=most)
        where = obj.at("json_schema")
        if style != "json":
            return xml_parameters(schema, style, where, options.max_whitespace,
                                  lambda sub, at: self.json_value(sub, at, options), self.limits,
                                  self.marker, excludes, order == "any", self.rule)
        ref = self.json_value(schema, where, options)
        self.schema_roots.add(ref.name)  # type: ignore[union-attr]
        return ref

    def json_value(self, schema: Any, where: str, options: JsonSchemaOptions) -> RuleRef:
        """A reference to the grammar of `schema`'s instances, its errors and notes at `where`."""
        try:
            parsed = schema_to_grammar(schema, options, self.limits, checked=True)
        except GrammarError as exc:
            raise exc.located(pointer=where + (exc.pointer or "")) from None
        self.diagnostics.extend(
            Diagnostic(d.severity, d.code, d.message, d.span, where + (d.pointer or ""))
            for d in parsed.diagnostics)
        return self.embed(parsed.grammar, "j")

    def grammar_format(self, obj: Obj, ends: Ends) -> Node:
        text = obj.string("grammar")
        syntax = obj.string("syntax", "ebnf")
        if syntax not in ("ebnf", "lark"):
            raise invalid(obj.at("syntax"), f"unknown syntax {syntax!r}; expected ebnf or lark")
        try:
            grammar, diagnostics = read("gbnf" if syntax == "ebnf" else "lark", text,
                                        limits=self.limits)
        except GrammarError as exc:
            raise exc.located(pointer=obj.at("grammar")) from None
        if grammar.rule(grammar.start) is None:
            raise invalid(obj.at("grammar"), f"the grammar has no {grammar.start!r} rule")
        self.diagnostics.extend(dataclasses.replace(d, pointer=obj.at("grammar"))
                                for d in diagnostics)
        return self.embed(grammar, "g")

    def qwen_xml_parameter(self, obj: Obj, ends: Ends) -> Node:
        """XGrammar's deprecated form of a `json_schema` item in the `qwen_xml` style."""
        schema: Any = obj.raw("json_schema")
        if not isinstance(schema, (dict, bool)):
            raise invalid(obj.at("json_schema"), "'json_schema' must be an object or a boolean")
        options = JsonSchemaOptions(strict=True)
        return xml_parameters(schema, "qwen_xml", obj.at("json_schema"),
                              options.max_whitespace,
                              lambda sub, at: self.json_value(sub, at, options), self.limits,
                              self.marker)

    def regex(self, obj: Obj, ends: Ends) -> Node:
        try:
            return parse_regex(obj.string("pattern"), limits=self.limits)
        except GrammarError as exc:
            raise exc.located(pointer=obj.at("pattern")) from None

    def any_text(self, obj: Obj, ends: Ends) -> Node:
        excludes = obj.strings("excludes", [])
        most = self.count(obj, "max_chars")
        return self.bounded(obj, free_text(frozenset((*excludes, *ends.strings)), "", most,
                                           self.limits))

    def count(self, obj: Obj, key: str) -> int | None:
        """The count `obj[key]` (null: None), at most `Limits.max_repeat`."""
        most = obj.count(key, None)
        if most is not None and most > self.limits.max_repeat:
            raise self.limits.exceeded("max_repeat", most, f"'{key}'").located(
                pointer=obj.at(key))
        return most

    def bounded(self, obj: Obj, body: Node) -> Node:
        """`body`, or with `obj`'s `max_tokens` N a call of a rule of it in which at most N
        tokens begin (`Rule.max_tokens`)."""
        most = self.count(obj, "max_tokens")
        if most is None:
            return body
        name = f"bounded-{most}"
        return self.merged.add(Grammar((Rule(name, body, max_tokens=most),), name), "tokens")

    # ------------------------------------------------------------------ composition

    def sequence(self, obj: Obj, ends: Ends) -> Node:
        return Seq(tuple(self.format(e, ends) for e in obj.objects("elements", at_least=1)))

    def alternatives(self, obj: Obj, ends: Ends) -> Node:
        return Choice(tuple(self.format(e, ends) for e in obj.objects("elements", at_least=1)))

    def optional(self, obj: Obj, ends: Ends) -> Node:
        return Repeat(self.format(obj.object("content"), ends), 0, 1)

    def plus(self, obj: Obj, ends: Ends) -> Node:
        return Repeat(self.format(obj.object("content"), ends), 1, None)

    def star(self, obj: Obj, ends: Ends) -> Node:
        return Repeat(self.format(obj.object("content"), ends), 0, None)

    def repeat(self, obj: Obj, ends: Ends) -> Node:
        least = obj.count("min")
        value = obj.raw("max")
        most = None if value == -1 and not isinstance(value, bool) else obj.count("max")
        if most is not None and most < least:  # type: ignore[operator]
            raise invalid(obj.at("max"), f"'max' ({most}) is below 'min' ({least}); use -1 "
                                         f"for no upper bound")
        for name, count in (("min", least), ("max", most)):
            if count is not None and count > self.limits.max_repeat:
                raise self.limits.exceeded("max_repeat", count, f"repeat '{name}'").located(
                    pointer=obj.at(name))
        return Repeat(self.format(obj.object("content"), ends), least, most)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ tags

    def tag_parts(self, obj: Obj) -> tuple[str | None, Node, Node, Node]:
        """A tag's begin string (None for a token), its begin, content and end; the content is
        read with the tag's end (strings or token) as its `Ends`."""
        begin_value = obj.raw("begin")
        if isinstance(begin_value, dict):
            begin_text, begin = None, self.token_object(obj, "begin")
        else:
            begin_text = obj.string("begin")
            begin = _text(begin_text)
        end = obj.raw("end")
        if isinstance(end, dict):
            close = self.token_object(obj, "end")
            inner = Ends(tokens=(end.get("token"),))
        else:
            ends = (end,) if isinstance(end, str) else obj.strings("end", non_empty=False)
            if not ends:
                raise invalid(obj.at("end"), "'end' needs at least one string")
            close = _text(ends[0]) if len(ends) == 1 else Choice(tuple(map(_text, ends)))
            inner = Ends(strings=tuple(e for e in ends if e))
        content = self.format(obj.object("content"), inner)
        return begin_text, begin, content, close

    def tag(self, obj: Obj, ends: Ends) -> Node:
        _, begin, content, close = self.tag_parts(obj)
        return Seq((begin, content, close))

    def tags(self, obj: Obj) -> list[tuple[str | None, Node, Node]]:
        """The `tags` field: each tag's begin string (None for a token), begin and whole
        expression."""
        out = []
        for tag in obj.objects("tags", "a tag", at_least=1):
            kind = tag.raw("type", "tag")
            if kind != "tag":
                raise invalid(tag.at("type"), f"expected a 'tag' here, got {kind!r}")
            begin_text, begin, content, close = self.tag_parts(tag)
            tag.done()
            out.append((begin_text, begin, Seq((begin, content, close))))
        return out

    def triggered_tags(self, obj: Obj, ends: Ends) -> Node:
        triggers = obj.strings("triggers", non_empty=True)
        if not triggers:
            raise invalid(obj.at("triggers"), "'triggers' needs at least one trigger")
        groups: dict[str, list[Node]] = {t: [] for t in triggers}
        whole = []
        for i, (begin, _, node) in enumerate(self.tags(obj)):
            where = obj.at("tags") + f"/{i}/begin"
            if begin is None:
                raise invalid(where, "tags in 'triggered_tags' begin with a string (for a token, "
                                     "use 'token_triggered_tags')")
            opening = [t for t in triggers if begin.startswith(t)]
            if len(opening) != 1:
                raise invalid(where, (
                    f"the begin {begin!r} starts with no trigger" if not opening else
                    f"the begin {begin!r} starts with {len(opening)} triggers "
                    f"({', '.join(map(repr, opening))}); each tag needs exactly one"))
            groups[opening[0]].append(node)
            whole.append(node)
        stops = frozenset((*triggers, *obj.strings("excludes", []), *ends.strings))
        return dispatched(groups, lambda t: free_text(stops, t, None, self.limits), whole,
                               obj.boolean("at_least_one", False),
                               obj.boolean("stop_after_first", False))

    def dispatch(self, obj: Obj, ends: Ends) -> Node:
        groups: dict[Any, list[Node]] = {}
        for where, key, fmt in self.dispatch_rules(obj, str):
            groups.setdefault(key, []).append(Seq((_text(key), self.format(fmt, ends))))
        stops = frozenset((*groups, *obj.strings("excludes", [])))
        return dispatched(groups, lambda t: free_text(stops, t, None, self.limits), [],
                               False, not obj.boolean("loop", True))

    def dispatch_rules(self, obj: Obj, kind: type) -> list[tuple[str, Any, Obj]]:
        """The `rules` of a dispatch: (pointer, pattern, format) of each [pattern, format]."""
        rules = obj.raw("rules")
        if not isinstance(rules, list) or not rules:
            raise invalid(obj.at("rules"), "'rules' must be a non-empty array of "
                                           "[pattern, format] pairs")
        out = []
        for i, pair in enumerate(rules):
            where = obj.at("rules") + f"/{i}"
            if not (isinstance(pair, list) and len(pair) == 2 and _is_key(pair[0], kind)):
                raise invalid(where, "expected a [pattern, format] pair with a non-empty "
                                     "pattern" + (" string" if kind is str else
                                                  " (a token id or a token's text)"))
            out.append((where, pair[0], Obj(pair[1], where + "/1")))
        return out

    def tags_with_separator(self, obj: Obj, ends: Ends) -> Node:
        any_tag = Choice(tuple(w for _, _, w in self.tags(obj)))
        separator = _text(obj.string("separator"))
        at_least_one = obj.boolean("at_least_one", False)
        if obj.boolean("stop_after_first", False):
            return any_tag if at_least_one else Repeat(any_tag, 0, 1)
        listed = Seq((any_tag, Repeat(Seq((separator, any_tag)), 0, None)))
        return listed if at_least_one else Repeat(listed, 0, 1)

    # ------------------------------------------------------------------ tokens

    def token_ref(self, obj: Obj, name: str, value: Any, negated: bool = False) -> TokenRef:
        """A token given by id or text, at field `name`."""
        if not _is_key(value, int) and not _is_key(value, str):
            raise invalid(obj.at(name), f"{name!r} must be a token id (a non-negative integer) "
                                        f"or a token's text, got {value!r}")
        if isinstance(value, int):
            return TokenRef(ids=((value, value),), negated=negated)
        return TokenRef(texts=(value,), negated=negated)

    def tokens_ref(self, obj: Obj, name: str, extra: tuple[int | str, ...]) -> TokenRef:
        """Any token but those listed in field `name` and `extra`."""
        listed = obj.raw(name, [])
        if not isinstance(listed, list):
            raise invalid(obj.at(name), f"{name!r} must be an array of token ids or texts")
        ids: list[tuple[int, int]] = []
        texts: list[str] = []
        for i, value in enumerate([*listed, *extra]):
            ref = self.token_ref(obj, name, value)
            ids.extend(ref.ids)
            texts.extend(ref.texts)
        return TokenRef(ids=tuple(ids), texts=tuple(texts), negated=True)

    def token_object(self, obj: Obj, name: str) -> Node:
        """Field `name` of `obj`: a `token` format object."""
        token = obj.object(name, "a token format")
        if token.raw("type", "token") != "token":
            raise invalid(token.at("type"), f"expected a 'token' format, got "
                                            f"{token.data['type']!r}")
        node = self.token(token, Ends())
        token.done()
        return node

    def token(self, obj: Obj, ends: Ends) -> Node:
        return self.token_ref(obj, "token", obj.raw("token"))

    def exclude_token(self, obj: Obj, ends: Ends) -> Node:
        """Exactly one token but those listed and the enclosing tag's end token (a one-token
        step of the runtime, `lowering/tokens.py`)."""
        return self.tokens_ref(obj, "exclude_tokens", ends.tokens)

    def any_tokens(self, obj: Obj, ends: Ends) -> Node:
        return self.bounded(obj, Repeat(self.tokens_ref(obj, "exclude_tokens", ends.tokens), 0,
                                        None))

    def token_triggered_tags(self, obj: Obj, ends: Ends) -> Node:
        triggers = obj.raw("trigger_tokens")
        if not isinstance(triggers, list) or not triggers:
            raise invalid(obj.at("trigger_tokens"), "'trigger_tokens' needs at least one token")
        groups: dict[Any, list[Node]] = {t: [] for t in triggers}
        whole = []
        for i, (begin, begin_node, node) in enumerate(self.tags(obj)):
            where = obj.at("tags") + f"/{i}/begin"
            key = obj.data["tags"][i]["begin"].get("token") if begin is None else None
            if key not in groups:
                raise invalid(where, "each tag of 'token_triggered_tags' begins with a token "
                                     "of 'trigger_tokens'")
            groups[key].append(node)
            whole.append(node)
        free = Repeat(self.tokens_ref(obj, "exclude_tokens", (*triggers, *ends.tokens)), 0,
                      None)
        return dispatched(groups, lambda _: free, whole,
                               obj.boolean("at_least_one", False),
                               obj.boolean("stop_after_first", False))

    def token_dispatch(self, obj: Obj, ends: Ends) -> Node:
        groups: dict[Any, list[Node]] = {}
        for where, key, fmt in self.dispatch_rules(obj, int):
            begin = self.token_ref(obj, "rules", key)
            groups.setdefault(key, []).append(Seq((begin, self.format(fmt, ends))))
        free = Repeat(self.tokens_ref(obj, "exclude_tokens", tuple(groups)), 0, None)
        return dispatched(groups, lambda _: free, [], False, not obj.boolean("loop", True))


def _is_key(value: Any, kind: type) -> bool:
    """A dispatch pattern: a non-empty string, or (for tokens) an id or a token's text."""
    if kind is str:
        return isinstance(value, str) and bool(value)
    return (isinstance(value, int) and not isinstance(value, bool) and value >= 0) or (
        isinstance(value, str) and bool(value))
