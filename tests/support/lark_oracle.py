"""An independent oracle for grammar IR: the same grammar written in Lark's syntax and parsed
by Lark's Earley parser (character-level, dynamic lexer), plus a random string generator."""
from __future__ import annotations

import random

from lark import Lark
from lark.exceptions import LarkError

from grammask.compiler.ir.nodes import CharClass, Choice, Grammar, Literal, Node, Repeat, RuleRef, Seq


def _char(cp: int) -> str:
    return f"\\U{cp:08x}"


def _regex(body: str) -> str:
    # Lark evaluates escapes in /.../ before compiling the regex, so every character of the
    # regex text is itself written as an escape that evaluates to it.
    return "/" + "".join(_char(ord(c)) for c in body) + "/"


def _expr(node: Node, names: dict[str, str]) -> str:
    if isinstance(node, Literal):
        return _regex("".join(_char(ord(c)) for c in node.data.decode("utf-8")))
    if isinstance(node, CharClass):
        return _regex("[" + "".join(_char(lo) + ("-" + _char(hi) if hi > lo else "")
                                    for lo, hi in node.ranges) + "]")
    if isinstance(node, RuleRef):
        return names[node.name]
    if isinstance(node, Seq):
        return "(" + " ".join(_expr(x, names) for x in node.items) + ")" if node.items else "empty"
    if isinstance(node, Choice):
        return "(" + " | ".join(_expr(x, names) for x in node.alternatives) + ")"
    assert isinstance(node, Repeat)
    item = "(" + _expr(node.item, names) + ")"
    if node.max is None:
        return f"({item}~{node.min} {item}*)" if node.min else f"{item}*"
    if node.max == 0:
        return "empty"
    if node.min == 0:
        return f"({item}~1..{node.max})?"
    return f"{item}~{node.min}..{node.max}"


def supported(grammar: Grammar) -> bool:
    """Whether the grammar can be written for Lark here (UTF-8 literals, no empty choices or
    classes)."""
    from grammask.compiler.ir.nodes import walk

    for rule in grammar.rules:
        for n in walk(rule.body):
            if isinstance(n, Choice) and not n.alternatives:
                return False
            if isinstance(n, CharClass) and not n.ranges:
                return False
            if isinstance(n, Literal):
                try:
                    n.data.decode("utf-8")
                except UnicodeDecodeError:
                    return False
    return True


def lark_parser(grammar: Grammar) -> Lark:
    """Lark's Earley parser for the same language."""
    names = {r.name: f"r{i}" for i, r in enumerate(grammar.rules)}
    lines = [f"{names[r.name]}: {_expr(r.body, names)}" for r in grammar.rules]
    lines.append("empty:")
    return Lark("\n".join(lines), start=names[grammar.start], parser="earley", lexer="dynamic")


def parses(parser: Lark, text: str) -> bool:
    """Whether Lark parses `text` completely."""
    try:
        parser.parse(text)
    except LarkError:
        return False
    return True


def sample(grammar: Grammar, rng: random.Random, max_repeat: int = 3) -> str:
    """A random string of a non-recursive grammar's language."""
    rules = grammar.by_name
    out: list[str] = []
    stack: list[Node] = [rules[grammar.start].body]
    while stack:
        n = stack.pop()
        if isinstance(n, Literal):
            out.append(n.data.decode("utf-8"))
        elif isinstance(n, CharClass):
            lo, hi = rng.choice(n.ranges)
            out.append(chr(rng.randint(lo, min(hi, lo + 200))))
        elif isinstance(n, RuleRef):
            stack.append(rules[n.name].body)
        elif isinstance(n, Seq):
            stack.extend(reversed(n.items))
        elif isinstance(n, Choice):
            stack.append(rng.choice(n.alternatives))
        else:
            assert isinstance(n, Repeat)
            k = rng.randint(n.min, n.max if n.max is not None else n.min + max_repeat)
            stack.extend([n.item] * k)
    return "".join(out)
