"""Rule options of llguidance's Lark and XGrammar's EBNF (`name[lazy]`, `suffix=`, `stop=`,
`max_chars=`), as exact languages.

Invariant: an option changes a rule only by restricting its language, computed on automata
from the rule's regular body (the rules it uses inlined; recursion and token references are
errors): `lazy` keeps the strings no proper prefix of which is in the language (XGrammar's
committed-shortest matching: the rule ends at the first place it can), `suffix`/`stop` make the
language `body marker` first, `max_chars=N` keeps the strings no proper prefix of which, of at
least N characters, is in the language (the rule ends at the first place it can once N
characters are written). `%ignore` (a rule `ignore_rule`) is not woven inside such a rule and
follows it, as for a lexeme. Options that do not change the language (`capture`,
`stop_capture`, `temperature`) are returned as ignored. `max_tokens=N` is not a language: the
rule's language (after the options above) becomes a rule of its own with that token bound
(`Rule.max_tokens`: at most N tokens begin inside an occurrence, which then ends where it
first can), which the rule calls.
"""
from __future__ import annotations

import re

from ..automata.language_ops import difference, intersect
from ..ir.nodes import EMPTY, Node, Repeat, Rule, RuleRef, Seq, TokenRef, walk
from ..ir.rewrite import substitute
from ..support.errors import GrammarError
from ..support.limits import Limits
from .json_schema.ecma_regex import ANY_CHAR, ANY_STRING

__all__ = ["OPTIONS", "parse_options", "with_options"]

OPTIONS = ("lazy", "suffix", "stop", "max_chars", "max_tokens", "capture", "stop_capture",
           "temperature")
_IGNORED = ("capture", "stop_capture", "temperature")
_OPTION = re.compile(r"""[ \t]*([a-z_]+)[ \t]*(?:=[ \t]*("(?:[^"\\]|\\.)*"i?|/(?:[^/\\]|\\.)+/[a-z]*
                     |[A-Za-z_][A-Za-z0-9_]*|[0-9.]+))?[ \t]*(?:,|$)""", re.VERBOSE)


def parse_options(text: str, start: int, end: int) -> dict[str, str | None] | int:
    """The options written in text[start:end] (`key` or `key=value`, comma-separated; values as
    written: a string, regex, name or number), or the offset where they stop parsing."""
    out: dict[str, str | None] = {}
    at = start
    while at < end:
        m = _OPTION.match(text, at, end)
        if m is None or m.end() == at or m.group(1) in out:
            return at
        out[m.group(1)] = m.group(2)
        at = m.end()
    return out


def _error(message: str) -> GrammarError:
    return GrammarError(message, code="rule-options")


def regular_body(rules: dict[str, Rule], name: str, ignore_rule: str | None) -> Node:
    """Rule `name`'s body with every rule it uses inlined and `ignore_rule` left out."""
    done: dict[str, Node] = {ignore_rule: EMPTY} if ignore_rule else {}

    def inline(rule: str, path: tuple[str, ...]) -> Node:
        if rule in done:
            return done[rule]
        if rule in path:
            raise _error(f"rule {name}'s options need a regular body, but it is recursive "
                         f"through {' -> '.join((*path, rule))}")
        if rule not in rules:
            raise _error(f"rule {name} uses {rule}, which is not defined")
        body = rules[rule].body
        refs = set()
        for node in walk(body):
            if isinstance(node, TokenRef):
                raise _error(f"rule {name}'s options need a body of text, not token references")
            if isinstance(node, RuleRef):
                refs.add(node.name)
        done[rule] = substitute(body, {r: inline(r, (*path, rule)) for r in refs})
        return done[rule]

    return inline(name, ())


def _shortest(language: Node, limits: Limits, label: str) -> Node:
    return difference(language, Seq((language, ANY_CHAR, ANY_STRING)), limits=limits, label=label)


def _count(options: dict[str, str | None], key: str, limits: Limits) -> int | None:
    value = options.get(key)
    if value is None:
        if key in options:
            raise _error(f"{key} needs a value: {key}=N")
        return None
    if not value.isdigit() or int(value) > limits.max_repeat:
        raise _error(f"{key} must be an integer from 0 to {limits.max_repeat} "
                     f"(Limits.max_repeat), got {value}")
    return int(value)


def with_options(rules: dict[str, Rule], name: str, options: dict[str, str | None],
                 markers: dict[str, Node], limits: Limits, ignore_rule: str | None
                 ) -> tuple[Node, list[str], Rule | None]:
    """Rule `name`'s body under `options` (values as written; `suffix`/`stop` name their
    marker's language in `markers`), the options ignored, and the bounded rule the body
    calls (`max_tokens`; its name is not in `rules`), if any. `GrammarError` (code
    `rule-options`, no position: the caller places it) for what cannot be honoured."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise _error(f"unknown rule option {unknown[0]!r} (known: {', '.join(OPTIONS)})")
    tokens = _count(options, "max_tokens", limits)
    if "suffix" in options and "stop" in options:
        raise _error("suffix and stop cannot be used together")
    ignored = sorted(set(options) & set(_IGNORED))
    marker = options.get("suffix") or options.get("stop")
    if marker == '""':
        raise _error("an empty marker (llguidance's stop=\"\" for EOS) is not supported: the "
                     "matcher already allows EOS where the text may end")
    lazy = "lazy" in options or marker is not None
    most = _count(options, "max_chars", limits)
    if not lazy and most is None and tokens is None:
        return rules[name].body, ignored, None
    language = regular_body(rules, name, ignore_rule)
    if marker is not None:
        language = Seq((language, markers[marker]))
    if lazy:
        language = _shortest(language, limits, f"{name}[lazy]")
    elif most is not None:
        long = intersect(language, Seq((Repeat(ANY_CHAR, most, most), ANY_STRING)),
                         limits=limits)
        language = difference(language, Seq((long, ANY_CHAR, ANY_STRING)), limits=limits,
                              label=f"{name}[max_chars]")
    bounded = None
    if tokens is not None:
        inner = f"{name}-max-tokens"
        while inner in rules:
            inner += "-"
        bounded = Rule(inner, language, max_tokens=tokens)
        language = RuleRef(inner)
    if ignore_rule is not None:
        language = Seq((language, RuleRef(ignore_rule)))
    return language, ignored, bounded
