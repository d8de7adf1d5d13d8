"""Derivatives of grammars by a text: w is in D_t(G) exactly when t·w is in G.

Checked with the reference Earley recognizer on random expressions factored into rules, on
recursive grammars and on automaton leaves, over every short string of the alphabet."""
from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler.automata.derivative import derivative
from grammask.compiler.automata.language_ops import intersect
from grammask.compiler.frontends.gbnf import parse_gbnf
from grammask.compiler.ir.nodes import Automaton, Grammar, Rule
from tests.support.grammars import factor_into_rules
from tests.support.ir_strategies import ir_trees
from tests.support.reference_earley import ReferenceRecognizer

STRINGS = ["".join(p) for n in range(5) for p in itertools.product("abc", repeat=n)]


def _same(grammar: Grammar, prefix: str) -> None:
    whole = ReferenceRecognizer(grammar)
    rest = ReferenceRecognizer(derivative(grammar, prefix))
    for w in STRINGS:
        assert rest.complete(w.encode()) == whole.complete((prefix + w).encode()), (prefix, w)


@settings(max_examples=60, deadline=None)
@given(ir_trees(), st.integers(0, 1000), st.sampled_from(["a", "ab", "ba", "abc", "cc", ""]))
def test_derivative_of_random_grammars(node, seed: int, prefix: str) -> None:  # type: ignore[no-untyped-def]
    _same(factor_into_rules(node, seed), prefix)


def test_derivative_of_recursive_grammars() -> None:
    grammar = parse_gbnf('root ::= "a" root "b" | "c" | x root\nx ::= [ab]?')
    for prefix in ("a", "aa", "ac", "b", "abc", "c"):
        _same(grammar, prefix)


def test_derivative_of_an_automaton_leaf() -> None:
    node = intersect(parse_gbnf('root ::= [ab]* "c"').rules[0].body,
                     parse_gbnf('root ::= "a" [abc]*').rules[0].body)
    grammar = Grammar((Rule("root", node),), "root")
    for prefix in ("a", "ab", "b", "ac"):
        derived = derivative(grammar, prefix)
        body = derived.by_name[derived.start].body
        for w in STRINGS:
            expected = node.dfa.fullmatch((prefix + w).encode())
            got = isinstance(body, Automaton) and body.dfa.fullmatch(w.encode())
            assert got == expected, (prefix, w)
