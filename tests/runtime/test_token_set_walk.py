"""Token sets of rule-automaton states against a walk of each token on its own.

`classify_tokens` walks the whole trie at once, shares prefixes between neighbours and skips
writing sets inside chains of states that call no rule (accepting ones included, while the
bytes cannot follow their rule). Here each token's bytes are pushed one at a time from the
state's root item instead: a token is accepted when every byte leaves an item alive, and
uncertain when it is not but some set on its way had left the rule (popped) before a byte that
can follow the rule. Both sets must be equal, token for token, for every state.
"""
from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, settings

from grammask.compiler import GrammarError, compile_gbnf, compile_grammar
from grammask.compiler.ir.nodes import Grammar
from grammask.runtime import Vocabulary
from grammask.runtime.pushdown.counters import N_SETS
from grammask.runtime.pushdown.earley import EarleyArrays, earley_start, push_byte
from grammask.runtime.pushdown.table import PushdownTable
from grammask.runtime.pushdown.token_sets import PushdownTokenSets

from ..support.budget import examples
from ..support.cfg_strategies import NAMED_GRAMMARS, grammars
from ..support.paths import DATA
from ..support.vocabularies import small_vocabulary

GBNF = DATA / "gbnf"


def _walk_one(table: PushdownTable, e: EarleyArrays, state: int, data: bytes) -> str:
    """'accepted', 'uncertain' or 'rejected' for the token `data` from root item (state, -1)."""
    g = table.kernel_args()
    follow = table.follow[int(table.state_rule[state])]
    assert earley_start(g, e.kernel_args(), np.int32(state)) == 1
    left = False
    for b in data:
        k = int(e.counters[N_SETS]) - 1
        left = left or bool(e.sets[k, 1] == 1 and follow[b])
        r = push_byte(g, e.kernel_args(), np.uint8(b))
        assert r >= 0, "the scratch arrays are large enough for these tables"
        if r == 0:
            return "uncertain" if left else "rejected"
    return "accepted"


def check_states(table: PushdownTable, vocab: Vocabulary, states: range | list[int]) -> None:
    sets = PushdownTokenSets(table, vocab)
    trie = sets.trie
    raw, off = trie.data.tobytes(), trie.offsets.tolist()
    e = EarleyArrays.empty(table.n_states, capacity=4096, set_capacity=trie.max_len + 4)
    for state in states:
        words, uncertain, n_accepted = sets.classify(state)
        bits = np.unpackbits(words.view(np.uint8), bitorder="little")
        got_accepted = {int(t) for t in trie.ids if bits[t]}
        got_uncertain = {int(trie.ids[i]) for i in uncertain}
        want: dict[str, set[int]] = {"accepted": set(), "uncertain": set(), "rejected": set()}
        for i in range(trie.n_tokens):
            want[_walk_one(table, e, state, raw[off[i]:off[i + 1]])].add(int(trie.ids[i]))
        assert got_accepted == want["accepted"], (state, sorted(got_accepted ^ want["accepted"])[:5])
        assert n_accepted == len(want["accepted"])
        assert got_uncertain == want["uncertain"], (state, sorted(got_uncertain ^ want["uncertain"])[:5])
        assert sorted(uncertain.tolist()) == uncertain.tolist()


def _pushdown(grammar: Grammar) -> PushdownTable | None:
    try:
        compiled = compile_grammar(grammar, small_vocabulary(), kind="pushdown")
    except GrammarError as exc:
        assert exc.code == "empty-language", exc
        return None
    return compiled.automaton  # type: ignore[return-value]


@given(grammars())
@settings(max_examples=examples(60), deadline=None)
def test_random_grammars_every_state(grammar: Grammar) -> None:
    table = _pushdown(grammar)
    if table is not None:
        check_states(table, small_vocabulary(), range(table.n_states))


@pytest.mark.parametrize("name", sorted(NAMED_GRAMMARS))
def test_named_grammars_every_state(name: str) -> None:
    table = _pushdown(NAMED_GRAMMARS[name])
    assert table is not None
    check_states(table, small_vocabulary(), range(table.n_states))


@pytest.mark.parametrize("name", ["arithmetic", "json"])
def test_corpus_grammars_on_the_default_vocabulary(name: str) -> None:
    """The states the first masks of a document meet, over 151k real tokens: names and
    numbers run through accepting states of rules that are called."""
    compiled = compile_gbnf((GBNF / f"{name}.gbnf").read_text(encoding="utf-8"),
                            Vocabulary.default())
    table = compiled.automaton
    assert table is not None
    accepting = np.flatnonzero(table.accepting).tolist()
    check_states(table, compiled.vocab, sorted({int(s) for s in table.rule_start}) + accepting[:2])



def _same_sets_when_tight(table: PushdownTable, vocab: Vocabulary) -> int:
    """Check every state's sets against a walk from Earley arrays of two items and two sets
    (OVERFLOW, then grown arrays and a new walk); return the capacity they grew to."""
    roomy, tight = PushdownTokenSets(table, vocab), PushdownTokenSets(table, vocab)
    tight._scratch = EarleyArrays.empty(table.n_states, capacity=2, set_capacity=2)
    for state in range(table.n_states):
        a, b = roomy.classify(state), tight.classify(state)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and a[2] == b[2], state
    return tight._scratch.capacity


@given(grammars())
@settings(max_examples=examples(30), deadline=None)
def test_sets_are_the_same_when_the_walk_must_grow_its_arrays(grammar: Grammar) -> None:
    table = _pushdown(grammar)
    if table is not None:
        _same_sets_when_tight(table, small_vocabulary())


def test_arithmetic_sets_are_the_same_when_the_walk_must_grow_its_arrays() -> None:
    compiled = compile_gbnf((GBNF / "arithmetic.gbnf").read_text(encoding="utf-8"),
                            Vocabulary.default())
    assert compiled.pushdown is not None
    assert _same_sets_when_tight(compiled.automaton, compiled.vocab) > 2  # type: ignore[arg-type]
