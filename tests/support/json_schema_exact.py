"""The exact reference for JSON Schema instance TEXTS: numbers as the text writes them,
compared without rounding.

- `parse_instance(text)` reads numbers as written: `int` for a number without fraction or
  exponent, `Decimal` for the others; repeated member names are not judged (`NotJudged`).
- `exact_schema(schema)` reads a schema's numbers exactly: a JSON text with `Decimal`
  (`1e-400` is not 0, `0.1000000000000000000001` not 0.1), a dict's floats by their shortest
  repr.
- `exact_validator(schema)` is `jsonschema`'s validator of the schema's draft on that schema,
  with the draft's types over those numbers (`1.0` and `1e1` are integers from draft 6 on, not
  in drafts 3 and 4), `multipleOf` (draft 3: `divisibleBy`) by exact division, comparisons
  between `int` and `Decimal` (exact in Python), and the formats of `json_schema_oracle`
  as 2020-12 defines them in every draft (the frontend asserts them so).
- `exact_verdict(check, text)` judges one text: False for a text that is not JSON.
"""
from __future__ import annotations

import functools
import json
from decimal import Decimal
from fractions import Fraction
from typing import Any

import jsonschema

from .json_schema_oracle import format_checker


class NotJudged(Exception):
    """An instance or schema the exact reference does not judge: repeated member names (JSON
    leaves their meaning open), numbers too large to compare cheaply, a schema `jsonschema`
    refuses, a reference it cannot resolve or a cycle it cannot leave."""


MAX_EXPONENT = 2000
"""Instance numbers further than this from 1 in decimal exponent are not judged (an exact
`multipleOf` on 1e999999999 would build a billion-digit integer)."""


def _exact_float(text: str) -> Decimal:
    value = Decimal(text)
    if abs(value.adjusted()) > MAX_EXPONENT:
        raise NotJudged(f"number {text[:40]} out of the judged range")
    return value


def _exact_int(text: str) -> int:
    if len(text) > 4000:
        raise NotJudged("integer longer than Python converts")
    return int(text)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique_members(items: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in items]
    if len(set(keys)) != len(keys):
        raise NotJudged("a member name repeats")
    return dict(items)


def parse_instance(text: str) -> Any:
    """The JSON value of an instance text with its numbers exact: `int` for a number without
    fraction or exponent, `Decimal` for the others (`10.0` and `1e1` stay `Decimal`, so the
    draft decides whether they are integers). ValueError when the text is not JSON (RFC 8259:
    no NaN or Infinity, no lone surrogate written raw); NotJudged for repeated names."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("a lone surrogate is not UTF-8") from None
    return json.loads(text, parse_float=_exact_float, parse_int=_exact_int,
                      parse_constant=_no_constant, object_pairs_hook=_unique_members)


def exact_schema(schema: Any) -> Any:
    """The schema with exact numbers: a JSON text read with `Decimal` for every number with a
    fraction or exponent (`1e-400` is not 0, `0.1000000000000000000001` not 0.1), a dict's
    floats as the decimal of their shortest repr (what a JSON text with that float says)."""
    if isinstance(schema, (str, bytes)):
        return json.loads(schema, parse_float=Decimal, parse_int=int, parse_constant=_no_constant)
    return exact_data(schema)


def exact_data(data: Any) -> Any:
    """JSON data with its floats as the decimals of their shortest repr."""
    if isinstance(data, float):
        return Decimal(repr(data))
    if isinstance(data, dict):
        return {k: exact_data(v) for k, v in data.items()}
    if isinstance(data, list):
        return [exact_data(v) for v in data]
    return data


def _is_number(_checker: Any, value: Any) -> bool:
    return isinstance(value, (int, float, Decimal, Fraction)) and not isinstance(value, bool)


def _integer(legacy: bool) -> Any:
    """Draft 3 and 4: a number without fraction or exponent (`int`); later drafts: any number
    whose value is integral (`1.0`, `1e1`)."""

    def is_integer(_checker: Any, value: Any) -> bool:
        if isinstance(value, bool):
            return False
        if isinstance(value, int) or legacy:
            return isinstance(value, int)
        if isinstance(value, Decimal):
            return value.is_finite() and value == value.to_integral_value()
        return isinstance(value, (float, Fraction)) and value == int(value)

    return is_integer


def _multiple_of(validator: Any, step: Any, instance: Any, _schema: Any) -> Any:
    """`multipleOf` (and draft 3's `divisibleBy`) by exact division."""
    if not validator.is_type(instance, "number") or not _is_number(None, step) or not step:
        return
    if (Fraction(instance) / Fraction(step)).denominator != 1:
        yield jsonschema.ValidationError(f"{instance} is not a multiple of {step}")


@functools.cache
def _exact_class(cls: Any) -> Any:
    legacy = cls in (jsonschema.Draft3Validator, jsonschema.Draft4Validator)
    checker = cls.TYPE_CHECKER.redefine_many({"number": _is_number, "integer": _integer(legacy)})
    keyword = "divisibleBy" if cls is jsonschema.Draft3Validator else "multipleOf"
    exact = jsonschema.validators.extend(cls, validators={keyword: _multiple_of},
                                         type_checker=checker)
    plain_evolve = exact.evolve

    def evolve(self: Any, **changes: Any) -> Any:
        # jsonschema's evolve picks the plain class of a schema naming its `$schema` (the root,
        # reached again through `$ref: "#"`); without that key the class stays this one.
        schema = changes.get("schema", self.schema)
        if isinstance(schema, dict) and "$schema" in schema:
            schema = {k: v for k, v in schema.items() if k != "$schema"}
        return plain_evolve(self, **{**changes, "schema": schema})

    exact.evolve = evolve
    return exact


def exact_validator(schema: Any) -> Any:
    """The validator of the schema's draft (2020-12 when it names none) for `exact_schema(
    schema)` (a dict, bool or JSON text): types by the draft's reading of numbers (above),
    `multipleOf` by exact division, comparisons between `int` and `Decimal` (exact in Python),
    formats as `validator` checks those of 2020-12. NotJudged when the schema fails its
    meta-schema."""
    try:
        data = exact_schema(schema)
    except ValueError as exc:
        raise NotJudged(f"the schema is not JSON: {exc}") from None
    if isinstance(data, dict) and not isinstance(data.get("$schema", ""), str):
        raise NotJudged("$schema is not a string")
    cls = _exact_class(jsonschema.validators.validator_for(
        data, default=jsonschema.Draft202012Validator))
    try:
        error = next(cls(cls.META_SCHEMA).iter_errors(data), None)
    except (RecursionError, jsonschema.exceptions.SchemaError) as exc:
        raise NotJudged(f"the meta-schema check failed: {exc}") from None
    if error is not None:
        raise NotJudged(f"not a valid schema: {error.message[:200]}")
    # Formats by their latest definitions in every draft, as the frontend asserts them.
    return cls(data, format_checker=format_checker(jsonschema.Draft202012Validator))


def exact_verdict(check: Any, text: str) -> bool:
    """Whether the instance text is JSON whose value `check` (an `exact_validator`) finds
    valid; NotJudged where it cannot tell."""
    try:
        value = parse_instance(text)
    except ValueError:
        return False
    try:
        return bool(check.is_valid(value))
    except NotJudged:
        raise
    except BaseException as exc:  # noqa: BLE001 - unresolvable references, cycles, panics
        # pyo3's PanicException (a reference cycle in the registry) derives from BaseException.
        if not isinstance(exc, Exception) and type(exc).__name__ != "PanicException":
            raise
        raise NotJudged(f"the validator failed: {type(exc).__name__}") from None
