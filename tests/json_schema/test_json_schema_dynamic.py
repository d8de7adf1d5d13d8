"""`$dynamicRef` and `$dynamicAnchor` (draft 2020-12, `SchemaDocument.resolve`): on random
documents of a few schema resources, each defining the name `T` as a dynamic or a plain anchor
(or not at all) and referring to each other and to `T` statically and dynamically, every
instance of a finite universe is accepted exactly when `jsonschema` validates it.

The one place the oracle parts from the specification is left out of the documents: a `$ref`
to a `$dynamicAnchor` is static (it "behaves like a normal $ref to an $anchor"), while
`jsonschema` 4.26 resolves it like a `$dynamicRef` (`test_ref_to_a_dynamic_anchor_is_static`).
"""
from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler import GrammarError, compile_json_schema, schema_to_grammar
from tests.support.budget import examples
from tests.support.json_schema_suite import accepts, agrees_on, byte_vocabulary

_SCALARS: list[Any] = [None, True, 0, "x"]
UNIVERSE: list[Any] = [*_SCALARS, *(
    list(v) for n in range(3) for v in itertools.product([*_SCALARS, [0], ["x"]], repeat=n)), *(
    dict(zip("ab", v)) for n in range(1, 3) for v in itertools.product([*_SCALARS, [0]], repeat=n))]
"""The scalars, arrays of up to two items (scalars or one-item arrays) and objects over `a`, `b`."""

_TYPES = st.sampled_from([{"type": "string"}, {"type": "integer"}, {"type": "null"},
                          {"type": "boolean"}, {}])
_BASE = "https://example.com/"


@st.composite
def _document(draw: st.DrawFn) -> dict[str, Any]:
    count = draw(st.integers(1, 3))
    anchors = draw(st.lists(st.sampled_from(["dynamic", "plain", None]),
                            min_size=count + 1, max_size=count + 1))

    def reference(here: int) -> dict[str, Any]:
        """A reference written in resource `here` (`count`: the root)."""
        kinds = ["$dynamicRef", "other"] if anchors[here] else ["other"]
        if anchors[here] == "plain":
            kinds.append("$ref")  # `jsonschema` reads a `$ref` to a dynamic anchor dynamically
        kind = draw(st.sampled_from(kinds))
        if kind != "other":
            return {kind: "#T"}
        target = draw(st.integers(0, count - 1))
        return draw(st.sampled_from([{"$ref": f"r{target}"}, {"$dynamicRef": f"r{target}#T"}
                                     if anchors[target] else {"$ref": f"r{target}"}]))

    def body(here: int) -> dict[str, Any]:
        shape = draw(st.sampled_from(["array", "object", "ref"]))
        if shape == "array":
            return {"type": "array", "items": reference(here)}
        if shape == "object":
            return {"type": "object", "properties": {"a": reference(here), "b": reference(here)}}
        later = [j for j in range(count) if j > here or here == count]
        if not later:
            return {"type": "array", "items": reference(here)}
        return {"$ref": f"r{draw(st.sampled_from(later))}"}  # no loop without an instance step

    def resource(here: int) -> dict[str, Any]:
        schema = body(here)
        if anchors[here] is not None:
            key = "$dynamicAnchor" if anchors[here] == "dynamic" else "$anchor"
            schema["$defs"] = {"t": {key: "T", **draw(_TYPES)}}
        return schema

    root = resource(count)
    root["$id"] = _BASE + "root"
    root.setdefault("$defs", {}).update(
        {f"r{i}": {"$id": f"r{i}", **resource(i)} for i in range(count)})
    return root


@settings(max_examples=examples(150), deadline=None)
@given(_document())
def test_random_dynamic_references_exactly(schema: dict[str, Any]) -> None:
    agrees_on(schema, UNIVERSE, ("empty-language",), property_order="any")


_TREE = {
    "$id": _BASE + "tree", "$dynamicAnchor": "node", "type": "object",
    "properties": {"data": True, "children": {"type": "array",
                                               "items": {"$dynamicRef": "#node"}}}}
_STRICT_TREE = {"$id": _BASE + "strict-tree", "$dynamicAnchor": "node", "$ref": "tree",
                "unevaluatedProperties": False}


def test_strict_tree_extends_the_recursion() -> None:
    """The specification's example: the strict tree's `$dynamicAnchor` is outermost, so the
    children of every node are strict trees too."""
    g = compile_json_schema(_STRICT_TREE, byte_vocabulary(), resources={_BASE + "tree": _TREE})
    assert accepts(g, '{"children":[{"data":1,"children":[]}]}')
    assert not accepts(g, '{"children":[{"daat":1}]}')
    loose = compile_json_schema(_TREE, byte_vocabulary())
    assert accepts(loose, '{"children":[{"daat":1}]}')


def test_errors_name_the_subschema_without_a_scope() -> None:
    schema = {"$id": _BASE + "root", "$dynamicAnchor": "T",
              "$defs": {"r": {"$id": "r", "$dynamicAnchor": "T",
                              "items": {"$dynamicRef": "#T"},
                              "properties": {"a": {"$ref": "#/$defs/missing"}}}},
              "$ref": "r"}
    with pytest.raises(GrammarError) as err:
        compile_json_schema(schema, byte_vocabulary())
    assert err.value.code == "invalid-ref"
    assert err.value.pointer == "/$defs/r/properties/a/$ref"
    assert "~" not in str(err.value)


def test_documents_without_dynamic_references_are_read_as_before() -> None:
    """A `$dynamicAnchor` alone is a plain anchor, and adds no scope."""
    schema = {"$dynamicAnchor": "a", "$defs": {"x": {"$dynamicAnchor": "x", "type": "integer"}},
              "items": {"$ref": "#x"}}
    g = compile_json_schema(schema, byte_vocabulary())
    assert accepts(g, "[1]") and not accepts(g, '["x"]')
    plain = json.loads(json.dumps(schema).replace("$dynamicAnchor", "$anchor"))
    assert schema_to_grammar(schema).grammar == schema_to_grammar(plain).grammar


def test_each_binding_is_a_rule_of_its_own() -> None:
    """The generic list read under two bindings (numbers, strings) is two rules."""
    generic = {"$id": "list", "type": "array", "items": {"$dynamicRef": "#item"},
               "$defs": {"default": {"$dynamicAnchor": "item"}}}
    schema = {"$id": _BASE + "root", "type": "object", "properties": {
        "numbers": {"$ref": "numbers"}, "strings": {"$ref": "strings"}},
        "$defs": {"list": generic,
                  "numbers": {"$id": "numbers", "$ref": "list", "$defs": {
                      "n": {"$dynamicAnchor": "item", "type": "number"}}},
                  "strings": {"$id": "strings", "$ref": "list", "$defs": {
                      "s": {"$dynamicAnchor": "item", "type": "string"}}}}}
    g = compile_json_schema(schema, byte_vocabulary(), property_order="any")
    assert accepts(g, '{"numbers": [1, 2.5], "strings": ["a"]}')
    assert not accepts(g, '{"numbers": ["a"]}') and not accepts(g, '{"strings": [1]}')


def test_ref_to_a_dynamic_anchor_is_static() -> None:
    """Only `$dynamicRef` looks at the dynamic scope: the root's `T` (strings) does not
    replace the one `$ref` names (integers)."""
    schema = {"$id": _BASE + "root", "$ref": "r0",
              "$defs": {"t": {"$dynamicAnchor": "T", "type": "string"},
                        "r0": {"$id": "r0", "type": "array", "items": {"$ref": "#T"},
                               "$defs": {"t": {"$dynamicAnchor": "T", "type": "integer"}}}}}
    g = compile_json_schema(schema, byte_vocabulary())
    assert accepts(g, "[0]") and not accepts(g, '["x"]')
    schema["$defs"]["r0"]["items"] = {"$dynamicRef": "#T"}
    g = compile_json_schema(schema, byte_vocabulary())
    assert accepts(g, '["x"]') and not accepts(g, "[0]")
