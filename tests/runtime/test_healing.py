"""Token healing: `Vocabulary.heal` takes the prompt's last tokens off, and a matcher with
healing bytes h allows exactly the outputs h·L (h written again in any tokens, then the
grammar's language): every mask equals that definition, checked against a plain matcher."""
from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler import compile_gbnf, compile_json_schema, compile_regex
from grammask.runtime import Matcher, Vocabulary, allocate_token_bitmask

from ..support.grammars import JSON_GBNF, RECORD_REGEX


@pytest.fixture(scope="module")
def grammars(vocab: Vocabulary) -> list:
    return [compile_regex(RECORD_REGEX, vocab), compile_gbnf(JSON_GBNF, vocab),
            compile_json_schema({"type": "object", "properties": {
                "url": {"type": "string", "pattern": "^https?://[a-z]+$"}}}, vocab),
            compile_regex(r"[a-z ]{0,12}", vocab)]


def _bits(m: Matcher, size: int) -> np.ndarray:
    bm = allocate_token_bitmask(1, size)
    m.fill_next_token_bitmask(bm)
    return np.unpackbits(bm[0].view(np.uint8), bitorder="little")[:size].astype(bool)


def _viable(compiled, text: bytes) -> bool:  # type: ignore[no-untyped-def]
    return Matcher(compiled).accept_string(text) if text else True


HEALS = [b" ", b"{", b'{"', b"http", b'{"url": "ht', b"ab", b"\n", b'{"id": 1']


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), which=st.integers(0, 3), heal=st.sampled_from(HEALS))
def test_healed_masks_are_the_definition(vocab: Vocabulary, grammars: list, seed: int,
                                         which: int, heal: bytes) -> None:
    compiled = grammars[which]
    rng = random.Random(seed)
    tokens = compiled.spelling.list
    eos = set(vocab.eos_token_ids.tolist())
    m = Matcher(compiled, healing=heal)
    first = _bits(m, vocab.size)
    written = b""
    for _ in range(6):
        bits = _bits(m, vocab.size)
        if len(written) < len(heal):
            rest = heal[len(written):]
            expected = np.zeros(vocab.size, dtype=bool)
            for tid, t in enumerate(tokens):
                if t and (rest.startswith(t) or (t.startswith(rest) and len(t) > len(rest))):
                    expected[tid] = rest.startswith(t) or _viable(compiled, t[len(rest):])
            assert np.array_equal(bits, expected), written
        else:
            plain = Matcher(compiled)
            assert plain.accept_string(written[len(heal):]) or written == heal
            assert np.array_equal(bits, _bits(plain, vocab.size)), written
        allowed = [t for t in np.flatnonzero(bits).tolist() if t not in eos]
        if not allowed:
            break
        tid = rng.choice(allowed)
        assert m.accept_token(tid)
        written += tokens[tid]
    m.rollback(m.num_rollback_steps)
    assert np.array_equal(_bits(m, vocab.size), first)


def test_healing_steps_fork_roll_back_and_jump(vocab: Vocabulary) -> None:
    compiled = compile_regex(r"tps?://[a-z]+", vocab)  # what follows a prompt ending in "ht"
    m = Matcher(compiled, healing="ht")
    assert not m.can_terminate() and m.validate_tokens([int(vocab.eos_token_ids[0])]) == 0
    assert m.find_jump_forward_string() == "http"
    assert m.accept_string("h")
    f = m.fork()
    assert f.accept_string("ttps://")  # finishes h, then the grammar's text
    assert not m.accept_string("tx")
    assert m.accept_string("t") and m.accept_string("tp://ab")
    assert m.can_terminate()
    m.rollback(2)
    assert m.find_jump_forward_string() == "ttp"
    assert f.accept_string("ab") and f.can_terminate()
    with pytest.raises(TypeError, match="healing"):
        Matcher(compiled, healing=1)  # type: ignore[arg-type]


def test_heal_takes_off_what_a_longer_token_can_write(vocab: Vocabulary) -> None:
    for text in ['url: "http', "The answer is", '{"a": ', "x = 1\n", "ab cd"]:
        ids = vocab.encode(text)
        kept, removed = vocab.heal(ids)
        assert vocab.decode(kept) + removed == text.encode() and len(kept) >= len(ids) - 1
        assert removed == b"" or len(kept) == len(ids) - 1
    ids = vocab.encode('url: "http')
    assert vocab.heal(ids) == (ids[:-1], b"http")
    assert vocab.heal(ids, max_tokens=0) == (ids, b"")
    kept, removed = vocab.heal(ids, max_tokens=3)
    assert vocab.decode(kept) + removed == b'url: "http' and len(removed) > 4
    end = int(vocab.eos_token_ids[0])
    assert vocab.heal([*ids, end]) == ([*ids, end], b"")  # a special token stays
    with pytest.raises(ValueError):
        vocab.heal([vocab.size])
    with pytest.raises(ValueError):
        vocab.heal(ids, max_tokens=-1)
