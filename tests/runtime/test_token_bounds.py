"""Per-rule token bounds (`name[max_tokens=N]`, `Rule.max_tokens`): at most N tokens begin
inside an occurrence of the rule, which ends where it first can once its N-th token is done.

Exactness is checked against a plain reference written from that definition alone (the
`regex` package for the rule's body, token starts counted from the steps taken) on the small
vocabulary, every mask compared token by token, EOS included, along random walks that mix
tokens, text steps (`accept_string`, which begins no token), rollbacks and forks; bodies that
can end everywhere (free text: the bound is exact) and bodies that cannot (the occurrence runs
on to its first possible end).
"""
from __future__ import annotations

import random

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grammask.compiler import GrammarError, compile_gbnf, compile_lark
from grammask.runtime import CompiledGrammar, Matcher

from ..support.masks import mask_of
from ..support.vocabularies import EOS, small_vocabulary

# (GBNF body of the bounded rule, the same language as a `regex` pattern over bytes)
BODIES = [
    ('[a-z]*', rb"[a-z]*"),
    ('[a-z]+ "."', rb"[a-z]+\."),
    ('"ab"+', rb"(?:ab)+"),
    ('([a-c] | "中")* "!"?', rb"(?:[a-c]|\xe4\xb8\xad)*!?"),
    ('"x" [0-9]* "y"', rb"x[0-9]*y"),
]
OPEN, CLOSE = b"<", b">"


def _grammar(body: str, bound: int) -> str:
    return f'root ::= "<" r ">"\nr[max_tokens={bound}] ::= {body}\n'


def reference(steps: list[tuple[bytes, bool]], pattern: bytes, bound: int,
              complete: bool = False) -> bool:
    """Whether the text of `steps` ((bytes, whether a token)) is a viable prefix (`complete`:
    a whole text) of "<" R ">", R's occurrence under the bound (module docstring)."""
    text, starts = b"", []
    for data, token in steps:
        if token:
            starts.append(len(text))
        text += data
    o = len(OPEN)
    if not text.startswith(OPEN):
        return not complete and OPEN.startswith(text)
    later = [p for p in starts if p >= o]
    d = later[bound] if len(later) > bound else None

    def member(p: int) -> bool:
        return regex.fullmatch(pattern, text[o:p]) is not None

    def ended_late(e: int) -> bool:
        return d is not None and any(member(p) for p in range(d, e))

    for e in range(o, len(text) + 1):
        if member(e) and not ended_late(e):
            rest = text[e:]
            if rest == CLOSE if complete else CLOSE.startswith(rest):
                return True
    if complete or regex.fullmatch(pattern, text[o:], partial=True) is None:
        return False
    return not ended_late(len(text) + 1)


def _id(vocab, data: bytes) -> int:  # type: ignore[no-untyped-def]
    return next(t for t in range(vocab.size) if vocab.token_bytes(t) == data)


def _expected(vocab, steps, pattern: bytes, bound: int) -> set[int]:  # type: ignore[no-untyped-def]
    out = {t for t in range(vocab.size) if vocab.token_bytes(t)
           and reference(steps + [(vocab.token_bytes(t), True)], pattern, bound)}
    if reference(steps, pattern, bound, complete=True):
        out.add(EOS)
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(which=st.integers(0, len(BODIES) - 1), bound=st.integers(0, 4),
       seed=st.integers(0, 2**16))
def test_bounded_masks_are_exact(which: int, bound: int, seed: int) -> None:
    body, pattern = BODIES[which]
    vocab = small_vocabulary()
    m = Matcher(compile_gbnf(_grammar(body, bound), vocab))
    rng = random.Random(seed)
    steps: list[tuple[bytes, bool]] = []
    history: list[list[tuple[bytes, bool]]] = []
    for _ in range(14):
        allowed = mask_of(m)
        assert allowed == _expected(vocab, steps, pattern, bound), (body, bound, steps)
        assert m.can_terminate() == reference(steps, pattern, bound, complete=True)
        choices = sorted(allowed - {EOS})
        if not choices:
            break
        roll = rng.random()
        if roll < 0.1 and history:
            back = rng.randint(1, len(history))
            m.rollback(back)
            steps = history[-back]
            del history[-back:]
            continue
        if roll < 0.2:
            fork = m.fork()
            assert mask_of(fork) == allowed
        history.append(list(steps))
        multi = [t for t in choices if len(vocab.token_bytes(t)) > 1]
        tid = rng.choice(multi if multi and rng.random() < 0.5 else choices)
        data = vocab.token_bytes(tid)
        if roll > 0.9 and data.isascii():
            assert m.accept_string(data)  # text: begins no token
            steps = steps + [(data, False)]
        else:
            assert m.accept_token(tid)
            steps = steps + [(data, True)]


def test_free_text_ends_exactly_at_its_bound() -> None:
    vocab = small_vocabulary()
    m = Matcher(compile_gbnf(_grammar("[a-z]*", 2), vocab))
    for t in (b"<", b"ab", b"c"):  # "<" then two tokens inside
        assert m.accept_token(_id(vocab, t))
    assert mask_of(m) == {_id(vocab, b">")}
    m.rollback(1)
    assert m.accept_string(b"abc")  # text steps begin no token
    assert _id(vocab, b"a") in mask_of(m)


def test_a_token_across_the_start_does_not_count() -> None:
    # "<a" begins before the occurrence: its "a" is inside, but the token is not counted.
    vocab = small_vocabulary()
    m = Matcher(compile_gbnf('root ::= "<" r ">"\nr[max_tokens=1] ::= [a-z]*\n', vocab))
    assert m.accept_token(_id(vocab, b"<")) and m.accept_token(_id(vocab, b"ab"))
    assert mask_of(m) == {_id(vocab, b">")}


def test_lark_and_gbnf_bounds_agree() -> None:
    vocab = small_vocabulary()
    g = Matcher(compile_gbnf('root ::= "<" r ">"\nr[max_tokens=2] ::= [a-z]*\n', vocab))
    lark = Matcher(compile_lark('start: "<" r ">"\nr[max_tokens=2]: /[a-z]*/\n', vocab))
    for t in (b"<", b"ab", b"a"):
        assert mask_of(g) == mask_of(lark)
        assert g.accept_token(_id(vocab, t)) and lark.accept_token(_id(vocab, t))
    assert mask_of(g) == mask_of(lark) == {_id(vocab, b">")}


@pytest.mark.parametrize("text, message", [
    ('root ::= r\nr[max_tokens=x] ::= "a"\n', "max_tokens must be an integer"),
    ('root ::= r\nr[max_tokens] ::= "a"\n', "max_tokens needs a value"),
    ('root ::= r\nr[max_tokens=2] ::= "a" r?\n', "regular body"),
])
def test_bad_bounds_are_errors_at_the_option(text: str, message: str) -> None:
    with pytest.raises(GrammarError, match=message) as info:
        compile_gbnf(text, small_vocabulary())
    assert (info.value.line, info.value.column) == (2, 2)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(which=st.integers(0, len(BODIES) - 1), bound=st.integers(0, 3),
       extra=st.integers(0, 4), seed=st.integers(0, 2**16))
def test_bounds_under_a_token_budget(which: int, bound: int, extra: int, seed: int) -> None:
    # A token is allowed under the output's budget exactly when the grammar allows it and the
    # text can end in the tokens left after it (`completion_cost`).
    body, _ = BODIES[which]
    vocab = small_vocabulary()
    compiled = compile_gbnf(_grammar(body, bound), vocab)
    budget = Matcher(compiled).completion_cost() + extra
    m, plain = Matcher(compiled, max_tokens=budget), Matcher(compiled)
    rng = random.Random(seed)
    for _ in range(budget):
        allowed, grammar = mask_of(m), mask_of(plain) - {EOS}
        left = m.tokens_left
        for t in grammar:
            after = plain.fork()
            assert after.accept_token(t)
            assert (t in allowed) == (after.completion_cost() <= left - 1), (body, t)
        choices = sorted(allowed - {EOS})
        if not choices:
            assert EOS in allowed
            break
        tid = rng.choice(choices)
        assert m.accept_token(tid) and plain.accept_token(tid)


def test_bounds_survive_serialization() -> None:
    vocab = small_vocabulary()
    compiled = compile_gbnf(_grammar('[a-z]+ "."', 1), vocab)
    loaded = CompiledGrammar.from_bytes(compiled.to_bytes(), vocab)
    a, b = Matcher(compiled), Matcher(loaded)
    for t in (b"<", b"ab", b"a"):
        assert mask_of(a) == mask_of(b)
        assert a.accept_token(_id(vocab, t)) and b.accept_token(_id(vocab, t))
    mask = mask_of(a)
    assert mask == mask_of(b)
    # past its bound the occurrence runs on to its first end: letters, then "." ends it
    assert _id(vocab, b"b") in mask and _id(vocab, b".") in mask and _id(vocab, b".5") not in mask
