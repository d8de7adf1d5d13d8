"""Inputs the fuzzers found (minimized): each raises grammask's own error, never another."""
from __future__ import annotations

import pytest

from grammask.compiler import GrammarError, compile_json_schema, compile_lark
from grammask.compiler.frontends.json_schema import schema_to_grammar
from grammask.compiler.support.errors import BudgetExceeded
from grammask.runtime import Matcher

from .support.vocabularies import small_vocabulary


@pytest.mark.parametrize("schema", [
    '{"allOf": [{"enum": [123]}, {"not": {"type": [["boolean", "integer"], "object", -1]}}]}',
    '{"not": {"type": [[]]}}',
    '{"not": {"type": {}}}',
    '{"not": {"type": ["string", "bogus"]}}',
])
def test_not_with_a_malformed_type_is_an_invalid_schema(schema: str) -> None:
    with pytest.raises(GrammarError) as info:
        schema_to_grammar(schema)
    assert info.value.code == "invalid-schema" and info.value.pointer.endswith("/not/type")
    assert str(info.value).startswith(info.value.pointer + ": ")


def test_a_const_nested_deeper_than_the_stack_is_no_recursion_error() -> None:
    depth = 1_500
    deep = "[" * depth + "]" * depth
    other = deep.replace("[]", "[1]")
    # Enum members are compared by JSON equality: the repeated member is one alternative.
    compiled = compile_json_schema(f'{{"enum": [{deep}, {other}, {deep}]}}', small_vocabulary(),
                                   whitespace="compact")

    def accepts(text: str) -> bool:
        m = Matcher(compiled)
        return m.accept_string(text) and m.can_terminate()

    assert accepts(deep) and accepts(other)
    assert not accepts("[" * (depth - 1) + "]" * (depth - 1)) and not accepts(deep + " ")
    # With flexible whitespace the same value is over the state budget: an error, not a crash.
    with pytest.raises(BudgetExceeded):
        compile_json_schema(f'{{"const": {deep}}}', small_vocabulary())

@pytest.mark.parametrize(("schema", "where"), [
    ({"$id": "https://test.json-schema.]org/root", "type": "string"}, "/$id"),
    ({"properties": {"a": {"$ref": "http://[::1/x"}}}, "/properties/a/$ref"),
    ({"$defs": {"x": {"$id": "http://a]b/", "type": "integer"}}, "$ref": "#/$defs/x"},
     "/$defs/x/$id"),
])
def test_a_malformed_uri_in_id_or_ref_is_an_invalid_schema(schema: dict, where: str) -> None:
    with pytest.raises(GrammarError) as info:
        schema_to_grammar(schema)
    assert info.value.code == "invalid-schema"
    assert str(info.value).startswith(f"{where}: ") and "not a valid URI reference" in str(info.value)


def test_sequences_of_sixteen_and_then_more_items_compile() -> None:
    """The NFA kernel once grew its per-sequence scratch unevenly after a sequence of exactly
    16 items (a key of 14 characters), then wrote past it on a longer one (found by the CLI
    fuzzer), which left the rule automaton broken."""
    names = ["fourteenChars1", "aKeyOfTwentyOneChars1", "fourteenChars2", "aKeyOfTwentyOneChars2"]
    schema = {"type": "object", "required": ["a"],
              "properties": {"a": {"type": "integer"},
                             **{name: {"type": "array", "items": {"type": "string"}}
                                for name in names}}}
    for _ in range(3):
        compiled = compile_json_schema(schema, small_vocabulary())
        matcher = Matcher(compiled)
        text = b'{"a":1,"fourteenChars1":["x"],"aKeyOfTwentyOneChars2":[]}'
        assert all(matcher.accept_token(b) for b in text) and matcher.can_terminate()


def test_lint_skips_a_reference_the_translation_never_followed() -> None:
    """A required property whose broken `$ref` sits in an object no value can satisfy (strict:
    each part forbids the others' properties): the translation never resolves it, and the
    null check of the lint does not fail on it."""
    from grammask.compiler.analyses.json_schema import lint_schema
    from grammask.compiler.frontends.json_schema.options import JsonSchemaOptions

    schema = ('{"properties": {"bar": {"type": "integer"}}, "required": ["bar"], "allOf": '
              '[{"properties": {"foo": {"type": "string"}}, "required": ["foo"]}, '
              '{"properties": {"baz": {"type": "null", "$ref": "#/definitions/ipv4"}}, '
              '"required": ["baz"]}]}')
    found = lint_schema(schema, "s.json", JsonSchemaOptions(strict=True))
    assert "internal-error" not in {d.code for d in found}
    assert "schema-required-not-nullable" in {d.code for d in found}


def test_diff_of_a_grammar_with_an_undefined_rule_is_its_error() -> None:
    """A recursive grammar referring to an undefined rule: unrolling it for `difference` keeps
    the reference, and inlining reports it (it once failed on the missing rule's name)."""
    from grammask.compiler import difference
    from grammask.compiler.frontends.registry import read

    grammar = read("gbnf", 'root ::= "(" root ")" | z')[0]
    other = read("gbnf", 'root ::= "x"')[0]
    with pytest.raises(GrammarError) as info:
        difference(grammar, other)
    assert "z" in str(info.value)


def test_completion_costs_meet_a_rule_budget_as_a_step_does() -> None:
    """The completion costs build every rule: a rule over `Limits` (built lazily, past the
    compile) is the documented `BudgetExceeded` naming the bound, as for a step (the fuzz
    target once took it for a finding)."""
    from grammask.compiler import Limits, compile_gbnf

    text = ('root ::= "[" value "]"\nvalue ::= number | "[" value "]"\n'
            'number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? '
            '([eE] [-+]? [1-9] [0-9]{0,15})? [ \\t]{0,20}\n')
    compiled = compile_gbnf(text, small_vocabulary(), limits=Limits(max_dfa_states=40))
    matcher = Matcher(compiled)
    with pytest.raises(BudgetExceeded) as info:
        matcher.completion_cost()
    assert info.value.limit == "max_dfa_states" and "number" in str(info.value)


@pytest.mark.parametrize("schema", [
    '{"oneOf": [{"$ref": "#"}]}',
    '{"oneOf": [{"$ref": "#"}, {"type": "string"}]}',
    '{"$defs": {"a": {"oneOf": [{"$ref": "#/$defs/b"}, {"type": "null"}]},'
    ' "b": {"anyOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}',
])
def test_a_choice_that_refers_to_itself_is_split_a_bounded_number_of_times(schema: str) -> None:
    # Telling `oneOf` branches apart split the branch `{"$ref": "#"}` into itself forever.
    with pytest.raises(GrammarError) as info:
        compile_json_schema(schema, small_vocabulary())
    assert info.value.code == "empty-language"


@pytest.mark.parametrize("text", [
    'start: "' + "\\\\." * 40 + "\nx: /a/\n",
    "start: /" + "\\\\." * 40,
    'start: "ok" | "' + "\\\\a" * 40 + '\\"\n',
])
def test_lark_literals_that_do_not_close_fail_fast(text: str) -> None:
    """Lark's own lexer backtracks exponentially on such literals (seconds at twenty pairs of
    backslashes, `lark_support.check_literals`): a syntax error at the literal, at once."""
    with pytest.raises(GrammarError) as info:
        compile_lark(text, small_vocabulary())
    assert info.value.line == 1 and info.value.column is not None
