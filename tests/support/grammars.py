"""Grammars several test modules share: llama.cpp's JSON grammar (vendored in `tests/data/gbnf`),
a regex of JSON records, and any regex IR rewritten as a multi-rule grammar."""
from __future__ import annotations

import random

from grammask.compiler.ir.nodes import Choice, Grammar, Node, Repeat, Rule, RuleRef, Seq

from .paths import DATA

JSON_GBNF_FILE = DATA / "gbnf" / "json.gbnf"
JSON_GBNF = JSON_GBNF_FILE.read_text(encoding="utf-8")
"""llama.cpp's `json.gbnf`: a recursive grammar, so it takes the pushdown path."""

RECORD_REGEX = r'\{"id": [0-9]{1,4}, "tags": \[("[a-z]{1,5}"(, "[a-z]{1,5}")*)?\]\}'
"""A JSON record with an id and a list of tags: a regular language, so the DFA path."""


def factor_into_rules(node: Node, seed: int) -> Grammar:
    """A grammar for `node` in which random sub-expressions become rules of their own."""
    rng = random.Random(seed)
    rules: list[Rule] = []

    def factor(n: Node) -> Node:
        if isinstance(n, Seq):
            n = Seq(tuple(factor(x) for x in n.items))
        elif isinstance(n, Choice):
            n = Choice(tuple(factor(x) for x in n.alternatives))
        elif isinstance(n, Repeat):
            n = Repeat(factor(n.item), n.min, n.max)
        if rng.random() < 0.4:
            name = f"r-{len(rules)}"
            rules.append(Rule(name, n))
            return RuleRef(name)
        return n

    return Grammar((Rule("root", factor(node)), *rules), "root")
