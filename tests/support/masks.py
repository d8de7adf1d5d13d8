"""Driving a Matcher in tests: its mask as a set of ids, random tokenizations of a text,
random walks checked against a regex oracle, spelling a text token by token, and a snapshot
of everything a matcher shows."""
from __future__ import annotations

import functools
import random

from grammask.runtime import CompiledGrammar, Matcher, Vocabulary, allocate_token_bitmask

from .vocabularies import allowed_ids, oracle_viable_text, reference_complete, reference_viable


@functools.lru_cache(maxsize=4)
def token_index(vocab: Vocabulary) -> tuple[dict[bytes, list[int]], int]:
    """The ids of each token's bytes, and the longest token's length."""
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
    """The ids the matcher allows next."""
    bm = allocate_token_bitmask(1, matcher.vocab_size)
    matcher.fill_next_token_bitmask(bm)
    return allowed_ids(bm[0], matcher.vocab_size)


def expected_mask(pattern: str, vocab: Vocabulary, prefix: bytes) -> set[int]:
    """The mask after `prefix` by brute force: every token run through the reference NFA."""
    out = set()
    for i in range(vocab.size):
        lo, hi = int(vocab.token_offsets[i]), int(vocab.token_offsets[i + 1])
        if hi > lo and reference_viable(pattern, prefix + vocab.token_data[lo:hi].tobytes()):
            out.add(i)
    if reference_complete(pattern, prefix):
        out.update(int(e) for e in vocab.eos_token_ids)
    return out


def is_eos(vocab: Vocabulary, tid: int) -> bool:
    """Whether `tid` is one of the vocabulary's EOS ids."""
    return tid in set(vocab.eos_token_ids.tolist())


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


def guided_walk(compiled: CompiledGrammar, vocab: Vocabulary, guide: list[int],
                rng: random.Random, steps: int, follow: float = 0.95) -> tuple[bytes, bool]:
    """A constrained walk that follows `guide` (a good text's tokens) at each step with
    probability `follow`, else leaves it for a random allowed token and wanders: near-misses of
    a good text. Returns the text and whether the walk ended (by a stop token)."""
    m, text, k = Matcher(compiled), b"", 0
    eos = set(vocab.eos_token_ids.tolist())
    for _ in range(steps):
        allowed = mask_of(m)
        assert allowed, "a live prefix always has a continuation"
        if allowed & eos and (k >= len(guide) or rng.random() < 0.1):
            assert m.accept_token(min(allowed & eos)) and m.is_terminated()
            return text, True
        if k < len(guide) and guide[k] in allowed and rng.random() < follow:
            tid, k = guide[k], k + 1
        else:
            tid, k = rng.choice(sorted(allowed - eos)), len(guide)
        assert m.accept_token(tid)
        text += vocab.token_bytes(tid)
    return text, False


def check_spelling(matcher: Matcher, pattern: str, vocab: Vocabulary, ids: list[int]) -> None:
    """Each of `ids` is allowed in turn, EOS exactly at the prefixes `pattern` completes, and
    EOS ends the text."""
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


def observable_state(m: Matcher) -> tuple[bytes, bool, bool, int, bytes]:
    """Everything the matcher shows: its mask bytes, whether it can terminate or has, its
    rollback depth and its jump-forward bytes."""
    bm = allocate_token_bitmask(1, m.vocab_size)
    m.fill_next_token_bitmask(bm)
    return (bm.tobytes(), m.can_terminate(), m.is_terminated(), m.num_rollback_steps,
            m.find_jump_forward_bytes())
