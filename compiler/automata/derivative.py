"""Derivatives of a grammar by a text: the rest of every string that starts with it.

`derivative(grammar, text)` is a grammar whose language is { w : text·w in L(grammar) } (the
left quotient), so `text` followed by it matches exactly the strings of the grammar that begin
with `text`. Brzozowski's rules, one code point at a time, on the IR:

- a literal loses its first character, or matches nothing when it starts with another;
- a class is the empty string when it holds the character, nothing otherwise;
- a sequence is the derivative of its first item then the rest, or, while the items before
  are nullable, the derivative of a later item then what follows it;
- a choice is the choice of the derivatives; a repetition `x{m,M}` is `D(x)` then
  `x{m',M-1}` (m' = 0 when x is nullable, else m - 1);
- a rule reference is a reference to the rule's derivative, a new rule `name~k` after the
  k-th character (built once per rule and step, so a recursive grammar stays finite), which
  keeps the rule's `kept` and `max_tokens` (a bound then counts the tokens that begin after
  the text: those of the text itself belong to whatever consumed it);
- an automaton leaf moves its start over the character's UTF-8 bytes; a token reference
  matches nothing (a token is not text).

`token_derivative(grammar, token)` is the same step by one token instead (`TokenSymbol`: its
id and surface text): a token reference naming it (or a negated one not naming it) is the
empty string, every text leaf matches nothing.
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

from ..ir.nodes import (
    EMPTY,
    NOTHING,
    Automaton,
    CharClass,
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
from ..ir.summaries import Summary, rule_summaries, summarize
from ..support import deadline
from .minimize import minimize_table

__all__ = ["TokenSymbol", "derivative", "token_derivative"]


class TokenSymbol(NamedTuple):
    """One token of the vocabulary: its id and its surface text."""

    id: int
    text: str

    def named_by(self, ref: TokenRef) -> bool:
        """Whether `ref` admits this token."""
        named = any(lo <= self.id <= hi for lo, hi in ref.ids) or self.text in ref.texts
        return named != ref.negated


def _seq(items: list[Node]) -> Node:
    if any(i is NOTHING or (isinstance(i, Choice) and not i.alternatives) for i in items):
        return NOTHING
    items = [i for i in items if not (isinstance(i, Seq) and not i.items)]
    return items[0] if len(items) == 1 else Seq(tuple(items))


def _choice(alts: list[Node]) -> Node:
    alts = [a for a in alts if not (isinstance(a, Choice) and not a.alternatives)]
    return alts[0] if len(alts) == 1 else Choice(tuple(alts))


class _Step:
    """The derivative of every rule of a grammar by one character."""

    def __init__(self, grammar: Grammar, char: str | TokenSymbol, step: str) -> None:
        self.grammar = grammar
        self.token = char if isinstance(char, TokenSymbol) else None
        self.char = char if isinstance(char, str) else ""
        self.code = ord(char) if isinstance(char, str) else -1
        self.data = self.char.encode("utf-8")
        self.suffix = f"~{step}"
        self.summaries = rule_summaries(grammar, [r.name for r in grammar.rules])[0]
        self.summary_memo: dict[int, Summary] = {}
        self.wanted: list[str] = []
        self.memo: dict[int, Node] = {}

    def nullable(self, node: Node) -> bool:
        return summarize(node, self.summaries, self.summary_memo)[1]

    def rule(self, name: str) -> Node:
        if self.grammar.rule(name) is None:
            return NOTHING
        if name not in self.wanted:
            self.wanted.append(name)
        return RuleRef(name + self.suffix)

    def of(self, node: Node) -> Node:
        found = self.memo.get(id(node))
        if found is None:
            found = self.memo[id(node)] = self._of(node)
        return found

    def _of(self, n: Node) -> Node:
        if self.token is not None and not isinstance(n, (Seq, Choice, Repeat, RuleRef)):
            return EMPTY if isinstance(n, TokenRef) and self.token.named_by(n) else NOTHING
        if isinstance(n, Literal):
            text = n.data.decode("utf-8")
            return (Literal(text[1:].encode("utf-8")) if len(text) > 1 else EMPTY) \
                if text[0] == self.char else NOTHING
        if isinstance(n, CharClass):
            return EMPTY if any(lo <= self.code <= hi for lo, hi in n.ranges) else NOTHING
        if isinstance(n, Seq):
            alts = []
            for k, item in enumerate(n.items):
                alts.append(_seq([self.of(item), *n.items[k + 1:]]))
                if not self.nullable(item):
                    break
            return _choice(alts)
        if isinstance(n, Choice):
            return _choice([self.of(a) for a in n.alternatives])
        if isinstance(n, Repeat):
            if n.max == 0:
                return NOTHING
            least = 0 if self.nullable(n.item) else max(n.min - 1, 0)
            most = None if n.max is None else n.max - 1
            rest: Node = Repeat(n.item, least, most) if most != 0 else EMPTY
            return _seq([self.of(n.item), rest])
        if isinstance(n, RuleRef):
            return self.rule(n.name)
        if isinstance(n, Automaton):
            d = n.dfa
            state = d.walk(self.data)
            if state < 0:
                return NOTHING
            moved = minimize_table(d.byte_class, d.transitions, d.accepting, state)
            return NOTHING if moved.is_empty_language else Automaton(moved, n.label)
        assert isinstance(n, TokenRef)
        return NOTHING

    def rules(self) -> list[Rule]:
        """The derivative of every rule reached, as rules `name~k`."""
        out: list[Rule] = []
        done: set[str] = set()
        while len(done) < len(self.wanted):
            name = next(w for w in self.wanted if w not in done)
            done.add(name)
            rule = self.grammar.by_name[name]
            out.append(dataclasses.replace(rule, name=name + self.suffix, body=self.of(rule.body)))
            deadline.check()
        return out


def derivative(grammar: Grammar, text: str, tag: str = "") -> Grammar:
    """The grammar of the rests of `grammar`'s strings that begin with `text` (its start rule
    `start~{tag}k` after k characters, `tag` keeping the rules of several derivatives apart;
    the grammar itself for an empty text)."""
    for k, char in enumerate(text, start=1):
        step = _Step(grammar, char, f"{tag}{k}")
        start = step.rule(grammar.start)
        assert isinstance(start, RuleRef), "the start rule is defined"
        grammar = Grammar((*grammar.rules, *step.rules()), start.name, grammar.source)
    return grammar


def token_derivative(grammar: Grammar, token: TokenSymbol, tag: str = "") -> Grammar:
    """The grammar of the rests of `grammar`'s strings that begin with `token` (one step)."""
    step = _Step(grammar, token, f"{tag}0")
    start = step.rule(grammar.start)
    assert isinstance(start, RuleRef), "the start rule is defined"
    return Grammar((*grammar.rules, *step.rules()), start.name, grammar.source)
