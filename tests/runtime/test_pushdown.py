"""The pushdown path: rule-automaton tables, the Earley kernels on hand-built tables, and the
Matcher on recursive grammars (JSON, arithmetic, deep nesting), with regular grammars forced
through the pushdown path checked mask for mask against the DFA path."""
from __future__ import annotations

import functools
import json
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler import GrammarError, compile_gbnf, compile_grammar
from grammask.compiler.frontends.gbnf import parse_gbnf
from grammask.runtime import Matcher, MatcherError, Vocabulary
from grammask.runtime.pushdown.earley import EarleyArrays, earley_start, push_bytes
from grammask.runtime.pushdown.table import PushdownTable

from ..support.budget import examples
from ..support.grammars import JSON_GBNF, factor_into_rules
from ..support.masks import is_eos, mask_of, random_tokenization
from ..support.regex_strategies import any_pattern
from ..support.tables import anbn_table
from ..support.vocabularies import small_vocabulary


def recognize(table: PushdownTable, data: bytes) -> tuple[bool, bool]:
    """(viable, complete) of `data` by the Earley kernels alone."""
    g = table.kernel_args()
    e = EarleyArrays.empty(table.n_states, capacity=4, set_capacity=4)
    while earley_start(g, e.kernel_args(), np.int32(table.rule_start[table.start_rule])) < 0:
        e.grow()
    arr = np.frombuffer(data, dtype=np.uint8)
    while (r := push_bytes(g, e.kernel_args(), arr, 0, len(arr), 0)) < 0:
        e.grow()
    return r == 1, r == 1 and bool(e.sets[e.n_sets - 1, 1])


def test_hand_built_table_recognizes_anbn() -> None:
    table = anbn_table()
    assert table.nullable.tolist() == [False]
    assert np.flatnonzero(table.follow[0]).tolist() == [ord("b")] and table.can_end[0]
    for n in range(1, 40):
        assert recognize(table, b"a" * n + b"b" * n) == (True, True)
        assert recognize(table, b"a" * n + b"b" * (n - 1)) == (True, False)
        assert recognize(table, b"a" * n + b"b" * (n + 1)) == (False, False)
    assert recognize(table, b"aba") == (False, False)
    assert recognize(table, b"") == (True, False)


@pytest.mark.parametrize("changes, message", [
    (dict(state_rule=np.array([0, 0, 1, 0], dtype=np.int32)), "state_rule must lie"),
    (dict(rule_names=("S", "T")), "rule_start and rule_names"),
    (dict(call_next=np.array([9], dtype=np.int32)), "out of range"),
    (dict(call_offsets=np.array([0, 1, 0, 1, 1], dtype=np.int32)), "non-decreasing"),
    (dict(accepting=np.zeros(4, dtype=bool)), "cannot reach acceptance"),
    (dict(rule_start=np.array([1], dtype=np.int32)), "unreachable"),
    (dict(byte_class=np.full(256, 3, dtype=np.int32)), "byte_class values"),
    (dict(start_rule=1), "start_rule"),
    (dict(transitions=np.array([[-1, 1, -1], [-1, -1, 4], [-1, -1, 3], [-1] * 3],
                               dtype=np.int32)), "transitions must lie"),
    (dict(transitions=np.array([[-1, 1, -1], [-1, -1, 3], [-1, -2, 3], [-1] * 3],
                               dtype=np.int32)), "transitions must lie"),
    # The first broken invariant is the one reported.
    (dict(transitions=np.array([[-1, 1, 7], [-1, -1, 3], [-1, -1, 3], [-1] * 3],
                               dtype=np.int32), call_next=np.array([9], dtype=np.int32)),
     "transitions must lie"),
    (dict(state_rule=np.array([0, 0, 0, 1], dtype=np.int32),
          rule_start=np.array([0, 3], dtype=np.int32), rule_names=("S", "T")),
     "leave their rule"),
])
def test_tables_are_validated(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        anbn_table(**changes)


@functools.lru_cache(maxsize=256)
def both_kinds(pattern: str, seed: int):  # type: ignore[no-untyped-def]
    from grammask.compiler.frontends.regex import parse_regex

    grammar = factor_into_rules(parse_regex(pattern), seed)
    vocab = small_vocabulary()
    return (compile_grammar(grammar, vocab, kind="dfa"),
            compile_grammar(grammar, vocab, kind="pushdown"))


@given(any_pattern, st.integers(0, 3), st.randoms(use_true_random=False))
@settings(max_examples=examples(120))
def test_pushdown_masks_equal_dfa_masks_on_regular_grammars(
        pattern: str, seed: int, rng: random.Random) -> None:
    dfa, pushdown = both_kinds(pattern, seed)
    assert dfa.kind == "dfa" and pushdown.kind == "pushdown"
    a, b = Matcher(dfa), Matcher(pushdown)
    vocab = small_vocabulary()
    for _ in range(8):
        mask = mask_of(a)
        assert mask_of(b) == mask, pattern
        assert a.can_terminate() == b.can_terminate()
        assert a.find_jump_forward_bytes() == b.find_jump_forward_bytes()
        tid = rng.randrange(vocab.size)
        assert a.accept_token(tid) == b.accept_token(tid) == (tid in mask)
        if a.is_terminated():
            break


@functools.lru_cache(maxsize=None)
def json_grammar():  # type: ignore[no-untyped-def]
    return compile_gbnf(JSON_GBNF, Vocabulary.default())


def random_json(rng: random.Random, depth: int = 0) -> object:
    kind = rng.choice(["obj", "arr", "str", "num", "lit"] if depth < 4 else ["str", "num", "lit"])
    if kind == "obj":
        return {rng.choice(["a", "name", "ключ", "x y", "😀", "q\"t"]) + str(i): random_json(rng, depth + 1)
                for i in range(rng.randint(0, 3))}
    if kind == "arr":
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if kind == "str":
        return rng.choice(["", "hello world", "tab\there", "中文", "a\\b", "line\nbreak", "é"])
    if kind == "num":
        return rng.choice([0, -1, 42, 3.25, -0.5, 1e21, 12345678])
    return rng.choice([True, False, None])


def json_text(rng: random.Random) -> str:
    doc = {"k": random_json(rng)}
    return json.dumps(doc, ensure_ascii=False, indent=rng.choice([None, 1, 2]))


def spell(matcher: Matcher, vocab: Vocabulary, ids: list[int]) -> None:
    """Every token is allowed by the mask and accepted; EOS only at the end."""
    for tid in ids:
        mask = mask_of(matcher)
        assert tid in mask, vocab.token_bytes(tid)
        assert not any(is_eos(vocab, i) for i in mask) or matcher.can_terminate()
        assert matcher.accept_token(tid)
    assert matcher.can_terminate()
    assert vocab.eos_token_id in mask_of(matcher)
    assert matcher.accept_token(vocab.eos_token_id) and matcher.is_terminated()


def test_json_documents_under_usual_and_random_tokenizations() -> None:
    compiled = json_grammar()
    assert compiled.kind == "pushdown" and "recursive" in compiled.notes[0]
    vocab = compiled.vocab
    rng = random.Random(7)
    for _ in range(examples(12)):
        text = json_text(rng)
        spell(Matcher(compiled), vocab, vocab.encode(text))
        spell(Matcher(compiled), vocab, random_tokenization(vocab, text.encode("utf-8"), rng))


def test_json_rejects_and_leaves_state_unchanged() -> None:
    compiled = json_grammar()
    vocab = compiled.vocab
    m = Matcher(compiled)
    assert m.accept_string('{"a": [1, ')
    before = mask_of(m)
    for bad in ["]", "}", ",", '"a":']:
        assert not m.accept_string(bad)
        assert mask_of(m) == before
    assert not m.accept_token(vocab.eos_token_id)
    assert not m.can_terminate()
    assert m.accept_string("2]}") and m.can_terminate()
    assert m.accept_token(vocab.eos_token_id)
    with pytest.raises(MatcherError):
        m.accept_token(vocab.encode("1")[0])
    assert mask_of(m) == set(vocab.eos_token_ids.tolist())


def test_rollback_and_copy_are_equivalent_to_replay() -> None:
    compiled = json_grammar()
    vocab = compiled.vocab
    rng = random.Random(3)
    ids = vocab.encode(json_text(rng))
    m = Matcher(compiled)
    masks = [mask_of(m)]
    for tid in ids:
        assert m.accept_token(tid)
        masks.append(mask_of(m))
    for _ in range(20):
        k = rng.randint(0, len(ids))
        other = m.fork()
        other.rollback(len(ids) - k)
        assert mask_of(other) == masks[k]
        for tid in ids[k:]:
            assert other.accept_token(tid)
        assert mask_of(other) == masks[-1]
    with pytest.raises(ValueError):
        m.rollback(len(ids) + 1)
    m.reset()
    assert mask_of(m) == masks[0]


def test_deep_nesting_and_long_outputs() -> None:
    vocab = Vocabulary.default()
    compiled = compile_gbnf('root ::= "x" | "[" root "]"', vocab)
    depth = 10_000
    m = Matcher(compiled)
    open_id, close_id = vocab.encode("[")[0], vocab.encode("]")[0]
    for _ in range(depth):
        assert m.accept_token(open_id)
    assert m.accept_string("x")
    assert vocab.eos_token_id not in mask_of(m)
    for i in range(depth):
        if i % 500 == 0:
            assert close_id in mask_of(m) and open_id not in mask_of(m)
        assert m.accept_token(close_id)
    assert m.can_terminate() and close_id not in mask_of(m)
    items = compile_gbnf('root ::= item ("," item)* \nitem ::= "[" "]" | "[" item ("," item)* "]"', vocab)
    m = Matcher(items, max_rollback_tokens=8)
    step = [vocab.encode(t)[0] for t in ("[", "]", ",")]
    for i in range(100_002):
        if i % 10_000 == 0:
            assert step[i % 3] in mask_of(m)
        assert m.accept_token(step[i % 3])
    assert m.num_rollback_steps == 8
    assert m.accept_string("[]") and m.can_terminate()


def test_ambiguous_grammar_with_many_live_items() -> None:
    vocab = small_vocabulary()
    m = Matcher(compile_gbnf('root ::= root root | "a" | root "b" root', vocab))
    for i in range(300):
        assert m.accept_string("a" if i % 7 else "b" if i else "a")
    assert m.can_terminate() and {ord("a"), ord("b")} <= mask_of(m)


def test_jump_forward_follows_forced_bytes() -> None:
    vocab = Vocabulary.default()
    compiled = compile_gbnf(
        'root ::= "{" "\\"name\\": " value "}"\nvalue ::= "[" (value ("," value)*)? "]" | "\\"x\\""',
        vocab)
    assert compiled.kind == "pushdown"
    m = Matcher(compiled)
    assert m.find_jump_forward_string() == '{"name": '
    assert m.accept_string('{"na')
    assert m.find_jump_forward_string() == 'me": '
    assert m.accept_string('me": ["x"')
    assert m.find_jump_forward_string() == ""
    assert m.accept_string("]")
    assert m.find_jump_forward_bytes() == b"}"
    assert m.accept_string("}") and m.find_jump_forward_bytes() == b""


@pytest.mark.parametrize("text, code", [
    ('root ::= "a" root', "empty-language"),
    ("root ::= other", "undefined-rule"),
])
def test_grammar_errors(text: str, code: str) -> None:
    with pytest.raises(GrammarError) as err:
        compile_grammar(parse_gbnf(text), small_vocabulary())
    assert err.value.code == code


def test_over_budget_fallback_inlines_small_leaf_rules() -> None:
    from grammask.compiler import Limits

    text = ('root ::= "[" item ("," item)* "]"\nitem ::= root | word | num | big\n'
            'word ::= [a-z]+\nnum ::= [0-9]{1,3}\nbig ::= "x" [a-z]{70}')
    vocab = small_vocabulary()
    tight = Limits(max_inline_states=8)
    compiled = compile_gbnf(text, vocab, limits=tight)
    table = compiled.pushdown
    assert table is not None and "small ones that use no other" in compiled.notes[0]
    assert set(table.rule_names) == {"root", "item", "big"}
    inlined = compile_gbnf(text, vocab)
    assert inlined.pushdown is not None and "big" not in inlined.pushdown.rule_names
    good = [b"[ab]", b"[[12],[zz,3],x" + b"q" * 70 + b"]"]
    bad = [b"[1234]", b"[ab", b"[A]", b"[1a]"]
    for c in (compiled, inlined):
        for text_, ok in [(t, True) for t in good] + [(t, False) for t in bad]:
            m = Matcher(c)
            assert (m.accept_string(text_) and m.can_terminate()) == ok, text_
