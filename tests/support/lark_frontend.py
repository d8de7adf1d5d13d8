"""The Lark frontend in tests: the corpus vendored in `tests/data/lark` (each grammar with the
start rule Lark would take), Lark's own Earley parser on grammar text as the oracle, and what
tests read off `parse_lark` (the code of its error, the DFA of a non-recursive grammar)."""
from __future__ import annotations

import functools
import re

from lark import Lark
from lark.exceptions import LarkError

from grammask.compiler.automata.build import ir_to_dfa
from grammask.compiler.frontends.lark_grammar import parse_lark
from grammask.compiler.ir.nodes import Choice, Grammar, Node, Repeat, RuleRef, Seq, references
from grammask.compiler.support.errors import GrammarError

from .paths import DATA

CORPUS = DATA / "lark"


def first_rule(text: str) -> str:
    """The start rule Lark takes for `text`: `start` if defined, else the first rule."""
    names = re.findall(r"^[?!]*(_?[a-z][_a-z0-9]*)[ \t]*(?:\{[^}]*\})?[ \t]*(?:\.-?\d+)?[ \t]*:", text, re.MULTILINE)
    return "start" if "start" in names or not names else names[0]


def load(relpath: str) -> tuple[str, str, str]:
    """A corpus grammar: (its text, its start rule, its path)."""
    path = CORPUS / relpath
    text = path.read_text(encoding="utf-8")
    return text, first_rule(text), str(path)


@functools.cache
def oracle(text: str, start: str = "start") -> Lark:
    """Lark's Earley parser (dynamic complete lexer) for the grammar `text`."""
    return Lark(text, parser="earley", lexer="dynamic_complete", start=start)


def lark_accepts(text: str, s: str, start: str = "start") -> bool:
    """Whether Lark parses `s` with the grammar `text`."""
    try:
        oracle(text, start).parse(s)
    except LarkError:
        return False
    return True


def check_grammar(grammar: Grammar) -> None:
    """Every reference resolves, the start rule exists, names are unique."""
    names = {r.name for r in grammar.rules}
    assert grammar.start in names
    for rule in grammar.rules:
        for ref in references(rule.body):
            assert ref.name in names, (rule.name, ref.name)


def code_of(text: str, **kwargs: object) -> str:
    """The code of the GrammarError `parse_lark` raises on `text`, or "ok"."""
    try:
        parse_lark(text, **kwargs)  # type: ignore[arg-type]
    except GrammarError as e:
        assert e.message and e.code, e
        return e.code
    return "ok"


def inline(grammar: Grammar) -> Node:
    """The start rule of a non-recursive grammar with every reference substituted (rules are
    resolved depth-first, each once, so shared rules stay shared)."""
    done: dict[str, Node] = {}

    def sub(node: Node) -> Node:
        if isinstance(node, RuleRef):
            if node.name not in done:
                done[node.name] = sub(grammar.rule(node.name).body)
            return done[node.name]
        if isinstance(node, Seq):
            return Seq(tuple(map(sub, node.items)))
        if isinstance(node, Choice):
            return Choice(tuple(map(sub, node.alternatives)))
        if isinstance(node, Repeat):
            return Repeat(sub(node.item), node.min, node.max)
        return node

    return sub(RuleRef(grammar.start))


@functools.cache
def dfa_of(text: str):  # type: ignore[no-untyped-def]
    """The minimal DFA of a non-recursive Lark grammar's language."""
    grammar, _ = parse_lark(text)
    return ir_to_dfa(inline(grammar))
