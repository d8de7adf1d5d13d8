"""Seed inputs: the shared corpora beside the repository when present, else the vendored ones
under tests/data."""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
SHARED = ROOT.parent / "shared" / "corpora"
PATTERNS = [r'\{"age": [0-9]+\}', r"[a-z]+( [a-z]+)*\.", r"(ab|a)*c?", r"中+文?", r"\d{3}-\d{4}",
            r'"([^"\\]|\\.)*"', r"(?:x|y){2,5}z?", r"[^\x00-\x1f]{0,8}", r"(a|a)*b", r"(a*)*",
            r"[\u0000-\U0010FFFF]{2}", r"\w+@\w+\.(com|org)", r"(?i:abc)|[[:alpha:]]"]
# Bench schemas kept as seeds: enough variety, bounded start-up time.
MAX_BENCH_SCHEMAS = 400
# Larger schemas compile for seconds, so the fuzzer would spend its time on few of them.
MAX_SCHEMA_CHARS = 8_000


def _texts(paths: list[Path]) -> list[str]:
    out = []
    for path in paths:
        try:
            out.append(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
    return out


def grammar_seeds(ext: str) -> list[str]:
    """Grammar texts with extension `ext` (gbnf or lark), shared and vendored, deduplicated."""
    found: dict[str, None] = {}
    for base in (SHARED / ext, DATA / ext, DATA / "lint"):
        if base.is_dir():
            found.update(dict.fromkeys(_texts(sorted(base.rglob(f"*.{ext}")))))
    return list(found)


def _suite_schemas(base: Path) -> list[Any]:
    schemas = []
    for path in sorted(base.glob("*.json")):
        try:
            groups = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        schemas.extend(g["schema"] for g in groups if isinstance(g, dict) and "schema" in g)
    return schemas


def _jsonl_schemas(paths: list[Path], rng: random.Random, keep: int) -> list[Any]:
    lines = [line for path in paths for line in path.read_text(encoding="utf-8").split("\n")
             if line.strip()]
    picked = rng.sample(lines, min(keep, len(lines)))
    return [json.loads(line)["schema"] for line in picked]


def schema_seeds(rng: random.Random) -> list[Any]:
    """JSON Schemas: the vendored sample and test suite, plus a sample of the bench corpora."""
    schemas = _jsonl_schemas([DATA / "json_schema_sample.jsonl"], rng, 10_000)
    for base in (DATA / "json-schema-test-suite" / "draft2020-12",
                 SHARED / "json-schema-test-suite" / "draft2020-12"):
        schemas += _suite_schemas(base)
    bench = sorted((SHARED / "jsonschemabench").glob("*.jsonl"))
    if bench:
        schemas += _jsonl_schemas(bench, rng, MAX_BENCH_SCHEMAS)
    unique = {text: s for s in schemas
              if len(text := json.dumps(s, sort_keys=True)) <= MAX_SCHEMA_CHARS}
    return list(unique.values())
