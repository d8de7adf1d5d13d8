"""The declared sound subsets (`relaxations.py`): the registry agrees with both documents, each
format subset lies inside its superset, and complements are taken inside the domains, checked
against `jsonschema` on the strings and numbers the subsets leave out.

`propertyNames` is read as a string language with every combinator (`string_sets.py`): a
property over random combinator trees of string keywords, names judged by `jsonschema`.
"""
from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler import GrammarError
from grammask.compiler import compile_json_schema
from grammask.compiler.frontends.json_schema.formats import KNOWN_FORMATS, format_node, format_superset
from grammask.compiler.frontends.json_schema.relaxations import RELAXATIONS
from grammask.compiler.automata.language_ops import as_dfa, difference
from tests.support.budget import examples
from tests.support.json_schema_suite import accepts, byte_vocabulary
from tests.support.paths import SPECS



def test_every_relaxation_is_documented_in_both_specs() -> None:
    text = (SPECS / "json_schema.md").read_text(encoding="utf-8")
    matrix = json.loads((SPECS / "json_schema_support.json").read_text(encoding="utf-8"))
    names = {r.name for r in RELAXATIONS}
    assert set(matrix["relaxations"]) == names
    for name in names:
        assert f"`{name}`" in text, name


@pytest.mark.parametrize("name", KNOWN_FORMATS)
def test_each_format_lies_inside_its_superset(name: str) -> None:
    under, over = as_dfa(format_node(name)), as_dfa(format_superset(name))
    assert difference(under, over).dfa.is_empty_language
    strict = not difference(over, under).dfa.is_empty_language
    assert strict == (name in ("time", "date-time", "hostname", "idn-hostname", "idn-email")), \
        name


# Valid strings each format subset rejects: removing the format must not accept them either.
OUTSIDE_SUBSETS = {
    "time": ["15:59:60-08:00", "10:00:60Z"],
    "date-time": ["1998-12-31T15:59:60.123-08:00", "2020-01-01T10:00:60Z"],
    "hostname": [".".join(["abcdefghijklmnopqrstuvw"] * 4), "ab--c"],
    "idn-hostname": ["\uc2e4\ub840.\ud14c\uc2a4\ud2b8", "xn--ihqwcrb4cv8a8dqg056pqjye"],
    "idn-email": ["\uc2e4\ub840@\uc2e4\ub840.\ud14c\uc2a4\ud2b8"],
}


@pytest.mark.parametrize("name", sorted(OUTSIDE_SUBSETS))
def test_removed_formats_keep_out_what_their_subsets_leave_out(name: str) -> None:
    c = compile_json_schema({"type": "string", "not": {"format": name}}, byte_vocabulary())
    plain = compile_json_schema({"type": "string", "format": name}, byte_vocabulary())
    for value in OUTSIDE_SUBSETS[name]:
        text = json.dumps(value)
        assert not accepts(plain, text), value        # outside the subset...
        assert not accepts(c, text), value            # ...and not let in by the complement


# Every removed number keeps its exponent spellings out, however the complement arises.
COMPLEMENTS = [
    {"not": {"const": 10}},
    {"type": "number", "not": {"minimum": 5}},
    {"if": {"minimum": 5}, "then": False},
    {"if": {"maximum": 5}, "then": {}, "else": False},
    {"oneOf": [{"type": "number"}, {"const": 10}]},
    {"oneOf": [{"type": "number"}, {"multipleOf": 5}]},
    {"not": {"enum": [10, "x"]}},
    {"type": "number", "not": {"type": "integer"}},
    {"not": {"anyOf": [{"const": 10}, {"maximum": 0}]}},
]
SPELLINGS = ["1e1", "1E1", "1e+1", "10e0", "100e-1", "0.1e2", "1.0e1", "-1e1", "0e0", "-0e5",
             "1.5e0", "2e1", "1e-1", "5e0", "50E-1"]


@pytest.mark.parametrize("schema", COMPLEMENTS, ids=json.dumps)
def test_complements_accept_no_invalid_exponent_spelling(schema: dict) -> None:
    c = compile_json_schema(schema, byte_vocabulary())
    check = jsonschema.Draft202012Validator(schema)
    for text in SPELLINGS:
        if accepts(c, text):
            assert check.is_valid(json.loads(text)), text


def _names() -> st.SearchStrategy[str]:
    return st.text(alphabet="abx", max_size=3)


def _leaf() -> st.SearchStrategy[dict]:
    return st.one_of(
        st.builds(lambda v: {"const": v}, _names()),
        st.builds(lambda vs: {"enum": vs}, st.lists(_names(), max_size=3)),
        st.builds(lambda n: {"minLength": n}, st.integers(0, 3)),
        st.builds(lambda n: {"maxLength": n}, st.integers(0, 3)),
        st.sampled_from([{"pattern": "^a"}, {"pattern": "x"}, {"pattern": "^(ab)*$"},
                         {"type": "string"}, {"type": "integer"}, {}, {"not": {}}]),
    )


def _tree() -> st.SearchStrategy[dict]:
    return st.recursive(_leaf(), lambda inner: st.one_of(
        st.builds(lambda s: {"not": s}, inner),
        st.builds(lambda ss: {"anyOf": ss}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda ss: {"oneOf": ss}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda ss: {"allOf": ss}, st.lists(inner, min_size=1, max_size=2)),
        st.builds(lambda i, t, e: {"if": i, "then": t, "else": e}, inner, inner, inner),
        st.builds(lambda a, b: {**a, **{k: v for k, v in b.items() if k not in a}}, inner, inner),
    ), max_leaves=6)


@settings(max_examples=examples(150))
@given(_tree(), st.lists(_names(), min_size=1, max_size=6, unique=True))
def test_property_names_with_combinators_agree_with_jsonschema(names_schema: dict,
                                                               names: list[str]) -> None:
    schema = {"type": "object", "propertyNames": names_schema}
    check = jsonschema.Draft202012Validator(schema)
    try:
        c = compile_json_schema(schema, byte_vocabulary())
    except GrammarError as exc:
        assert exc.code == "empty-language"
        assert not any(check.is_valid({n: 0}) for n in names)
        return
    for name in names:
        text = json.dumps({name: 0})
        assert accepts(c, text) == check.is_valid({name: 0}), (name, schema)
