"""A plain-Python reference for the `minimax_m3_xml` argument style: how MiniMax-M3's template
renders arguments (`render`), and a reader guided by the schema (`accepts`) checked by
`jsonschema`.

From the template (and XGrammar's reading of it): every element is `NS<name>value NS</name>`
(NS the namespace `]<]minimax[>[`), an array's items are `item` elements, an object or array
is its elements with whitespace before each and after the last, or nothing at all when empty
(never whitespace alone); a string is its raw text (no NS in it), an enum member its raw text,
any other scalar its JSON text, with no whitespace around values. Properties come in the
schema's order (any order with `any_order`), each once, and no other.
"""
from __future__ import annotations

import json
import re
from typing import Any

import jsonschema

from .structural_reference import strict_schema

NS = "]<]minimax[>["
WS = " \t\n\r"
_NAME = re.compile(re.escape(NS) + r"<([^>/]*)>")


def render(value: Any, ws: str = "\n") -> str:
    """A value as the model writes it (objects and arrays with `ws` around their elements)."""
    if isinstance(value, dict):
        return "".join(f"{ws}{NS}<{k}>{render(v, ws)}{NS}</{k}>" for k, v in value.items()) + \
            (ws if value else "")
    if isinstance(value, list):
        return "".join(f"{ws}{NS}<item>{render(v, ws)}{NS}</item>" for v in value) + \
            (ws if value else "")
    return value if isinstance(value, str) else json.dumps(value)


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in WS:
        at += 1
    return at


def _types(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    return kind if isinstance(kind, list) else [kind] if kind else []


def _values(text: str, at: int, schema: dict[str, Any], any_order: bool
            ) -> list[tuple[Any, int]]:
    """Every (value, end) `text` can hold from `at` under `schema`."""
    if "anyOf" in schema:
        return [r for option in schema["anyOf"] for r in _values(text, at, option, any_order)]
    out: list[tuple[Any, int]] = []
    end = text.find(NS, at)
    leaf = text[at:end if end >= 0 else len(text)]
    if "enum" in schema or "const" in schema:
        members = schema["enum"] if "enum" in schema else [schema["const"]]
        return [(m, at + len(t)) for m in members
                for t in [m if isinstance(m, str) else json.dumps(m)] if leaf == t]
    for kind in _types(schema):
        if kind == "string":
            out.append((leaf, at + len(leaf)))
        elif kind in ("object", "array"):
            out += _container(text, at, schema, kind, any_order)
        else:
            try:
                value = json.loads(leaf)
            except ValueError:
                continue
            if leaf == leaf.strip(WS):
                out.append((value, at + len(leaf)))
    return out


def _container(text: str, at: int, schema: dict[str, Any], kind: str, any_order: bool
               ) -> list[tuple[Any, int]]:
    """Objects or arrays read from `at`: empty (nothing), or whitespace around elements."""
    results: list[tuple[Any, int]] = [({} if kind == "object" else [], at)]
    props = schema.get("properties", {})
    frontier: list[tuple[list[tuple[str, Any]], int]] = [([], at)]
    while frontier:
        items, pos = frontier.pop()
        p = _skip(text, pos)
        m = _NAME.match(text, p)
        if not m or (m.group(1) == "item") != (kind == "array"):
            continue
        name = m.group(1)
        sub = schema.get("items", {}) if kind == "array" else props.get(name)
        if sub is None:
            continue
        close = f"{NS}</{name}>"
        for value, end in _values(text, m.end(), sub, any_order):
            if text.startswith(close, end):
                after = end + len(close)
                got = items + [(name, value)]
                frontier.append((got, after))
                results.append(([v for _, v in got] if kind == "array" else got,
                                _skip(text, after)))
    out: list[tuple[Any, int]] = []
    order = list(props)
    for value, end in results:
        if kind == "object" and value != {}:
            names = [n for n, _ in value]
            if len(set(names)) != len(names) or not any_order and \
                    names != sorted(names, key=order.index):
                continue
            value = dict(value)
        out.append((value, end))
    return out


def accepts(schema: dict[str, Any], text: str, any_order: bool = False) -> bool:
    """Whether `text` is the arguments of some instance of `schema` (strict: no other
    properties), read from the top-level object."""
    validator = jsonschema.Draft202012Validator(strict_schema(schema))
    return any(end == len(text) and validator.is_valid(value)
               for value, end in _container(text, 0, schema, "object", any_order))
