"""What a serving engine calls: draft verification (`validate_tokens`, `fill_draft_bitmasks`),
`fork`, and batch fills, each equal to the one-step-at-a-time calls it stands for."""
from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler import compile_gbnf, compile_json_schema, compile_regex
from grammask.runtime import (
    Matcher,
    Vocabulary,
    allocate_token_bitmask,
    batch_fill_next_token_bitmask,
)

from ..support.grammars import JSON_GBNF, RECORD_REGEX

SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
                                           "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
                                           "next": {"$ref": "#"}},
          "required": ["name"], "additionalProperties": False}


@pytest.fixture(scope="module")
def grammars(vocab: Vocabulary) -> list:
    return [compile_regex(RECORD_REGEX, vocab), compile_gbnf(JSON_GBNF, vocab),
            compile_json_schema(SCHEMA, vocab)]


def _allowed(m: Matcher, size: int) -> np.ndarray:
    bm = allocate_token_bitmask(1, size)
    m.fill_next_token_bitmask(bm)
    return np.flatnonzero(np.unpackbits(bm[0].view(np.uint8), bitorder="little")[:size])


def _walked(compiled, rng: random.Random, steps: int) -> tuple[Matcher, list[int]]:
    """A matcher some allowed tokens in (EOS never taken), and tokens to draft from there:
    mostly allowed ones, now and then any token or EOS."""
    size = compiled.vocab.size
    eos = int(compiled.vocab.eos_token_ids[0])
    m = Matcher(compiled)
    for _ in range(steps):
        allowed = [t for t in _allowed(m, size).tolist() if t != eos]
        if not allowed:
            break
        m.accept_token(rng.choice(allowed))
    probe = m.fork()
    draft = []
    for _ in range(rng.randint(0, 6)):
        r = rng.random()
        if r < 0.1:
            tok = eos
        elif r < 0.2 or probe.is_terminated():
            tok = rng.randrange(size)
        else:
            tok = int(rng.choice(_allowed(probe, size).tolist()))
        draft.append(tok)
        if not probe.is_terminated():
            probe.accept_token(tok)
    return m, draft


def _state(m: Matcher, size: int) -> tuple:
    return (_allowed(m, size).tobytes(), m.can_terminate(), m.is_terminated(),
            m.num_rollback_steps)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), which=st.integers(0, 2))
def test_drafts_equal_sequential_accepts(grammars: list, seed: int, which: int) -> None:
    compiled = grammars[which]
    size = compiled.vocab.size
    rng = random.Random(seed)
    m, draft = _walked(compiled, rng, rng.randint(0, 12))
    before = _state(m, size)
    rows = allocate_token_bitmask(len(draft) + 2, size)
    rows[:] = 0x5A5A5A5A
    n_valid = m.validate_tokens(draft)
    n_rows = m.fill_draft_bitmasks(draft, rows, start_index=1)
    assert _state(m, size) == before  # both leave the matcher as it was
    # The same draft, one step at a time on a fork.
    f = m.fork()
    expected = allocate_token_bitmask(len(draft) + 1, size)
    accepted = 0
    for k in range(len(draft) + 1):
        f.fill_next_token_bitmask(expected, k)
        if k == len(draft) or f.is_terminated() or not f.accept_token(draft[k]):
            break
        accepted += 1
    assert n_valid == accepted
    assert n_rows == accepted + 1
    assert np.array_equal(rows[1:1 + n_rows], expected[:n_rows])
    assert (rows[0] == 0x5A5A5A5A).all() and (rows[1 + n_rows:] == 0x5A5A5A5A).all()
    # Rolling back the fork over its draft and across the history it was forked with.
    f.rollback(accepted)
    assert _state(f, size) == before
    back = rng.randint(0, m.num_rollback_steps)
    f.rollback(back)
    m.rollback(back)
    assert _state(f, size) == _state(m, size)


def test_draft_arguments_are_checked_before_anything_changes(grammars: list) -> None:
    m = Matcher(grammars[1])
    size = m.vocab_size
    rows = allocate_token_bitmask(3, size)
    with pytest.raises(ValueError, match="out of range"):
        m.fill_draft_bitmasks([0, 1, 2], rows)  # four rows needed
    with pytest.raises(ValueError, match="out of range"):
        m.validate_tokens([0, size])
    with pytest.raises(TypeError):
        m.validate_tokens("{}")
    with pytest.raises(TypeError):
        m.fill_draft_bitmasks([0.5], rows)
    with pytest.raises(ValueError):
        m.fill_draft_bitmasks([], rows, start_index=-1)
    assert not rows.any() and m.num_rollback_steps == 0
    assert m.fill_draft_bitmasks([], rows, start_index=2) == 1 and rows[2].any()


def test_a_terminated_matcher_validates_nothing_and_drafts_eos_rows(grammars: list) -> None:
    compiled = grammars[0]
    vocab = compiled.vocab
    m = Matcher(compiled)
    assert m.accept_string('{"id": 1, "tags": []}')
    eos = int(vocab.eos_token_ids[0])
    assert m.validate_tokens([eos, eos]) == 1
    assert m.accept_token(eos) and m.is_terminated()
    assert m.validate_tokens([eos]) == 0
    rows = allocate_token_bitmask(2, vocab.size)
    assert m.fill_draft_bitmasks([eos], rows) == 1
    bits = np.flatnonzero(np.unpackbits(rows[0].view(np.uint8), bitorder="little"))
    assert bits.tolist() == sorted(vocab.eos_token_ids.tolist())


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), threads=st.sampled_from([1, 2, 3, 8]))
def test_batch_rows_equal_one_by_one_fills(grammars: list, seed: int, threads: int) -> None:
    rng = random.Random(seed)
    matchers = [_walked(rng.choice(grammars), rng, rng.randint(0, 10))[0]
                for _ in range(rng.randint(0, 12))]
    n = len(matchers) + rng.randint(1, 3)
    indices = rng.sample(range(n), len(matchers))
    size = grammars[0].vocab.size
    batch = allocate_token_bitmask(n, size)
    batch_fill_next_token_bitmask(matchers, batch, indices, max_threads=threads)
    expected = allocate_token_bitmask(n, size)
    for m, i in zip(matchers, indices):
        m.fill_next_token_bitmask(expected, i)
    assert np.array_equal(batch, expected)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_steady_batch_follows_its_matchers(vocab: Vocabulary, grammars: list,
                                              threads: int) -> None:
    """One batch of matchers filled step after step, as a server does (its plan kept between
    calls): rows equal one-by-one fills while the matchers grow their arrays, meet rules and
    states for the first time, reach EOS and roll back; a DFA and a budgeted matcher ride
    along, as do the DFA matchers of a regex; into a whole bitmask and into every other row of
    one (not one array: filled one by one)."""
    rng = random.Random(threads)
    json_gbnf = compile_gbnf(JSON_GBNF, vocab)
    docs = [vocab.encode('{"k%d": [%s], "s": "%s"}' % (i, ", ".join(str(j) for j in range(i * 9)),
                                                    "x" * (i * 13))) for i in range(6)]
    matchers = [Matcher(json_gbnf) for _ in docs] + [
        Matcher(grammars[0]), Matcher(grammars[0]), Matcher(grammars[1], max_tokens=400),
        Matcher(grammars[2])]
    eos = int(vocab.eos_token_ids[0])
    batch = allocate_token_bitmask(len(matchers) + 2, vocab.size)
    expected = allocate_token_bitmask(len(matchers) + 2, vocab.size)
    rows = list(range(2, len(matchers) + 2))
    for step in range(max(map(len, docs)) + 2):
        batch_fill_next_token_bitmask(matchers, batch, rows, max_threads=threads)
        for m, r in zip(matchers, rows):
            m.fill_next_token_bitmask(expected, r)
        assert np.array_equal(batch, expected), step
        every_other = allocate_token_bitmask(2 * len(matchers) + 4, vocab.size)[::2]
        batch_fill_next_token_bitmask(matchers, every_other, rows, max_threads=threads)
        assert np.array_equal(every_other, expected), step
        for i, m in enumerate(matchers):
            if i < len(docs):
                if step < len(docs[i]):
                    assert m.accept_token(docs[i][step])
                elif not m.is_terminated():
                    assert m.accept_token(eos)
                elif rng.random() < 0.5:
                    m.rollback(1)
            elif not m.is_terminated():
                allowed = _allowed(m, vocab.size).tolist()
                m.accept_token(rng.choice(allowed))


def test_batch_arguments_are_checked_before_any_row_is_written(grammars: list) -> None:
    size = grammars[0].vocab.size
    a, b = Matcher(grammars[0]), Matcher(grammars[1])
    bm = allocate_token_bitmask(2, size)
    for args, kwargs, error in [
        (([a, a], bm), {}, ValueError),                   # one matcher twice
        (([a, b], bm, [1, 1]), {}, ValueError),           # one row twice
        (([a, b], bm, [0, 2]), {}, ValueError),           # a row outside the bitmask
        (([a, b], bm, [0]), {}, ValueError),              # indices do not match
        (([a, b], bm, [0, True]), {}, TypeError),
        (([a, "b"], bm), {}, TypeError),
        ((a, bm), {}, TypeError),
        (([a, b], bm.astype(np.int64)), {}, TypeError),
        (([a, b], bm[:, :-1]), {}, ValueError),
        (([a, b], bm), {"max_threads": 0}, ValueError),
    ]:
        with pytest.raises(error):
            batch_fill_next_token_bitmask(*args, **kwargs)
        assert not bm.any()
    small = Matcher(compile_regex("ab", Vocabulary.from_token_bytes([b"a", b"b", b""], [2])))
    with pytest.raises(ValueError, match="vocabularies differ"):
        batch_fill_next_token_bitmask([a, small], bm)
    batch_fill_next_token_bitmask([], bm)
    assert not bm.any()
