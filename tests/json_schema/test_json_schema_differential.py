"""The JSON Schema frontend against the exact reference (`json_schema_exact`), instance TEXT
by instance text (`json_schema_diff.Differential`).

Schemas: random ones of every dialect (`json_schema_random`), given as a dict or as JSON text
with numbers spelled otherwise (`1e1`, `1.0`, `1E400`); and focused ones that nest `not`,
`oneOf` and `if` over numbers, strings and `propertyNames`, beside `enum`/`const` of objects
and arrays. Instances: values near each schema's boundaries and mutations of them
(`json_schema_values`), or values `hypothesis-jsonschema` draws, each spelled every way JSON
allows (`json_schema_spellings`: exponents, `1.0`, `-0`, long decimals, `\\u` escapes in names
and values, whitespace, member order).

Soundness: no text the reference finds invalid is accepted. Completeness: a valid text in
the documented form (no exponent, short whitespace runs, keys in member order, no format
subset edge case, patterns Python and ECMA-262 read alike) is accepted.
"""
from __future__ import annotations

import copy
import random
from typing import Any

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis_jsonschema import from_schema

from grammask.compiler import GrammarError

from ..support.budget import examples
from ..support.json_schema_diff import Differential, shrink
from ..support.json_schema_exact import NotJudged, exact_data
from ..support.json_schema_random import SchemaGen, as_dict, as_text, random_schema
from ..support.json_schema_suite import byte_vocabulary
from ..support.json_schema_values import values

SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
VALUES = 6


def differential(schema: Any) -> Differential | None:
    """The schema compiled with its reference, or None (an event says why)."""
    try:
        return Differential(schema, byte_vocabulary())
    except NotJudged:
        event("the reference does not judge the schema")
    except GrammarError as exc:
        event(f"compile error: {exc.code}")
    return None


def check_texts(diff: Differential, vals: list[Any], seed: int) -> None:
    """Every spelling of every value: no finding (reported shrunk)."""
    finding = diff.first_finding(diff.texts(vals, random.Random(seed)))
    assert finding is None, f"{shrink(finding, byte_vocabulary())}\n(as found: {finding})"


def given_as(schema: Any, text: bool, rng: random.Random) -> Any:
    return as_text(schema, rng) if text else as_dict(schema)


@given(text=st.booleans(), seed=st.integers(0, 2**32))
@settings(max_examples=examples(300), suppress_health_check=SLOW)
def test_random_schemas(text: bool, seed: int) -> None:
    """Schemas of every dialect and keyword mix (drawn from a seed, for variety: a failure
    is reported shrunk by `json_schema_diff.shrink`)."""
    rng = random.Random(seed)
    diff = differential(given_as(random_schema(rng), text, rng))
    if diff is not None:
        check_texts(diff, values(diff.data, random.Random(seed), VALUES), seed)


@given(rng=st.randoms(use_true_random=False), text=st.booleans(), seed=st.integers(0, 2**32),
       dialect=st.sampled_from([None, "draft-07", "draft-04"]))
@settings(max_examples=examples(200), suppress_health_check=SLOW)
def test_complements_names_and_container_values(rng: random.Random, text: bool, seed: int,
                                                dialect: str | None) -> None:
    """Complements of numeric and string keywords, propertyNames with combinators, enum and
    const of objects and arrays beside the keywords that constrain them, in objects, arrays
    and at the top."""
    gen = SchemaGen(rng, dialect, 2)
    kind = rng.random()
    if kind < 0.5:
        schema: Any = gen.focused(2)
    elif kind < 0.75 and gen.has("propertyNames"):
        schema = {"propertyNames": gen.name_schema(2)}
        if rng.random() < 0.5:
            schema["properties"] = {n: gen.leaf() for n in gen.names()}
    else:
        schema = {rng.choice(["not", "else"] if gen.has("if") else ["not"]): gen.negatable(1)}
        if "else" in schema:
            schema["if"] = gen.negatable(1)
        schema.update(gen.numeric() if rng.random() < 0.5 else gen.string())
    if rng.random() < 0.3:
        schema = rng.choice([{"items": schema}, {"properties": {"a": schema}}])
    if gen.defs:
        schema[gen.defs_key] = gen.defs
    if dialect is not None:
        schema["$schema"] = {"draft-07": "http://json-schema.org/draft-07/schema#",
                             "draft-04": "http://json-schema.org/draft-04/schema#"}[dialect]
    diff = differential(given_as(schema, text, rng))
    if diff is not None:
        check_texts(diff, values(diff.data, random.Random(seed), VALUES), seed)


@given(rng=st.randoms(use_true_random=False), data=st.data(), seed=st.integers(0, 2**32))
@settings(max_examples=examples(50), suppress_health_check=SLOW)
def test_values_from_hypothesis_jsonschema(rng: random.Random, data: st.DataObject,
                                           seed: int) -> None:
    """Valid values drawn by hypothesis-jsonschema (2020-12 schemas given as dicts), each
    spelled every way."""
    schema = as_dict(SchemaGen(rng, None, 2).root())
    diff = differential(schema)
    if diff is None:
        return
    try:
        strategy = from_schema(copy.deepcopy(schema))
    except Exception:  # noqa: BLE001 - a schema hypothesis-jsonschema cannot handle
        event("hypothesis-jsonschema cannot draw for the schema")
        return
    try:
        drawn = data.draw(st.lists(strategy, min_size=1, max_size=3))
    except InvalidArgument:  # an unsatisfiable branch it only finds out about while drawing
        event("hypothesis-jsonschema cannot draw for the schema")
        return
    assume(all(len(repr(v)) < 400 for v in drawn))
    check_texts(diff, [exact_data(v) for v in drawn], seed)
