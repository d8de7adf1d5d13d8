"""Each draft asserts its own keywords only (`compiler/frontends/json_schema/vocabularies.py`): under a
`$schema` draft, a keyword of another draft is an annotation, positively and under every
negation (`not`, overlapping `oneOf`, `if`, `disallow`, `propertyNames`).

Every verdict is compared with `jsonschema.validators.validator_for(schema)`: a compiled
schema accepts an instance exactly when that validator finds it valid; a schema that raises
`empty-language` is one the validator rejects every instance of. The vocabulary table itself
is compared with the `VALIDATORS` of jsonschema's validator classes, so it cannot drift.
"""
from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from jsonschema import validators

from grammask.compiler import GrammarError
from grammask.compiler import compile_json_schema
from grammask.compiler.frontends.json_schema.constraints import (
    HANDLED,
    POSITIVE,
    PRESENCE,
    UNSUPPORTED,
)
from grammask.compiler.frontends.json_schema.document import SchemaDocument
from grammask.compiler.frontends.json_schema.vocabularies import (
    ASSERTIONS,
    DRAFTS,
    LEGACY,
    READ_BY,
    VALIDATING,
    VOCABULARIES,
    dialect,
)
from grammask.compiler.support.limits import DEFAULT_LIMITS
from tests.support.json_schema_suite import accepts, byte_vocabulary

URIS = {
    "draft-03": "http://json-schema.org/draft-03/schema#",
    "draft-04": "http://json-schema.org/draft-04/schema#",
    "draft-06": "http://json-schema.org/draft-06/schema#",
    "draft-07": "http://json-schema.org/draft-07/schema#",
    "2019-09": "https://json-schema.org/draft/2019-09/schema",
    "2020-12": "https://json-schema.org/draft/2020-12/schema",
}
VALIDATORS = {
    "draft-03": validators.Draft3Validator, "draft-04": validators.Draft4Validator,
    "draft-06": validators.Draft6Validator, "draft-07": validators.Draft7Validator,
    "2019-09": validators.Draft201909Validator, "2020-12": validators.Draft202012Validator,
}
KNOWN = HANDLED | set(UNSUPPORTED) | set(PRESENCE) | set(POSITIVE)

# A value of each keyword that constrains the instances below when it is in force.
EXAMPLES: dict[str, dict[str, Any]] = {
    "required": {"required": ["a"]},
    "allOf": {"allOf": [{"type": "string"}]},
    "anyOf": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    "oneOf": {"oneOf": [{"type": "string"}]},
    "not": {"not": {"type": "integer"}},
    "minProperties": {"minProperties": 1},
    "maxProperties": {"maxProperties": 0},
    "multipleOf": {"multipleOf": 7},
    "const": {"const": 1},
    "contains": {"contains": {"const": 5}},
    "propertyNames": {"propertyNames": {"maxLength": 0}},
    "if": {"if": {"type": "integer"}, "then": {"minimum": 2}, "else": {"type": "string"}},
    "dependencies": {"dependencies": {"a": ["b"]}},
    "dependentRequired": {"dependentRequired": {"a": ["b"]}},
    "dependentSchemas": {"dependentSchemas": {"a": False}},
    "unevaluatedProperties": {"unevaluatedProperties": False},
    "unevaluatedItems": {"unevaluatedItems": False},
    "prefixItems": {"prefixItems": [{"type": "string"}]},
    "$recursiveRef": {"$recursiveRef": "#"},
    "$dynamicRef": {"$dynamicRef": "#"},
    "divisibleBy": {"divisibleBy": 7},
    "disallow": {"disallow": "integer"},
    "extends": {"extends": {"type": "string"}},
}
INSTANCES: list[Any] = [0, 1, 2, 5, 7, 2.5, "", "a", "ab", None, True, [], [1], ["a"], [5, 5],
                        {}, {"a": 1}, {"b": 2}, {"a": 1, "b": 2}]


def outside(draft: str) -> list[str]:
    """The example keywords no part of which is in force in `draft`."""
    return [k for k, fragment in EXAMPLES.items()
            if not set(fragment) & VOCABULARIES[draft]]


def cases(*drafts: str) -> list[tuple[str, str]]:
    return [(d, k) for d in drafts for k in outside(d)]


def verdicts_agree(schema: dict, instances: list[Any] = INSTANCES) -> None:
    """The compiled `schema` accepts exactly the instances its draft's validator accepts."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        validator = validators.validator_for(schema)(schema)
    expected = {json.dumps(v): validator.is_valid(v) for v in instances}
    try:
        compiled = compile_json_schema(schema, byte_vocabulary())
    except GrammarError as exc:
        assert exc.code == "empty-language", exc
        assert not any(expected.values()), f"valid: {[t for t, v in expected.items() if v]}"
        return
    got = {text: accepts(compiled, text) for text in expected}
    assert got == expected, {t: (got[t], expected[t]) for t in got if got[t] != expected[t]}


# ------------------------------------------------------------------------------- the table

@pytest.mark.parametrize("draft", DRAFTS)
def test_vocabulary_is_jsonschemas(draft: str) -> None:
    own = set(VALIDATORS[draft].VALIDATORS)
    assert VALIDATING[draft] == own & KNOWN
    assert not READ_BY[draft] & own, "a keyword read by another has no validator of its own"
    assert not LEGACY[draft] & own
    assert VOCABULARIES[draft] == VALIDATING[draft] | READ_BY[draft] | LEGACY[draft]


def test_every_known_keyword_asserts_in_some_draft() -> None:
    assert ASSERTIONS == KNOWN


@pytest.mark.parametrize("draft", DRAFTS)
def test_dialect_follows_schema(draft: str) -> None:
    root = {"$schema": URIS[draft]}
    assert dialect(root) == draft
    assert validators.validator_for(root) is VALIDATORS[draft]
    doc = SchemaDocument(root, DEFAULT_LIMITS)
    assert (doc.dialect, doc.vocabulary) == (draft, VOCABULARIES[draft])


@pytest.mark.parametrize("root", [{}, True, {"$schema": "https://example.com/mine"},
                                  {"$schema": 4}])
def test_no_or_unknown_schema_is_2020_12(root: Any) -> None:
    assert dialect(root) == "2020-12"


# ------------------------------------------------------------- keywords of other drafts

@pytest.mark.parametrize("draft, keyword", cases(*DRAFTS))
def test_annotation_positive(draft: str, keyword: str) -> None:
    verdicts_agree({"$schema": URIS[draft], **EXAMPLES[keyword]})


@pytest.mark.parametrize("draft, keyword", cases("draft-04", "draft-06", "draft-07",
                                                 "2019-09", "2020-12"))
def test_annotation_under_not(draft: str, keyword: str) -> None:
    verdicts_agree({"$schema": URIS[draft], "not": EXAMPLES[keyword]})
    verdicts_agree({"$schema": URIS[draft], "anyOf": [{"not": EXAMPLES[keyword]},
                                                      {"type": "boolean"}]})


@pytest.mark.parametrize("draft, keyword", cases("draft-04", "draft-06", "draft-07",
                                                 "2019-09", "2020-12"))
def test_annotation_in_overlapping_one_of(draft: str, keyword: str) -> None:
    verdicts_agree({"$schema": URIS[draft], "oneOf": [EXAMPLES[keyword], {"type": "integer"}]})


@pytest.mark.parametrize("draft, keyword", cases("draft-07", "2019-09", "2020-12"))
def test_annotation_in_if(draft: str, keyword: str) -> None:
    verdicts_agree({"$schema": URIS[draft], "if": EXAMPLES[keyword],
                    "then": {"type": ["string", "null"]}, "else": {"type": "integer"}})


@pytest.mark.parametrize("draft, keyword", cases("draft-03"))
def test_annotation_in_disallow(draft: str, keyword: str) -> None:
    verdicts_agree({"$schema": URIS[draft], "disallow": [EXAMPLES[keyword]]})
    verdicts_agree({"$schema": URIS[draft], "disallow": ["boolean", EXAMPLES[keyword]]})
    verdicts_agree({"$schema": URIS[draft],
                    "type": ["boolean", {"disallow": [EXAMPLES[keyword]]}]})


@pytest.mark.parametrize("draft, keyword", cases("draft-06", "draft-07", "2019-09",
                                                 "2020-12"))
def test_annotation_in_property_names(draft: str, keyword: str) -> None:
    verdicts_agree({"$schema": URIS[draft], "propertyNames": {"not": EXAMPLES[keyword]}})
    verdicts_agree({"$schema": URIS[draft],
                    "propertyNames": {"oneOf": [EXAMPLES[keyword], {"maxLength": 0}]}})


@pytest.mark.parametrize("schema", [
    {"$schema": URIS["draft-03"], "disallow": [{"minProperties": 1}]},
    {"$schema": URIS["draft-04"], "not": {"const": 1}},
    {"$schema": URIS["draft-04"], "const": 1},
    {"$schema": URIS["draft-06"], "not": {"if": {"type": "string"}, "then": {"minLength": 2}}},
    {"$schema": URIS["draft-07"], "not": {"dependentRequired": {"a": ["b"]}}},
    {"$schema": URIS["draft-07"], "not": {"prefixItems": [{"type": "string"}]}},
    {"$schema": URIS["draft-07"], "oneOf": [{"minContains": 2}, {"type": "string"}]},
    {"$schema": URIS["draft-07"], "propertyNames": {"not": {"const": "a"}}},
    {"$schema": URIS["draft-07"], "not": {"$defs": {"a": {"type": "string"}},
                                          "dependentSchemas": {"a": False}}},
    {"$schema": URIS["2019-09"], "anyOf": [{"not": {"prefixItems": [{}]}}, {"const": 1}]},
    {"$schema": URIS["2020-12"], "not": {"$recursiveRef": "#", "type": "string"}},
])
def test_reported_cases(schema: dict) -> None:
    verdicts_agree(schema)


# --------------------------------------------------------------- forms that differ by draft

@pytest.mark.parametrize("schema, instances", [
    # Drafts 3-4: exclusiveMinimum only flags minimum, any true value (a number too).
    ({"$schema": URIS["draft-04"], "minimum": 5, "exclusiveMinimum": 3}, [4, 5, 6, 3.5]),
    ({"$schema": URIS["draft-04"], "exclusiveMinimum": 3}, [1, 4]),
    ({"$schema": URIS["draft-04"], "maximum": 5, "exclusiveMaximum": True}, [4, 5, 6]),
    ({"$schema": URIS["draft-04"], "maximum": 5, "exclusiveMaximum": 0}, [4, 5, 6]),
    ({"$schema": URIS["draft-03"], "minimum": 1, "exclusiveMinimum": True}, [1, 2]),
    ({"$schema": URIS["draft-06"], "exclusiveMinimum": 3}, [3, 4]),
    ({"$schema": URIS["draft-04"], "anyOf": [{"not": {"exclusiveMinimum": 3}},
                                             {"type": "string"}]}, [1, 4, "x"]),
    # Draft 3 has no array `required`: only the parent's properties read it.
    ({"$schema": URIS["draft-03"], "required": ["a"]}, [{}, {"a": 1}]),
    ({"$schema": URIS["draft-03"], "properties": {"a": {"required": ["x"]}}}, [{}, {"a": 1}]),
    # `dependencies` is gone in 2019-09 (so without $schema too), present in drafts 3-7.
    ({"dependencies": {"a": ["b"]}}, [{"a": 1}, {}]),
    ({"$schema": URIS["2019-09"], "dependencies": {"a": ["b"]}}, [{"a": 1}, {}]),
    ({"$schema": URIS["draft-07"], "dependencies": {"a": ["b"]}}, [{"a": 1}, {}, {"b": 1}]),
    # Array-form items and additionalItems up to 2019-09; prefixItems from 2020-12.
    ({"$schema": URIS["2019-09"], "items": [{"type": "integer"}], "additionalItems": False},
     [[], [1], ["a"], [1, 2]]),
    ({"$schema": URIS["2019-09"], "prefixItems": [{"type": "integer"}], "items": False},
     [[], [1], ["a"]]),
    ({"prefixItems": [{"type": "integer"}], "items": False}, [[], [1], ["a"], [1, 2]]),
    # A reference into a keyword of another draft still finds the schema there.
    ({"$schema": URIS["draft-04"], "$ref": "#/if", "if": {"type": "integer"}}, [1, "x"]),
    ({"$schema": URIS["draft-07"], "properties": {"p": {"$ref": "#/$defs/s"}},
      "$defs": {"s": {"type": "string"}}}, [{"p": "x"}, {"p": 1}]),
])
def test_forms_by_draft(schema: dict, instances: list[Any]) -> None:
    verdicts_agree(schema, instances)


def test_vocabulary_applies_to_lint() -> None:
    from grammask.compiler.frontends.json_schema import JsonSchemaOptions
    from grammask.compiler.analyses.json_schema import lint_schema

    schema = {"$schema": URIS["draft-07"], "type": "object",
              "properties": {"a": {"type": "array", "items": {}}},
              "unevaluatedProperties": False, "dependentSchemas": {"a": {"not": {}}}}
    found = lint_schema(json.dumps(schema), "s.json", JsonSchemaOptions())
    assert not [d for d in found if d.severity == "error"]
