"""What a process keeps across compiles: structural fingerprints of IR, rule automata cached by
them, and `clear_caches`. A cached compile must give the same tables as a cold one."""
from __future__ import annotations

import numpy as np

from grammask.compiler import clear_caches, compile_json_schema
from grammask.compiler import rule_automata
from grammask.compiler.fingerprint import fingerprint
from grammask.compiler.ir import CharClass, Choice, Literal, Repeat, RuleRef, Seq, Span

from .vocabularies import small_vocabulary


def _node(name: str, span: Span | None = None) -> Seq:
    return Seq((Literal(b"["), Repeat(Choice((CharClass(((0x61, 0x7A),)), RuleRef(name))), 0,
                                      None), Literal(b"]")), span)


def test_fingerprints_are_structural() -> None:
    assert fingerprint(_node("a")) == fingerprint(_node("a", Span(1, 2, 3, 4)))
    assert fingerprint(_node("a")) != fingerprint(_node("b"))
    assert fingerprint(Repeat(Literal(b"x"), 0, 3)) != fingerprint(Repeat(Literal(b"x"), 0, 4))
    shared = Literal(b"ab")
    assert fingerprint(Seq((shared, shared))) == fingerprint(Seq((Literal(b"ab"),
                                                                  Literal(b"ab"))))


SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}, "b": {}}}


def _tables(schema: object) -> list[np.ndarray]:
    table = compile_json_schema(schema, small_vocabulary()).pushdown
    assert table is not None
    return [table.transitions, table.call_offsets, table.call_rule, table.call_next,
            table.accepting, table.rule_start, table.byte_class]


def test_cached_rule_automata_give_the_tables_of_a_cold_compile() -> None:
    clear_caches()
    assert not rule_automata._RULE_DFAS
    cold = _tables(SCHEMA)
    cached = len(rule_automata._RULE_DFAS)
    assert cached >= 2
    warm = _tables(SCHEMA)
    assert len(rule_automata._RULE_DFAS) == cached
    assert all(np.array_equal(a, b) for a, b in zip(cold, warm, strict=True))
    # Another schema reuses the "any JSON value" rule: one new rule automaton, not two.
    _tables({"type": "object", "properties": {"c": {"type": "integer"}, "d": {}}})
    assert len(rule_automata._RULE_DFAS) == cached + 1
    clear_caches()
    assert not rule_automata._RULE_DFAS
