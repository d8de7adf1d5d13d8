"""Structural tag → grammar IR: one pass over the format tree, each format one expression.

Invariant: the language of the result is exactly the set of texts the spec describes, as
`specs/structural_tags.md` states per format; nothing is approximated. Embedded languages
(`json_schema`, `grammar`, `regex`) are read by their own frontends and their rules renamed
with a prefix unique to the embedding (`j3_root`), so that no two embedded grammars, nor the
`root` rule, share a name. Free text is a regular language (`free_text`), an `Automaton` leaf.

The one piece of context passed down is `ends`: the end strings of the nearest enclosing `tag`,
which `any_text` and `triggered_tags` treat as stops (XGrammar's "automatic end detection"),
so that the content of `<think>…</think>` cannot itself contain `</think>`.
"""
from __future__ import annotations

from typing import Any, Callable

from ...ir.nodes import EMPTY, Choice, Grammar, Literal, Node, Repeat, Rule, RuleRef, Seq
from ...ir.rewrite import renamed_rules
from ...support import deadline
from ...support.diagnostics import Diagnostic
from ...support.errors import GrammarError
from ...support.limits import Limits
from ..gbnf import parse_gbnf
from ..json_schema import JsonSchemaOptions, schema_to_grammar
from ..parsed import Parsed
from ..regex import parse_regex
from .free_text import free_text
from .spec import Obj, invalid

__all__ = ["Translator", "TOKEN_FORMATS"]

TOKEN_FORMATS = ("token", "exclude_token", "any_tokens", "token_triggered_tags",
                 "token_dispatch")
"""The token-level formats: they name token ids, which a text-level grammar cannot state."""

JSON_STYLES = ("json", "qwen_xml", "minimax_xml", "deepseek_xml", "glm_xml", "cohere_xml",
               "kimi_k3_xml")


def _text(value: str) -> Node:
    return Literal(value.encode("utf-8")) if value else EMPTY


class Translator:
    """Builds the grammar of one spec: `root(format)` then `grammar()`."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.rules: list[Rule] = []
        self.diagnostics: list[Diagnostic] = []
        self.embedded = 0
        self.formats: dict[str, Callable[[Obj, tuple[str, ...]], Node]] = {
            "const_string": self.const_string, "json_schema": self.json_schema,
            "grammar": self.grammar_format, "regex": self.regex, "any_text": self.any_text,
            "sequence": self.sequence, "or": self.alternatives, "optional": self.optional,
            "plus": self.plus, "star": self.star, "repeat": self.repeat, "tag": self.tag,
            "triggered_tags": self.triggered_tags,
            "tags_with_separator": self.tags_with_separator, "dispatch": self.dispatch,
        }

    def grammar(self, root: Node, source: str | None = None) -> Parsed:
        """The grammar whose start rule `root` matches `root`, with every embedded rule."""
        return Parsed(Grammar((*self.rules, Rule("root", root)), "root", source),
                      tuple(self.diagnostics))

    # ------------------------------------------------------------------ dispatch

    def format(self, obj: Obj, ends: tuple[str, ...] = ()) -> Node:
        """The expression of one format object."""
        deadline.check()
        kind = obj.raw("type")
        if kind in TOKEN_FORMATS:
            raise GrammarError(
                f"the token-level format {kind!r} is not supported yet: it names token ids, "
                f"and grammask's structural tags are text-level for now (use the token's text "
                f"where the tokenizer marks it non-special)", pointer=obj.at("type"),
                code="unsupported-structural-tag")
        build = self.formats.get(kind) if isinstance(kind, str) else None
        if build is None:
            raise invalid(obj.at("type"), f"unknown format type {kind!r}; expected one of "
                                          f"{', '.join(sorted([*self.formats, *TOKEN_FORMATS]))}")
        node = build(obj, ends)
        obj.done()
        return node

    def embed(self, grammar: Grammar, kind: str) -> Node:
        """A reference to `grammar`'s start, its rules added under a fresh prefix."""
        self.embedded += 1
        prefix = f"{kind}{self.embedded}_"
        rename = {r.name: prefix + r.name for r in grammar.rules}
        rename.setdefault(grammar.start, prefix + grammar.start)
        self.rules.extend(renamed_rules(grammar, rename))
        return RuleRef(rename[grammar.start])

    # ------------------------------------------------------------------ primitives

    def const_string(self, obj: Obj, ends: tuple[str, ...]) -> Node:
        return _text(obj.string("value"))

    def json_schema(self, obj: Obj, ends: tuple[str, ...]) -> Node:
        schema: Any = obj.raw("json_schema")
        if not isinstance(schema, (dict, bool)):
            raise invalid(obj.at("json_schema"), "'json_schema' must be an object or a boolean")
        style = obj.string("style", "json")
        if style not in JSON_STYLES:
            raise invalid(obj.at("style"), f"unknown style {style!r}; expected one of "
                                           f"{', '.join(JSON_STYLES)}")
        if style != "json":
            raise GrammarError(f"the {style!r} style is not supported yet (only 'json')",
                               pointer=obj.at("style"), code="unsupported-structural-tag")
        if obj.boolean("any_order", False):
            raise GrammarError("'any_order': properties in any order are not supported yet; "
                               "they follow the schema's order", pointer=obj.at("any_order"),
                               code="unsupported-structural-tag")
        most = obj.count("max_whitespace_cnt", None)
        if most is not None and most > self.limits.max_repeat:
            raise self.limits.exceeded("max_repeat", most, "'max_whitespace_cnt'").located(
                pointer=obj.at("max_whitespace_cnt"))
        options = JsonSchemaOptions(strict=True) if most is None else JsonSchemaOptions(
            strict=True, max_whitespace=most)
        where = obj.at("json_schema")
        try:
            parsed = schema_to_grammar(schema, options, self.limits)
        except GrammarError as exc:
            raise exc.located(pointer=where + (exc.pointer or "")) from None
        self.diagnostics.extend(
            Diagnostic(d.severity, d.code, d.message, d.span, where + (d.pointer or ""))
            for d in parsed.diagnostics)
        return self.embed(parsed.grammar, "j")

    def grammar_format(self, obj: Obj, ends: tuple[str, ...]) -> Node:
        text = obj.string("grammar")
        try:
            grammar = parse_gbnf(text, limits=self.limits)
        except GrammarError as exc:
            raise exc.located(pointer=obj.at("grammar")) from None
        if grammar.rule(grammar.start) is None:
            raise invalid(obj.at("grammar"), "the grammar has no 'root' rule")
        return self.embed(grammar, "g")

    def regex(self, obj: Obj, ends: tuple[str, ...]) -> Node:
        try:
            return parse_regex(obj.string("pattern"), limits=self.limits)
        except GrammarError as exc:
            raise exc.located(pointer=obj.at("pattern")) from None

    def any_text(self, obj: Obj, ends: tuple[str, ...]) -> Node:
        excludes = obj.strings("excludes", [])
        if obj.count("max_tokens", None) is not None:
            raise GrammarError("'max_tokens' is not supported yet: it bounds tokens, which a "
                               "text-level grammar cannot count (use 'max_chars')",
                               pointer=obj.at("max_tokens"), code="unsupported-structural-tag")
        most = obj.count("max_chars", None)
        if most is not None and most > self.limits.max_repeat:
            raise self.limits.exceeded("max_repeat", most, "'max_chars'").located(
                pointer=obj.at("max_chars"))
        return free_text(frozenset((*excludes, *ends)), "", most, self.limits)

    # ------------------------------------------------------------------ composition

    def sequence(self, obj: Obj, ends: tuple[str, ...]) -> Node:
        return Seq(tuple(self.format(e, ends) for e in obj.objects("elements", at_least=1)))

    def alternatives(self, obj: Obj, ends: tuple[str, ...]) -> Node:
        return Choice(tuple(self.format(e, ends) for e in obj.objects("elements", at_least=1)))

    def optional(self, obj: Obj, ends: tuple[str, ...]) -> Node:
        return Repeat(self.format(obj.object("content"), ends), 0, 1)

    def plus(self, obj: Obj, ends: tuple[str, ...]) -> Node:
        return Repeat(self.format(obj.object("content"), ends), 1, None)

    def star(self, obj: Obj, ends: tuple[str, ...]) -> Node:
        return Repeat(self.format(obj.object("content"), ends), 0, None)

    def repeat(self, obj: Obj, ends: tuple[str, ...]) -> Node:
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

    def tag_parts(self, obj: Obj) -> tuple[str, Node, Node]:
        """A tag's begin string, its content and its end, the content read with the tag's
        end strings as stops."""
        if isinstance(obj.raw("begin"), dict) or isinstance(obj.raw("end"), dict):
            which = "begin" if isinstance(obj.raw("begin"), dict) else "end"
            raise GrammarError(f"a token {which!r} is not supported yet: it names a token id, "
                               f"and grammask's structural tags are text-level for now",
                               pointer=obj.at(which), code="unsupported-structural-tag")
        begin = obj.string("begin")
        end = obj.raw("end")
        ends = (end,) if isinstance(end, str) else obj.strings("end", non_empty=False)
        if not ends:
            raise invalid(obj.at("end"), "'end' needs at least one string")
        content = self.format(obj.object("content"), tuple(e for e in ends if e))
        close = _text(ends[0]) if len(ends) == 1 else Choice(tuple(map(_text, ends)))
        return begin, content, close

    def tag(self, obj: Obj, ends: tuple[str, ...]) -> Node:
        begin, content, close = self.tag_parts(obj)
        return Seq((_text(begin), content, close))

    def tags(self, obj: Obj) -> list[tuple[str, Node]]:
        """The `tags` field: each tag's begin string and its whole expression."""
        out = []
        for tag in obj.objects("tags", "a tag", at_least=1):
            kind = tag.raw("type", "tag")
            if kind != "tag":
                raise invalid(tag.at("type"), f"expected a 'tag' here, got {kind!r}")
            begin, content, close = self.tag_parts(tag)
            tag.done()
            out.append((begin, Seq((_text(begin), content, close))))
        return out

    def triggered_tags(self, obj: Obj, ends: tuple[str, ...]) -> Node:
        triggers = obj.strings("triggers", non_empty=True)
        if not triggers:
            raise invalid(obj.at("triggers"), "'triggers' needs at least one trigger")
        tags = self.tags(obj)
        groups: dict[str, list[Node]] = {t: [] for t in triggers}
        for i, (begin, whole) in enumerate(tags):
            opening = [t for t in triggers if begin.startswith(t)]
            if len(opening) != 1:
                raise invalid(obj.at("tags") + f"/{i}/begin", (
                    f"the begin {begin!r} starts with no trigger" if not opening else
                    f"the begin {begin!r} starts with {len(opening)} triggers "
                    f"({', '.join(map(repr, opening))}); each tag needs exactly one"))
            groups[opening[0]].append(whole)
        at_least_one = obj.boolean("at_least_one", False)
        stop_after_first = obj.boolean("stop_after_first", False)
        stops = frozenset((*triggers, *obj.strings("excludes", []), *ends))
        return self.dispatched(groups, stops, [w for _, w in tags], at_least_one,
                               stop_after_first)

    def dispatch(self, obj: Obj, ends: tuple[str, ...]) -> Node:
        rules = obj.raw("rules")
        if not isinstance(rules, list) or not rules:
            raise invalid(obj.at("rules"), "'rules' must be a non-empty array of "
                                           "[pattern, format] pairs")
        groups: dict[str, list[Node]] = {}
        for i, pair in enumerate(rules):
            where = obj.at("rules") + f"/{i}"
            if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)
                    and pair[0]):
                raise invalid(where, "expected a [pattern, format] pair with a non-empty "
                                     "pattern string")
            groups.setdefault(pair[0], []).append(
                Seq((_text(pair[0]), self.format(Obj(pair[1], where + "/1"), ends))))
        loop = obj.boolean("loop", True)
        stops = frozenset((*groups, *obj.strings("excludes", [])))
        return self.dispatched(groups, stops, [], False, not loop)

    def dispatched(self, groups: dict[str, list[Node]], stops: frozenset[str],
                   whole: list[Node], at_least_one: bool, stop_after_first: bool) -> Node:
        """Free text and the tags its triggers open: `groups` maps each trigger to the
        expressions (each starting with that trigger) it may open."""
        if at_least_one and stop_after_first:
            return Choice(tuple(whole))
        opened = Choice(tuple(
            Seq((free_text(stops, trigger, None, self.limits), Choice(tuple(options))))
            for trigger, options in groups.items() if options))
        rest = free_text(stops, "", None, self.limits)
        body: Node = Choice((opened, rest)) if stop_after_first else Seq(
            (Repeat(opened, 0, None), rest))
        return Seq((Choice(tuple(whole)), body)) if at_least_one else body

    def tags_with_separator(self, obj: Obj, ends: tuple[str, ...]) -> Node:
        any_tag = Choice(tuple(w for _, w in self.tags(obj)))
        separator = _text(obj.string("separator"))
        at_least_one = obj.boolean("at_least_one", False)
        if obj.boolean("stop_after_first", False):
            return any_tag if at_least_one else Repeat(any_tag, 0, 1)
        listed = Seq((any_tag, Repeat(Seq((separator, any_tag)), 0, None)))
        return listed if at_least_one else Repeat(listed, 0, 1)
