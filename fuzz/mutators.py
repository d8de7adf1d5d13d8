"""Mutations: character edits of any text, and JSON-tree edits of schemas."""
from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from typing import Any

ALPHABET = list("()[]{}|*+?.^$\\-:=\"'#/ \n\tabcxyz019_,<>!%~&@;") + ["中", "é", "\x00", "\udcff",
                                                                    "\U0001f600", "\r"]
TOKENS = ["::=", "->", "%import common.WS", "%ignore", "root", "start", "\\p{L}", "{2,}", "{0,3}",
          "(?:", "[^", "\\u00e9", "\\x7f", "/[a-z]+/i", "+?", "*", "\"\"", "''", "|", "~ 3",
          ".2", "%declare X", "[\\s\\S]", 'Regex("a.")', 'TagDispatch(("<t>", root))',
          "Token(1)", "ExcludeToken(2)*", "ExcludeToken(2)", "!<[3]>", "!<[1-9]>{1,2}", "<[1-3]>", "!<x>*", "<[^5]>*", '%json {"type": "integer"}',
          "%llguidance {}", "[lazy]", "[suffix=\"<e>\"]", "[max_chars=3, capture]", " & ",
          " ~", "~/a/", "@g", "{,2}", "{2}", '%regex {"substring_words": "a b"}',
          '%grammar_options {"allow_initial_skip": true}', 'Substring("ab", "c")',
          "[lazy] ::=", "\nx[lazy]: /[a-z]+/\n"]
TYPES = ["string", "number", "integer", "boolean", "null", "object", "array"]
NUMBERS: list[Any] = [0, 1, -1, 2, 3, 7, 0.5, -0.0, 1e-7, 0.1, 1.5e300, 2**53 + 1, -(2**63),
                      10**30, 1e-320, 100, 65536]
STRINGS = ["", "a", "^[a-z]+$", "(a|b)*", "\\d{2,}", "[", "date-time", "email", "uuid", "ipv4",
           "uri", "x" * 40, "#", "é中", "\x00", "^(?!a)", "\\p{L}"]
KEYWORDS = ["type", "properties", "required", "additionalProperties", "items", "prefixItems",
            "anyOf", "oneOf", "allOf", "not", "enum", "const", "minimum", "maximum",
            "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
            "pattern", "format", "minItems", "maxItems", "uniqueItems", "contains", "minContains",
            "maxContains", "minProperties", "maxProperties", "patternProperties",
            "propertyNames", "dependentRequired", "dependentSchemas", "if", "then", "else",
            "$ref", "$defs", "definitions", "$anchor", "$dynamicRef", "$dynamicAnchor",
            "unevaluatedProperties", "unevaluatedItems", "additionalItems", "dependencies",
            "nullable", "$id", "$schema", "default", "title"]
Path = tuple[str | int, ...]


def mutate_text(text: str, rng: random.Random) -> str:
    """A few random edits: insert a character or a syntax token, delete, replace, duplicate."""
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(5)
        i = rng.randint(0, len(chars))
        if op == 0:
            chars.insert(i, rng.choice(ALPHABET))
        elif op == 1:
            chars[i:i] = list(rng.choice(TOKENS))
        elif op == 2 and chars:
            del chars[min(i, len(chars) - 1):i + rng.randint(1, 8)]
        elif op == 3 and chars:
            chars[min(i, len(chars) - 1)] = rng.choice(ALPHABET)
        elif chars:
            j = rng.randint(i, min(len(chars), i + 16))
            chars[i:i] = chars[i:j] * rng.randint(1, 3)
    return "".join(chars)


def _paths(value: Any, path: Path = (), out: list[Path] | None = None) -> list[Path]:
    """Every path in the tree, parents before children."""
    out = [] if out is None else out
    out.append(path)
    if isinstance(value, dict):
        for key, child in value.items():
            _paths(child, (*path, key), out)
    elif isinstance(value, list):
        for i, child in enumerate(value):
            _paths(child, (*path, i), out)
    return out


def _get(root: Any, path: Path) -> Any:
    for part in path:
        root = root[part]
    return root


def _set(root: Any, path: Path, value: Any) -> Any:
    """The root with the node at `path` replaced by `value`."""
    if not path:
        return value
    _get(root, path[:-1])[path[-1]] = value
    return root


def pointer(path: Path) -> str:
    """The JSON pointer of `path` inside the document."""
    return "#" + "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _random_value(rng: random.Random, paths: list[Path]) -> Any:
    kind = rng.randrange(8)
    if kind == 0:
        return rng.choice(NUMBERS)
    if kind == 1:
        return rng.choice(STRINGS)
    if kind == 2:
        return {"type": rng.choice(TYPES)}
    if kind == 3:
        return rng.choice([True, False, None, [], {}])
    if kind == 4:
        return {"$ref": pointer(rng.choice(paths))}
    if kind == 5:
        return [{"type": t} for t in rng.sample(TYPES, rng.randint(1, 3))]
    if kind == 6:
        return rng.sample(TYPES, rng.randint(1, 3))
    return {rng.choice(KEYWORDS): rng.choice(NUMBERS + STRINGS)}


def _nest(node: Any, rng: random.Random) -> Any:
    depth = rng.choice([2, 8, 40, 300])
    wrap = rng.choice(["items", "anyOf", "properties", "not", "allOf"])
    for _ in range(depth):
        node = ({wrap: [node]} if wrap in ("anyOf", "allOf")
                else {"properties": {"a": node}} if wrap == "properties" else {wrap: node})
    return node


def _edit(root: Any, rng: random.Random, donors: list[Any]) -> Any:
    paths = _paths(root)
    path = rng.choice(paths)
    node = _get(root, path)
    op = rng.randrange(10)
    if op == 0 and path:
        parent = _get(root, path[:-1])
        del parent[path[-1]]
    elif op == 1 and isinstance(node, dict) and node:
        key = rng.choice(list(node))
        node[rng.choice(KEYWORDS + [key + "_"])] = copy.deepcopy(node[key])
    elif op == 2 and isinstance(node, dict) and node:
        key = rng.choice(list(node))
        node[rng.choice(KEYWORDS)] = node.pop(key)
    elif op == 3:
        other = rng.choice(paths)
        a, b = copy.deepcopy(node), copy.deepcopy(_get(root, other))
        if not (path[:len(other)] == other or other[:len(path)] == path):
            root = _set(_set(root, path, b), other, a)
    elif op == 4 and isinstance(node, dict):
        node["type"] = rng.choice([rng.choice(TYPES), rng.sample(TYPES, rng.randint(1, 4))])
    elif op == 5 and isinstance(node, dict):
        target = rng.choice([pointer(rng.choice(paths)), "#", pointer(path), "#/$defs/missing",
                             "#/definitions/" + rng.choice(STRINGS), "other.json#/x", "#a"])
        node["$ref"] = target
    elif op == 6:
        root = _set(root, path, _nest(copy.deepcopy(node), rng))
    elif op == 7 and donors:
        donor = rng.choice(donors)
        root = _set(root, path, copy.deepcopy(_get(donor, rng.choice(_paths(donor)))))
    elif op == 8 and isinstance(node, (int, float, str)) and not isinstance(node, bool):
        root = _set(root, path, rng.choice(NUMBERS) if rng.random() < 0.5
                    else mutate_text(str(node), rng))
    else:
        root = _set(root, path, _random_value(rng, paths))
    return root


def schema_mutator(donors: list[Any]) -> Callable[[str, random.Random], str]:
    """A mutator of JSON Schema texts: JSON-tree edits (drop, duplicate or rename keys, swap
    subschemas, new types, numbers and strings, $ref to random pointers, deep nesting, grafts
    from `donors`), sometimes followed by character edits."""

    def mutate(text: str, rng: random.Random) -> str:
        try:
            root = json.loads(text)
        except (ValueError, RecursionError):
            return mutate_text(text, rng)
        try:
            for _ in range(rng.randint(1, 3)):
                root = _edit(root, rng, donors)
            out = json.dumps(root, ensure_ascii=rng.random() < 0.5,
                             indent=2 if rng.random() < 0.2 else None)
        except (ValueError, RecursionError):
            return text
        return mutate_text(out, rng) if rng.random() < 0.15 else out

    return mutate
