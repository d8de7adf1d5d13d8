"""Inputs the fuzzers found (minimized): each raises grammask's own error, never another."""
from __future__ import annotations

import pytest

from grammask.compiler import GrammarError
from grammask.compiler.json_schema import schema_to_grammar


@pytest.mark.parametrize("schema", [
    '{"allOf": [{"enum": [123]}, {"not": {"type": [["boolean", "integer"], "object", -1]}}]}',
    '{"not": {"type": [[]]}}',
    '{"not": {"type": {}}}',
    '{"not": {"type": ["string", "bogus"]}}',
])
def test_not_with_a_malformed_type_is_an_invalid_schema(schema: str) -> None:
    with pytest.raises(GrammarError) as info:
        schema_to_grammar(schema)
    assert info.value.code == "invalid-schema" and info.value.pointer is None
    assert "/not/type" in str(info.value)


@pytest.mark.xfail(strict=True, raises=RecursionError,
                   reason="enum/const values are compared recursively (json_schema/values.py)")
def test_a_const_nested_deeper_than_the_stack_is_no_recursion_error() -> None:
    depth = 1_500
    try:
        schema_to_grammar('{"const": ' + "[" * depth + "]" * depth + "}")
    except GrammarError:
        pass
