"""Budget errors carry what happened as fields (`limit`, `value`, `measured`), set where the
bound is checked and kept wherever the error is re-raised with a location or context."""
from __future__ import annotations

import pickle
from collections.abc import Callable

import pytest

from grammask.compiler import (
    BudgetExceeded,
    GrammarError,
    Limits,
    compile_grammar,
    compile_json_schema,
    compile_lark,
)
from grammask.compiler.automata.build import ir_to_dfa
from grammask.compiler.automata.nfa import build_nfa
from grammask.compiler.frontends.gbnf import parse_gbnf
from grammask.compiler.frontends.json_schema import schema_to_grammar
from grammask.compiler.frontends.lark_grammar import parse_lark
from grammask.compiler.frontends.regex import parse_regex
from grammask.runtime import Vocabulary

VOCAB = Vocabulary.from_token_bytes([b"a", b"b", None], eos_token_ids=2)


def budget(run: Callable[[], object]) -> BudgetExceeded:
    with pytest.raises(BudgetExceeded) as info:
        run()
    error = info.value
    # The message names the same bound as the fields.
    assert f"Limits.{error.limit}={error.value}" in error.message
    return error


def fields(error: BudgetExceeded) -> tuple[object, object, object]:
    return error.limit, error.value, error.measured


def test_regex_nfa_states() -> None:
    error = budget(lambda: build_nfa(parse_regex("a{5000}"), Limits(max_nfa_states=1000)))
    assert fields(error) == ("max_nfa_states", 1000, 1001)


def test_regex_dfa_states() -> None:
    error = budget(lambda: ir_to_dfa(parse_regex("[ab]*a[ab]{10}"), Limits(max_dfa_states=500)))
    assert fields(error) == ("max_dfa_states", 500, "more than 500")


def test_regex_repetition_is_located() -> None:
    error = budget(lambda: parse_regex("xa{20000}"))
    assert fields(error) == ("max_repeat", 10_000, 20_000)
    assert (error.line, error.column, error.code) == (1, 3, "budget")


def test_json_schema_depth() -> None:
    text = '{"items":' * 600 + "{}" + "}" * 600
    error = budget(lambda: schema_to_grammar(text, limits=Limits(max_schema_depth=500)))
    assert fields(error) == ("max_schema_depth", 500, 501)


def test_json_schema_errors_at_a_pointer_keep_their_fields() -> None:
    error = budget(lambda: schema_to_grammar(
        {"properties": {"s": {"type": "string", "minLength": 20000, "pattern": "a"}}}))
    assert fields(error) == ("max_repeat", 10_000, 20_000)
    assert error.pointer == "/properties/s/minLength"
    # A pattern's error: line:col inside the pattern and the pattern's pointer.
    error = budget(lambda: schema_to_grammar({"properties": {"s": {"pattern": "a{20000}"}}}))
    assert fields(error) == ("max_repeat", 10_000, 20_000)
    assert (error.pointer, error.line, error.column) == ("/properties/s/pattern", 1, 2)
    error = budget(lambda: schema_to_grammar({"type": "array", "maxItems": 20000,
                                              "items": {"type": "integer"}}))
    assert fields(error) == ("max_repeat", 10_000, 20_000) and error.pointer == "/maxItems"


def test_json_schema_number_bounds() -> None:
    error = budget(lambda: schema_to_grammar({"type": "integer", "multipleOf": 1009},
                                             limits=Limits(max_dfa_states=1000)))
    assert error.limit == "max_dfa_states" and error.value == 1000
    assert isinstance(error.measured, int) and error.measured > 1000
    # Numbers of more digits than max_repeat, counted where they are read.
    for schema in ('{"type": "number", "minimum": 1e-20000}', {"minimum": 10**20000}):
        with pytest.raises(BudgetExceeded) as info:
            schema_to_grammar(schema)
        assert fields(info.value) == ("max_repeat", 10_000, 20_001)
        assert info.value.pointer == "/minimum"


def test_gbnf_repetition() -> None:
    error = budget(lambda: parse_gbnf('root ::= "a"{3,20000}', limits=Limits(max_repeat=100)))
    assert fields(error) == ("max_repeat", 100, 20_000)
    assert (error.line, error.column) == (1, 16)
    long = "1" * 30
    error = budget(lambda: parse_gbnf(f'root ::= "a"{{{long}}}'))
    assert error.limit == "max_repeat" and error.measured == "111111111111... (30 digits)"


def test_lark_repetition() -> None:
    error = budget(lambda: parse_lark('start: "a"~20000'))
    assert fields(error) == ("max_repeat", 10_000, 20_000)


def test_rule_automaton_error_keeps_its_fields() -> None:
    grammar = parse_gbnf('root ::= x x\nx ::= [ab]* "a" [ab] [ab] [ab] [ab] [ab] [ab] [ab] [ab]')
    # Rule automata kept as rules are built as matchers reach them (here all at once).
    error = budget(lambda: compile_grammar(grammar, VOCAB, limits=Limits(max_dfa_states=100),
                                           kind="pushdown").automaton)
    assert error.message.startswith("rule 'x': DFA states: more than 100 exceeds")
    assert fields(error) == ("max_dfa_states", 100, "more than 100")
    error = budget(lambda: compile_lark("start: X\nX: /[ab]*a[ab]{9}/", VOCAB,
                                        limits=Limits(max_dfa_states=100)).automaton)
    assert error.message.startswith("rule 'X': ") and error.limit == "max_dfa_states"


def test_compile_time() -> None:
    error = budget(lambda: compile_json_schema(
        {"enum": [f"member{i}" for i in range(20_000)]}, VOCAB,
        limits=Limits(max_compile_seconds=0.01)))
    assert error.limit == "max_compile_seconds" and error.value == 0.01
    assert isinstance(error.measured, float) and error.measured > 0.01


def test_inline_fallback_reads_the_limit_field() -> None:
    # A regular grammar whose DFA is over max_inline_states falls back to rule automata; the
    # note says which bound was passed, from the error's fields.
    compiled = compile_grammar(parse_gbnf("root ::= [ab]* \"a\" [ab]{12}"), VOCAB,
                               limits=Limits(max_inline_states=64))
    assert compiled.kind == "pushdown"
    assert "more than 64 states, Limits.max_inline_states" in compiled.notes[0]


def test_located_copies_keep_type_and_fields() -> None:
    error = Limits(max_repeat=5).exceeded("max_repeat", 9, "repetition count")
    assert (error.line, error.pointer, error.code) == (None, None, "budget")
    moved = error.located(line=3, column=4, source="g.gbnf")
    assert type(moved) is BudgetExceeded and fields(moved) == ("max_repeat", 5, 9)
    assert str(moved) == "g.gbnf:3:4: " + error.message and str(error) == error.message
    renamed = moved.located(message="rule 'r': " + moved.message, pointer="/a")
    assert (renamed.line, renamed.column, renamed.source) == (3, 4, "g.gbnf")
    assert str(renamed) == "g.gbnf:3:4 /a: rule 'r': " + error.message
    again = pickle.loads(pickle.dumps(renamed))
    assert str(again) == str(renamed) and fields(again) == fields(renamed)
    plain = GrammarError("bad", code="x").located(line=1)
    assert type(plain) is GrammarError and str(plain) == "1: bad"
    with pytest.raises(TypeError):
        error.located(limit="max_rules")
