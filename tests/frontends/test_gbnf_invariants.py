"""The invariants on GBNF input: regexes rewritten as multi-rule GBNF grammars, compiled
through the grammar path, checked against the `regex` package on the original pattern."""
from __future__ import annotations

import functools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler import compile_gbnf
from grammask.compiler.frontends.gbnf import to_gbnf
from grammask.compiler.ir.nodes import Choice, Grammar, Node, Repeat, Rule, RuleRef, Seq
from grammask.compiler.frontends.regex import parse_regex
from grammask.runtime import Matcher

from .support.budget import examples
from .test_invariants import (
    PATTERNS,
    any_pattern,
    check_spelling,
    expected_mask,
    is_eos,
    mask_of,
    pattern_and_string,
    random_tokenization,
    walk,
)
from .support.vocabularies import reference_complete, small_vocabulary


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


@functools.lru_cache(maxsize=512)
def gbnf_of(pattern: str, seed: int) -> str:
    return to_gbnf(factor_into_rules(parse_regex(pattern), seed))


@functools.lru_cache(maxsize=512)
def compiled(pattern: str, seed: int):  # type: ignore[no-untyped-def]
    return compile_gbnf(gbnf_of(pattern, seed), small_vocabulary())


@given(any_pattern, st.integers(0, 3), st.randoms(use_true_random=False))
@settings(max_examples=examples(100))
def test_gbnf_mask_equals_brute_force(pattern: str, seed: int, rng: random.Random) -> None:
    vocab = small_vocabulary()
    matcher = Matcher(compiled(pattern, seed))
    prefix = b""
    for _ in range(5):
        mask = mask_of(matcher)
        assert mask == expected_mask(pattern, vocab, prefix), (gbnf_of(pattern, seed), prefix)
        choices = sorted(i for i in mask if not is_eos(vocab, i))
        if not choices:
            break
        tid = rng.choice(choices)
        assert matcher.accept_token(tid)
        prefix += vocab.token_bytes(tid)


@given(any_pattern, st.integers(0, 3), st.randoms(use_true_random=False))
@settings(max_examples=examples(100))
def test_gbnf_soundness(pattern: str, seed: int, rng: random.Random) -> None:
    text, ended = walk(Matcher(compiled(pattern, seed)), small_vocabulary(), rng, 30, pattern)
    if ended:
        assert reference_complete(pattern, text), (gbnf_of(pattern, seed), text)


@given(pattern_and_string(st.one_of(st.sampled_from(PATTERNS), any_pattern)), st.integers(0, 3),
       st.randoms(use_true_random=False))
@settings(max_examples=examples(100))
def test_gbnf_completeness(case: tuple[str, str], seed: int, rng: random.Random) -> None:
    pattern, text = case
    vocab = small_vocabulary()
    ids = random_tokenization(vocab, text.encode("utf-8"), rng)
    check_spelling(Matcher(compiled(pattern, seed)), pattern, vocab, ids)
