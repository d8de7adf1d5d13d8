"""A plain-Python reference for structural tags: the set of positions where a format can end.

Written from `specs/structural_tags.md`, independently of the compiler: JSON parts are checked
with `json` and `jsonschema` (plus the declared property order and the whitespace bound the spec
states), regex parts with the `regex` package, grammar parts with Lark (through the test
suite's IR → Lark oracle, the GBNF read by grammask's reader), and triggered free text operationally: the text is scanned left to
right and dispatches at the first place a stop is complete, as a streaming scanner would.
Exponential in the worst case; meant for texts of a few hundred characters.
"""
from __future__ import annotations

import functools
import json
from typing import Any, Callable

import jsonschema
import regex
from lark import Lark

from grammask.compiler.frontends.gbnf import parse_gbnf

from .lark_oracle import lark_parser, parses

JSON_WS = " \t\n\r"


def strict_schema(schema: Any) -> Any:
    """`schema` with `additionalProperties: false` beside every `properties` that has none."""
    if isinstance(schema, list):
        return [strict_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict_schema(v) for k, v in schema.items()}
    if ("properties" in out or "patternProperties" in out) and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def _ordered(value: Any, schema: Any) -> bool:
    """Object keys in the order of the schema's `properties` (for the shapes tests use:
    `properties` and `items` nesting, no combinators)."""
    if isinstance(value, list) and isinstance(schema, dict) and isinstance(schema.get("items"),
                                                                             dict):
        return all(_ordered(v, schema["items"]) for v in value)
    if not (isinstance(value, _Pairs) and isinstance(schema, dict)):
        return True
    order = list(schema.get("properties", {}))
    keys = [k for k, _ in value.pairs]
    if len(set(keys)) != len(keys):
        return False
    positions = [order.index(k) for k in keys if k in order]
    if positions != sorted(positions):
        return False
    props = schema.get("properties", {})
    return all(_ordered(v, props.get(k)) for k, v in value.pairs)


class _Pairs(dict):
    """A decoded object that remembers its key order and duplicates."""

    pairs: list[tuple[str, Any]]


def _pairs(items: list[tuple[str, Any]]) -> _Pairs:
    out = _Pairs(items)
    out.pairs = items
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def json_matches(text: str, schema: Any, max_whitespace: int = 24) -> bool:
    """Whether `text` is one JSON value valid under `schema` read strictly, keys in declared
    order, no whitespace before or after it and no run of whitespace over `max_whitespace`."""
    if not text or text[0] in JSON_WS or text[-1] in JSON_WS:
        return False
    try:
        value = json.loads(text, object_pairs_hook=_pairs)
    except ValueError:
        return False
    run, in_string, escaped = 0, False, False
    for ch in text:
        if in_string:
            in_string = escaped or ch != '"'
            escaped = not escaped and ch == "\\"
            continue
        in_string = ch == '"'
        run = run + 1 if ch in JSON_WS else 0
        if run > max_whitespace:
            return False
    if not _ordered(value, schema):
        return False
    return jsonschema.Draft202012Validator(strict_schema(schema)).is_valid(_plain(value))


class Reference:
    """`matches(text)`: whether `text` is in the language of a structural-tag spec."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.root = spec["format"] if "format" in spec else _legacy(spec)

    def matches(self, text: str) -> bool:
        return len(text) in self.ends(self.root, text, 0, ())

    def ends(self, f: dict[str, Any], text: str, i: int, stops: tuple[str, ...]) -> set[int]:
        """Every j such that text[i:j] matches format `f` (`stops`: the enclosing tag's ends)."""
        kind = f.get("type", "tag")
        n = len(text)
        if kind == "const_string":
            return {i + len(f["value"])} if text.startswith(f["value"], i) else set()
        if kind == "json_schema":
            most = f.get("max_whitespace_cnt")
            return {j for j in range(i + 1, n + 1) if json_matches(
                text[i:j], f["json_schema"], 24 if most is None else most)}
        if kind == "regex":
            return {j for j in range(i, n + 1) if regex.fullmatch(f["pattern"], text[i:j])}
        if kind == "grammar":
            return {j for j in range(i, n + 1) if gbnf_matches(f["grammar"], text[i:j])}
        if kind == "any_text":
            excl = (*f.get("excludes", ()), *stops)
            most = f.get("max_chars")
            return {j for j in range(i, n + 1) if _free(text[i:j], excl)
                    and (most is None or j - i <= most)}
        if kind == "sequence":
            at = {i}
            for e in f["elements"]:
                at = {k for j in at for k in self.ends(e, text, j, stops)}
            return at
        if kind == "or":
            return {k for e in f["elements"] for k in self.ends(e, text, i, stops)}
        if kind in ("optional", "star", "plus", "repeat"):
            least, most = {"optional": (0, 1), "star": (0, None), "plus": (1, None)}.get(
                kind, (f.get("min"), None if f.get("max") == -1 else f.get("max")))
            return self.repeat(f["content"], text, i, stops, least, most)
        if kind == "tag":
            return self.tag(f, text, i)
        if kind == "triggered_tags":
            return self.triggered(f, text, i, stops)
        if kind == "dispatch":
            tags = [(p, lambda t, j, p=p, g=g: {k for k in self.ends(g, t, j + len(p), stops)}
                     if t.startswith(p, j) else set()) for p, g in f["rules"]]
            return self.scan(text, i, [p for p, _ in f["rules"]], tags,
                             tuple(f.get("excludes", ())), f.get("loop", True), False)
        if kind == "tags_with_separator":
            one = lambda j: {k for t in f["tags"] for k in self.tag(t, text, j)}  # noqa: E731
            out = set() if f.get("at_least_one") else {i}
            at = one(i)
            out |= at
            if f.get("stop_after_first"):
                return out
            seen = set(at)
            while at:
                sep = f["separator"]
                at = {k for j in at if text.startswith(sep, j) for k in one(j + len(sep))} - seen
                seen |= at
            return out | seen
        raise ValueError(f"unknown format {kind}")

    def repeat(self, f: dict[str, Any], text: str, i: int, stops: tuple[str, ...], least: int,
               most: int | None) -> set[int]:
        out, at, count = set(), {i}, 0
        seen: set[tuple[int, int]] = set()
        while at and (most is None or count <= most):
            if count >= least:
                out |= at
            if most is not None and count == most:
                break
            nxt = {k for j in at for k in self.ends(f, text, j, stops)}
            count += 1
            key = {(k, min(count, least)) for k in nxt}
            if most is None and key <= seen:
                break
            seen |= key
            at = nxt
        return out

    def tag(self, f: dict[str, Any], text: str, i: int) -> set[int]:
        begin, end = f["begin"], f["end"]
        ends = [end] if isinstance(end, str) else list(end)
        if not text.startswith(begin, i):
            return set()
        inner = self.ends(f["content"], text, i + len(begin), tuple(e for e in ends if e))
        return {j + len(e) for j in inner for e in ends if text.startswith(e, j)}

    def triggered(self, f: dict[str, Any], text: str, i: int, stops: tuple[str, ...]) -> set[int]:
        triggers = f["triggers"]
        tags = [(t, lambda s, j, t=t: {k for g in f["tags"] if g["begin"].startswith(t)
                                       for k in self.tag(g, s, j)}) for t in triggers]
        excludes = (*f.get("excludes", ()), *stops)
        if f.get("at_least_one"):
            first = {k for g in f["tags"] for k in self.tag(g, text, i)}
            if f.get("stop_after_first"):
                return first
            return {k for j in first for k in self.scan(text, j, triggers, tags, excludes,
                                                        True, False)}
        return self.scan(text, i, triggers, tags, excludes, not f.get("stop_after_first"), False)

    def scan(self, text: str, i: int, triggers: list[str],
             tags: list[tuple[str, Callable[[str, int], set[int]]]], excludes: tuple[str, ...],
             loop: bool, _: bool) -> set[int]:
        """Free text from i, dispatching at the first complete stop if it is a trigger."""
        out: set[int] = set()
        todo, seen = [i], {i}
        stops = (*triggers, *excludes)
        while todo:
            start = todo.pop()
            j = start
            while True:
                out.add(j)  # the free text may end here
                if j == len(text):
                    break
                j += 1
                done = [s for s in stops if s and j - len(s) >= start and text.startswith(
                    s, j - len(s))]
                if done:
                    for s in done:
                        if s in triggers:
                            for t, opened in tags:
                                if t == s:
                                    for k in opened(text, j - len(s)):
                                        if not loop:
                                            out.add(k)
                                        elif k not in seen:
                                            seen.add(k)
                                            todo.append(k)
                    break
        return out


@functools.lru_cache(maxsize=64)
def _gbnf_parser(grammar: str) -> Lark:
    return lark_parser(parse_gbnf(grammar))


def gbnf_matches(grammar: str, text: str) -> bool:
    """Whether Lark's Earley parser, given the GBNF grammar, parses `text` whole."""
    return parses(_gbnf_parser(grammar), text)


def _free(text: str, stops: tuple[str, ...]) -> bool:
    return not any(s and s in text for s in stops)


def _legacy(spec: dict[str, Any]) -> dict[str, Any]:
    return {"type": "triggered_tags", "triggers": spec["triggers"], "tags": [
        {"begin": s["begin"], "end": s["end"],
         "content": {"type": "json_schema", "json_schema": s["schema"]}}
        for s in spec["structures"]]}
