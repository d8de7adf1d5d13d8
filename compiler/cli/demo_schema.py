"""The JSON Schema part of `grammask demo`: JSON mode against a strict schema, as in the lesson.

The toy model has learned to answer `{"name": "Ada"}`: the text it was asked about never gives
an age. It is sampled through JSON mode (the empty schema `{}`: any JSON value) and through the
lesson's strict person schema (`name` a string and `age` an integer, both required, `pets` an
optional array of "cat"/"dog", nothing else). What each guarantees is then checked on the
decoded answers, independently of grammask: every finished JSON-mode answer parses with
`json.loads`, but may miss fields or have the wrong types; every finished strict answer is a
valid person (checked by hand against the schema's rules). With no age to give, the model
invents one; an answer that hits the token cap without EOS is counted as unfinished.

Both schemas compile with at most one whitespace character per gap, as the lesson's checker
allows, and the model gives some weight to writing the next character on its own (`respell`),
so that when the mask forbids its usual token (`"}` before an age is written) it can still
close the string, as a real model would.
"""
from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...runtime import Matcher, Vocabulary
from ..pipeline import compile_json_schema
from .toy_model import ToyModel, generate

__all__ = ["PERSON_SCHEMA", "PERSON_TARGET", "SCHEMA_MAX_TOKENS", "SCHEMA_N", "ModeResult",
           "SchemaDemoResult", "format_schema_report", "person_problem", "run_schema_demo"]

PERSON_TARGET = '{"name": "Ada"}'
PERSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "pets": {"type": "array", "items": {"enum": ["cat", "dog"]}},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}
SCHEMA_MAX_TOKENS = 32
SCHEMA_N = 50
RESPELL = 0.05
MAX_WHITESPACE = 1
_SHOWN = 4


def person_problem(value: Any) -> str | None:
    """Why a parsed JSON value is not a valid instance of `PERSON_SCHEMA` (None if it is)."""
    if not isinstance(value, dict):
        return f"not an object but {type(value).__name__}"
    extra = sorted(set(value) - set(PERSON_SCHEMA["properties"]))
    if extra:
        return f"unexpected property {extra[0]!r}"
    for name in PERSON_SCHEMA["required"]:
        if name not in value:
            return f"missing {name!r}"
    if not isinstance(value["name"], str):
        return f"'name' is {type(value['name']).__name__}, not a string"
    age = value["age"]
    if isinstance(age, bool) or not (isinstance(age, int) or (isinstance(age, float)
                                                              and age.is_integer())):
        return f"'age' is {type(age).__name__}, not an integer"
    pets = value.get("pets", [])
    if not isinstance(pets, list) or any(p not in ("cat", "dog") for p in pets):
        return "'pets' is not an array of \"cat\" and \"dog\""
    return None


@dataclass
class ModeResult:
    """One way of sampling: the schema, its backend and compile time, and what the answers
    were. `answers` and `problems` hold (text, count) pairs, most common first; `problems`
    counts why finished answers were not valid persons."""

    schema: str
    kind: str
    compile_ms: float
    finished: int
    parsed: int
    valid: int
    capped: int
    answers: list[tuple[str, int]]
    problems: list[tuple[str, int]]


@dataclass
class SchemaDemoResult:
    """The numbers of the JSON Schema part of one demo run."""

    n: int
    seed: int
    max_tokens: int
    target: str
    json_mode: ModeResult
    strict: ModeResult
    wall_s: float

    def to_dict(self) -> dict[str, Any]:
        """Every field, answer and problem lists as `{"text", "count"}` objects."""
        out: dict[str, Any] = {"n": self.n, "seed": self.seed, "max_tokens": self.max_tokens,
                               "target": self.target, "wall_s": self.wall_s}
        for name in ("json_mode", "strict"):
            mode: ModeResult = getattr(self, name)
            d = dict(vars(mode))
            for key in ("answers", "problems"):
                d[key] = [{"text": t, "count": c} for t, c in d[key]]
            out[name] = d
        return out


def _sample(vocab: Vocabulary, schema: Any, label: str, n: int, max_tokens: int,
            seeds: list[np.random.SeedSequence]) -> ModeResult:
    t0 = time.perf_counter()
    compiled = compile_json_schema(schema, vocab, max_whitespace=MAX_WHITESPACE)
    compile_ms = (time.perf_counter() - t0) * 1e3
    model = ToyModel(vocab, seeds[0], PERSON_TARGET, respell=RESPELL)
    rng = np.random.default_rng(seeds[1])
    matcher = Matcher(compiled)
    answers: Counter[str] = Counter()
    problems: Counter[str] = Counter()
    parsed = valid = capped = 0
    for _ in range(n):
        matcher.reset()
        g = generate(model, rng, matcher, max_tokens)
        if not g.finished:
            capped += 1
            continue
        text = vocab.decode(g.tokens).decode("utf-8", "replace")
        answers[text] += 1
        try:
            value = json.loads(text)
        except ValueError:
            problems["does not parse as JSON"] += 1
            continue
        parsed += 1
        problem = person_problem(value)
        if problem is None:
            valid += 1
        else:
            problems[problem] += 1
    return ModeResult(label, compiled.kind, compile_ms, n - capped, parsed, valid, capped,
                      answers.most_common(_SHOWN), problems.most_common(_SHOWN))


def run_schema_demo(vocab: Vocabulary, n: int = SCHEMA_N, seed: int = 0,
                    max_tokens: int = SCHEMA_MAX_TOKENS) -> SchemaDemoResult:
    """Sample `n` answers through JSON mode and `n` through the strict person schema (seeded
    by `seed`, independently of the rest of the demo), and check them."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    start = time.perf_counter()
    seeds = np.random.SeedSequence([seed, 1]).spawn(4)
    json_mode = _sample(vocab, {}, "{}", n, max_tokens, seeds[:2])
    strict = _sample(vocab, PERSON_SCHEMA, "person", n, max_tokens, seeds[2:])
    return SchemaDemoResult(n, seed, max_tokens, PERSON_TARGET, json_mode, strict,
                            time.perf_counter() - start)


def _share(count: int, total: int) -> str:
    return f"{count}/{total}" + (f" ({100 * count / total:.1f}%)" if total else "")


def _mode_lines(m: ModeResult, title: str, max_tokens: int) -> list[str]:
    capped = f"; {m.capped} hit the {max_tokens}-token cap" if m.capped else ""
    lines = [(f"  {title:<16}{m.kind}, compiled in {m.compile_ms:.1f} ms; finished"
              f" {m.finished}{capped}"),
             (f"    of the finished: parse as JSON {_share(m.parsed, m.finished)}, valid person"
              f" {_share(m.valid, m.finished)}")]
    lines += [f"    {c:4d} x {t!r}" for t, c in m.answers]
    lines += [f"    not a person: {c} x {p}" for p, c in m.problems]
    return lines


def format_schema_report(r: SchemaDemoResult) -> str:
    """The human-readable report of the JSON Schema part."""
    lines = [
        (f"JSON mode vs a strict schema: the toy model learned {r.target} (the text gave no"
         f" age), {r.n} answers each way (seed {r.seed})"),
        ("  person schema   name: string, age: integer (both required), pets: [\"cat\" |"
         " \"dog\"]; nothing else"),
        *_mode_lines(r.json_mode, "JSON mode ({})", r.max_tokens),
        *_mode_lines(r.strict, "strict schema", r.max_tokens),
        ("  JSON mode guarantees only that a finished answer parses; the strict schema that it"
         " is a valid person,"),
        ("  so with no age to give, the model has to invent one. The fix is in the schema:"
         " \"type\": [\"integer\", \"null\"]"),
        "  lets it answer null (`grammask lint` notes this as schema-required-not-nullable).",
        f"  time            {r.wall_s:.2f} s for this part",
    ]
    return "\n".join(lines) + "\n"
