"""Values near a JSON Schema's boundaries, for differential testing.

`values(schema, rng, n)` draws values meant to lie on both sides of the schema: from its
enum/const values, its numbers and the numbers next to them, its names, formats and patterns,
through every branch of its combinators, then mutated (a key renamed or dropped, a number
nudged, a type changed). Numbers are `int` or `Decimal`. Callers judge them with the reference.
"""
from __future__ import annotations

import copy
import random
from decimal import Decimal
from typing import Any

from .json_schema_random import FORMATS, NAMES, PATTERNS

TYPES = ["null", "boolean", "integer", "number", "string", "array", "object"]
INFERRED = [("number", ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                        "multipleOf", "divisibleBy")),
            ("string", ("minLength", "maxLength", "pattern", "format")),
            ("object", ("properties", "required", "additionalProperties", "patternProperties",
                        "propertyNames", "minProperties", "maxProperties", "dependentRequired",
                        "dependencies")),
            ("array", ("items", "prefixItems", "minItems", "maxItems", "additionalItems"))]
NUDGES = [Decimal(1), Decimal("0.5"), Decimal("1e-20"), Decimal(2), Decimal("0.1")]
TEXT_CHARS = "abxAé😀\"\\\n/ -"


def _collect(node: Any, numbers: list[Any], strings: list[str]) -> None:
    if isinstance(node, bool) or node is None:
        return
    if isinstance(node, (int, Decimal, float)):
        numbers.append(Decimal(repr(node)) if isinstance(node, float) else node)
    elif isinstance(node, str):
        strings.append(node)
    elif isinstance(node, list):
        for v in node:
            _collect(v, numbers, strings)
    elif isinstance(node, dict):
        for k, v in node.items():
            strings.append(k)
            _collect(v, numbers, strings)


class Values:
    """Values near a schema's boundaries (see the module docstring)."""

    def __init__(self, root: Any, rng: random.Random) -> None:
        self.root, self.r = root, rng
        self.numbers: list[Any] = [0, 1, -1]
        self.strings: list[str] = list(NAMES)
        _collect(root, self.numbers, self.strings)
        self.strings = [s for s in self.strings if not s.startswith(("http", "#"))]

    def resolve(self, ref: Any) -> Any:
        node = self.root
        if not isinstance(ref, str) or not ref.startswith("#"):
            return {}
        for token in ref[1:].split("/")[1:]:
            token = token.replace("~1", "/").replace("~0", "~")
            node = node.get(token) if isinstance(node, dict) else None
        return node if node is not None else {}

    def anything(self, depth: int = 2) -> Any:
        r = self.r
        kind = r.random()
        if depth <= 0 or kind < 0.5:
            return r.choice([None, True, False, self.num(), self.text({})])
        if kind < 0.75:
            return {r.choice(self.strings): self.anything(depth - 1)
                    for _ in range(r.randint(0, 2))}
        return [self.anything(depth - 1) for _ in range(r.randint(0, 3))]

    def num(self, integer: bool = False) -> Any:
        r = self.r
        x = Decimal(r.choice(self.numbers))
        if r.random() < 0.6:
            x += r.choice(NUDGES) * r.choice([-1, 1])
        if r.random() < 0.1:
            x = -x
        if integer or r.random() < 0.3:
            if abs(x.adjusted()) < 30:
                x = x.to_integral_value()
        if abs(x.adjusted()) > 500:
            return x
        return int(x) if x == x.to_integral_value() and r.random() < 0.7 else x

    def text(self, s: dict[str, Any]) -> str:
        r = self.r
        fmt, pattern = s.get("format"), s.get("pattern")
        kind = r.random()
        if fmt in FORMATS and kind < 0.6:
            return r.choice(FORMATS[fmt])
        if pattern in PATTERNS and kind < 0.6:
            return PATTERNS[pattern](r)
        if kind < 0.8:
            return r.choice(self.strings)
        lo = s.get("minLength", 0) if isinstance(s.get("minLength"), int) else 0
        n = max(0, r.randint(lo - 1, lo + 3))
        return "".join(r.choice(TEXT_CHARS) for _ in range(n))

    def draw(self, s: Any, depth: int = 4) -> Any:
        """A value meant to lie near the instances of `s`."""
        r = self.r
        if depth <= 0 or not isinstance(s, dict) or not s or r.random() < 0.05:
            return self.anything(max(depth - 1, 0))
        choices = [k for k in ("$ref", "enum", "const", "anyOf", "oneOf", "allOf", "not", "if",
                               "then", "else", "extends") if k in s]
        if choices and r.random() < 0.6:
            key = r.choice(choices)
            sub = s[key]
            if key == "$ref":
                return self.draw(self.resolve(sub), depth - 1)
            if key in ("enum", "const"):
                picked = r.choice(sub) if key == "enum" and isinstance(sub, list) and sub else sub
                return copy.deepcopy(picked)
            if isinstance(sub, list):
                sub = r.choice(sub) if sub else {}
            return self.draw(sub, depth - 1)
        return self.typed(s, depth)

    def typed(self, s: dict[str, Any], depth: int) -> Any:
        r = self.r
        declared = s.get("type")
        if isinstance(declared, list) and declared:
            declared = r.choice(declared)
        if isinstance(declared, dict):
            return self.draw(declared, depth - 1)
        if declared not in TYPES or r.random() < 0.1:
            inferred = [t for t, keys in INFERRED if any(k in s for k in keys)]
            declared = r.choice(inferred) if inferred and r.random() < 0.85 else r.choice(TYPES)
        if declared == "null":
            return None
        if declared == "boolean":
            return r.random() < 0.5
        if declared in ("number", "integer"):
            return self.num(declared == "integer" and r.random() < 0.8)
        if declared == "string":
            return self.text(s)
        if declared == "array":
            return self.array(s, depth)
        return self.object(s, depth)

    def array(self, s: dict[str, Any], depth: int) -> list[Any]:
        r = self.r
        items, prefix = s.get("items"), s.get("prefixItems")
        if isinstance(items, list):
            prefix, items = items, s.get("additionalItems", True)
        prefix = prefix if isinstance(prefix, list) else []
        lo = s.get("minItems", 0) if isinstance(s.get("minItems"), int) else 0
        n = max(0, r.randint(lo - 1, lo + 2))
        if r.random() < 0.5:
            n = min(n, len(prefix))
        return [self.draw(prefix[i] if i < len(prefix) else items, depth - 1) for i in range(n)]

    def object(self, s: dict[str, Any], depth: int) -> dict[str, Any]:
        r = self.r
        props = s.get("properties") if isinstance(s.get("properties"), dict) else {}
        names = [n for n in props if r.random() < 0.7]
        required = s.get("required") if isinstance(s.get("required"), list) else []
        names += [n for n in required if isinstance(n, str) and r.random() < 0.9]
        for key in ("dependentRequired", "dependencies"):
            if isinstance(s.get(key), dict):
                names += [n for n in s[key] if r.random() < 0.5]
        pattern_props = s.get("patternProperties")
        if isinstance(pattern_props, dict) and pattern_props and r.random() < 0.6:
            names.append(r.choice(["x-a", "a", "12", "b", "zb"]))
        if r.random() < 0.3:
            names.append(self.text({}))
        value: dict[str, Any] = {}
        for name in names:
            sub = props.get(name, s.get("additionalProperties", {}))
            value[name] = self.draw(sub if sub is not None else {}, depth - 1)
        return value

    def mutate(self, value: Any) -> Any:
        """The value with one random edit: a member renamed, dropped or added, an item
        dropped or added, a number nudged, a part replaced by a value of another type."""
        r = self.r
        paths: list[tuple[Any, ...]] = []

        def walk(v: Any, path: tuple[Any, ...]) -> None:
            paths.append(path)
            children = v.items() if isinstance(v, dict) else enumerate(v) \
                if isinstance(v, list) else ()
            for k, child in children:
                walk(child, (*path, k))

        value = copy.deepcopy(value)
        walk(value, ())
        path = r.choice(paths)
        node = value
        for k in path:
            node = node[k]
        op = r.random()
        if isinstance(node, dict) and op < 0.5:
            if node and op < 0.3:
                key = r.choice(list(node))
                moved = node.pop(key)
                if op < 0.15:
                    node[r.choice(self.strings)] = moved
            else:
                node[r.choice(self.strings)] = self.anything(1)
            return value
        if isinstance(node, list) and op < 0.5:
            if node and op < 0.25:
                node.pop(r.randrange(len(node)))
            else:
                node.insert(r.randint(0, len(node)), self.anything(1))
            return value
        if isinstance(node, (int, Decimal)) and not isinstance(node, bool) and op < 0.8:
            new = Decimal(node) + r.choice(NUDGES) * r.choice([-1, 1])
            new = int(new) if new == new.to_integral_value() and r.random() < 0.6 else new
        else:
            new = self.anything(1)
        if not path:
            return new
        parent = value
        for k in path[:-1]:
            parent = parent[k]
        parent[path[-1]] = new
        return value


def values(schema: Any, rng: random.Random, n: int) -> list[Any]:
    """`n` values near the schema's instances, a third of them mutated."""
    gen = Values(schema, rng)
    out = []
    for _ in range(n):
        v = gen.draw(schema)
        out.append(gen.mutate(v) if rng.random() < 0.35 else v)
    return out
