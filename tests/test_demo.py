"""Tests for the toy-model demo (grammask.compiler.demo)."""
from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest
from grammask.compiler import GrammarError
from grammask.compiler.demo import (
    DEFAULT_PATTERN,
    TARGET,
    DemoResult,
    ToyModel,
    generate,
    run_demo,
    sample_token,
)
from grammask.runtime import Vocabulary

TIMING_FIELDS = {"vocab_load_s", "compile_ms", "mask_us_mean", "mask_us_median",
                 "accept_us_mean", "wall_s"}


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    return Vocabulary.default()


@pytest.fixture(scope="module")
def small() -> tuple[DemoResult, str]:
    out = io.StringIO()
    return run_demo(n=30, seed=0, out=out), out.getvalue()


def outcome(result: DemoResult) -> dict[str, object]:
    return {k: v for k, v in result.to_dict().items() if k not in TIMING_FIELDS}


def test_constrained_is_always_valid(small: tuple[DemoResult, str]) -> None:
    result, _ = small
    assert result.constrained_valid == 30
    assert result.constrained_rate == 1.0
    assert result.constrained_capped == 0
    assert all(re.fullmatch(DEFAULT_PATTERN, t) for t, _ in result.constrained_answers)


def test_unconstrained_is_sometimes_invalid(small: tuple[DemoResult, str]) -> None:
    result, _ = small
    assert 0 < result.unconstrained_valid < 30
    assert result.unconstrained_valid <= result.unconstrained_json_valid
    assert result.unconstrained_failures
    assert all(not re.fullmatch(DEFAULT_PATTERN, t) for t, _ in result.unconstrained_failures)


def test_deterministic_per_seed(small: tuple[DemoResult, str]) -> None:
    again = run_demo(n=30, seed=0, out=None)
    assert outcome(again) == outcome(small[0])
    other = run_demo(n=30, seed=1, out=None)
    assert outcome(other) != outcome(small[0])


def test_timings_reported(small: tuple[DemoResult, str]) -> None:
    result, text = small
    assert result.constrained_tokens >= 30
    assert result.mask_us_mean > 0 and result.mask_us_median > 0
    assert result.accept_us_mean > 0
    assert result.vocab_size == 151_851
    for needle in ("151,851", "unconstrained", "constrained     valid 30/30 (100.0%)",
                   "mask fill", "median", "accept", "wall time"):
        assert needle in text


def test_json_round_trip(small: tuple[DemoResult, str]) -> None:
    d = json.loads(json.dumps(small[0].to_dict()))
    assert d["constrained_rate"] == 1.0
    assert d["unconstrained_failures"][0].keys() == {"text", "count"}


def test_lesson_ballpark() -> None:
    result = run_demo(n=200, seed=0, out=None)
    assert 0.5 <= result.unconstrained_rate <= 0.8
    assert result.constrained_rate == 1.0
    assert result.unconstrained_capped == 0


def test_custom_pattern() -> None:
    result = run_demo(n=10, seed=3, pattern=r"[0-9]+", out=None)
    assert result.constrained_valid == 10
    assert result.unconstrained_valid == 0
    assert all(t.isdigit() for t, _ in result.constrained_answers)


def test_rejected_pattern_raises() -> None:
    with pytest.raises(GrammarError) as info:
        run_demo(n=2, pattern="a(?=b)", out=None)
    assert info.value.column == 2


def test_model_follows_the_usual_tokenization(vocab: Vocabulary) -> None:
    model = ToyModel(vocab, seed=0)
    script = vocab.encode(TARGET)
    for i, tok in enumerate([*script, vocab.eos_token_id]):
        weights = model.candidates(script[:i])
        assert max(weights, key=weights.__getitem__) == tok


def test_model_recovers_after_a_slip(vocab: Vocabulary) -> None:
    model = ToyModel(vocab, seed=0)

    def top(text: str) -> bytes:
        weights = model.candidates(vocab.encode(text))
        return vocab.token_bytes(max(weights, key=weights.__getitem__))

    assert top("Sure") in (b'{"', b"!", b",")
    assert top('Sure{"') == b"age"
    assert top('{"age": 47') == b"}"
    assert top('{"age":  4') == b"2"
    assert top('{"age": 42}\n') == vocab.token_bytes(vocab.eos_token_id)


def test_logits_are_vocabulary_wide_and_seeded(vocab: Vocabulary) -> None:
    a, b = ToyModel(vocab, seed=5), ToyModel(vocab, seed=5)
    la, lb = a.logits([]), b.logits([])
    assert la.shape == (vocab.size,) and la.dtype == np.float32
    np.testing.assert_array_equal(la, lb)
    assert not np.array_equal(a.logits([]), la)


def test_sample_token_respects_the_mask() -> None:
    rng = np.random.default_rng(0)
    logits = np.full(5000, -np.inf, dtype=np.float32)
    logits[[7, 2048, 4999]] = np.log([1.0, 2.0, 3.0])
    draws = np.bincount([sample_token(logits, rng) for _ in range(6000)], minlength=5000)
    assert draws.sum() == draws[[7, 2048, 4999]].sum()
    np.testing.assert_allclose(draws[[7, 2048, 4999]] / 6000, [1 / 6, 2 / 6, 3 / 6], atol=0.03)
    with pytest.raises(ValueError):
        sample_token(np.full(10, -np.inf, dtype=np.float32), rng)


def test_unconstrained_generation_stops_at_the_cap(vocab: Vocabulary) -> None:
    model = ToyModel(vocab, seed=0)
    g = generate(model, np.random.default_rng(0), None, max_tokens=3)
    assert len(g.tokens) <= 3
    assert g.finished or len(g.tokens) == 3
