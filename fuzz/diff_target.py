"""The `jsonschema-diff` target: the JSON Schema frontend against the exact reference.

An input is a schema's JSON text (numbers spelled as they come: `1e1`, `1.0`, `1e-400`), or,
to replay a finding, `{"schema": S, "instances": [TEXT, ...]}` with S a schema (given to the
frontend as a dict) or a JSON string holding a schema text (given as that text). The run
compiles the schema on the byte vocabulary within LIMITS (a GrammarError, or a schema the
reference does not judge, ends it), then judges instance texts with
`tests.support.json_schema_diff.Differential`: the replay's, or values drawn near the schema's
boundaries (`tests.support.json_schema_values`) in every spelling (`tests.support.json_schema_spellings`).
A schema text is compiled as text when a number in it is spelled otherwise than its float's
shortest repr, else as text or as dict by a coin the input fixes.

A finding: an invalid text accepted (unsound), or a valid text in the documented form
rejected (incomplete). It is shrunk (`shrink`), and raised as a `FindingError` subclass
named for its class (`Unsound_exponent_spellings`, `Incomplete`, ...), so the driver reports
each class once; the message holds the shrunk schema, the text and an input that replays
it. At exit, a count of the findings by class goes to stderr.
"""
from __future__ import annotations

import atexit
import copy
import json
import random
import re
import sys
from collections import Counter
from decimal import Decimal
from typing import Any

from grammask.compiler import GrammarError

from tests.support.json_schema_diff import (INCOMPLETE, LATER_KEYWORDS, Differential, Finding,
                                    exact_text, shrink)
from tests.support.json_schema_exact import NotJudged
from tests.support.json_schema_random import DIALECTS, SchemaGen, as_text, random_schema
from tests.support.json_schema_values import values

from .common import BYTES, LIMITS, FindingError, Target, input_rng

NAME = "jsonschema-diff"
VALUES_PER_INPUT = 10
EXOTIC_TEXTS = 3
SEEDS = 60
NUMBER = re.compile(r'"(?:[^"\\]|\\.)*"|(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)',
                    re.DOTALL)
_CLASSES: dict[str, type[FindingError]] = {}
_COUNTS: Counter[str] = Counter()


def finding_class(kind: str) -> type[FindingError]:
    """The FindingError subclass of a finding's class (the driver tells findings apart by
    exception type and place)."""
    name = {INCOMPLETE: "Incomplete", LATER_KEYWORDS: "Incomplete_later_draft_keyword"}.get(
        kind) or "Unsound_" + re.sub(r"\W+", "_", kind)
    if name not in _CLASSES:
        _CLASSES[name] = type(name, (FindingError,), {"__module__": __name__})
    return _CLASSES[name]


def _summary() -> None:
    if _COUNTS:
        counts = ", ".join(f"{k}: {n}" for k, n in _COUNTS.most_common())
        print(f"[{NAME}] findings by class: {counts}", file=sys.stderr)


atexit.register(_summary)


def _exotic(text: str) -> bool:
    """Whether a number of the schema text says more than its float's shortest repr."""
    for m in NUMBER.finditer(text):
        token = m.group(1)
        if token and ("." in token or "e" in token.lower()):
            value = Decimal(token)
            if not value.is_finite() or Decimal(repr(float(value))) != value:
                return True
    return False


def read_input(text: str) -> tuple[Any, list[str] | None] | None:
    """(schema as the frontend gets it, replayed instance texts or None), None for an input
    that is not JSON."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(data, dict) and set(data) == {"schema", "instances"} \
            and isinstance(data["instances"], list):
        return data["schema"], [t for t in data["instances"] if isinstance(t, str)]
    if _exotic(text) or input_rng(text).random() < 0.5:
        return text, None
    return data, None


def replay_input(finding: Finding) -> str:
    """The input that replays one finding."""
    return json.dumps({"schema": finding.schema, "instances": [finding.text]},
                      ensure_ascii=False)


def run(text: str) -> bool:
    read = read_input(text)
    if read is None:
        return False
    schema, instances = read
    try:
        diff = Differential(schema, BYTES, LIMITS)
    except (GrammarError, NotJudged, RecursionError):
        return False
    rng = input_rng(text)
    if instances is not None:
        texts = [(t, diff.documented(t)) for t in instances]
    else:
        texts = diff.texts(values(diff.data, rng, VALUES_PER_INPUT), rng, EXOTIC_TEXTS)
    finding = diff.first_finding(texts)
    if finding is None:
        return True
    _COUNTS[finding.kind] += 1
    small = shrink(finding, BYTES, LIMITS)
    raise finding_class(finding.kind)(f"{small}\n  replay input: {replay_input(small)}")


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path] if isinstance(node, dict) else []
    children = node.items() if isinstance(node, dict) else enumerate(node) \
        if isinstance(node, list) else ()
    for k, child in children:
        out.extend(_paths(child, (*path, k)))
    return out


def _wrap(node: Any, rng: random.Random, gen: SchemaGen) -> Any:
    """The subschema under a random combinator or container keyword of the dialect."""
    keys = ["items", "properties", "$ref"] + (["extends"] if gen.dialect == "draft-03" else [])
    if gen.has("not"):
        keys += ["not", "oneOf", "anyOf", "allOf"]
    if gen.has("if"):
        keys += ["then", "else"]
    if gen.has("propertyNames"):
        keys.append("propertyNames")
    key = rng.choice(keys)
    if key in ("oneOf", "anyOf", "allOf"):
        return {key: [node, gen.schema(1)]}
    if key in ("then", "else"):
        return {"if": gen.negatable(1), key: node}
    if key == "properties":
        return {"properties": {rng.choice(["a", "b", "é"]): node},
                **({"required": ["a"]} if gen.dialect != "draft-03" else {})}
    if key == "$ref":
        name = f"w{rng.randrange(10**6)}"
        gen.defs[name] = node
        return {"$ref": f"#/{gen.defs_key}/{name}"}
    return {key: node}


def _edit(data: dict[str, Any], rng: random.Random, gen: SchemaGen) -> Any:
    """The schema (without `$schema`) with one edit at a random subschema."""
    path = rng.choice(_paths(data))
    parent, node = None, data
    for k in path:
        parent, node = node, node[k]
    op = rng.random()
    if op < 0.35:
        new = _wrap(node, rng, gen)
    elif op < 0.6:
        new = gen.schema(2)
    elif op < 0.85:
        fresh = gen.schema(1)
        new = {**node, **fresh} if isinstance(fresh, dict) else node
    else:
        new = {k: v for k, v in node.items() if rng.random() < 0.7}
    if parent is None:
        return new
    parent[path[-1]] = new
    return data


def mutate(text: str, rng: random.Random) -> str:
    """A fresh schema half the time; else the input's schema with one edit in its dialect: a
    subschema wrapped in a combinator, replaced by a fresh one, given a fresh sibling
    keyword or thinned out. Written with exotic number spellings a third of the time."""
    read = read_input(text)
    data = None
    if read is not None:
        schema = read[0]
        try:
            data = json.loads(schema, parse_float=Decimal) if isinstance(schema, str) \
                else copy.deepcopy(schema)
        except (ValueError, RecursionError):
            data = None
    if not isinstance(data, dict) or rng.random() < 0.5:
        data = random_schema(rng)
    else:
        dialect = data.pop("$schema", None)
        name = next((k for k, v in DIALECTS.items() if v == dialect), None)
        gen = SchemaGen(rng, name, 2)
        data = _edit(data, rng, gen) if _paths(data) else gen.schema(2)
        if not isinstance(data, dict):
            data = {"extends": data} if name == "draft-03" else {"allOf": [data]}
        if gen.defs:
            defs = data.get(gen.defs_key)
            data[gen.defs_key] = {**(defs if isinstance(defs, dict) else {}), **gen.defs}
        if dialect is not None:
            data = {"$schema": dialect, **data}
    if rng.random() < 0.35:
        return as_text(data, rng)
    return exact_text(data)


def diff_target(rng: random.Random) -> Target:
    """The jsonschema-diff target (see the module docstring), seeded with fresh schemas."""
    seeds = [exact_text(random_schema(rng)) for _ in range(SEEDS)]
    seeds += [as_text(random_schema(rng), rng) for _ in range(SEEDS // 3)]
    return Target(NAME, seeds, run, mutate)
