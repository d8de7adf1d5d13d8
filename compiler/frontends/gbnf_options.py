"""XGrammar's rule options in EBNF text (`name[lazy] ::= ...`, `max_chars=N`, `max_tokens=N`;
`capture`, `stop_capture` and `temperature` accepted and ignored): blanked out of the text
before it is parsed, so every line and column stays, then given their meaning on the parsed rules
(`rule_options.py`).
"""
from __future__ import annotations

import re

from ..ir.nodes import Grammar, Rule
from ..support.errors import GrammarError
from ..support.limits import Limits
from .rule_options import parse_options
from .rule_options import with_options as rule_with_options

__all__ = ["strip_options", "with_options"]


def _err(message: str, line: int, column: int, code: str) -> GrammarError:
    return GrammarError(message, line=line, column=column, code=code)


_OPTION_BLOCK = re.compile(r"^([ \t]*[A-Za-z0-9_-]+)\[([^\]\n]*)\](?=[ \t]*::=)", re.MULTILINE)


def strip_options(text: str) -> tuple[str, list[tuple[str, int, dict[str, str | None]]]]:
    """`text` with XGrammar's rule options (`name[lazy] ::= ...`) blanked out (so every line
    and column stays), and each rule's options with the offset of its `[`."""
    found: list[tuple[str, int, dict[str, str | None]]] = []

    def blank(m: re.Match[str]) -> str:
        options = parse_options(text, m.start(2), m.end(2))
        if isinstance(options, int):
            raise _err("malformed rule options: write name[key, key=value, ...]",
                       *_offset_position(text, options), "gbnf-options")
        found.append((m.group(1).strip(), m.start(2) - 1, options))
        return m.group(1) + " " * (len(m.group(2)) + 2)

    return _OPTION_BLOCK.sub(blank, text), found


def _offset_position(text: str, at: int) -> tuple[int, int]:
    return text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)


def with_options(grammar: Grammar, text: str,
                  found: list[tuple[str, int, dict[str, str | None]]],
                  limits: Limits) -> tuple[Rule, ...]:
    """The rules with their options' meaning (`frontends/rule_options.py`)."""
    rules = {rule.name: rule for rule in grammar.rules}
    for name, at, options in found:
        where = _offset_position(text, at)
        if "suffix" in options or "stop" in options:
            raise _err("suffix and stop are options of Lark rules, not of EBNF", *where,
                       "gbnf-options")
        try:
            body, _ignored, bounded = rule_with_options(rules, name, options, {}, limits, None)
        except GrammarError as exc:
            code = "gbnf-options" if exc.code == "rule-options" else exc.code
            raise exc.located(line=where[0], column=where[1], code=code) from None
        rules[name] = Rule(name, body, rules[name].span, rules[name].kept)
        if bounded is not None:
            rules[bounded.name] = Rule(bounded.name, bounded.body, rules[name].span,
                                       max_tokens=bounded.max_tokens)
    return tuple(rules.values())
