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
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .support.budget import examples

from grammask.compiler import GrammarError, compile_regex
from grammask.runtime import Matcher, Vocabulary, allocate_token_bitmask

from .support.regex_strategies import patterns
from .support.vocabularies import (
    allowed_ids,
    oracle_viable_text,
    reference_complete,
    reference_viable,
    small_vocabulary,
)

PATTERNS = [
    r'\{"age": [0-9]+\}',
    r"[a-z]+( [a-z]+)*\.",
    r"(ab|a)*c?",
    r"中+文?",
    r"é{2,3}",
    r".",
    r"[^a]*",
    r"\d{3}-\d{4}",
    r"(a|b)*a(a|b){3}",
    r"",
    r"a?",
    r"[\u4e00-\u9fff]{1,3}",
    r"\w+@\w+\.com",
    r"(true|false|null)",
    r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?",
    r"\s*x\s*",
    r"[😀-😂]+",
    r"[^\x00-\x7f]{2}",
    r"a{0,2}b{2,}",
    r"(?:abc|abd|aef)+",
    r'"([^"\\]|\\.)*"',
    r"\D\W\S",
]
any_pattern = st.one_of(st.sampled_from(PATTERNS), patterns())


@functools.lru_cache(maxsize=512)
def compiled_small(pattern: str, padding: int = 0):  # type: ignore[no-untyped-def]
    return compile_regex(pattern, small_vocabulary(padding))


@functools.lru_cache(maxsize=64)
def compiled_default(pattern: str):  # type: ignore[no-untyped-def]
    return compile_regex(pattern, Vocabulary.default())


@functools.lru_cache(maxsize=4)
def token_index(vocab: Vocabulary) -> tuple[dict[bytes, list[int]], int]:
    index: dict[bytes, list[int]] = {}
    longest = 0
    for i in range(vocab.size):
        lo, hi = int(vocab.token_offsets[i]), int(vocab.token_offsets[i + 1])
        if hi > lo:
            b = vocab.token_data[lo:hi].tobytes()
            index.setdefault(b, []).append(i)
            longest = max(longest, len(b))
    return index, longest


def random_tokenization(vocab: Vocabulary, data: bytes, rng: random.Random) -> list[int]:
    """A uniformly random choice among vocabulary tokens at each position (every byte is one)."""
    index, longest = token_index(vocab)
    out, pos = [], 0
    while pos < len(data):
        options = [
            i for n in range(1, min(longest, len(data) - pos) + 1)
            for i in index.get(data[pos:pos + n], ())
        ]
        choice = rng.choice(options)
        out.append(choice)
        pos += int(vocab.token_offsets[choice + 1] - vocab.token_offsets[choice])
    return out


def mask_of(matcher: Matcher) -> set[int]:
    bm = allocate_token_bitmask(1, matcher.vocab_size)
    matcher.fill_next_token_bitmask(bm)
    return allowed_ids(bm[0], matcher.vocab_size)


def expected_mask(pattern: str, vocab: Vocabulary, prefix: bytes) -> set[int]:
    out = set()
    for i in range(vocab.size):
        lo, hi = int(vocab.token_offsets[i]), int(vocab.token_offsets[i + 1])
        if hi > lo and reference_viable(pattern, prefix + vocab.token_data[lo:hi].tobytes()):
            out.add(i)
    if reference_complete(pattern, prefix):
        out.update(int(e) for e in vocab.eos_token_ids)
    return out


def is_eos(vocab: Vocabulary, tid: int) -> bool:
    return tid in set(vocab.eos_token_ids.tolist())


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


def walk(matcher: Matcher, vocab: Vocabulary, rng: random.Random, max_steps: int,
         pattern: str | None = None) -> tuple[bytes, bool]:
    """Draw uniformly among allowed tokens (EOS taken with probability 1/3 when allowed);
    every whole-character prefix is checked against `pattern` (default: the compiled source)."""
    pattern = matcher.compiled.source if pattern is None else pattern
    text = b""
    bm = allocate_token_bitmask(1, vocab.size)
    for _ in range(max_steps):
        matcher.fill_next_token_bitmask(bm)
        allowed = allowed_ids(bm[0], vocab.size)
        assert allowed, "a live prefix always has a continuation"
        eos = sorted(i for i in allowed if is_eos(vocab, i))
        if eos and rng.random() < 1 / 3:
            assert matcher.accept_token(eos[0]) and matcher.is_terminated()
            return text, True
        tid = rng.choice(sorted(allowed))
        assert matcher.accept_token(tid)
        if is_eos(vocab, tid):
            return text, True
        text += vocab.token_bytes(tid)
        try:
            decoded = text.decode("utf-8")
        except UnicodeDecodeError:
            continue
        assert oracle_viable_text(pattern, decoded), (pattern, text)
    return text, False


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


def check_spelling(matcher: Matcher, pattern: str, vocab: Vocabulary, ids: list[int]) -> None:
    prefix = b""
    for tid in ids:
        mask = mask_of(matcher)
        assert tid in mask, (pattern, prefix, vocab.token_bytes(tid))
        eos_allowed = any(is_eos(vocab, i) for i in mask)
        assert eos_allowed == reference_complete(pattern, prefix), (pattern, prefix)
        assert matcher.accept_token(tid)
        prefix += vocab.token_bytes(tid)
    assert matcher.can_terminate()
    assert any(is_eos(vocab, i) for i in mask_of(matcher))
    assert matcher.accept_token(vocab.eos_token_id) and matcher.is_terminated()


SHORTHANDS = {"d": "[0-9]", "w": "[A-Za-z0-9_]", "s": "[ \\t\\n\\r\\f\\v]",
              "D": "[^0-9]", "W": "[^A-Za-z0-9_]", "S": "[^ \\t\\n\\r\\f\\v]"}


def ascii_shorthands(pattern: str) -> str:
    """The pattern with shorthands (outside classes) spelled as ASCII classes.

    Hypothesis cannot draw non-ASCII characters under re.ASCII, so generation uses this form.
    """
    return re.sub(r"\\\\|\\([dwsDWS])", lambda m: SHORTHANDS[m[1]] if m[1] else m[0], pattern)


@st.composite
def pattern_and_string(draw: st.DrawFn, pool: st.SearchStrategy[str] = any_pattern) -> tuple[str, str]:
    pattern = draw(pool)
    text = draw(st.from_regex(re.compile(ascii_shorthands(pattern)), fullmatch=True))
    return pattern, text


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
    clone = snapshot.copy()
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
    ascii_ids = {i for i in range(151643) if max(vocab.token_bytes(i)) < 128}
    assert allowed == ascii_ids | {vocab.eos_token_id}
    assert np.all(bm[0, -1] >> ((vocab.size % 32) or 32) == 0) or vocab.size % 32 == 0
