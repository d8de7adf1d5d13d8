"""Safe runtime: tables validated once and immutable, and bad calls that raise and change nothing
on both backends (many threads on one grammar: `test_runtime_threads.py`)."""
from __future__ import annotations

import functools
import pickle
from typing import Any

import numpy as np
import pytest

from grammask.compiler import compile_gbnf, compile_regex
from grammask.runtime import (
    CompiledGrammar,
    DFATable,
    Matcher,
    MatcherError,
    Vocabulary,
    allocate_token_bitmask,
    apply_token_bitmask_inplace,
    unpack_bitmask,
)
from grammask.runtime.vocab.spelling import token_spelling
from grammask.runtime.vocab.trie import TokenTrie, token_trie

from ..support.grammars import JSON_GBNF, RECORD_REGEX
from ..support.masks import observable_state
from ..support.tables import ab_star, anbn_table
from ..support.vocabularies import EOS, small_vocabulary


@functools.lru_cache(maxsize=None)
def backend(kind: str) -> CompiledGrammar:
    vocab = small_vocabulary()
    compiled = compile_regex(RECORD_REGEX, vocab) if kind == "dfa" else compile_gbnf(JSON_GBNF, vocab)
    assert compiled.kind == kind
    return compiled


PREFIX = {"dfa": '{"id": 12, "tags": ["ab', "pushdown": '{"a": [1, {"b": "c'}


def started(kind: str, **kwargs: Any) -> Matcher:
    m = Matcher(backend(kind), **kwargs)
    for ch in PREFIX[kind]:
        assert m.accept_string(ch)
    return m


# ------------------------------------------------------------------ bad calls, both backends

BAD_IDS = [(-1, ValueError), (small_vocabulary().size, ValueError), (10**20, ValueError), (-(10**20), ValueError),
           (np.int64(-1), ValueError), (np.uint64(2**63), ValueError), (1.0, TypeError),
           (np.float64(1), TypeError), (np.float32(97), TypeError), (True, TypeError),
           (np.bool_(True), TypeError), ("97", TypeError), (b"a", TypeError), (None, TypeError),
           ([97], TypeError), (np.array([97]), TypeError), (np.array(97), TypeError)]


@pytest.mark.parametrize("kind", ["dfa", "pushdown"])
def test_bad_token_ids_raise_and_change_nothing(kind: str) -> None:
    m = started(kind)
    before = observable_state(m)
    for bad, err in BAD_IDS:
        with pytest.raises(err):
            m.accept_token(bad)
        assert observable_state(m) == before, bad
    tid = ord("c")
    for cast in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64):
        other = m.fork()
        assert other.accept_token(cast(tid))
        reference = m.fork()
        assert reference.accept_token(tid)
        assert observable_state(other) == observable_state(reference)
    assert observable_state(m) == before


@pytest.mark.parametrize("kind", ["dfa", "pushdown"])
def test_bad_strings_rollbacks_and_constructors(kind: str) -> None:
    m = started(kind, max_rollback_tokens=4)
    before = observable_state(m)
    assert before[3] == 4
    for bad in (3, None, ["a"], 1.5, np.int32(97)):
        with pytest.raises(TypeError):
            m.accept_string(bad)  # type: ignore[arg-type]
        assert observable_state(m) == before
    for bad, err in [(-1, ValueError), (5, ValueError), (10**20, ValueError), (1.0, TypeError),
                     (True, TypeError), (None, TypeError), ("1", TypeError)]:
        with pytest.raises(err):
            m.rollback(bad)  # type: ignore[arg-type]
        assert observable_state(m) == before
    with pytest.raises(ValueError, match="max_rollback_tokens=4"):
        m.rollback(5)
    m.rollback(np.int64(0))
    assert observable_state(m) == before
    with pytest.raises(TypeError):
        Matcher("grammar")  # type: ignore[arg-type]
    for bad, err in [(-1, ValueError), (1.5, TypeError), (True, TypeError)]:
        with pytest.raises(err):
            Matcher(backend(kind), max_rollback_tokens=bad)  # type: ignore[arg-type]
    assert Matcher(backend(kind), max_rollback_tokens=np.int64(2)).max_rollback_tokens == 2
    empty = Matcher(backend(kind))
    with pytest.raises(ValueError):
        empty.rollback(1)


@pytest.mark.parametrize("kind", ["dfa", "pushdown"])
def test_bad_bitmasks_raise_and_write_nothing(kind: str) -> None:
    m = started(kind)
    before = observable_state(m)
    words = (m.vocab_size + 31) // 32
    readonly = allocate_token_bitmask(2, m.vocab_size)
    readonly.flags.writeable = False
    cases: list[tuple[Any, Any, type]] = [
        (np.zeros((2, words), np.int64), 0, TypeError),
        (np.zeros((2, words), np.uint32), 0, TypeError),
        (np.zeros((2, words), np.float32), 0, TypeError),
        (np.zeros((2, words), ">i4"), 0, TypeError),
        (np.zeros((2, words)).tolist(), 0, TypeError),
        (np.zeros((2, words + 1), np.int32), 0, ValueError),
        (np.zeros((2, words - 1), np.int32), 0, ValueError),
        (np.zeros(words, np.int32), 0, ValueError),
        (np.zeros((1, 2, words), np.int32), 0, ValueError),
        (np.zeros((2, 2 * words), np.int32)[:, ::2], 0, ValueError),
        (np.zeros((words, 2), np.int32).T, 1, ValueError),
        (readonly, 0, ValueError),
    ]
    for index, err in [(2, ValueError), (-1, ValueError), (10**20, ValueError), (1.0, TypeError),
                       (True, TypeError), ("0", TypeError), (None, TypeError),
                       (np.float64(0), TypeError)]:
        cases.append((allocate_token_bitmask(2, m.vocab_size), index, err))
    for bm, index, err in cases:
        snapshot = np.array(bm, copy=True)
        with pytest.raises(err):
            m.fill_next_token_bitmask(bm, index)
        assert np.array_equal(np.asarray(bm), snapshot)
        assert observable_state(m) == before
    good = allocate_token_bitmask(3, m.vocab_size)
    m.fill_next_token_bitmask(good, np.int64(1))
    assert good[1].tobytes() == before[0] and not good[0].any() and not good[2].any()
    m.fill_next_token_bitmask(good[1:], 1)
    assert good[2].tobytes() == before[0]
    sub = good.view(np.memmap)
    m.fill_next_token_bitmask(sub, 0)
    assert good[0].tobytes() == before[0]


@pytest.mark.parametrize("kind", ["dfa", "pushdown"])
def test_reshaped_bitmask_is_checked_again(kind: str) -> None:
    """A bitmask reshaped in place after a fill must not let a kernel write past its rows."""
    m = started(kind)
    words = (m.vocab_size + 31) // 32
    buffer = np.zeros(3 * words, dtype=np.int32)
    bm = buffer[:2 * words].reshape(2, words)
    m.fill_next_token_bitmask(bm, 1)
    bm.shape = (2 * words, 1)
    with pytest.raises(ValueError, match="shape"):
        m.fill_next_token_bitmask(bm, 2 * words - 1)
    bm.shape = (2, words)
    bm.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        m.fill_next_token_bitmask(bm, 1)
    assert not buffer[2 * words:].any()


@pytest.mark.parametrize("kind", ["dfa", "pushdown"])
def test_terminated_matcher(kind: str) -> None:
    m = Matcher(backend(kind))
    assert m.accept_string('{"id": 1, "tags": []}' if kind == "dfa" else '{"a": []}')
    assert m.can_terminate() and m.accept_token(EOS)
    after = observable_state(m)
    eos_only = allocate_token_bitmask(1, m.vocab_size)
    eos_only[0, EOS // 32] = np.int32(1 << (EOS % 32))
    assert after == (eos_only.tobytes(), False, True, after[3], b"")
    for call in (lambda: m.accept_token(EOS), lambda: m.accept_token(ord("a")),
                 lambda: m.accept_token(np.int64(EOS)), lambda: m.accept_string(""),
                 lambda: m.accept_string(b"1")):
        with pytest.raises(MatcherError, match="terminated"):
            call()
        assert observable_state(m) == after
    with pytest.raises(TypeError):
        m.accept_token(1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        m.rollback(after[3] + 1)
    assert observable_state(m) == after
    m.rollback(1)
    assert not m.is_terminated() and m.can_terminate() and m.num_rollback_steps == after[3] - 1


def test_apply_token_bitmask_rejects_mismatches_and_writes_nothing() -> None:
    logits = np.arange(2 * 70, dtype=np.float32).reshape(2, 70)
    bm = allocate_token_bitmask(2, 70)
    readonly = logits.copy()
    readonly.flags.writeable = False
    cases: list[tuple[Any, Any, Any, type]] = [
        (logits.reshape(2, 70, 1), bm, None, ValueError),
        (logits, bm.reshape(2, 3, 1), None, ValueError),
        (logits[0], bm, None, ValueError),
        (logits, bm, [0], ValueError),
        (logits, bm, [0, 2], ValueError),
        (logits, bm, [0, -1], ValueError),
        (logits, bm, [0, 1.0], TypeError),
        (logits, bm, [0, True], TypeError),
        (logits, bm.astype(np.int64), None, TypeError),
        (logits.astype(np.int32), bm, None, TypeError),
        (logits, bm.tolist(), None, TypeError),
        (readonly, bm, None, ValueError),
    ]
    for lg, b, indices, err in cases:
        copy = np.array(lg, copy=True) if isinstance(lg, np.ndarray) else None
        with pytest.raises(err):
            apply_token_bitmask_inplace(lg, b, indices)
        assert copy is None or np.array_equal(lg, copy)
    assert np.array_equal(logits, np.arange(2 * 70, dtype=np.float32).reshape(2, 70))
    apply_token_bitmask_inplace(logits, bm[:1], indices=[np.int64(1)])
    assert np.isfinite(logits[0]).all() and not np.isfinite(logits[1]).any()
    for bad, width, err in [(bm.astype(np.uint8), 8, TypeError), (bm, -1, ValueError),
                            (bm, 2.0, ValueError), (bm, 100, ValueError)]:
        with pytest.raises(err):
            unpack_bitmask(bad, width)  # type: ignore[arg-type]


# ------------------------------------------------------------------ tables, validated once

def test_dfa_tables_are_validated() -> None:
    bc = np.zeros(256, dtype=np.int32)
    tr = np.array([[0]], dtype=np.int32)
    acc = np.array([True])
    for args, err in [((bc.tolist(), tr, acc, 0), TypeError),
                      ((bc, tr, acc.astype(np.uint8), 0), ValueError),
                      ((bc, tr[0], acc, 0), ValueError),
                      ((bc[None, :], tr, acc, 0), ValueError),
                      ((bc, tr, acc[None, :], 0), ValueError),
                      ((bc, np.array([[-2]], np.int32), acc, 0), ValueError),
                      ((bc, np.zeros((1, 0), np.int32), acc, 0), ValueError),
                      ((bc - 1, tr, acc, 0), ValueError),
                      ((bc, tr, acc, -1), ValueError),
                      ((bc, tr, acc, True), TypeError),
                      ((bc, tr, acc, 0.0), TypeError),
                      ((bc, tr, acc, None), TypeError)]:
        with pytest.raises(err):
            DFATable(*args)  # type: ignore[arg-type]
    strided = np.zeros(512, dtype=np.int32)[::2]
    assert DFATable(strided, tr, acc, np.int64(0)).byte_class.flags.c_contiguous


@pytest.mark.parametrize("changes, err", [
    (dict(call_rule=np.array([[0]], dtype=np.int32)), ValueError),
    (dict(call_rule=np.array([1], dtype=np.int32)), ValueError),
    (dict(call_rule=np.array([-1], dtype=np.int32)), ValueError),
    (dict(call_offsets=np.array([-1, 0, 1, 1, 1], dtype=np.int32)), ValueError),
    (dict(call_offsets=np.array([0, 0, 2, 2, 2], dtype=np.int32)), ValueError),
    (dict(transitions=np.full((4, 3), 4, dtype=np.int32)), ValueError),
    (dict(transitions=np.zeros((4, 3), dtype=np.int64)), ValueError),
    (dict(rule_start=np.array([-1], dtype=np.int32)), ValueError),
    (dict(rule_start=np.array([[0]], dtype=np.int32)), ValueError),
    (dict(state_rule=np.zeros(3, dtype=np.int32)), ValueError),
    (dict(accepting=[False, False, False, True]), TypeError),
    (dict(rule_names=["S"]), TypeError),
    (dict(rule_names=(0,)), TypeError),
    (dict(start_rule=True), TypeError),
    (dict(start_rule=-1), ValueError),
])
def test_pushdown_tables_are_validated(changes: dict[str, object], err: type) -> None:
    with pytest.raises(err):
        anbn_table(**changes)


def trie_parts(tokens: list[bytes]) -> dict[str, Any]:
    trie = TokenTrie.build(token_spelling(
        Vocabulary.from_token_bytes([*tokens, b"</s>"], len(tokens))))
    return dict(ids=trie.ids, data=trie.data, offsets=trie.offsets, lcp=trie.lcp,
                max_len=trie.max_len)


def test_token_tries_are_validated() -> None:
    good = trie_parts([b"ab", b"a", b"b", b"abc"])
    assert TokenTrie(**good).n_tokens == 4
    offsets, lcp, ids, data = good["offsets"], good["lcp"], good["ids"], good["data"]
    bad: list[tuple[dict[str, Any], type]] = [
        (dict(offsets=offsets + 1), ValueError),
        (dict(offsets=offsets - 1), ValueError),
        (dict(offsets=np.append(offsets[:-1], offsets[-1] + 5)), ValueError),
        (dict(offsets=np.array([0, 1, 1, 3, 7], np.int64)), ValueError),
        (dict(offsets=offsets.astype(np.int32)), ValueError),
        (dict(lcp=np.array([0, 9, 0, 0], np.int32)), ValueError),
        (dict(lcp=np.array([0, 1, 1, 0], np.int32)), ValueError),
        (dict(lcp=np.array([1, 1, 2, 0], np.int32)), ValueError),
        (dict(lcp=np.array([0, -1, 2, 0], np.int32)), ValueError),
        (dict(lcp=lcp[:3]), ValueError),
        (dict(data=data[::-1].copy()), ValueError),
        (dict(ids=ids[::-1].copy(), data=data), None),
        (dict(ids=np.array([0, 0, 1, 2], np.int32)), ValueError),
        (dict(ids=np.array([-1, 0, 1, 2], np.int32)), ValueError),
        (dict(ids=ids[None, :]), ValueError),
        (dict(ids=ids.tolist()), TypeError),
        (dict(max_len=4), ValueError),
        (dict(max_len=3.0), TypeError),
    ]
    for change, err in bad:
        if err is None:
            assert TokenTrie(**{**good, **change}).n_tokens == 4
            continue
        with pytest.raises(err):
            TokenTrie(**{**good, **change})
    empty = dict(ids=np.zeros(0, np.int32), data=np.zeros(0, np.uint8),
                 offsets=np.zeros(1, np.int64), lcp=np.zeros(0, np.int32))
    assert TokenTrie(**empty, max_len=0).n_tokens == 0
    with pytest.raises(ValueError, match="max_len"):
        TokenTrie(**empty, max_len=-1)
    with pytest.raises(ValueError, match="out of range"):
        TokenTrie(**good).check_ids(3)


def test_compiled_grammars_check_their_parts() -> None:
    compiled = ab_star()
    with pytest.raises(TypeError, match="vocab"):
        CompiledGrammar(object(), compiled.dfa)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="DFATable"):
        CompiledGrammar(compiled.vocab, anbn_table())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="PushdownTable"):
        CompiledGrammar(compiled.vocab, pushdown=compiled.dfa)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        CompiledGrammar(compiled.vocab, compiled.dfa, source=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        CompiledGrammar(compiled.vocab, compiled.dfa, notes=["x"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="exactly one"):
        CompiledGrammar(compiled.vocab)
    with pytest.raises(ValueError):
        compiled.token_sets.get(-1)


def all_arrays(compiled: CompiledGrammar) -> list[np.ndarray]:
    table = compiled.automaton
    vocab, trie = compiled.vocab, token_trie(compiled.vocab)
    arrays = [v for v in vars(table).values() if isinstance(v, np.ndarray)]
    arrays += [vocab.token_data, vocab.token_offsets, vocab.eos_token_ids, vocab.special_token_ids]
    return arrays + [trie.ids, trie.data, trie.offsets, trie.lcp]


@pytest.mark.parametrize("kind", ["dfa", "pushdown"])
def test_compiled_arrays_are_immutable(kind: str) -> None:
    compiled = backend(kind)
    arrays = all_arrays(compiled)
    assert len(arrays) >= (11 if kind == "dfa" else 19)
    if kind == "dfa":
        started(kind)
        rows = [r for r in compiled.token_sets._rows if r is not None]
        assert rows
        arrays += [a for r in rows for a in (r.default, r.patch_index, r.patch_value)]
    for a in arrays:
        assert not a.flags.writeable and a.flags.c_contiguous
        with pytest.raises(ValueError):
            a.flags.writeable = True
        if a.size:
            with pytest.raises(ValueError):
                a.reshape(-1)[0] = 0


def test_tables_do_not_alias_the_callers_arrays() -> None:
    base = np.zeros((2, 3), dtype=np.int32)
    base[0, 1], base[1, 2] = 1, 0
    view = base.view()
    view.flags.writeable = False
    byte_class = np.zeros(256, dtype=np.int32)
    byte_class[ord("a")], byte_class[ord("b")] = 1, 2
    dfa = DFATable(byte_class, view, np.array([True, False]), 0)
    base[0, 1] = 7
    byte_class[:] = 2
    assert dfa.transitions[0, 1] == 1 and dfa.byte_class[0] == 0
    assert DFATable(dfa.byte_class, dfa.transitions, dfa.accepting, 0).transitions is dfa.transitions


@pytest.mark.parametrize("kind", ["dfa", "pushdown"])
def test_pickled_grammars_are_validated_again(kind: str) -> None:
    compiled = backend(kind)
    clone = pickle.loads(pickle.dumps(compiled))
    assert clone.kind == kind and clone.vocab.size == compiled.vocab.size
    assert all(not a.flags.writeable for a in all_arrays(clone))
    a, b = started(kind), Matcher(clone)
    for ch in PREFIX[kind]:
        assert b.accept_string(ch)
    assert observable_state(a) == observable_state(b)
    table = clone.dfa if kind == "dfa" else clone.pushdown
    cls, args = table.__reduce__()
    tampered = [np.array(x, copy=True) if isinstance(x, np.ndarray) else x for x in args]
    tampered[1][0, 0] = table.n_states
    with pytest.raises(ValueError):
        cls(*tampered)
    vocab_state = compiled.vocab.__getstate__()
    vocab_state["token_offsets"] = np.array(vocab_state["token_offsets"])[::-1].copy()
    broken = Vocabulary.__new__(Vocabulary)
    with pytest.raises(ValueError):
        broken.__setstate__(vocab_state)
