"""`extract` and `diff` on the JSONSchemaBench schemas: how often they answer, and how fast.

    python bench/bench_tools.py [--splits A,B] [--limit N] [--json out.json]

extract: every valid instance of each schema, written as `json.dumps` gives it, wrapped in prose
("Sure! Here is the record: ... Let me know if you need anything else.") and, as a second text,
repeated after a truncated copy of itself; the schema compiled as `grammask extract` compiles
it (the checking automaton, keys in any order where the object fits the bound). Reported: the
share of texts whose match is exactly the instance (first text) and whose `every=True` matches
end with it (second), and the time per text.

diff: each schema against itself (no witness either way is the only right answer), against a
copy with one more required property (the first optional one listed: old-not-new must find a
witness, valid under the old schema and invalid under the new one, `jsonschema`, unless a
subschema already requires it) and against a copy without its `required` (new-not-old
likewise). Reported: outcomes per direction (witness, none, error by code), witnesses that
`jsonschema` contradicts or that come in the direction that must have none, and the time of
each `difference` call. One process, one core; the first calls
pay the kernels' loading (`grammask warmup` first).
"""
from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from jsonschema import Draft202012Validator, validators

from grammask.compiler import GrammarError, Limits, difference, extract
from grammask.compiler.cli.schema import check_automaton
from grammask.compiler.frontends.json_schema.options import JsonSchemaOptions

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "jsonschemabench"
LIMITS = Limits(max_compile_seconds=10.0)
PCTS = (50, 90, 99, 100)
DEPTH: int | None = None


def pct(values: list[float]) -> str:
    if not values:
        return "-"
    return " / ".join(f"{v * 1e3:.2f}" for v in np.percentile(values, PCTS))


def validator_for(schema: Any) -> Any:
    try:
        cls = validators.validator_for(schema, default=Draft202012Validator)
        return cls(schema)
    except Exception:  # noqa: BLE001 - a schema jsonschema cannot read is skipped
        return None


def bench_extract(schema: Any, instances: list[Any], out: dict[str, Any]) -> None:
    try:
        automaton, _ = check_automaton(json.dumps(schema), JsonSchemaOptions(
            property_order="any"), LIMITS, fallback=True)
    except GrammarError as exc:
        out["errors"][exc.code or "error"] += 1
        return
    for value in instances:
        text = json.dumps(value)
        prose = f"Sure! Here is the record: {text} Let me know if you need anything else."
        twice = f"{text[:max(1, len(text) // 2)]} ... corrected: {text}"
        for name, t in (("prose", prose), ("twice", twice)):
            start = time.perf_counter()
            try:
                found = extract(automaton, t, every=name == "twice")
            except Exception as exc:  # noqa: BLE001 - a budget or a bug: counted, shown
                out["errors"][type(exc).__name__] += 1
                continue
            out["seconds"].append(time.perf_counter() - start)
            if name == "prose":
                out["exact"] += bool(found) and found[0].text == text
            else:
                out["last"] += bool(found) and found[-1].text == text
            out["texts"] += 1


def variants(schema: Any) -> list[tuple[str, Any, str | None]]:
    """(name, other schema, the direction that must find a witness or None)."""
    out: list[tuple[str, Any, str | None]] = [("itself", copy.deepcopy(schema), None)]
    if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
        required = schema.get("required", [])
        optional = [k for k in schema["properties"] if k not in required]
        if optional and isinstance(required, list):
            out.append(("one more required", {**schema, "required": [*required, optional[0]]},
                        "old-not-new"))
        if required:
            loose = dict(schema)
            del loose["required"]
            out.append(("required dropped", loose, "new-not-old"))
    return out


def bench_diff(schema: Any, out: dict[str, Any], sid: str = "") -> None:
    for name, other, expected in variants(schema):
        for direction, (a, b) in (("old-not-new", (schema, other)),
                                  ("new-not-old", (other, schema))):
            start = time.perf_counter()
            try:
                w = difference(a, b, limits=LIMITS) if DEPTH is None else \
                    difference(a, b, limits=LIMITS, depth=DEPTH)
            except GrammarError as exc:
                out["outcomes"][f"{name}, {direction}: error {exc.code}"] += 1
                continue
            except Exception as exc:  # noqa: BLE001 - counted and shown
                out["outcomes"][f"{name}, {direction}: {type(exc).__name__}"] += 1
                continue
            out["seconds"].append(time.perf_counter() - start)
            if w is None:
                out["outcomes"][f"{name}, {direction}: none"] += 1
                continue
            out["outcomes"][f"{name}, {direction}: witness"] += 1
            va, vb = validator_for(a), validator_for(b)
            if direction != expected:
                out["wrong"].append((sid, name, direction, w.text))
            elif va is not None and vb is not None and not (
                    va.is_valid(w.value) and not vb.is_valid(w.value)):
                out["wrong"].append((sid, name, direction, w.text))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--splits", default="Github_easy,Github_medium,Kubernetes,Glaiveai2K,"
                                        "JsonSchemaStore,Snowplow,WashingtonPost")
    ap.add_argument("--limit", type=int, default=20, help="schemas per split (20)")
    ap.add_argument("--depth", type=int, default=None, help="difference's depth (its default)")
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args(argv)
    global DEPTH
    DEPTH = args.depth
    ex: dict[str, Any] = {"texts": 0, "exact": 0, "last": 0, "seconds": [], "errors": Counter()}
    df: dict[str, Any] = {"seconds": [], "outcomes": Counter(), "wrong": []}
    n = 0
    t0 = time.perf_counter()
    for split in args.splits.split(","):
        with open(args.corpus / f"{split}.jsonl", encoding="utf-8") as fh:
            for line in list(fh)[:args.limit]:
                rec = json.loads(line)
                valid = [t["data"] for t in rec.get("tests", []) if t["valid"]]
                bench_extract(rec["schema"], valid, ex)
                bench_diff(rec["schema"], df, rec["id"])
                n += 1
                print(f"\r{n} schemas", end="", file=sys.stderr)
    print(file=sys.stderr)
    print(f"grammask tools on {n} schemas ({args.splits}; first {args.limit} each), "
          f"{time.perf_counter() - t0:.0f} s")
    print("\nextract (ms per text: p50 / p90 / p99 / max)")
    print(f"  texts {ex['texts']}: the instance in prose found exactly "
          f"{ex['exact']}/{ex['texts'] // 2}, the last of every match the instance "
          f"{ex['last']}/{ex['texts'] // 2}; {pct(ex['seconds'])}")
    print(f"  schemas not compiled: {dict(ex['errors'])}")
    print("\ndiff (ms per difference call: p50 / p90 / p99 / max)")
    print(f"  calls {len(df['seconds'])} answered: {pct(df['seconds'])}")
    for key, count in sorted(df["outcomes"].items()):
        print(f"  {key:50s} {count}")
    print(f"  wrong witnesses (expected direction, checked with jsonschema): {len(df['wrong'])}")
    for w in df["wrong"][:5]:
        print(f"    {w}")
    if args.json:
        Path(args.json).write_text(json.dumps({"extract": {**ex, "errors": dict(ex["errors"])},
                                               "diff": {**df, "outcomes": dict(df["outcomes"])}},
                                              default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
