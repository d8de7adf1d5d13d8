"""Runtime tables built by hand, without the compiler: (ab)* as a DFA over a seven-token
vocabulary, and a^n b^n as rule automata for the pushdown runtime."""
from __future__ import annotations

import numpy as np

from grammask.runtime import CompiledGrammar, DFATable, Vocabulary
from grammask.runtime.pushdown.table import PushdownTable

AB_STAR_TOKENS = [b"a", b"b", b"ab", b"ba", b"abab", None, b"c"]
AB_STAR_EOS = 5
"""The EOS id of `ab_star_vocab` (token 5 has no bytes)."""


def ab_star_vocab() -> Vocabulary:
    """`AB_STAR_TOKENS` padded to 40 ids, EOS `AB_STAR_EOS`."""
    return Vocabulary.from_token_bytes(AB_STAR_TOKENS, AB_STAR_EOS, size=40)


def ab_star() -> CompiledGrammar:
    """(ab)* by hand: state 0 accepting, 'a' to 1, 'b' back to 0."""
    byte_class = np.zeros(256, dtype=np.int32)
    byte_class[ord("a")] = 1
    byte_class[ord("b")] = 2
    transitions = np.array([[-1, 1, -1], [-1, -1, 0]], dtype=np.int32)
    dfa = DFATable(byte_class, transitions, np.array([True, False]), 0)
    return CompiledGrammar(ab_star_vocab(), dfa, "(ab)*")


def anbn_table(**changes: object) -> PushdownTable:
    """S -> "a" S "b" | "ab", by hand: classes 0 other, 1 'a', 2 'b'; `changes` replace fields
    (to build invalid tables)."""
    byte_class = np.zeros(256, dtype=np.int32)
    byte_class[ord("a")], byte_class[ord("b")] = 1, 2
    transitions = np.full((4, 3), -1, dtype=np.int32)
    transitions[0, 1] = 1
    transitions[1, 2] = 3
    transitions[2, 2] = 3
    fields: dict[str, object] = dict(
        byte_class=byte_class, transitions=transitions,
        accepting=np.array([False, False, False, True]),
        call_offsets=np.array([0, 0, 1, 1, 1], dtype=np.int32),
        call_rule=np.array([0], dtype=np.int32), call_next=np.array([2], dtype=np.int32),
        state_rule=np.zeros(4, dtype=np.int32), rule_start=np.array([0], dtype=np.int32),
        start_rule=0, rule_names=("S",))
    fields.update(changes)
    return PushdownTable(**fields)  # type: ignore[arg-type]
