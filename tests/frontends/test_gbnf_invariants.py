"""The invariants on GBNF input: regexes rewritten as multi-rule GBNF grammars, compiled
through the grammar path, checked against the `regex` package on the original pattern."""
from __future__ import annotations

import functools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler import compile_gbnf
from grammask.compiler.frontends.gbnf import to_gbnf
from grammask.compiler.frontends.regex import parse_regex
from grammask.runtime import Matcher

from ..support.budget import examples
from ..support.grammars import factor_into_rules
from ..support.masks import check_spelling, expected_mask, is_eos, mask_of, random_tokenization, walk
from ..support.regex_strategies import PATTERNS, any_pattern, pattern_and_string
from ..support.vocabularies import reference_complete, small_vocabulary


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
