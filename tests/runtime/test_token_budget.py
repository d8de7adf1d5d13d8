"""Token budgets: `Matcher(max_tokens=N)` lets an output that follows the masks end within N
tokens, and refuses exactly the tokens after which no completion fits.

Exactness is checked against the plain reference recognizer (`ReferenceRecognizer.
completion_bytes`, its own fixpoint over its own Earley chart) on random grammars over a
vocabulary with every single byte, where a completion's tokens are its bytes; the promise
(walks end in time, masks never empty) on the corpus grammars over the default vocabulary,
with the outputs checked by `re`, `json` and `jsonschema`.
"""
from __future__ import annotations

import json
import random
import re

import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grammask.compiler import compile_gbnf, compile_grammar, compile_json_schema, compile_regex
from grammask.runtime import Matcher, Vocabulary, allocate_token_bitmask

from ..support.cfg_strategies import grammars
from ..support.grammars import JSON_GBNF, RECORD_REGEX
from ..support.reference_earley import ReferenceRecognizer
from ..support.vocabularies import EOS, small_vocabulary


def _bits(m: Matcher, size: int) -> np.ndarray:
    bm = allocate_token_bitmask(1, size)
    m.fill_next_token_bitmask(bm)
    return np.unpackbits(bm[0].view(np.uint8), bitorder="little")[:size].astype(bool)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grammar=grammars(), seed=st.integers(0, 2**16), extra=st.integers(0, 5),
       kind=st.sampled_from([None, "pushdown"]))
def test_budget_masks_are_exact(grammar, seed: int, extra: int, kind) -> None:  # type: ignore[no-untyped-def]
    vocab = small_vocabulary()
    compiled = compile_grammar(grammar, vocab, kind=kind)
    ref = ReferenceRecognizer(grammar)
    shortest = ref.completion_bytes(b"")
    assert shortest is not None
    budget = shortest + extra
    m = Matcher(compiled, max_tokens=budget)
    plain = Matcher(compiled)
    tokens = compiled.spelling.list
    rng = random.Random(seed)
    text = b""
    for used in range(budget + 1):
        left = budget - used
        assert m.tokens_left == left
        bits, allowed = _bits(m, vocab.size), _bits(plain, vocab.size)
        expected = allowed.copy()
        for tid in np.flatnonzero(allowed):
            if tid != EOS:
                cost = ref.completion_bytes(text + tokens[tid])
                expected[tid] = cost is not None and cost <= left - 1
        assert np.array_equal(bits, expected), (text, left, np.flatnonzero(bits != expected))
        assert bits.any()
        choices = [t for t in np.flatnonzero(bits) if t != EOS]
        if bits[EOS] and (not choices or rng.random() < 0.2):
            assert ref.complete(text)
            return
        tid = int(rng.choice(choices))
        assert m.accept_token(tid) and plain.accept_token(tid)
        text += tokens[tid]
    raise AssertionError("a walk went past its budget")


def test_a_budget_refuses_the_tokens_it_masks() -> None:
    vocab = small_vocabulary()
    compiled = compile_gbnf('root ::= "(" root ")" | "x"', vocab)
    m = Matcher(compiled, max_tokens=5)
    for t in b"((":
        assert m.accept_token(t)
    assert not m.accept_token(ord("("))  # "(((" needs 4 more: 3 tokens are left
    assert m.validate_tokens([ord("x"), ord(")"), ord(")"), EOS]) == 4
    assert not m.accept_string("(")  # a string uses no budget, but must leave enough
    assert m.accept_string("x)")
    assert m.tokens_left == 3 and m.accept_token(ord(")"))
    assert m.can_terminate() and m.tokens_left == 2
    m.rollback(2)
    assert m.tokens_left == 3
    fork = m.fork()
    fork.reset()
    assert fork.tokens_left == 5


def test_draft_rows_equal_steps_under_a_budget() -> None:
    vocab = small_vocabulary()
    compiled = compile_gbnf('root ::= "[" (root ("," root)*)? "]"', vocab)
    m = Matcher(compiled, max_tokens=9)
    draft = [ord(c) for c in "[[],[]]"]
    rows = allocate_token_bitmask(len(draft) + 1, vocab.size)
    assert m.fill_draft_bitmasks(draft, rows) == len(draft) + 1
    step = Matcher(compiled, max_tokens=9)
    for k, t in enumerate(draft):
        one = allocate_token_bitmask(1, vocab.size)
        step.fill_next_token_bitmask(one)
        assert np.array_equal(one[0], rows[k]), k
        assert step.accept_token(t)
    assert m.tokens_left == 9


def test_budget_errors(vocab: Vocabulary) -> None:
    compiled = compile_regex("[a-z]{3}@x", vocab)
    with pytest.raises(ValueError, match="shortest output of this grammar takes 5 tokens"):
        Matcher(compiled, max_tokens=4)
    with pytest.raises(ValueError, match="must be non-negative"):
        Matcher(compiled, max_tokens=-1)
    with pytest.raises(TypeError, match="max_tokens must be an int"):
        Matcher(compiled, max_tokens=2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="healing and max_tokens"):
        Matcher(compiled, max_tokens=9, healing=b"a")
    # No token of its own for "q": every output needs one, and none is counted.
    tokens = [bytes([b]) for b in range(256) if b != ord("q")] + [b"qq", b"<eos>"]
    lacking = Vocabulary.from_token_bytes(tokens, len(tokens) - 1)
    with pytest.raises(ValueError, match="no output of this grammar is counted"):
        Matcher(compile_regex("q+", lacking), max_tokens=50)
    assert Matcher(compiled).tokens_left is None


SCHEMA = {"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 12},
    "tags": {"type": "array", "items": {"type": "string"}},
    "child": {"$ref": "#"}}, "required": ["name", "tags"]}


@pytest.fixture(scope="module")
def corpus(vocab: Vocabulary) -> list:
    return [
        (compile_regex(RECORD_REGEX, vocab), lambda s: re.fullmatch(RECORD_REGEX, s)),
        (compile_gbnf(JSON_GBNF, vocab), json.loads),
        (compile_json_schema(SCHEMA, vocab),
         lambda s: jsonschema.validate(json.loads(s), SCHEMA) is None),
    ]


@settings(max_examples=30, deadline=None)
@given(which=st.integers(0, 2), seed=st.integers(0, 2**32 - 1), extra=st.integers(0, 40))
def test_walks_end_within_their_budget(vocab: Vocabulary, corpus: list, which: int, seed: int,
                                       extra: int) -> None:
    compiled, check = corpus[which]
    rng = random.Random(seed)
    shortest = Matcher(compiled).completion_cost()
    assert shortest is not None
    m = Matcher(compiled, max_tokens=shortest + extra)
    eos = set(vocab.eos_token_ids.tolist())
    ids: list[int] = []
    while True:
        bits = _bits(m, vocab.size)
        assert bits.any()
        choices = [t for t in np.flatnonzero(bits) if t not in eos]
        if not choices or (m.can_terminate() and rng.random() < 0.1):
            break
        # Favour long tokens now and then: they are the ones that overrun a budget.
        if rng.random() < 0.5:
            choices.sort(key=lambda t: -len(compiled.spelling.list[t]))
            choices = choices[:20]
        tid = int(rng.choice(choices))
        assert m.accept_token(tid)
        ids.append(tid)
        assert m.completion_cost() <= m.tokens_left
    assert m.can_terminate() and len(ids) <= shortest + extra
    check(vocab.decode(ids).decode("utf-8"))


@pytest.mark.parametrize("kind", ["dfa", "pushdown"])
def test_bytes_without_a_token_of_their_own_are_not_counted(kind: str) -> None:
    # No token spells "q" alone: after "x" no completion is counted, so "x" is masked under
    # a budget (and refused), while "xq" (finished by "y") is not.
    tokens = [bytes([b]) for b in range(256) if b != ord("q")] + [b"xq", b"<eos>"]
    vocab = Vocabulary.from_token_bytes(tokens, len(tokens) - 1)
    compiled = compile_gbnf('root ::= "a" | "x" "q" "y"', vocab, kind=kind)
    x, xq = tokens.index(b"x"), tokens.index(b"xq")
    plain, m = Matcher(compiled), Matcher(compiled, max_tokens=5)
    assert plain.completion_cost() == 1 and _bits(plain, vocab.size)[x]
    bits = _bits(m, vocab.size)
    assert not bits[x] and bits[xq] and bits[ord("a")]
    assert not m.accept_token(x) and m.accept_token(xq) and m.completion_cost() == 1
    assert plain.accept_token(x) and plain.completion_cost() is None


def test_a_token_reference_is_one_token() -> None:
    vocab = small_vocabulary()
    compiled = compile_gbnf('root ::= "ab" <[301]> "c"', vocab)
    assert Matcher(compiled).completion_cost() == 4
    with pytest.raises(ValueError, match="takes 4 tokens"):
        Matcher(compiled, max_tokens=3)
    m = Matcher(compiled, max_tokens=4)
    bits = _bits(m, vocab.size)
    assert bits[ord("a")] and not bits[301]
    assert m.accept_token(ord("a")) and m.accept_token(ord("b")) and m.accept_token(301)
    assert m.completion_cost() == 1 and m.accept_token(ord("c")) and m.can_terminate()
