"""`difference` and `grammask diff`: language inclusion with a shortest witness.

Known schema pairs (a property optional vs required, an enum widened vs narrowed, a maximum
raised vs lowered, additionalProperties closed, a recursive schema's leaf type narrowed): each
direction has a witness exactly when it should, the witness is valid under the one schema and
invalid under the other (`jsonschema`), with the pointer where it parts. Random schema pairs
(`json_schema_strategies`, a schema against a refinement, against its own anyOf with another,
and against an unrelated one): every witness is accepted by the first compiled grammar, valid
under the first schema, rejected by the second grammar from its `offset` on, and invalid under
the second schema unless the second grammar's documented subset (key order, duplicate additional
keys) is what excludes it; a schema against anyOf of itself and another has no witness.
Recursive grammars against Lark; the CLI's exit codes and JSON output.
"""
from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import event, given, settings

from grammask.compiler import BudgetExceeded, GrammarError, compile_json_schema
from grammask.compiler.tools.diff import Witness, difference
from grammask.compiler.frontends.registry import read
from grammask.runtime import Matcher

from ..json_schema.test_json_schema_invariants import SLOW
from ..support.budget import examples
from ..support.cli import run
from ..support.json_schema_oracle import documented_form, validator
from ..support.json_schema_strategies import schemas
from ..support.json_schema_suite import byte_vocabulary

OBJ = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
       "additionalProperties": False}
NODE = {"$defs": {"n": {"type": "object", "additionalProperties": False, "properties": {
    "next": {"$ref": "#/$defs/n"}, "v": {"type": ["integer", "string"]}}}},
    "$ref": "#/$defs/n"}
PAIRS = [
    # (old, new, old-not-new pointer or None, new-not-old pointer or None)
    (OBJ, {**OBJ, "required": ["a"]}, "", None),
    ({"enum": ["x", "y"]}, {"enum": ["x", "y", "z"]}, None, ""),
    ({"type": "integer", "maximum": 10}, {"type": "integer", "maximum": 5}, "", None),
    ({"type": "object", "properties": {"a": {"type": "integer", "maximum": 10}},
      "required": ["a"]},
     {"type": "object", "properties": {"a": {"type": "integer", "maximum": 20}},
      "required": ["a"]}, None, "/a"),
    ({"type": "object", "properties": {"a": {"type": "integer"}}},
     {"type": "object", "properties": {"a": {"type": "integer"}},
      "additionalProperties": False}, "/", None),
    (NODE, {**NODE, "$defs": {"n": {**NODE["$defs"]["n"], "properties": {
        "next": {"$ref": "#/$defs/n"}, "v": {"type": "integer"}}}}}, "/v", None),
]


def witnessed(old: Any, new: Any, w: Witness | None, pointer: str | None) -> None:
    if pointer is None:
        assert w is None, w
        return
    assert w is not None
    assert validator(old).is_valid(w.value) and not validator(new).is_valid(w.value), w
    assert w.pointer == pointer, w


@pytest.mark.parametrize("old, new, forward, backward", PAIRS)
def test_known_pairs(old: Any, new: Any, forward: str | None, backward: str | None) -> None:
    witnessed(old, new, difference(old, new), forward)
    witnessed(new, old, difference(new, old), backward)


def test_depth_is_reported() -> None:
    w = difference(NODE, {**NODE, "$defs": {"n": {**NODE["$defs"]["n"], "properties": {
        "next": {"$ref": "#/$defs/n"}, "v": {"type": "integer"}}}}})
    assert w is not None and w.depth == 3
    assert difference({"type": "integer"}, {"type": "string"}).depth is None  # type: ignore


def accepts(schema: Any, text: str) -> bool:
    m = Matcher(compile_json_schema(schema, byte_vocabulary()))
    return m.accept_string(text.encode()) and m.can_terminate()


def refused_from(schema: Any, text: str, offset: int) -> bool:
    """The compiled `schema` takes text[:offset] as a viable prefix and no more (or all of it
    without accepting it)."""
    data = text.encode()
    try:
        m = Matcher(compile_json_schema(schema, byte_vocabulary()))
    except GrammarError as exc:
        return exc.code == "empty-language" and offset == 0
    if not m.accept_string(data[:offset]):
        return False
    return (not m.accept_string(data[offset:offset + 1])) if offset < len(data) \
        else not m.can_terminate()


def subset_artifact(schema: Any, value: Any, text: str) -> bool:
    """Whether `value`, valid under `schema`, is outside its compiled language only through the
    documented subset: its keys in another order, or a repeated additional key."""
    repeated: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in items]
        repeated.extend(k for k in keys if keys.count(k) > 1)
        return dict(items)

    json.loads(text, object_pairs_hook=pairs)
    arranged = documented_form(validator(schema), value)
    return bool(repeated) or arranged is None or json.dumps(arranged) != json.dumps(value)


def check_pair(a: Any, b: Any) -> Witness | None:
    try:
        w = difference(a, b)
    except (BudgetExceeded, GrammarError) as exc:
        event(f"error: {getattr(exc, 'code', None)}")
        return None
    if w is None:
        event("no witness")
        return None
    assert accepts(a, w.text), w
    if subset_artifact(a, w.value, w.text) and not validator(a).is_valid(w.value):
        event("witness repeats a key of a's open object (a's documented subset)")
        return w
    assert validator(a).is_valid(w.value), w
    assert refused_from(b, w.text, w.offset), w
    if validator(b).is_valid(w.value):
        assert subset_artifact(b, w.value, w.text), w
        event("witness outside the second's documented subset")
    else:
        event("witness invalid under the second")
    return w


@given(a=schemas(), b=schemas())
@settings(max_examples=examples(30), suppress_health_check=SLOW, deadline=None)
def test_random_pairs(a: Any, b: Any) -> None:
    check_pair(a, b)


@given(a=schemas(), b=schemas())
@settings(max_examples=examples(20), suppress_health_check=SLOW, deadline=None)
def test_against_own_any_of(a: Any, b: Any) -> None:
    """anyOf [a, b] holds a: no witness; the other way, any witness is one of b's."""
    both = {"anyOf": [a, b]}
    try:
        assert difference(a, both) is None
    except (BudgetExceeded, GrammarError) as exc:
        event(f"error: {getattr(exc, 'code', None)}")
    check_pair(both, a)


def test_grammars_against_each_other() -> None:
    nested = read("gbnf", 'root ::= "(" root ")" | "x"')[0]
    wider = read("gbnf", 'root ::= "(" root ")" | "x" | "y"')[0]
    assert difference(nested, wider) is None
    w = difference(wider, nested)
    assert w is not None and w.text == "y" and w.offset == 0 and w.pointer is None
    assert w.depth == 3


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match="IR grammars or JSON Schemas"):
        difference("not a schema", {})
    with pytest.raises(ValueError, match="depth"):
        difference({}, {}, depth=-1)


def test_cli(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps({**OBJ, "properties": {**OBJ["properties"],
                                                       "c": {"enum": ["p", "q"]}}}))
    new.write_text(json.dumps({**OBJ, "properties": {**OBJ["properties"],
                                                       "c": {"enum": ["p"]}}}))
    code, out, _ = run(capsys, "diff", str(old), str(new))
    assert code == 1 and "old-not-new" in out and "exact" in out
    code, out, _ = run(capsys, "diff", str(old), str(new), "--format", "json")
    (line,) = out.splitlines()
    found = json.loads(line)
    assert found["direction"] == "old-not-new" and found["witness"] == {"c": "q"}
    assert found["pointer"] == "/c" and found["depth"] is None
    code, out, _ = run(capsys, "diff", str(new), str(old))
    assert code == 0 and "new-not-old" in out
    assert run(capsys, "diff", str(old), str(tmp_path / "missing.json"))[0] == 2
    code, _, err = run(capsys, "diff", str(old), str(new), "--depth", "-1")
    assert code == 2 and "--depth" in err


def test_empty_languages() -> None:
    """A schema nothing satisfies holds in every other; every other's strings part from it."""
    empty = {"type": "integer", "minimum": 5, "maximum": 1}
    assert difference(empty, {"type": "integer"}) is None
    w = difference({"type": "integer"}, empty)
    assert w is not None and w.offset == 0 and isinstance(w.value, int)


def test_cli_key_order(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Properties listed in another order part the schema-order languages, not the any-order
    ones."""
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps({**OBJ, "required": ["a", "b"]}))
    new.write_text(json.dumps({**OBJ, "properties": {"b": OBJ["properties"]["b"],
                                                     "a": OBJ["properties"]["a"]},
                               "required": ["a", "b"]}))
    code, out, _ = run(capsys, "diff", str(old), str(new))
    assert code == 1 and "/a" in out
    code, out, _ = run(capsys, "diff", str(old), str(new), "--property-order", "any")
    assert code == 0 and out.count("accepts everything") == 2
