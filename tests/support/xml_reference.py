"""A plain-Python reference for the XML argument styles of structural tags: how each model's
chat template renders arguments (`render`), and a reader of such texts (`readings`) that gives
every arguments object a text can mean, checked by `jsonschema` (`accepts`).

Reading rules, from the templates: a string argument is written raw (the reader also tries the
text without the whitespace around it); any other value as JSON; the typed styles label the
value (DeepSeek `string="true"` for raw text, Kimi-K3 its type, Cohere `raw`/`json`/`dict`/
`list`, `dict` and `list` holding nested elements). Properties come in the schema's order
(any order with `any_order`), each once, and no other (the structural tag's strict reading).
"""
from __future__ import annotations

import itertools
import json
import re
from typing import Any

import jsonschema

from .structural_reference import strict_schema

WS = " \t\n\r"

HEADS = {
    "qwen_xml": (r"<parameter=(?P<name>[^>]*)>", "</parameter>"),
    "minimax_xml": (r'<parameter name="(?P<name>[^"]*)">', "</parameter>"),
    "glm_xml": (r"<arg_key>(?P<name>.*?)</arg_key>[ \t\n\r]*<arg_value>", "</arg_value>"),
    "deepseek_xml": (r'<｜DSML｜parameter name="(?P<name>[^"]*)" string="(?P<label>true|false)">',
                     "</｜DSML｜parameter>"),
    "deepseek_v4_1_xml": (r'<｜DSML｜ parameter name="(?P<name>[^"]*)" string="(?P<label>true|false)">',
                          "</｜DSML｜ parameter>"),
    "kimi_k3_xml": (r'<\|open\|>argument key="(?P<name>[^"]*)" type="(?P<label>\w+)"<\|sep\|>',
                    "<|close|>argument<|sep|>"),
    "cohere_xml": (r'<cofl:value(?: name="(?P<name>[^"]*)")? type="(?P<label>\w+)">',
                   "</cofl:value>"),
}


def _kimi_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", type(None): "null", list: "array", dict: "object"}[type(value)]


def _cohere_type(value: Any) -> str:
    return {str: "raw", dict: "dict", list: "list"}.get(type(value), "json")


def render_value(style: str, value: Any) -> tuple[str, str]:
    """(label, text) of one value as the model writes it."""
    if style == "cohere_xml" and isinstance(value, dict):
        return "dict", "".join(render_element(style, k, v) for k, v in value.items())
    if style == "cohere_xml" and isinstance(value, list):
        return "list", "".join(render_element(style, None, v) for v in value)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    label = {"deepseek_xml": "true" if isinstance(value, str) else "false",
             "deepseek_v4_1_xml": "true" if isinstance(value, str) else "false",
             "kimi_k3_xml": _kimi_type(value), "cohere_xml": _cohere_type(value)}.get(style, "")
    return label, text


def render_element(style: str, name: str | None, value: Any) -> str:
    label, text = render_value(style, value)
    if style == "qwen_xml":
        return f"<parameter={name}>\n{text}\n</parameter>\n"
    if style == "minimax_xml":
        return f'<parameter name="{name}">{text}</parameter>\n'
    if style == "glm_xml":
        return f"<arg_key>{name}</arg_key><arg_value>{text}</arg_value>"
    if style == "deepseek_xml":
        return f'<｜DSML｜parameter name="{name}" string="{label}">{text}</｜DSML｜parameter>\n'
    if style == "deepseek_v4_1_xml":
        return f'<｜DSML｜ parameter name="{name}" string="{label}">{text}</｜DSML｜ parameter>\n'
    if style == "kimi_k3_xml":
        return f'<|open|>argument key="{name}" type="{label}"<|sep|>{text}<|close|>argument<|sep|>'
    named = f' name="{name}"' if name is not None else ""
    return f'<cofl:value{named} type="{label}">{text}</cofl:value>'


def render(style: str, arguments: dict[str, Any]) -> str:
    return "".join(render_element(style, k, v) for k, v in arguments.items())


def _values(style: str, label: str, text: str) -> list[Any]:
    """Every value an element's text can mean under its label."""
    out: list[Any] = []
    raw_ok = {"deepseek_xml": label == "true", "deepseek_v4_1_xml": label == "true",
              "kimi_k3_xml": label == "string",
              "cohere_xml": label == "raw"}.get(style, True)
    if raw_ok:
        out += [text, text.strip(WS)]
    try:
        value = json.loads(text)
    except ValueError:
        return out
    if isinstance(value, str):
        return out
    if style in ("deepseek_xml", "deepseek_v4_1_xml") and label != "false" or \
            style == "cohere_xml" and label != "json":
        return out
    if style == "kimi_k3_xml" and _kimi_type(value) != label:
        return out
    return out + [value]


def _elements(style: str, text: str, at: int, named: bool) -> list[tuple[int, list[tuple[
        str | None, list[Any]]]]]:
    """Every way to read elements from `at`: (end, [(name, candidate values)]), the end
    being where an element sequence stops (whitespace skipped)."""
    head, closing = HEADS[style]
    results = []
    items: list[tuple[str | None, list[Any]]] = []
    while True:
        while at < len(text) and text[at] in WS:
            at += 1
        results.append((at, list(items)))
        m = re.compile(head, re.S).match(text, at)
        if not m or (m.group("name") is not None) != named:
            return results
        label = m.groupdict().get("label") or ""
        start = m.end()
        if style == "cohere_xml" and label in ("dict", "list"):
            inner = [(end, parts) for end, parts in _elements(style, text, start, label == "dict")
                     if text.startswith(closing, end)]
            if len(inner) != 1:
                return results
            end, parts = inner[0]
            candidates = [dict(p) if label == "dict" else [v for _, v in p]
                          for p in _combinations(parts)]
            if label == "dict" and any(len(c) != len(parts) for c in candidates):
                return results  # a name twice
        else:
            end = text.find(closing, start)
            if end < 0:
                return results
            candidates = _values(style, label, text[start:end])
        items.append((m.group("name"), candidates))
        at = end + len(closing)


def _combinations(parts: list[tuple[str | None, list[Any]]]) -> list[list[tuple[Any, Any]]]:
    return [list(zip([n for n, _ in parts], combo))
            for combo in itertools.product(*[values for _, values in parts])]


def readings(style: str, text: str) -> list[list[tuple[str, Any]]]:
    """Every (name, value) list the whole of `text` can mean."""
    return [pairs for end, parts in _elements(style, text, 0, True) if end == len(text)
            for pairs in _combinations(parts)]


def accepts(style: str, schema: dict[str, Any], text: str, any_order: bool = False) -> bool:
    """Whether `text` is the arguments of some instance of `schema`, in the schema's order
    (in any order with `any_order`)."""
    order = list(schema.get("properties", {}))
    validator = jsonschema.Draft202012Validator(strict_schema(schema))
    for pairs in readings(style, text):
        names = [n for n, _ in pairs]
        if len(set(names)) != len(names) or any(n not in order for n in names) or \
                not any_order and names != sorted(names, key=order.index):
            continue
        if validator.is_valid(dict(pairs)):
            return True
    return False
