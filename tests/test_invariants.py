"""The two invariants on the regular path, against oracles: soundness and completeness.

Soundness: every walk that ends (EOS) spells a string the `regex` package fullmatches, and every
prefix on the way is one that `regex` partial-matching calls viable. Completeness: every string
of the language is accepted token by token under the usual and random tokenizations, with EOS
allowed exactly at complete prefixes. Mask = brute force: on a small vocabulary, the filled mask
equals running every token through a direct NFA simulation.
"""
from __future__ import annotations

import functools
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .support.budget import examples

from grammask.compiler import GrammarError, compile_regex
from grammask.runtime import Matcher, Vocabulary, allocate_token_bitmask

from .support.masks import check_spelling, expected_mask, is_eos, mask_of, random_tokenization, walk
from .support.regex_strategies import PATTERNS, any_pattern, pattern_and_string
from .support.vocabularies import allowed_ids, reference_complete, small_vocabulary


@functools.lru_cache(maxsize=512)
def compiled_small(pattern: str, padding: int = 0):  # type: ignore[no-untyped-def]
    return compile_regex(pattern, small_vocabulary(padding))


@functools.lru_cache(maxsize=64)
def compiled_default(pattern: str):  # type: ignore[no-untyped-def]
    return compile_regex(pattern, Vocabulary.default())


@given(any_pattern, st.integers(0, 9), st.randoms(use_true_random=False))
@settings(max_examples=examples(150))
def test_mask_equals_brute_force(pattern: str, padding: int, rng: random.Random) -> None:
    vocab = small_vocabulary(padding)
    matcher = Matcher(compiled_small(pattern, padding))
    prefix = b""
    for _ in range(6):
        mask = mask_of(matcher)
        assert mask == expected_mask(pattern, vocab, prefix), (pattern, prefix)
        assert all(i < vocab.size - padding for i in mask)
        choices = sorted(i for i in mask if not is_eos(vocab, i))
        if not choices:
            break
        tid = rng.choice(choices)
        assert matcher.accept_token(tid)
        prefix += vocab.token_bytes(tid)


@given(any_pattern, st.randoms(use_true_random=False))
@settings(max_examples=examples(200))
def test_soundness_small_vocabulary(pattern: str, rng: random.Random) -> None:
    vocab = small_vocabulary()
    text, ended = walk(Matcher(compiled_small(pattern)), vocab, rng, 40)
    if ended:
        assert reference_complete(pattern, text), (pattern, text)


@given(st.sampled_from(PATTERNS), st.randoms(use_true_random=False))
@settings(max_examples=examples(60))
def test_soundness_default_vocabulary(pattern: str, rng: random.Random) -> None:
    vocab = Vocabulary.default()
    text, ended = walk(Matcher(compiled_default(pattern)), vocab, rng, 30)
    if ended:
        assert reference_complete(pattern, text), (pattern, text)


@given(pattern_and_string(), st.randoms(use_true_random=False))
@settings(max_examples=examples(200))
def test_completeness_small_vocabulary(case: tuple[str, str], rng: random.Random) -> None:
    pattern, text = case
    vocab = small_vocabulary()
    data = text.encode("utf-8")
    for _ in range(2):
        check_spelling(Matcher(compiled_small(pattern)), pattern, vocab, random_tokenization(vocab, data, rng))


@given(pattern_and_string(st.sampled_from(PATTERNS)), st.randoms(use_true_random=False))
@settings(max_examples=examples(80))
def test_completeness_default_vocabulary(case: tuple[str, str], rng: random.Random) -> None:
    pattern, text = case
    vocab = Vocabulary.default()
    compiled = compiled_default(pattern)
    check_spelling(Matcher(compiled), pattern, vocab, vocab.encode(text))
    data = text.encode("utf-8")
    check_spelling(Matcher(compiled), pattern, vocab, random_tokenization(vocab, data, rng))


HAND_PICKED = [
    (r"[\u4e00-\u9fff]{1,3}", "中文字"),
    (r".", "😀"),
    (r".", "\U0010ffff"),
    (r"[^a]*", "é\u00a0\u2028\ufeff\x00"),
    (r"é{2,3}", "ééé"),
    (r"[😀-😂]+", "😂😀😁"),
    (r"\{\"age\": [0-9]+\}", '{"age": 42}'),
]


@pytest.mark.parametrize("pattern,text", HAND_PICKED)
def test_hand_picked_unicode_under_usual_tokenization(pattern: str, text: str) -> None:
    vocab = Vocabulary.default()
    check_spelling(Matcher(compiled_default(pattern)), pattern, vocab, vocab.encode(text))
    small = small_vocabulary()
    for seed in range(5):
        ids = random_tokenization(small, text.encode(), random.Random(seed))
        check_spelling(Matcher(compiled_small(pattern)), pattern, small, ids)


@given(any_pattern, st.randoms(use_true_random=False), st.integers(1, 8))
@settings(max_examples=examples(150))
def test_rollback_and_copy(pattern: str, rng: random.Random, k: int) -> None:
    vocab = small_vocabulary()
    matcher = Matcher(compiled_small(pattern))
    masks = [mask_of(matcher)]
    taken = []
    for _ in range(k):
        choices = sorted(i for i in masks[-1] if not is_eos(vocab, i))
        if not choices:
            break
        tid = rng.choice(choices)
        assert matcher.accept_token(tid)
        taken.append(tid)
        masks.append(mask_of(matcher))
    j = rng.randrange(len(taken) + 1)
    snapshot = Matcher(compiled_small(pattern))
    for tid in taken[:j]:
        snapshot.accept_token(tid)
    clone = snapshot.fork()
    for tid in taken[j:]:
        assert snapshot.accept_token(tid)
    assert mask_of(clone) == masks[j]
    assert mask_of(snapshot) == masks[-1]
    for back in range(len(taken), 0, -1):
        matcher.rollback(1)
        assert mask_of(matcher) == masks[back - 1]
    assert matcher.num_rollback_steps == 0


def test_half_utf8_tokens_walk_through_a_character() -> None:
    vocab = small_vocabulary()
    m = Matcher(compiled_small("中+"))
    start = mask_of(m)
    ids = {vocab.token_bytes(i): i for i in start}
    assert {b"\xe4", b"\xe4\xb8", "中".encode()} <= set(ids)
    assert m.accept_token(ids[b"\xe4"])
    after = {vocab.token_bytes(i) for i in mask_of(m)}
    assert b"\xb8" in after and b"\xb8\xad" in after and b"\xb8\x80" not in after
    assert not m.can_terminate()
    assert m.accept_token(next(i for i in range(vocab.size) if vocab.token_bytes(i) == b"\xb8\xad"))
    assert m.can_terminate()


def test_empty_string_language_allows_only_eos() -> None:
    vocab = small_vocabulary()
    m = Matcher(compiled_small(""))
    assert mask_of(m) == {int(vocab.eos_token_id)}
    assert m.can_terminate()


def test_pattern_with_no_match_is_an_error() -> None:
    with pytest.raises(GrammarError, match="language is empty"):
        compile_regex(r"a[^\x00-\U0010ffff]", small_vocabulary())


def test_largest_id_and_padding() -> None:
    padded = small_vocabulary(padding=29)
    m = Matcher(compiled_small("last-token", 29))
    last_real = padded.size - 30
    assert padded.token_bytes(last_real) == b"last-token"
    bm = allocate_token_bitmask(1, padded.size)
    m.fill_next_token_bitmask(bm)
    assert allowed_ids(bm[0], 32 * bm.shape[1]) >= {last_real}
    assert all(i < padded.size - 29 for i in allowed_ids(bm[0], 32 * bm.shape[1]))
    plain = small_vocabulary()
    m2 = Matcher(compiled_small("last-token"))
    assert plain.size - 1 in mask_of(m2)
    assert m2.accept_token(plain.size - 1) and m2.can_terminate()


def test_every_id_of_the_default_vocabulary_can_be_allowed() -> None:
    vocab = Vocabulary.default()
    m = Matcher(compiled_default(r"[\x00-\x7f]*"))
    bm = allocate_token_bitmask(1, vocab.size)
    m.fill_next_token_bitmask(bm)
    allowed = allowed_ids(bm[0], 32 * bm.shape[1])
    text = vocab.grammar_token_list  # Qwen's non-special added tokens (<think>) are text too
    ascii_ids = {i for i in range(vocab.size) if text[i] and max(text[i]) < 128}
    assert {151657, 151667} <= ascii_ids
    assert allowed == ascii_ids | {vocab.eos_token_id}
    assert np.all(bm[0, -1] >> ((vocab.size % 32) or 32) == 0) or vocab.size % 32 == 0
