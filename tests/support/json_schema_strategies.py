"""Random JSON Schemas over the keyword subset the JSON Schema frontend compiles, and values
meant to satisfy them.

`schemas()` draws small schemas from: type (one or a list), enum/const, properties/required/
additionalProperties, items/prefixItems/minItems/maxItems, minimum/maximum and their exclusive
forms (integer and short decimal bounds), integer multipleOf, minLength/maxLength, a pattern
from `SAFE_PATTERNS`, anyOf, allOf (a schema and a refinement of it: a bound, required names or
a `not` of a type or values) and $defs/$ref, recursive references included; and beyond that
core: patternProperties, propertyNames, minProperties/maxProperties (at most one
below minProperties), oneOf of branches of different types, and the formats of `FORMATS`.
A `$ref` stands at the root or below a property, an item or additional properties, never at
the top of a definition or of its anyOf/allOf members: every reference cycle then passes
through a member value, so each finite value has a finite validation (a definition that
refers to itself without consuming anything loops forever in a validator).

`candidate(draw, schema, root)` draws a value meant to satisfy `schema`: exact for each keyword
on its own, best effort for combinations (allOf, bounds that leave nothing, recursion that
forces depth); callers validate it with `jsonschema` and drop the misses. Key order is
arbitrary there.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import timedelta, timezone
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

SAFE_PATTERNS = {
    "^[a-z]+$": "[a-z]+",
    "^[A-Z][a-z0-9]*$": "[A-Z][a-z0-9]*",
    "^[0-9]{3}-[0-9]{4}$": "[0-9]{3}-[0-9]{4}",
    "^(ab|cd)*e?$": "(ab|cd)*e?",
    "^x": "x[a-zé 0-9]*",
    "ab": "[a-z]*ab[a-z ]*",
    "é|😀": "[a-z]*(é|😀)[a-z]*",
    "^[^a-c]{2}$": "[^a-c\n\r\u2028\u2029]{2}",
}
"""ECMA-262 patterns on which `re.search` (what `jsonschema` runs) agrees with ECMA-262 search
on every string: no shorthand classes and no `.`; `$` differs only before a final newline,
where ECMA-262 is the stricter. Each maps to a Python regex whose full matches are strings the
pattern finds a match in."""

NAMES = ["a", "b", "id", "name", "x y", "é", 'q"t']
EXTRA_NAMES = ["z", "extra", "ü", "0", "x-a", "x-é"]
NAME_PATTERNS = ["^x-", "^[a-z]$"]
FORMATS = {
    "date": st.dates().map(str),
    "date-time": st.datetimes(timezones=st.sampled_from([timezone.utc, timezone(
        timedelta(hours=-5, minutes=-30))])).map(lambda d: d.isoformat()),
    "uuid": st.uuids().map(str),
    "ipv4": st.ip_addresses(v=4).map(str),
    "ipv6": st.ip_addresses(v=6).map(str),
}
"""Formats drawn for random schemas, with values `jsonschema` can check."""
TEXT = st.characters(codec="utf-8")
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-20, 20), st.sampled_from(
    [0.5, -2.25, 1.0]), st.text(TEXT, max_size=3))
INT_BOUNDS = st.integers(-20, 20)
NUMBER_BOUNDS = st.one_of(st.integers(-20, 20), st.sampled_from([-2.5, -0.25, 0.5, 1.75, 3.5]))
MAX_DEPTH = 5
"""Below this depth `candidate` takes the smallest choices (no optional members, fewest items),
so that recursive schemas end."""


def _bounds(draw: st.DrawFn, schema: dict[str, Any], bounds: st.SearchStrategy[Any]) -> None:
    for low, high in (("minimum", "maximum"), ("exclusiveMinimum", "exclusiveMaximum")):
        if draw(st.booleans()):
            schema[low] = draw(bounds)
        if draw(st.booleans()):
            schema[high] = draw(bounds)


@st.composite
def _scalar(draw: st.DrawFn, kind: str | None = None) -> dict[str, Any]:
    kind = kind or draw(st.sampled_from(["integer", "number", "string", "boolean", "null",
                                         "enum", "const", "types", "any", "format"]))
    if kind == "format":
        return {"type": "string", "format": draw(st.sampled_from(sorted(FORMATS)))}
    if kind == "integer":
        schema: dict[str, Any] = {"type": "integer"}
        _bounds(draw, schema, INT_BOUNDS)
        if draw(st.booleans()):
            schema["multipleOf"] = draw(st.integers(1, 5))
        return schema
    if kind == "number":
        schema = {"type": "number"}
        _bounds(draw, schema, NUMBER_BOUNDS)
        if draw(st.integers(0, 3)) == 0:
            schema["multipleOf"] = draw(st.integers(2, 4))
        return schema
    if kind == "string":
        schema = {"type": "string"}
        if draw(st.booleans()):
            schema["minLength"] = draw(st.integers(0, 3))
        if draw(st.booleans()):
            schema["maxLength"] = draw(st.integers(0, 6))
        if draw(st.booleans()):
            schema["pattern"] = draw(st.sampled_from(sorted(SAFE_PATTERNS)))
        return schema
    if kind in ("boolean", "null"):
        return {"type": kind}
    if kind == "enum":
        return {"enum": draw(st.lists(st.one_of(SCALARS, st.lists(SCALARS, max_size=2),
                                                st.dictionaries(st.sampled_from(NAMES), SCALARS,
                                                                max_size=2)),
                                      min_size=1, max_size=4))}
    if kind == "const":
        return {"const": draw(SCALARS)}
    if kind == "types":
        return {"type": draw(st.lists(st.sampled_from(["integer", "string", "null", "boolean",
                                                       "number"]), min_size=1, max_size=3,
                                      unique=True))}
    return {}


@st.composite
def _node(draw: st.DrawFn, depth: int, refs: tuple[str, ...], guarded: bool) -> Any:
    """A schema; `guarded`: a bare `$ref` may stand here (see the module docstring)."""
    kinds = ["scalar", "scalar"]
    if depth > 0:
        kinds += ["object", "object", "array", "anyOf", "allOf", "oneOf"]
    if refs and guarded:
        kinds.append("ref")
    kind = draw(st.sampled_from(kinds))
    if kind == "scalar":
        return draw(_scalar())
    if kind == "ref":
        return {"$ref": f"#/$defs/{draw(st.sampled_from(refs))}"}
    if kind == "anyOf":
        return {"anyOf": draw(st.lists(_node(depth - 1, refs, guarded), min_size=1, max_size=3))}
    if kind == "oneOf":
        types = draw(st.lists(st.sampled_from(["integer", "string", "boolean", "null", "array"]),
                              min_size=2, max_size=3, unique=True))
        return {"oneOf": [draw(_array(depth - 1, refs) if t == "array" else _scalar(t))
                          for t in types]}
    if kind == "allOf":
        base = draw(_node(depth - 1, refs, guarded))
        return {"allOf": [base, draw(_refinement(base))]}
    if kind == "object":
        return draw(_object(depth, refs))
    return draw(_array(depth, refs))


@st.composite
def _object(draw: st.DrawFn, depth: int, refs: tuple[str, ...]) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(NAMES), max_size=3, unique=True))
    schema: dict[str, Any] = {"type": "object"}
    if names:
        schema["properties"] = {n: draw(_node(depth - 1, refs, True)) for n in names}
    required = draw(st.lists(st.sampled_from(NAMES + EXTRA_NAMES[:1]), max_size=2, unique=True))
    if required:
        schema["required"] = required
    extra = draw(st.sampled_from(["absent", "false", "true", "schema"]))
    if extra != "absent":
        schema["additionalProperties"] = {"false": False, "true": True}.get(extra) \
            if extra != "schema" else draw(_node(depth - 1, refs, True))
    if draw(st.integers(0, 3)) == 0:
        schema["patternProperties"] = {p: draw(_node(depth - 1, refs, True)) for p in draw(
            st.lists(st.sampled_from(NAME_PATTERNS), min_size=1, unique=True))}
    if draw(st.integers(0, 4)) == 0:
        schema["propertyNames"] = draw(st.sampled_from([{"maxLength": 3}, {"pattern": "^[a-z]"},
                                                        {"not": {"const": "z"}}]))
    low = draw(st.integers(0, 3))
    if draw(st.integers(0, 3)) == 0:
        schema["minProperties"] = low
    if draw(st.integers(0, 3)) == 0:
        schema["maxProperties"] = draw(st.integers(max(low - 1, 0), 4))
    return schema



@st.composite
def _array(draw: st.DrawFn, depth: int, refs: tuple[str, ...]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array"}
    if draw(st.booleans()):
        schema["prefixItems"] = draw(st.lists(_node(depth - 1, refs, True), min_size=1,
                                              max_size=2))
    items = draw(st.sampled_from(["absent", "schema", "schema", "false"]))
    if items != "absent":
        schema["items"] = False if items == "false" else draw(_node(depth - 1, refs, True))
    if draw(st.booleans()):
        schema["minItems"] = draw(st.integers(0, 2))
    if draw(st.booleans()):
        schema["maxItems"] = draw(st.integers(0, 4))
    return schema


@st.composite
def _refinement(draw: st.DrawFn, base: Any) -> dict[str, Any]:
    """Keywords that narrow `base` without contradicting its type."""
    kind = base.get("type") if isinstance(base, dict) else None
    if kind == "integer" or kind == "number":
        return {draw(st.sampled_from(["minimum", "maximum", "exclusiveMaximum"])): draw(INT_BOUNDS)}
    if kind == "string":
        return {draw(st.sampled_from(["minLength", "maxLength"])): draw(st.integers(0, 4))}
    if kind == "array":
        return {draw(st.sampled_from(["minItems", "maxItems"])): draw(st.integers(0, 3))}
    if kind == "object":
        names = list(base.get("properties", {})) or NAMES[:1]
        return {"required": draw(st.lists(st.sampled_from(names), min_size=1, max_size=2,
                                          unique=True))}
    return {"not": draw(st.sampled_from([{"type": "null"}, {"const": 0}, {"enum": ["", False]}]))}


@st.composite
def schemas(draw: st.DrawFn) -> dict[str, Any]:
    """A small random schema (see the module docstring)."""
    refs = tuple(["r", "s"][:draw(st.integers(0, 2))])
    defs = {name: draw(_node(2, refs, False)) for name in refs}
    root = draw(_node(3, refs, True))
    if defs:
        root = {**root, "$defs": defs}
    return root


class Unsatisfied(Exception):
    """`candidate` found no value for some subschema."""


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """A schema `a` with the keywords of a refinement `b` (see `_refinement`) folded in."""
    out = dict(a)
    for key, value in b.items():
        if key not in out:
            out[key] = value
        elif key == "required":
            out[key] = list(dict.fromkeys(out[key] + value))
        elif key in ("minimum", "exclusiveMinimum", "minLength", "minItems"):
            out[key] = max(out[key], value)
        elif key in ("maximum", "exclusiveMaximum", "maxLength", "maxItems"):
            out[key] = min(out[key], value)
        else:
            out[key] = value
    return out


def _implied_types(schema: dict[str, Any]) -> list[str]:
    t = schema.get("type")
    if t is not None:
        return [t] if isinstance(t, str) else list(t)
    hints = [("object", ("properties", "required", "additionalProperties", "patternProperties",
                         "propertyNames", "minProperties", "maxProperties")),
             ("array", ("items", "prefixItems", "minItems", "maxItems")),
             ("number", ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                         "multipleOf")),
             ("string", ("minLength", "maxLength", "pattern"))]
    found = [kind for kind, keys in hints if any(k in schema for k in keys)]
    return found or ["null", "boolean", "integer", "number", "string", "array", "object"]


Draw = Callable[[st.SearchStrategy[Any]], Any]


class _Sampler:
    def __init__(self, draw: Draw, root: Any) -> None:
        self.draw = draw
        self.root = root

    def value(self, schema: Any, depth: int) -> Any:
        if depth > 3 * MAX_DEPTH:
            raise Unsatisfied("recursion does not end")
        if schema is True or schema == {}:
            return self.draw(SCALARS)
        if schema is False:
            raise Unsatisfied("false schema")
        if "$ref" in schema:
            target = self.root
            for token in schema["$ref"].lstrip("#").split("/")[1:]:
                target = target[token]
            return self.value(target, depth + 1)
        if "anyOf" in schema or "oneOf" in schema:
            branches = schema.get("anyOf") or schema["oneOf"]
            if depth >= MAX_DEPTH:
                branches = sorted(branches, key=lambda b: "$ref" in str(b))[:1]
            return self.value(self.draw(st.sampled_from(branches)), depth)
        if "allOf" in schema:
            base, *rest = schema["allOf"]
            if isinstance(base, dict) and not ({"$ref", "anyOf", "allOf"} & set(base)):
                for more in rest:
                    base = _merge(base, more)
            return self.value(base, depth)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.draw(st.sampled_from(schema["enum"]))
        kind = self.draw(st.sampled_from(_implied_types(schema)))
        make: Callable[[dict[str, Any], int], Any] = getattr(self, "_" + kind)
        return make(schema, depth)

    def _null(self, schema: dict[str, Any], depth: int) -> Any:
        return None

    def _boolean(self, schema: dict[str, Any], depth: int) -> Any:
        return self.draw(st.booleans())

    def _integer(self, schema: dict[str, Any], depth: int) -> Any:
        return self._scaled(schema, 0)

    def _number(self, schema: dict[str, Any], depth: int) -> Any:
        if "multipleOf" in schema:
            return self._scaled(schema, 0)
        digits = self.draw(st.integers(0, 2))
        return self._scaled(schema, digits)

    def _scaled(self, schema: dict[str, Any], digits: int) -> Any:
        """A multiple of 10**-digits (and of multipleOf) within the bounds."""
        step = Fraction(schema.get("multipleOf", 1)) if digits == 0 else Fraction(1, 10 ** digits)
        lo = hi = None
        for key, strict in (("minimum", False), ("exclusiveMinimum", True)):
            if key in schema:
                k = math.floor(Fraction(schema[key]) / step) + 1 if strict else \
                    math.ceil(Fraction(schema[key]) / step)
                lo = k if lo is None else max(lo, k)
        for key, strict in (("maximum", False), ("exclusiveMaximum", True)):
            if key in schema:
                k = math.ceil(Fraction(schema[key]) / step) - 1 if strict else \
                    math.floor(Fraction(schema[key]) / step)
                hi = k if hi is None else min(hi, k)
        if lo is not None and hi is not None and lo > hi:
            raise Unsatisfied("empty numeric range")
        n = self.draw(st.integers(min_value=lo, max_value=hi)) * step
        return int(n) if n.denominator == 1 else n.numerator / n.denominator

    def _string(self, schema: dict[str, Any], depth: int) -> Any:
        lo, hi = schema.get("minLength", 0), schema.get("maxLength")
        if hi is not None and hi < lo:
            raise Unsatisfied("empty length range")
        if "format" in schema:
            return self.draw(FORMATS[schema["format"]])
        if "pattern" in schema:
            return self.draw(st.from_regex(SAFE_PATTERNS[schema["pattern"]], fullmatch=True,
                                           alphabet=TEXT))
        return self.draw(st.text(TEXT, min_size=lo, max_size=lo + 6 if hi is None else hi))

    def _array(self, schema: dict[str, Any], depth: int) -> Any:
        prefix = schema.get("prefixItems", [])
        items = schema.get("items", True)
        lo = schema.get("minItems", 0)
        hi = schema.get("maxItems", lo + 3)
        if items is False:
            hi = min(hi, len(prefix))
        if lo > hi:
            raise Unsatisfied("empty length range")
        n = lo if depth >= MAX_DEPTH else self.draw(st.integers(lo, hi))
        return [self.value(prefix[i] if i < len(prefix) else items, depth + 1) for i in range(n)]

    def _object(self, schema: dict[str, Any], depth: int) -> Any:
        props = schema.get("properties", {})
        required = schema.get("required", [])
        out: dict[str, Any] = {}
        for name, sub in props.items():
            if name in required or (depth < MAX_DEPTH and self.draw(st.booleans())):
                out[name] = self.value(sub, depth + 1)
        names = [n for n in required if n not in out]
        if depth < MAX_DEPTH:
            names += self.draw(st.lists(st.sampled_from(EXTRA_NAMES), max_size=2, unique=True))
        short = schema.get("minProperties", 0) - len(out) - len(names)
        names += [n for n in EXTRA_NAMES if n not in names and n not in out][:max(short, 0)]
        for name in names:
            sub = self._additional(schema, name)
            if name not in props and name not in out and (sub is not False or name in required):
                out[name] = self.value(sub, depth + 1)
        return out

    @staticmethod
    def _additional(schema: dict[str, Any], name: str) -> Any:
        """The schema of member `name` when `properties` does not list it."""
        matched = [s for p, s in schema.get("patternProperties", {}).items() if re.search(p, name)]
        if matched:
            return matched[0] if len(matched) == 1 else {"allOf": matched}
        return schema.get("additionalProperties", True)


def candidate(draw: Draw, schema: Any, root: Any) -> Any:
    """A value meant to satisfy `schema` (a subschema of `root`); raises `Unsatisfied` when
    some part leaves nothing to choose."""
    return _Sampler(draw, root).value(schema, 0)
