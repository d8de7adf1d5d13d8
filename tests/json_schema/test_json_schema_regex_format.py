"""`format: "regex"` (`regex_syntax.py`) against ECMA-262 itself: every text the grammar accepts
is a pattern `new RegExp(text, "u")` accepts (sound), and nearly every valid one is accepted.
The verdicts of Node.js on 2,526 texts (common patterns and random texts over the syntax's
characters) are vendored in `tests/data/ecma_regex_verdicts.json`; where `node` runs, random
texts are also checked live.
"""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler import GrammarError, compile_json_schema
from tests.support import ecma_regex_oracle
from tests.support.budget import examples
from tests.support.json_schema_suite import accepts, byte_vocabulary
from tests.support.paths import DATA

VERDICTS = json.loads((DATA / "ecma_regex_verdicts.json").read_text(encoding="utf-8"))
_PIECES = [*"ab09-^$\\.*+?()[]{}|,:<>=!/dDsSwWbBkpPuxcé\n\"", "\\u0041", "\\x41", "{1,2}",
           "{2,1}", "(?<n>", "(?:", "\\p{L}", "\\d", "[a-z]", "[z-a]", "\\k<n>", "\\1", "\\0"]


@pytest.fixture(scope="module")
def regex_format():  # type: ignore[no-untyped-def]
    return compile_json_schema({"type": "string", "format": "regex"}, byte_vocabulary())


def _accepts(compiled, text: str) -> bool:  # type: ignore[no-untyped-def]
    return accepts(compiled, json.dumps(text, ensure_ascii=False))


def test_vendored_verdicts(regex_format) -> None:  # type: ignore[no-untyped-def]
    verdicts = VERDICTS["verdicts"]
    accepted = {text for text, _ in verdicts if _accepts(regex_format, text)}
    assert not [t for t, valid in verdicts if t in accepted and not valid]
    valid = [t for t, ok in verdicts if ok]
    assert len(accepted) >= 0.99 * len(valid), [t for t in valid if t not in accepted]
    assert all(t in accepted for t in VERDICTS["common"]), \
        [t for t in VERDICTS["common"] if t not in accepted]


@pytest.mark.skipif(not ecma_regex_oracle.available(), reason="node is not on the PATH; "
                    "test_vendored_verdicts holds its verdicts")
@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=8).map("".join))
def test_accepted_texts_are_patterns(regex_format, text: str) -> None:  # type: ignore[no-untyped-def]
    if _accepts(regex_format, text):
        assert ecma_regex_oracle.valid(text), text


@pytest.mark.parametrize("text, ok", [
    ("[a-z]+", True), ("[z-a]", False), ("a{2,1}", False), ("a{1,2}", True), ("(?<a>x)", True),
    ("(?<a>x)(?<a>y)", False), ("\\a", False), ("(", False), ("a)", False), ("(?=a)*", False),
    ('"', True), ("\\\\", True), ("\\k<a>", False),
])
def test_examples(regex_format, text: str, ok: bool) -> None:  # type: ignore[no-untyped-def]
    assert _accepts(regex_format, text) is ok


@pytest.mark.parametrize("schema", [
    {"format": "regex", "maxLength": 10},
    {"format": "regex", "pattern": "^a"},
    {"allOf": [{"format": "regex"}, {"format": "email"}]},
    {"not": {"format": "regex"}},
    {"enum": ["a", "("], "format": "regex"},
])
def test_beside_other_string_keywords_it_is_refused(schema: dict) -> None:
    with pytest.raises(GrammarError) as err:
        compile_json_schema(schema, byte_vocabulary())
    assert err.value.code == "unsupported-format" and err.value.pointer


def test_spellings_are_raw_with_a_note() -> None:
    compiled = compile_json_schema({"properties": {"p": {"format": "regex"}}}, byte_vocabulary())
    assert any("relaxation string-escapes" in n for n in compiled.notes), compiled.notes
    assert accepts(compiled, '{"p": "^\\\\d+$"}')
    assert not accepts(compiled, '{"p": "\\u005cd"}')  # `\d` with its backslash escaped
