"""Lazy grammars (llama.cpp's `grammar_lazy` with trigger words and tokens): free text until a
trigger occurs, then the grammar, starting at the trigger.

llama.cpp leaves the output unconstrained until one of the trigger words appears, then feeds the
grammar the text from the start of that trigger on. So the language is the free text in which
no trigger occurs (the answer may end there), or such free text followed by a string of the
grammar that begins with the trigger the scanner saw first: for each trigger `t`, free text
that does not complete a trigger before `t` does (`free_text`), then `t` and the derivative of
the grammar by `t` (`automata.derivative`: exactly the grammar's strings that begin with `t`).
A grammar none of whose strings begins with a trigger thus only ever allows free text.

A trigger token (`TokenSymbol`) fires when the model samples that token, never when its text is
written in pieces: the branch is free text, the token as a reference (one step), then the rests
of the grammar's strings that begin with it: with the token itself (a reference naming it) or,
for a token that spells text, with its text.
"""
from __future__ import annotations

from collections.abc import Sequence

from ..automata.derivative import TokenSymbol, derivative, token_derivative
from ..ir.nodes import Choice, Grammar, Literal, Node, Rule, RuleRef, Seq, TokenRef
from ..support.errors import GrammarError
from ..support.limits import Limits
from .free_text import free_text

__all__ = ["lazy_grammar"]


def lazy_grammar(grammar: Grammar, triggers: Sequence[str], limits: Limits,
                 tokens: Sequence[tuple[TokenSymbol, bool]] = ()) -> Grammar:
    """`grammar` made lazy: free text, or free text then the grammar from a trigger on;
    `tokens` are the trigger tokens, each with whether it spells its text."""
    words = list(dict.fromkeys(triggers))
    if not all(isinstance(t, str) and t for t in words):
        raise GrammarError("trigger words must be non-empty strings", code="invalid-trigger")
    if not words and not tokens:
        raise GrammarError("a lazy grammar needs at least one trigger word or token",
                           code="invalid-trigger")
    if grammar.rule(grammar.start) is None:
        raise GrammarError(f"the start rule {grammar.start!r} is not defined",
                           code="missing-start")
    stops = frozenset(words)
    rules = list(grammar.rules)
    branches: list[Node] = [free_text(stops, "", None, limits)]
    for i, word in enumerate(words):
        derived = derivative(grammar, word, f"t{i}.")
        rules.extend(derived.rules[len(grammar.rules):])
        branches.append(Seq((free_text(stops, word, None, limits), Literal(word.encode()),
                             RuleRef(derived.start))))
    for i, (token, spells) in enumerate(dict.fromkeys(tokens)):
        rests: list[Node] = []
        derived = token_derivative(grammar, token, f"k{i}.")
        rules.extend(derived.rules[len(grammar.rules):])
        rests.append(RuleRef(derived.start))
        if spells:
            by_text = derivative(grammar, token.text, f"k{i}t.")
            rules.extend(by_text.rules[len(grammar.rules):])
            rests.append(RuleRef(by_text.start))
        branches.append(Seq((free_text(stops, token.text if spells else "", None, limits),
                             TokenRef(ids=((token.id, token.id),)), Choice(tuple(rests)))))
    top = grammar.start + "~lazy"
    return Grammar((*rules, Rule(top, Choice(tuple(branches)))), top, grammar.source)
