"""What a parse of grammar text gives, spans included, so two parsers can be compared exactly;
and random GBNF-like text, mostly well formed, with the mistakes people make."""
from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Any

from grammask.compiler.support.errors import GrammarError
from grammask.compiler.ir.nodes import Grammar


def _nodes(node: Any) -> list[tuple[Any, ...]]:
    """Every node under `node`, depth first, as (type, span, its non-node fields)."""
    out: list[tuple[Any, ...]] = []
    stack = [node]
    while stack:
        n = stack.pop()
        own: list[Any] = []
        for f in dataclasses.fields(n):
            if f.name == "span":
                continue
            value = getattr(n, f.name)
            kids = [v for v in value if _is_node(v)] \
                if isinstance(value, tuple) else [value] if _is_node(value) else []
            if dataclasses.is_dataclass(value) and not kids:
                value = id(value)  # an automaton's table: interned, compared by identity
            if kids:
                stack.extend(reversed(kids))
                own.append(len(kids))
            else:
                own.append(value)
        out.append((type(n).__name__, n.span, tuple(own)))
    return out


def _is_node(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and hasattr(value, "span")


def outcome(parse: Callable[[], Grammar]) -> tuple[Any, ...]:
    """('grammar', start, source, per rule (name, span, kept, nodes)) or ('error', type,
    code, message, line, column)."""
    try:
        g = parse()
    except GrammarError as e:
        return ("error", type(e).__name__, e.code, e.message, e.line, e.column)
    return ("grammar", g.start, g.source,
            tuple((r.name, r.span, r.kept, tuple(_nodes(r.body))) for r in g.rules))


_NAMES = ("root", "a", "b-c", "x1", "12", "ws", "value", "-", "A")
_STRINGS = ('"a"', '""', '"ab\\n"', '"\\x41"', '"\\u00e9"', '"\\U0001F600"', '"\\q"',
            '"\\x4"', '"é"', '"a\nb"', '"\\""', '"\\\\"', '"\\ud800"', '"\\uD83D"', '"')
_CLASSES = ("[a-z]", "[^\"\\\\]", "[\\]]", "[z-a]", "[]", "[^]", "[a-]", "[\\x00-\\x1F]",
            "[0-9a-fA-F]", "[\n]", "[\\u00e9-\\u00ff]", "[\\w]", "[")
_QUANTS = ("*", "+", "?", "{2}", "{2,}", "{,3}", "{1,3}", "{3,1}", "{0}", "{}", "{a}",
           "{ 2 , 4 }", "{2,3,4}", "{99999999999}", "{2 # c\n}")
_GAPS = (" ", "  ", "\t", "\n", "\r\n", "\r", " # note\n", "\n\n", "")
_JUNK = ("@", "<", "!<[1]>", "<|end|>", ":", "::", "=", "(", ")", "|", "::=", "\\", "\0", "é")


def random_gbnf(rng: random.Random) -> str:
    """A GBNF-like text: a few rules of random atoms, groups, quantifiers and gaps, now and
    then with a mistake."""

    def atom(depth: int) -> str:
        pick = rng.random()
        if pick < 0.25:
            out = rng.choice(_NAMES)
        elif pick < 0.5:
            out = rng.choice(_STRINGS)
        elif pick < 0.7:
            out = rng.choice(_CLASSES)
        elif pick < 0.75:
            out = "."
        elif pick < 0.9 and depth < 4:
            out = "(" + rng.choice(_GAPS) + alternatives(depth + 1) + rng.choice(_GAPS) + ")"
        else:
            out = rng.choice(_JUNK) if rng.random() < 0.3 else rng.choice(_NAMES)
        while rng.random() < 0.25:
            out += rng.choice(_QUANTS)
        return out

    def sequence(depth: int) -> str:
        return rng.choice((" ", "  ", "\t")).join(atom(depth) for _ in range(rng.randint(0, 4)))

    def alternatives(depth: int) -> str:
        return (rng.choice(_GAPS) + "|" + rng.choice(_GAPS)).join(
            sequence(depth) for _ in range(rng.randint(1, 3)))

    rules = []
    for _ in range(rng.randint(0, 4)):
        rules.append(rng.choice(_NAMES) + rng.choice((" ", "", "\t")) + "::=" +
                     rng.choice(_GAPS) + alternatives(0))
    text = rng.choice(("\n", "\r\n", "\n\n", " \n# c\n")).join(rules)
    if rng.random() < 0.3:
        text = rng.choice(_GAPS) + text + rng.choice(_GAPS)
    if rng.random() < 0.1 and text:
        at = rng.randrange(len(text))
        text = text[:at] + rng.choice(_JUNK) + text[at:]
    return text
