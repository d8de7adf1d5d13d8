"""Random JSON Schemas for differential testing.

`SchemaGen(rng, dialect).root()` draws a schema of one dialect (`DIALECTS`: none, 2020-12,
draft-07, -06, -04, -03) from the keywords the frontend supports and their combinations:
type, enum/const (scalars, arrays, objects; numbers such as 10, 0, -0.5, 1.5e3), numeric bounds
(boolean exclusive bounds in drafts 3-4), multipleOf (draft 3: divisibleBy), string lengths,
simple ASCII patterns and formats, properties/required/additionalProperties/patternProperties/
propertyNames, items/prefixItems/min/maxItems, min/maxProperties, dependentRequired
(dependencies before 2019), nested not/oneOf/anyOf/allOf/if-then-else (draft 3: extends,
disallow, schemas in type) and $defs/definitions with $ref. Numbers are `int` or `Decimal`;
`as_dict` gives the schema with floats, `as_text` a JSON text whose numbers are spelled in
other ways too (`1e1`, `1.0`, `1E400`).
Values for these schemas: `json_schema_values`.
"""
from __future__ import annotations

import json
import random
from decimal import Decimal
from typing import Any

from .json_schema_spellings import exponent_number, plain_number

DIALECTS: dict[str | None, str | None] = {
    None: None,
    "2020-12": "https://json-schema.org/draft/2020-12/schema",
    "draft-07": "http://json-schema.org/draft-07/schema#",
    "draft-06": "http://json-schema.org/draft-06/schema#",
    "draft-04": "http://json-schema.org/draft-04/schema#",
    "draft-03": "http://json-schema.org/draft-03/schema#",
}
NUMBERS: list[int | Decimal] = [0, 1, -1, 2, 3, 5, 10, 100, -7, 2**53 + 1, *map(Decimal, [
    "0.5", "-0.5", "1.5", "2.5", "0.1", "1.5e3", "10.0", "-0.0", "0.25", "1e1"])]
EXOTIC_NUMBERS = [Decimal("0.1000000000000000000001"), Decimal("1e-400"), Decimal("1E400"),
                  Decimal("9.999999999999999999"), Decimal("1e-7"),
                  Decimal("123456789012345678901")]
STEPS: list[int | Decimal] = [2, 3, 5, 10, Decimal("0.5"), Decimal("0.1"), Decimal("0.25"),
                              Decimal("1.5")]
NAMES = ["a", "b", "c", "id", "x y", "é", "0"]
PATTERNS: dict[str, Any] = {
    "^[a-z]+$": lambda r: "".join(r.choice("abz") for _ in range(r.randint(1, 4))),
    "^a": lambda r: "a" + r.choice(["", "b", "zz", "A"]),
    "b$": lambda r: r.choice(["", "a", "bb", "x"]) + "b",
    "^[0-9]{2,3}$": lambda r: str(r.randint(1, 9999)),
    "^(ab)+$": lambda r: "ab" * r.randint(1, 3),
    "x|y": lambda r: r.choice(["x", "y", "axb", "z"]),
    "[A-Z]": lambda r: r.choice(["A", "aB", "abc"]),
}
NAME_PATTERNS = ["^x-", "^[a-c]$", "^[0-9]+$", "b"]
FORMATS = {
    "date": ["2020-02-29", "2021-02-29", "1998-12-31", "2020-13-01", "20200101"],
    "time": ["12:00:00Z", "23:59:60Z", "12:00:00+01:00", "12:00:00", "25:00:00Z"],
    "date-time": ["2020-02-29T12:00:00Z", "1998-12-31T23:59:60Z", "2020-02-29 12:00:00Z"],
    "ipv4": ["1.2.3.4", "255.255.255.255", "256.1.1.1", "1.2.3", "01.2.3.4"],
    "ipv6": ["::1", "1:2:3:4:5:6:7:8", "1::2::3", "::ffff:1.2.3.4", "g::1"],
    "uuid": ["123e4567-e89b-12d3-a456-426614174000", "123e4567e89b12d3a456426614174000"],
    "email": ["a@b.co", "joe.bloggs@example.com", "a@", "@b.co", "a b@c.de"],
}
SCALARS: list[Any] = [None, True, False, "", "a", "b", "abc", 0, 1, -1, 10, Decimal("0.5"),
                      Decimal("1.5e3"), Decimal("-0.5"), 2]
OLD = ("draft-03", "draft-04")


def equal(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value, booleans apart from numbers, containers by members."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(equal, a, b))
    return not isinstance(a, (dict, list)) and not isinstance(b, (dict, list)) and a == b


def unique(values: list[Any]) -> list[Any]:
    """The values without repeats by JSON equality (draft 4 wants enum values unique)."""
    out: list[Any] = []
    for v in values:
        if not any(equal(v, w) for w in out):
            out.append(v)
    return out


class SchemaGen:
    """Random schemas of one dialect (see the module docstring)."""

    def __init__(self, rng: random.Random, dialect: str | None = None, depth: int = 3) -> None:
        self.r, self.dialect, self.depth = rng, dialect, depth
        self.defs: dict[str, Any] = {}
        self.defs_key = "$defs" if dialect in (None, "2020-12") else "definitions"
        self.old = dialect in OLD

    def has(self, feature: str) -> bool:
        """Whether to draw `feature`: mostly where the dialect has it, and now and then where
        it does not (its vocabulary then reads it as an annotation)."""
        if self.r.random() < 0.1:
            return True
        d = self.dialect
        return {"not": d != "draft-03", "const": d not in OLD, "if": d not in (*OLD, "draft-06"),
                "prefixItems": d in (None, "2020-12"), "propertyNames": d not in OLD,
                "dependentRequired": d in (None, "2020-12")}[feature]

    def root(self) -> dict[str, Any]:
        schema = self.schema(self.depth)
        if not isinstance(schema, dict):
            schema = {"allOf": [schema]} if self.dialect != "draft-03" else {}
        if self.defs:
            schema[self.defs_key] = self.defs
        if self.dialect is not None:
            schema = {"$schema": DIALECTS[self.dialect], **schema}
        return schema

    def number(self) -> int | Decimal:
        r = self.r
        return r.choice(EXOTIC_NUMBERS) if r.random() < 0.12 else r.choice(NUMBERS)

    def value(self, depth: int = 2) -> Any:
        r = self.r
        kind = r.random()
        if depth <= 0 or kind < 0.55:
            return r.choice(SCALARS + [self.number()])
        if kind < 0.8:
            return {k: self.value(depth - 1) for k in r.sample(NAMES[:4], r.randint(0, 2))}
        return [self.value(depth - 1) for _ in range(r.randint(0, 3))]

    def schema(self, depth: int) -> Any:
        r = self.r
        if depth <= 0 or r.random() < 0.1:
            return self.leaf()
        kinds = ["numeric", "string", "object", "array", "values", "combinator", "combinator",
                 "mixed", "ref", "focused", "focused"]
        kind = r.choice(kinds)
        if kind == "focused" and self.dialect != "draft-03":
            return self.focused(depth)
        if kind == "object":
            return self.object(depth)
        if kind == "array":
            return self.array(depth)
        if kind == "combinator":
            return self.combinator(depth)
        if kind == "ref":
            return self.ref(depth)
        base = self.leaf(kind)
        if kind == "mixed" or r.random() < 0.3:
            extra = self.combinator(depth)
            if isinstance(extra, dict):
                base = {**extra, **base} if isinstance(base, dict) else extra
        return base

    def focused(self, depth: int) -> dict[str, Any]:
        """Values of one kind beside keywords that constrain them: object or array values in
        an enum with object or array keywords (or a negation of them), numeric values or
        bounds under not/oneOf/if."""
        r = self.r
        kind = r.choice(["objects", "arrays", "numbers"])
        if kind == "numbers":
            base = self.numeric()
            extra = self.combinator(depth)
            return {**extra, **base} if isinstance(extra, dict) else base
        pool = ([{"a": 1}, {"b": 1}, {"a": 1, "b": 2}, {"a": "x"}, {"c": None}, {}]
                if kind == "objects" else [[], [1], [1, "a"], [0, 0, 0], [{"a": 1}], ["b"]])
        values = r.sample(pool, r.randint(2, 4))
        base = {"enum": values} if len(values) > 1 or not self.has("const") else {
            "const": values[0]}
        source = self.object(depth) if kind == "objects" else self.array(depth)
        keys = [k for k in source if k != "type"]
        picked = {k: source[k] for k in r.sample(keys, min(len(keys), r.randint(1, 2)))}
        if r.random() < 0.4 and self.has("not"):
            size = "Properties" if kind == "objects" else "Items"
            picked = r.choice([{"not": {"required": self.names()}},
                               {"not": {f"min{size}": r.randint(1, 2)}},
                               {"if": {"required": self.names()}, "then": False}
                               if self.has("if") else {"not": {"required": ["a"]}}])
        return {**base, **picked}

    def leaf(self, kind: str | None = None) -> Any:
        r = self.r
        kind = kind if kind in ("numeric", "string", "values") else r.choice(
            ["numeric", "numeric", "string", "values", "type", "bool"])
        if kind == "bool":
            return r.choice([True, False, {}]) if not self.old else {}
        if kind == "type":
            types = ["null", "boolean", "integer", "number", "string", "array", "object"]
            return {"type": r.choice(types) if r.random() < 0.7 else r.sample(types, 2)}
        if kind == "numeric":
            return self.numeric()
        if kind == "string":
            return self.string()
        return self.values()

    def numeric(self) -> dict[str, Any]:
        r = self.r
        s: dict[str, Any] = {}
        if r.random() < 0.7:
            s["type"] = r.choice(["number", "integer"])
        for key in r.sample(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                             "multipleOf"], r.randint(0, 2)):
            if key == "multipleOf":
                s["divisibleBy" if self.dialect == "draft-03" else key] = r.choice(STEPS)
            elif key.startswith("exclusive") and self.old:
                s[key] = r.random() < 0.7
                s.setdefault("minimum" if "Min" in key else "maximum", self.number())
            else:
                s[key] = self.number()
        if r.random() < 0.2:
            s["enum" if self.old or r.random() < 0.5 else "const"] = (
                unique([self.number() for _ in range(r.randint(1, 3))]))
            if "const" in s:
                s["const"] = s["const"][0]
        return s

    def string(self) -> dict[str, Any]:
        r = self.r
        s: dict[str, Any] = {"type": "string"} if r.random() < 0.7 else {}
        for key in r.sample(["minLength", "maxLength", "pattern", "format"], r.randint(0, 2)):
            s[key] = {"minLength": lambda: r.randint(0, 3), "maxLength": lambda: r.randint(0, 4),
                      "pattern": lambda: r.choice(list(PATTERNS)),
                      "format": lambda: r.choice(list(FORMATS))}[key]()
        return s

    def values(self) -> dict[str, Any]:
        r = self.r
        values = [self.value() for _ in range(r.randint(1, 4))]
        if r.random() < 0.5:
            values.append(r.choice([{"a": 1}, {"b": 1}, {"a": 1, "b": 2}, [1, "a"], [],
                                    {"a": [0]}]))
        if self.has("const") and r.random() < 0.3:
            return {"const": values[0]}
        return {"enum": unique(values)}

    def names(self) -> list[str]:
        return self.r.sample(NAMES, self.r.randint(1, 3))

    def object(self, depth: int) -> dict[str, Any]:
        r = self.r
        names = self.names()
        s: dict[str, Any] = {"type": "object"} if r.random() < 0.7 else {}
        if r.random() < 0.8:
            s["properties"] = {n: self.schema(depth - 1) for n in names}
        if r.random() < 0.5:
            required = r.sample(names, r.randint(1, len(names)))
            if self.dialect == "draft-03":
                props = s.setdefault("properties", {})
                for n in required:
                    sub = props.get(n)
                    props[n] = {**(sub if isinstance(sub, dict) else {}), "required": True}
            else:
                s["required"] = required
        extra = r.random()
        if extra < 0.25:
            s["additionalProperties"] = r.choice([False, True, self.leaf()])
        elif extra < 0.4:
            s["patternProperties"] = {r.choice(NAME_PATTERNS): self.leaf()}
        if self.has("propertyNames") and r.random() < 0.3:
            s["propertyNames"] = self.name_schema(depth - 1)
        if not self.dialect == "draft-03" and r.random() < 0.3:
            s[r.choice(["minProperties", "maxProperties"])] = r.randint(0, 3)
        if r.random() < 0.2 and len(names) > 1:
            key = "dependentRequired" if self.has("dependentRequired") else "dependencies"
            s[key] = {names[0]: names[1:]}
        return s

    def name_schema(self, depth: int) -> Any:
        r = self.r
        plain = [{"pattern": r.choice(NAME_PATTERNS)}, {"maxLength": r.randint(0, 2)},
                 {"enum": r.sample(NAMES, 2)}, {"const": r.choice(NAMES)}, {"minLength": 2}]
        kind = r.random()
        if kind < 0.3 or depth <= 0:
            return r.choice(plain)
        if kind < 0.55:
            return {"not": r.choice(plain)}
        if kind < 0.75:
            return {r.choice(["anyOf", "oneOf", "allOf"]): r.sample(plain, 2)}
        if kind < 0.85 and self.has("if"):
            return {"if": r.choice(plain), "then": r.choice(plain), "else": r.choice(plain)}
        name = f"n{len(self.defs)}"
        self.defs[name] = r.choice(plain + [{"not": r.choice(plain)}])
        return {"$ref": f"#/{self.defs_key}/{name}"}

    def array(self, depth: int) -> dict[str, Any]:
        r = self.r
        s: dict[str, Any] = {"type": "array"} if r.random() < 0.7 else {}
        form = r.random()
        if form < 0.5:
            s["items"] = self.schema(depth - 1)
        elif form < 0.8:
            prefix = [self.schema(depth - 1) for _ in range(r.randint(1, 2))]
            if self.has("prefixItems"):
                s["prefixItems"] = prefix
            else:
                s["items"] = prefix
                if r.random() < 0.5:
                    s["additionalItems"] = r.choice([False, self.leaf()])
        for key in r.sample(["minItems", "maxItems"], r.randint(0, 2)):
            s[key] = r.randint(0, 3)
        return s

    def ref(self, depth: int) -> dict[str, Any]:
        name = f"d{len(self.defs)}"
        self.defs[name] = None  # reserved: the body may add definitions of its own
        self.defs[name] = self.schema(depth - 1)
        return {"$ref": f"#/{self.defs_key}/{name}"}

    def negatable(self, depth: int) -> Any:
        """What the frontend can negate: scalar keywords, values, required names, one-sided
        sizes, and anyOf/not of those; sometimes anything."""
        r = self.r
        kind = r.random()
        if kind < 0.45:
            return self.leaf()
        if kind < 0.6:
            return {"required": self.names()}
        if kind < 0.7:
            return {r.choice(["minItems", "maxItems", "minProperties", "maxProperties"]):
                    r.randint(0, 2)}
        if kind < 0.8 and depth > 0:
            return {"anyOf": [self.negatable(depth - 1) for _ in range(2)]}
        if kind < 0.87 and depth > 0:
            return {"not": self.negatable(depth - 1)}
        return self.schema(depth - 1)

    def combinator(self, depth: int) -> Any:
        r = self.r
        if self.dialect == "draft-03":
            key = r.choice(["extends", "disallow", "type"])
            if key == "extends":
                return {"extends": self.schema(depth - 1)}
            if key == "disallow":
                return {"disallow": r.choice(["integer", "string", ["number", "null"],
                                              [self.leaf()]])}
            return {"type": [r.choice(["string", "null"]), self.schema(depth - 1)]}
        kind = r.choice(["not", "not", "oneOf", "anyOf", "allOf", "if", "if"])
        if kind == "not":
            return {"not": self.negatable(depth - 1)}
        if kind == "if" and self.has("if"):
            s = {"if": self.negatable(depth - 1)}
            for key in r.sample(["then", "else"], r.randint(1, 2)):
                s[key] = self.schema(depth - 1) if r.random() < 0.7 else r.choice([True, False])
            return s
        if kind == "if":
            kind = "oneOf"
        branches = [(self.negatable if kind == "oneOf" else self.schema)(depth - 1)
                    for _ in range(r.randint(2, 3) if kind != "allOf" else r.randint(1, 2))]
        return {kind: branches}


def as_dict(schema: Any) -> Any:
    """The schema as JSON data: `Decimal` numbers as floats (beyond float range: the largest
    float of that sign)."""
    if isinstance(schema, Decimal):
        f = float(schema)
        return f if abs(f) != float("inf") else (1.7e308 if f > 0 else -1.7e308)
    if isinstance(schema, dict):
        return {k: as_dict(v) for k, v in schema.items()}
    if isinstance(schema, list):
        return [as_dict(v) for v in schema]
    return schema


NUMERIC_KEYWORDS = frozenset(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                              "multipleOf", "divisibleBy", "enum", "const"])
"""Where a number may be spelled otherwise (elsewhere drafts 3-4 want an integer literal)."""


def as_text(schema: Any, rng: random.Random, exotic: float = 0.5) -> str:
    """A JSON text of the schema, each number of a numeric keyword or a value (exactly its
    value) spelled otherwise with probability `exotic`: fraction zeros, an exponent."""

    def number(x: Any, free: bool) -> str:
        if not free or rng.random() >= exotic:
            return plain_number(x)
        return exponent_number(x, rng) if rng.random() < 0.6 else plain_number(x, rng)

    def go(v: Any, free: bool) -> str:
        if isinstance(v, (int, Decimal, float)) and not isinstance(v, bool):
            return number(v, free)
        if isinstance(v, dict):
            return "{" + ",".join(json.dumps(k) + ":" + go(x, free or k in NUMERIC_KEYWORDS)
                                  for k, x in v.items()) + "}"
        if isinstance(v, list):
            return "[" + ",".join(go(x, free) for x in v) + "]"
        return json.dumps(v)

    return go(schema, False)


def random_schema(rng: random.Random) -> Any:
    """A schema of a random dialect (none half the time), numbers exact."""
    dialect = rng.choice([None, None, None, "2020-12", "draft-07", "draft-06", "draft-04",
                          "draft-03"])
    return SchemaGen(rng, dialect, rng.choice([1, 2, 2, 3])).root()
