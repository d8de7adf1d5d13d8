"""One-token steps (a single negated token reference, XGrammar's `exclude_token`): exactly one
token outside a set, read as the step where its id is allowed as well as by its own spelling
(`runtime/pushdown/one_token.py`).

Against a reference that spells each token every way it can be read (its text, a named or
control token's marker, or a step's marker where the token is allowed there) and matches the
spelled bytes with Python's `re`: every token sequence of up to four tokens over a small
vocabulary is accepted exactly when the reference accepts it, every mask on the way allows
exactly the tokens that keep the sequence viable (EOS exactly where it may end), also under a
token budget, after rollbacks and in a batch, and a serialized grammar reads the same.
"""
from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from grammask.compiler import GrammarError, compile_gbnf, compile_structural_tag
from grammask.runtime import (
    CompiledGrammar,
    Matcher,
    Vocabulary,
    allocate_token_bitmask,
    batch_fill_next_token_bitmask,
)

TOKENS: list[bytes | None] = [b"a", b"b", b"ab", b"c", b"ba", b"<s>", None, b"</s>"]
EOS, CONTROL = 7, 5
VOCAB = Vocabulary.from_token_bytes(TOKENS, EOS, special_token_ids=[CONTROL])
IDS = [t for t in range(len(TOKENS)) if t != EOS]


def mark(i: int) -> bytes:
    return b"\xff" + i.to_bytes(3, "big")


def step(j: int) -> str:
    """The regex of step j's marker (its id follows the vocabulary's)."""
    return re.escape(mark(VOCAB.size + j).decode("latin-1"))


# (grammar, the regex of its spelled language, excluded sets of its steps, named text tokens)
CASES = [
    ('root ::= ( !<[2]> | "ab" ) "c"', f"(?:{step(0)}|ab)c", [{2}], set()),
    ('root ::= "a" !<[0,1]>{1,2} "b"?', f"a(?:{step(0)}){{1,2}}b?", [{0, 1}], set()),
    ('root ::= !<[3]> !<[4]> | "ba" "c"', f"{step(0)}{step(1)}|bac", [{3}, {4}], set()),
    ('root ::= <[3]> !<[5]> "a"?', f"{re.escape(mark(3).decode('latin-1'))}c{step(0)}a?",
     [{5}], {3}),
    ('root ::= x x\nx ::= "a" | !<[0]>', f"(?:a|{step(0)}){{2}}", [{0}], set()),
]


def readings(token: int, excluded: list[set[int]], named: set[int]) -> list[bytes]:
    """Every spelling of `token` in a grammar with these steps and named tokens."""
    text = TOKENS[token] or b""
    own = mark(token) if token == CONTROL else mark(token) + text if token in named else text
    out = [own] if own else []
    if text or token == CONTROL:
        out += [mark(VOCAB.size + j) for j, s in enumerate(excluded) if token not in s]
    return out


def reference(pattern: str, excluded: list[set[int]], named: set[int]):  # type: ignore[no-untyped-def]
    compiled = re.compile(pattern.encode("latin-1"), re.S)

    def accepts(seq: tuple[int, ...]) -> bool:
        return any(compiled.fullmatch(b"".join(spelled)) for spelled in
                   itertools.product(*(readings(t, excluded, named) for t in seq)))
    return accepts


def sequences(n: int) -> list[tuple[int, ...]]:
    return [s for k in range(n + 1) for s in itertools.product(IDS, repeat=k)]


def allowed(bitmask: np.ndarray) -> set[int]:
    bits = np.unpackbits(bitmask.view(np.uint8), bitorder="little")
    return {int(i) for i in np.flatnonzero(bits[:VOCAB.size])}


@pytest.mark.parametrize("grammar, pattern, excluded, named", CASES)
def test_one_token_steps_are_exact(grammar: str, pattern: str, excluded: list, named: set
                                   ) -> None:
    compiled = compile_gbnf(grammar, VOCAB)
    assert compiled.kind == "pushdown" and [set(s) for s in compiled.one_token] == excluded
    accepts = reference(pattern, excluded, named)
    seqs = sequences(4)
    good = {s for s in seqs if accepts(s)}
    assert good, grammar
    viable = {s[:k] for s in good for k in range(len(s) + 1)}
    for budget in (None, 2):
        ok = good if budget is None else {s for s in good if len(s) <= budget}
        live = {s[:k] for s in ok for k in range(len(s) + 1)}
        bitmask = allocate_token_bitmask(1, VOCAB.size)
        for prefix in sorted(live, key=len):
            m = Matcher(compiled, max_tokens=budget)
            assert all(m.accept_token(t) for t in prefix), prefix
            m.fill_next_token_bitmask(bitmask)
            want = {t for t in IDS if prefix + (t,) in live} | ({EOS} if prefix in ok else set())
            assert allowed(bitmask) == want, (grammar, budget, prefix)
    for seq in seqs:
        m = Matcher(compiled)
        walked = all(m.accept_token(t) for t in seq)
        assert walked == (seq in viable), (grammar, seq)
        if walked:
            assert m.can_terminate() == (seq in good), (grammar, seq)


def test_rollback_batch_and_serialization() -> None:
    """A step read and rolled back leaves the matcher as it was; a batch fills the row each
    matcher fills alone; a grammar loaded from bytes keeps its steps."""
    compiled = compile_gbnf(CASES[0][0], VOCAB)
    loaded = CompiledGrammar.from_bytes(compiled.to_bytes(), VOCAB)
    assert loaded.one_token == compiled.one_token
    a, b = Matcher(compiled), Matcher(loaded)
    assert a.accept_token(2) and b.accept_token(2)  # "ab" as text (2 is no step here)
    assert not a.accept_token(2)
    one, both = allocate_token_bitmask(1, VOCAB.size), allocate_token_bitmask(2, VOCAB.size)
    a.fill_next_token_bitmask(one)
    assert allowed(one) == {3}
    c = Matcher(compiled)
    assert c.accept_token(0)  # "a": the step, or the text's first byte
    batch_fill_next_token_bitmask([a, c], both)
    assert allowed(both[0]) == {3} and allowed(both[1]) == {1, 3}
    c.rollback(1)
    c.fill_next_token_bitmask(one)
    assert allowed(one) == {0, 1, 2, 3, 4, CONTROL}  # 2 only as the text "ab"


def test_structural_tag_exclude_token() -> None:
    """`exclude_token` is one token outside the listed ones (and the enclosing tag's end token):
    a piece of text spelled by two tokens is not one token."""
    vocab = Vocabulary.default()
    spec = {"type": "structural_tag", "format": {"type": "sequence", "elements": [
        {"type": "const_string", "value": "A:"},
        {"type": "exclude_token", "exclude_tokens": ["\n"]},
        {"type": "const_string", "value": "!"}]}}
    compiled = compile_structural_tag(spec, vocab)
    hello = vocab.encode("hello")
    assert len(hello) == 1
    m = Matcher(compiled)
    assert all(m.accept_token(t) for t in vocab.encode("A:"))
    fork = m.fork()
    assert not fork.accept_token(vocab.encode("\n")[0])
    assert m.accept_token(hello[0]) and m.accept_token(vocab.encode("!")[0]) and m.can_terminate()
    two = Matcher(compiled)
    pieces = [t for t in vocab.encode("A:")] + vocab.encode("he") + vocab.encode("llo")
    assert not all(two.accept_token(t) for t in pieces)


def test_dfa_kind_is_refused() -> None:
    with pytest.raises(GrammarError) as info:
        compile_gbnf('root ::= !<[2]> "c"', VOCAB, kind="dfa")
    assert info.value.code == "token-reference"


def test_tokens_of_bytes_no_text_holds() -> None:
    """A token whose bytes hold 0xFF (a byte-level vocabulary's lone byte) never writes text,
    but a reference may name it (it is then its marker alone) and a step reads it."""
    vocab = Vocabulary.from_token_bytes([b"a", b"\xff", b"\xfe\xff", b"</s>"], 3)
    named = Matcher(compile_gbnf('root ::= "a" <[1-2]>', vocab))
    assert named.accept_token(0) and named.fork().accept_token(1) and named.accept_token(2)
    assert named.can_terminate()
    step = compile_gbnf('root ::= "a" !<[2]>', vocab)
    m = Matcher(step)
    bitmask = allocate_token_bitmask(1, vocab.size)
    assert m.accept_token(0)
    m.fill_next_token_bitmask(bitmask)
    bits = np.unpackbits(bitmask.view(np.uint8), bitorder="little")[:vocab.size]
    assert set(np.flatnonzero(bits).tolist()) == {0, 1}
    assert m.accept_token(1) and m.can_terminate()
