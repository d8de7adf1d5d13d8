"""Tests for the toy-model demo (grammask.compiler.cli.demo and its JSON Schema part,
grammask.compiler.cli.demo_schema)."""
from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest
from grammask.compiler import GrammarError
from grammask.compiler.cli.demo import (
    DEFAULT_PATTERN,
    DemoResult,
    run_demo,
)
from grammask.compiler.cli.toy_model import TARGET, ToyModel, generate, sample_token
from grammask.compiler.cli.demo_schema import (
    PERSON_SCHEMA,
    PERSON_TARGET,
    SchemaDemoResult,
    format_schema_report,
    person_problem,
    run_schema_demo,
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
    return run_demo(n=30, seed=0, out=out, schema_n=8), out.getvalue()


def untimed(d: object) -> object:
    """`d` without its timing fields, at any depth."""
    if isinstance(d, dict):
        return {k: untimed(v) for k, v in d.items() if k not in TIMING_FIELDS}
    return d


def outcome(result: DemoResult) -> object:
    return untimed(result.to_dict())


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
    again = run_demo(n=30, seed=0, out=None, schema_n=8)
    assert outcome(again) == outcome(small[0])
    other = run_demo(n=30, seed=1, out=None, schema_n=0)
    first = outcome(small[0])
    assert isinstance(first, dict)
    assert outcome(other) != {**first, "schema": None}


def test_timings_reported(small: tuple[DemoResult, str]) -> None:
    result, text = small
    assert result.constrained_tokens >= 30
    assert result.mask_us_mean > 0 and result.mask_us_median > 0
    assert result.accept_us_mean > 0
    assert result.vocab_size == 151_851
    for needle in ("151,851", "unconstrained", "constrained     valid 30/30 (100.0%)",
                   "mask fill", "median", "accept", "wall time", "JSON mode ({})",
                   "strict schema", "valid person"):
        assert needle in text
    assert text.rstrip("\n").splitlines()[-1].startswith("  wall time ")


def test_repair_and_versioning(small: tuple[DemoResult, str]) -> None:
    """Failing free answers with a valid answer inside are extracted (each fully matching the
    pattern), and the person schema's changes get their witnesses."""
    result, text = small
    repair = result.repair
    assert repair is not None and repair.failing == 30 - result.unconstrained_valid - \
        result.unconstrained_capped
    assert 0 < repair.recovered <= repair.failing and repair.recovered_checked == repair.recovered
    for answer, found in repair.examples:
        assert found in answer and re.fullmatch(DEFAULT_PATTERN, found)
    nullable, cats = repair.changes["age nullable"], repair.changes["pets: cat only"]
    assert nullable["old-not-new"] is None and nullable["new-not-old"] is not None
    assert json.loads(nullable["new-not-old"][0])["age"] is None
    assert nullable["new-not-old"][1] == "/age"
    assert cats["old-not-new"] is not None and cats["new-not-old"] is None
    assert "dog" in json.loads(cats["old-not-new"][0])["pets"]
    assert "breaks old answers" in text and "backward compatible" in text


def test_json_round_trip(small: tuple[DemoResult, str]) -> None:
    d = json.loads(json.dumps(small[0].to_dict()))
    assert d["constrained_rate"] == 1.0
    assert d["unconstrained_failures"][0].keys() == {"text", "count"}
    assert d["schema"]["strict"]["answers"][0].keys() == {"text", "count"}


def test_lesson_ballpark() -> None:
    result = run_demo(n=200, seed=0, out=None, schema_n=0)
    assert result.schema is None
    assert 0.5 <= result.unconstrained_rate <= 0.8
    assert result.constrained_rate == 1.0
    assert result.unconstrained_capped == 0


def test_custom_pattern() -> None:
    result = run_demo(n=10, seed=3, pattern=r"[0-9]+", out=None, schema_n=0)
    assert result.constrained_valid == 10
    assert result.unconstrained_valid == 0
    assert all(t.isdigit() for t, _ in result.constrained_answers)


def test_rejected_pattern_raises() -> None:
    with pytest.raises(GrammarError) as info:
        run_demo(n=2, pattern="a(?=b)", out=None)
    with pytest.raises(ValueError):
        run_demo(n=2, out=None, schema_n=-1)
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


# ---------------------------------------------------------------- JSON mode vs strict schema

@pytest.fixture(scope="module")
def schema_run(vocab: Vocabulary) -> SchemaDemoResult:
    return run_schema_demo(vocab, n=30, seed=0)


def test_json_mode_parses_but_misses_fields(schema_run: SchemaDemoResult) -> None:
    m = schema_run.json_mode
    assert m.kind == "pushdown" and m.finished >= 25
    assert m.parsed == m.finished
    assert m.valid <= 2 and dict(m.problems).get("missing 'age'", 0) >= 20
    for text, _ in m.answers:
        json.loads(text)


def test_strict_schema_answers_are_all_persons(schema_run: SchemaDemoResult) -> None:
    m = schema_run.strict
    assert m.kind == "dfa" and m.finished >= 15
    assert m.valid == m.parsed == m.finished and m.problems == []
    for text, _ in m.answers:
        value = json.loads(text)
        assert person_problem(value) is None and isinstance(value["age"], int)


def test_schema_part_is_seeded(vocab: Vocabulary, schema_run: SchemaDemoResult) -> None:
    again = run_schema_demo(vocab, n=30, seed=0)
    assert untimed(again.to_dict()) == untimed(schema_run.to_dict())
    assert untimed(run_schema_demo(vocab, n=30, seed=5).to_dict()) != untimed(
        schema_run.to_dict())
    with pytest.raises(ValueError):
        run_schema_demo(vocab, n=0)


def test_schema_report(schema_run: SchemaDemoResult) -> None:
    text = format_schema_report(schema_run)
    m = schema_run.strict
    assert f"valid person {m.valid}/{m.finished} (100.0%)" in text
    assert f"finished {schema_run.json_mode.finished}" in text
    assert PERSON_TARGET in text and "missing 'age'" in text
    assert json.loads(json.dumps(schema_run.to_dict()))["json_mode"]["schema"] == "{}"


@pytest.mark.parametrize("value, problem", [
    ({"name": "Ada", "age": 3}, None),
    ({"name": "Ada", "age": 3.0, "pets": ["dog", "cat"]}, None),
    ({"name": "Ada"}, "missing 'age'"),
    ({"age": 3}, "missing 'name'"),
    ({"name": 1, "age": 3}, "'name' is int, not a string"),
    ({"name": "A", "age": True}, "'age' is bool, not an integer"),
    ({"name": "A", "age": 2.5}, "'age' is float, not an integer"),
    ({"name": "A", "age": 2, "pets": ["cow"]}, "'pets' is not an array of \"cat\" and \"dog\""),
    ({"name": "A", "age": 2, "job": "x"}, "unexpected property 'job'"),
    ([1], "not an object but list"),
])
def test_person_problem(value: object, problem: str | None) -> None:
    assert person_problem(value) == problem


def test_person_problem_agrees_with_jsonschema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(PERSON_SCHEMA)
    for value in ({"name": "Ada", "age": 3}, {"name": "Ada"}, {"name": "A", "age": True},
                  {"name": "A", "age": 2, "pets": ["cow"]}, {"name": "A", "age": 2, "x": 1},
                  {"name": "A", "age": 2.0}, "Ada", None):
        assert (person_problem(value) is None) == validator.is_valid(value), value


def test_respell_offers_the_next_character_alone(vocab: Vocabulary) -> None:
    plain = ToyModel(vocab, seed=0, target=PERSON_TARGET)
    respelled = ToyModel(vocab, seed=0, target=PERSON_TARGET, respell=0.05)
    prefix = vocab.encode('{"name": "Ada')
    quote = vocab.encode('"')
    assert len(quote) == 1
    assert quote[0] not in plain.candidates(prefix)
    assert respelled.candidates(prefix)[quote[0]] == pytest.approx(0.05)
    closing = vocab.encode('{"name": "Ada"')
    assert respelled.candidates(closing) == plain.candidates(closing)
