"""`extract`: the matches of a language inside free text.

Against a brute force over every substring (leftmost, then longest, then on after its end),
whose acceptance is the matcher's own and whose JSON is checked with `jsonschema`: random valid
instances of random schemas (DFA and pushdown languages) embedded in noise with near misses
around them (truncated and mutated instances) are found exactly where the brute force finds
them, every match found validates, and the instance itself is found (or a longer match from
its start) unless a match from before it runs into it (a near miss's quote pairing with its
own). Regexes against Python's `re.fullmatch` over every substring.
Texts without any valid substring give nothing; spans, line:col and the CLI.
"""
from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from grammask.compiler import GrammarError, compile_json_schema, compile_regex
from grammask.compiler.tools.extract import extract
from grammask.runtime import Matcher

from ..json_schema.test_json_schema_invariants import SLOW
from ..support.budget import examples
from ..support.cli import run
from ..support.json_schema_oracle import documented_form, validator
from ..support.json_schema_strategies import Unsatisfied, candidate, schemas
from ..support.json_schema_suite import byte_vocabulary

NOISE = "abcdghijklmopqrsuvwxyz ,!?;:\n"
"""Characters that neither begin a JSON value nor continue one (no digits, e, f, n, t, '.')."""


def brute_force(text: str, accepts: Any) -> list[tuple[int, int]]:
    """Leftmost-longest non-overlapping matches over every substring (byte offsets)."""
    data = text.encode()
    found, p = [], 0
    while p < len(data):
        ends = [q for q in range(len(data), p, -1) if accepts(data[p:q])]
        if ends:
            found.append((p, ends[0]))
            p = ends[0]
        else:
            p += 1
    return found


def json_acceptor(compiled: Any) -> Any:
    def accepts(data: bytes) -> bool:
        try:
            json.loads(data)
        except ValueError:
            return False
        m = Matcher(compiled)
        return m.accept_string(data) and m.can_terminate()
    return accepts


def near_misses(text: str, rng: random.Random) -> list[str]:
    """Truncations and one-character mutations of an instance's text."""
    out = []
    if len(text) > 1:
        out.append(text[:rng.randrange(1, len(text))])
    i = rng.randrange(len(text))
    out.append(text[:i] + rng.choice('{}[]":,x0') + text[i + 1:])
    return out


def noise(rng: random.Random) -> str:
    return "".join(rng.choice(NOISE) for _ in range(rng.randrange(0, 6)))


def drawn(schema: Any, data: st.DataObject) -> tuple[Any, Any, str] | None:
    """(validator, compiled schema, a valid instance's text of at most 60 characters) for a
    random schema, or None where it does not compile (the draw is dropped when no documented
    value comes)."""
    check = validator(schema)
    try:
        value = documented_form(check, candidate(data.draw, schema, schema))
    except Unsatisfied:
        value = None
    assume(value is not None and len(json.dumps(value, ensure_ascii=False)) <= 60)
    try:
        compiled = compile_json_schema(schema, byte_vocabulary())
    except GrammarError as exc:
        event(f"compile error: {exc.code}")
        return None
    return check, compiled, json.dumps(value, ensure_ascii=False)


@given(schema=schemas(), data=st.data(), rng=st.randoms(use_true_random=True))
@settings(max_examples=examples(40), suppress_health_check=SLOW, deadline=None)
def test_instances_in_noise(schema: Any, data: st.DataObject, rng: random.Random) -> None:
    found = drawn(schema, data)
    if found is None:
        return
    check, compiled, instance = found
    before = noise(rng) + " ".join(near_misses(instance, rng)) + noise(rng) + " "
    text = before + instance + " " + noise(rng) + " ".join(near_misses(instance, rng))
    accepts = json_acceptor(compiled)
    expected = brute_force(text, accepts)
    found = [(m.start, m.end) for m in extract(compiled, text, every=True)]
    assert found == expected, (text, found, expected)
    for m in extract(compiled, text, every=True):
        assert check.is_valid(json.loads(m.text)), m.text
    start = len(before.encode())
    span = (start, start + len(instance.encode()))
    if any(a < span[0] < b for a, b in expected):
        event("a match before the instance runs into it")
    else:
        at = [b for a, b in expected if a == span[0]]
        assert at and at[0] >= span[1], (text, expected)
        event("instance found exactly" if at[0] == span[1] else "the instance extended")
    first = extract(compiled, text)
    assert [(m.start, m.end) for m in first] == expected[:1]


@given(schema=schemas(), data=st.data(), rng=st.randoms(use_true_random=True))
@settings(max_examples=examples(25), suppress_health_check=SLOW, deadline=None)
def test_nothing_in_near_misses(schema: Any, data: st.DataObject, rng: random.Random) -> None:
    """A text with no valid substring (near misses, noise) gives no match."""
    found = drawn(schema, data)
    if found is None:
        return
    _, compiled, instance = found
    text = noise(rng) + " ".join(near_misses(instance, rng) + near_misses(instance, rng))
    expected = brute_force(text, json_acceptor(compiled))
    assume(not expected)
    assert extract(compiled, text, every=True) == []


REGEXES = [r"[a-z]+@[a-z]+\.com", r"(ab|a)(bc|c)?", r"\d{2,4}", r"x*"]


@pytest.mark.parametrize("pattern", REGEXES)
@given(rng=st.randoms(use_true_random=True))
@settings(max_examples=examples(40), deadline=None)
def test_regex_against_re(pattern: str, rng: random.Random) -> None:
    compiled = compile_regex(pattern, byte_vocabulary())
    text = "".join(rng.choice("abcx@.com 0123") for _ in range(rng.randrange(0, 30)))
    expected = brute_force(text, lambda d: re.fullmatch(pattern, d.decode()) is not None)
    assert [(m.start, m.end) for m in extract(compiled, text, every=True)] == expected


def test_spans_lines_and_columns() -> None:
    compiled = compile_json_schema({"type": "object", "properties": {"a": {"type": "integer"}},
                                    "required": ["a"]}, byte_vocabulary())
    text = 'Sure! é {"a": 1 broken\nHere: {"a":\n 2} and {"a": 3}'
    (m,) = extract(compiled, text)
    assert (m.line, m.column, m.end_line, m.end_column) == (2, 7, 3, 3)
    assert m.text == '{"a":\n 2}' and text.encode()[m.start:m.end] == m.text.encode()
    assert [x.text for x in extract(compiled, text, every=True)] == ['{"a":\n 2}', '{"a": 3}']
    assert m.as_json()["start"] == m.start
    assert extract(compiled, "no answer here") == []


def test_bad_argument() -> None:
    with pytest.raises(TypeError, match="compiled grammar"):
        extract("not compiled", "text")  # type: ignore[arg-type]


def test_cli(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({"type": "object", "properties": {
        "name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name"]}))
    answer = tmp_path / "answer.txt"
    answer.write_text('Sure! {"age": 3, "name": "Ada"} and {"name": "Bob"}.')
    code, out, _ = run(capsys, "extract", str(schema), str(answer))
    assert code == 0 and json.loads(out)["text"] == '{"age": 3, "name": "Ada"}'
    code, out, _ = run(capsys, "extract", str(schema), str(answer), "--all", "--text")
    assert code == 0 and out.splitlines() == ['{"age": 3, "name": "Ada"}', '{"name": "Bob"}']
    code, out, _ = run(capsys, "extract", "--regex", "[0-9]+", str(answer))
    assert code == 0 and json.loads(out)["text"] == "3"
    empty = tmp_path / "empty.txt"
    empty.write_text("nothing")
    assert run(capsys, "extract", str(schema), str(empty))[0] == 1
    code, _, err = run(capsys, "extract", str(tmp_path / "missing.json"), str(answer))
    assert code == 2 and "missing.json" in err
