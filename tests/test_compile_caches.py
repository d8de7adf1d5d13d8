"""What a process keeps across compiles: rule automata cached by their flattened bodies, and
`clear_caches`. A cached compile must give the same tables as a cold one."""
from __future__ import annotations

import numpy as np

from grammask.compiler import clear_caches, compile_json_schema
import grammask.compiler.lowering.rule_automata as rule_automata
from grammask.compiler.ir.nodes import CharClass, Choice, Literal, Node, Repeat, RuleRef, Seq, Span
from grammask.compiler.support.limits import DEFAULT_LIMITS
from grammask.compiler.automata.flat_ir import flatten

from .support.vocabularies import small_vocabulary


def _node(name: str, span: Span | None = None) -> Seq:
    return Seq((Literal(b"["), Repeat(Choice((CharClass(((0x61, 0x7A),)), RuleRef(name))), 0,
                                      None), Literal(b"]")), span)


def _key(node: Node) -> tuple[object, ...]:
    return flatten(node, DEFAULT_LIMITS, None).key()


def test_rule_automata_are_cached_by_structure() -> None:
    assert _key(_node("a")) == _key(_node("a", Span(1, 2, 3, 4)))
    assert _key(_node("a")) != _key(_node("b"))
    assert _key(Repeat(Literal(b"x"), 0, 3)) != _key(Repeat(Literal(b"x"), 0, 4))
    assert _key(Seq((Literal(b"ab"), Literal(b"c")))) != _key(Seq((Literal(b"a"), Literal(b"bc"))))
    assert _key(CharClass(((0x61, 0x62),))) != _key(CharClass(((0x61, 0x63),)))
    # Sharing is part of the structure: the same construction run twice gives one key.
    twice = [Seq((Choice((Literal(b"ab"), RuleRef("r"))),) * 2) for _ in range(2)]
    assert _key(twice[0]) == _key(twice[1])


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
