"""Soundness and completeness of the JSON Schema frontend, judged by `jsonschema`
(`json_schema_oracle`).

Completeness: a valid value in the frontend's documented subset (`documented_form`: keys in
member order, no exponents, patterns read alike by Python and ECMA-262) goes through token by
token, each token in the mask before it is accepted and EOS allowed at the end, written as
`json.dumps(value, ensure_ascii=False)` and with `indent=2` (where the nesting fits the default
whitespace bound: depth 11), under the vocabulary's usual tokenization and a random one.
Values over `MAX_TEXT` characters are skipped.
Soundness: random constrained walks (see `walk`) that end with EOS spell one JSON value that
validates, formats included. Walks that reach the step cap are not judged.

Schemas: a vendored sample of real schemas (`data/json_schema_sample.jsonl`, from
JSONSchemaBench; see `data/json_schema_sample.SOURCE.md`) with values from
`hypothesis-jsonschema`, on the default vocabulary; and random schemas
(`json_schema_strategies`) with values from `candidate`, on the small vocabulary. A random
schema may instead fail to compile with `GrammarError`, but `empty-language` only when none
of its drawn values is valid; a vendored one compiles.
"""
from __future__ import annotations

import copy
import functools
import json
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from grammask.compiler import GrammarError
from grammask.compiler import compile_json_schema
from grammask.runtime import Matcher, Vocabulary, allocate_token_bitmask

from ..support.budget import examples
from ..support.json_schema_oracle import documented_form, validator, without_exponents
from ..support.json_schema_strategies import Unsatisfied, candidate, schemas
from ..support.json_schema_suite import accepts, byte_vocabulary
from ..support.masks import random_tokenization
from ..support.paths import DATA
from ..support.vocabularies import small_vocabulary

SAMPLE = DATA / "json_schema_sample.jsonl"
CUSTOM_FORMATS = {
    "uuid": st.uuids().map(str),
    "duration": st.from_regex(r"P([0-9]{1,3}[DWMY]|T[0-9]{1,2}H([0-9]{1,2}M)?)", fullmatch=True),
}
"""Formats `hypothesis-jsonschema` does not generate (it would draw any text)."""
MAX_INDENT_DEPTH = 11
MAX_TEXT = 2500
"""Longer values are skipped: every token costs a mask fill over the default vocabulary."""
CLOSERS = (b'"', b"}", b"]")


@functools.cache
def sample() -> dict[str, Any]:
    """The vendored real schemas by id."""
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    return {rec["id"]: rec["schema"] for rec in map(json.loads, lines)}


def depth_of(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    return 0


def spellings(value: Any) -> list[str]:
    """The compact-ish and the `indent=2` texts of a value, where the layout allows them."""
    texts = [json.dumps(value, ensure_ascii=False)]
    if depth_of(value) <= MAX_INDENT_DEPTH:
        texts.append(json.dumps(value, ensure_ascii=False, indent=2))
    return texts


def allowed(matcher: Matcher, vocab: Vocabulary) -> np.ndarray:
    """The ids the filled mask allows, ascending."""
    bm = allocate_token_bitmask(1, vocab.size)
    matcher.fill_next_token_bitmask(bm)
    bits = np.unpackbits(bm[0].astype("<i4").view(np.uint8), bitorder="little")
    return np.flatnonzero(bits[:vocab.size])


def allows(matcher: Matcher, vocab: Vocabulary, tid: int) -> bool:
    bm = allocate_token_bitmask(1, vocab.size)
    matcher.fill_next_token_bitmask(bm)
    return bool((int(bm[0, tid >> 5]) >> (tid & 31)) & 1)


def check_tokens(compiled: Any, vocab: Vocabulary, text: str, ids: list[int]) -> None:
    """Each token is in the mask before it is accepted; EOS is allowed at the end."""
    matcher = Matcher(compiled)
    done = b""
    for tid in ids:
        assert allows(matcher, vocab, tid), (
            f"token {vocab.token_bytes(tid)!r} refused after {done[-80:]!r} in {text[:400]!r}")
        assert matcher.accept_token(tid)
        done += vocab.token_bytes(tid)
    assert matcher.can_terminate() and allows(matcher, vocab, vocab.eos_token_id), (
        f"EOS refused at the end of {text[:400]!r}")


def check_accepted(compiled: Any, vocab: Vocabulary, value: Any, rng: random.Random) -> None:
    for text in spellings(value):
        check_tokens(compiled, vocab, text, vocab.encode(text))
        check_tokens(compiled, vocab, text, random_tokenization(vocab, text.encode(), rng))


@functools.lru_cache(maxsize=4)
def closing_tokens(vocab: Vocabulary) -> np.ndarray:
    """Per id: whether its bytes close a string, an object or an array."""
    return np.array([any(c in b for c in CLOSERS) for b in vocab.grammar_token_list])


def walk(compiled: Any, vocab: Vocabulary, rng: random.Random, max_steps: int) -> bytes | None:
    """A random constrained walk: the text if it ended with EOS, None at the step cap. EOS is
    taken half the time it is allowed; otherwise half the time the token is drawn among the
    allowed ones that close a string, object or array, else among all allowed ones."""
    matcher = Matcher(compiled)
    eos = vocab.eos_token_ids
    closing = closing_tokens(vocab)
    text = b""
    for _ in range(max_steps):
        ids = allowed(matcher, vocab)
        assert len(ids), f"empty mask after {text!r}"
        ends = np.isin(ids, eos)
        if ends.any() and (ends.all() or rng.random() < 0.5):
            assert matcher.accept_token(int(ids[ends][0])) and matcher.is_terminated()
            return text
        ids = ids[~ends]
        closers = ids[closing[ids]]
        pool = closers if len(closers) and rng.random() < 0.5 else ids
        tid = int(pool[rng.randrange(len(pool))])
        assert matcher.accept_token(tid)
        text += vocab.token_bytes(tid)
    return None


def property_names(schema: Any) -> set[str]:
    """Every name some `properties` of the schema lists."""
    names: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("properties"), dict):
                names.update(node["properties"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return names


def check_valid(schema: Any, data: bytes) -> bool:
    """A finished walk's text is one JSON value that validates. Additional keys may repeat
    (documented: no automaton tells an open set of names apart), so a text that repeats a
    name no `properties` of the schema lists is not judged (False); repeating a name that
    some `properties` lists fails."""
    repeated: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in items]
        repeated.extend(k for k in set(keys) if keys.count(k) > 1)
        return dict(items)

    value = json.loads(data.decode("utf-8"), object_pairs_hook=pairs)
    listed = property_names(schema)
    assert not [k for k in repeated if k in listed], (data[:400], repeated)
    if repeated:
        return False
    errors = [e.message for e in validator(schema).iter_errors(value)]
    assert not errors, (data[:400], errors[:3])
    return True


def walk_validates(schema: Any, rng: random.Random, max_steps: int = 60) -> None:
    """A random constrained walk over `schema` compiled for the small vocabulary, if it
    finishes, is a valid instance (`check_valid`)."""
    vocab = small_vocabulary()
    text = walk(compile_json_schema(schema, vocab), vocab, rng, max_steps)
    if text is not None:
        check_valid(schema, text)


@functools.lru_cache(maxsize=64)
def compiled_sample(schema_id: str) -> Any:
    return compile_json_schema(sample()[schema_id], Vocabulary.default())


@functools.lru_cache(maxsize=64)
def sample_values(schema_id: str) -> st.SearchStrategy[Any]:
    # A copy: hypothesis-jsonschema rewrites the schema it is given in place.
    return from_schema(copy.deepcopy(sample()[schema_id]), custom_formats=CUSTOM_FORMATS)


SAMPLE_IDS = sorted(sample())


SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


@pytest.mark.parametrize("schema_id", SAMPLE_IDS)
def test_sample_values_are_accepted(schema_id: str) -> None:
    schema = sample()[schema_id]
    compiled = compiled_sample(schema_id)
    check = validator(schema)

    @given(data=st.data(), rng=st.randoms(use_true_random=True))
    @settings(max_examples=examples(3), suppress_health_check=SLOW)
    def values_are_accepted(data: st.DataObject, rng: random.Random) -> None:
        value = documented_form(check, without_exponents(data.draw(sample_values(schema_id))))
        assume(value is not None and len(json.dumps(value)) <= MAX_TEXT)
        check_accepted(compiled, Vocabulary.default(), value, rng)

    values_are_accepted()


@pytest.mark.parametrize("schema_id", SAMPLE_IDS)
def test_sample_walks_validate(schema_id: str) -> None:
    compiled = compiled_sample(schema_id)

    @given(rng=st.randoms(use_true_random=True))
    @settings(max_examples=examples(3))
    def walks_validate(rng: random.Random) -> None:
        text = walk(compiled, Vocabulary.default(), rng, 48)
        event("walk capped" if text is None else "walk ended")
        if text is not None and not check_valid(sample()[schema_id], text):
            event("walk repeated an additional key")

    walks_validate()


def candidates(schema: Any, data: st.DataObject, n: int = 3) -> list[Any]:
    """Up to `n` values drawn to satisfy `schema` (`candidate`; callers validate them)."""
    values = []
    for _ in range(n):
        try:
            values.append(candidate(data.draw, schema, schema))
        except Unsatisfied:
            continue
    return values


@given(schema=schemas(), data=st.data(), rng=st.randoms(use_true_random=True))
@settings(max_examples=examples(80), suppress_health_check=SLOW)
def test_random_schemas(schema: Any, data: st.DataObject, rng: random.Random) -> None:
    """Values that validate are accepted and finished walks validate; a schema that does not
    compile has no valid value when the error says the language is empty."""
    vocab = small_vocabulary()
    check = validator(schema)
    values = candidates(schema, data)
    valid = [v for v in values if check.is_valid(v)]
    try:
        compiled = compile_json_schema(schema, vocab)
    except GrammarError as exc:
        event(f"compile error: {exc.code}")
        assert exc.code != "empty-language" or not valid, (exc, valid[0])
        return
    for value in valid:
        arranged = documented_form(check, value)
        if arranged is not None:
            check_accepted(compiled, vocab, arranged, rng)
    for _ in range(3):
        text = walk(compiled, vocab, rng, 80)
        event("walk capped" if text is None else "walk ended")
        if text is not None and not check_valid(schema, text):
            event("walk repeated an additional key")


ALTERNATIVES_BEHIND_CONJUNCTION = [
    ({"allOf": [{"anyOf": [{"type": "integer"}]}]}, "1"),
    ({"$defs": {"a": {"anyOf": [{"type": "integer"}, {"type": "string"}]}},
      "$ref": "#/$defs/a"}, '"s"'),
    ({"$defs": {"a": {"oneOf": [{"type": "integer"}, {"type": "string"}]}},
      "properties": {"x": {"$ref": "#/$defs/a"}}}, '{"x": 1}'),
]


@pytest.mark.parametrize("schema, text", ALTERNATIVES_BEHIND_CONJUNCTION)
def test_alternatives_behind_ref_or_all_of(schema: Any, text: str) -> None:
    """anyOf/oneOf reached through an allOf member or a `$ref` target keep their branches."""
    assert validator(schema).is_valid(json.loads(text))
    assert accepts(compile_json_schema(schema, byte_vocabulary()), text)


def test_min_properties_above_max_properties() -> None:
    compiled = compile_json_schema({"type": ["object", "null"], "minProperties": 2,
                                    "maxProperties": 1}, byte_vocabulary())
    assert accepts(compiled, "null") and not accepts(compiled, "{}")
