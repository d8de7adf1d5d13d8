"""The repair and versioning part of `grammask demo`: `extract` and `diff` on the demo's own data.

Repair: the answers the toy model wrote without a mask that are not valid as a whole ("Sure!
{"age": 42}", an answer repeated) are searched with `extract` for a valid answer inside;
each one found is checked with Python's `re.fullmatch`, independently of grammask.

Versioning: the lesson's strict person schema against two changes. Making `age` nullable (the
fix the JSON Schema part recommends) keeps every old answer valid, while the new schema accepts
answers the old one refuses; dropping "dog" from `pets` breaks old answers. `difference` gives
each direction's shortest witness and the pointer where it parts.
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from ...runtime.compiled import CompiledGrammar
from ..tools.diff import Witness, difference
from ..tools.extract import extract
from .demo_schema import PERSON_SCHEMA

__all__ = ["RepairDemoResult", "format_repair_report", "run_repair_demo"]

NULLABLE_AGE: dict[str, Any] = {**PERSON_SCHEMA, "properties": {
    **PERSON_SCHEMA["properties"], "age": {"type": ["integer", "null"]}}}
CATS_ONLY: dict[str, Any] = {**PERSON_SCHEMA, "properties": {
    **PERSON_SCHEMA["properties"], "pets": {"type": "array", "items": {"enum": ["cat"]}}}}
_SHOWN = 4


@dataclass
class RepairDemoResult:
    """Failing unconstrained answers, how many hold a valid answer `extract` finds (each checked
    by `re.fullmatch`), a few (answer, extracted) pairs; then per schema change the witness of
    each direction as (text, pointer) or None."""

    failing: int
    recovered: int
    recovered_checked: int
    examples: list[tuple[str, str]]
    changes: dict[str, dict[str, tuple[str, str | None] | None]] = field(default_factory=dict)
    wall_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _shown(w: Witness | None) -> tuple[str, str | None] | None:
    return None if w is None else (w.text, w.pointer)


def run_repair_demo(compiled: CompiledGrammar, pattern: str,
                    failures: list[str]) -> RepairDemoResult:
    """`extract` over the failing unconstrained answers of the pattern part (`compiled` is its
    pattern), then `difference` over the person schema's two changes."""
    start = time.perf_counter()
    checker = re.compile(pattern)
    recovered = checked = 0
    examples: list[tuple[str, str]] = []
    for text in failures:
        found = extract(compiled, text)
        if not found:
            continue
        recovered += 1
        checked += checker.fullmatch(found[0].text) is not None
        if len(examples) < _SHOWN and all(text != t for t, _ in examples):
            examples.append((text, found[0].text))
    result = RepairDemoResult(len(failures), recovered, checked, examples)
    for name, new in (("age nullable", NULLABLE_AGE), ("pets: cat only", CATS_ONLY)):
        result.changes[name] = {"old-not-new": _shown(difference(PERSON_SCHEMA, new)),
                                "new-not-old": _shown(difference(new, PERSON_SCHEMA))}
    result.wall_s = time.perf_counter() - start
    return result


def format_repair_report(r: RepairDemoResult) -> str:
    """The report of the repair and versioning part."""
    lines = ["Repair and versioning: `grammask extract` and `grammask diff` on the demo's data",
             f"  extract       {r.recovered} of the {r.failing} failing unconstrained answers"
             f" hold a valid answer inside ({r.recovered_checked}/{r.recovered} fully match"
             " the pattern, checked with re)"]
    lines += [f"    {t!r} -> {x!r}" for t, x in r.examples]
    lines.append("  diff          the strict person schema (old) against two changes (new)")
    for name, found in r.changes.items():
        broken = found["old-not-new"]
        verdict = "backward compatible" if broken is None else "breaks old answers"
        lines.append(f"    {name}: {verdict}")
        for direction, w in found.items():
            if w is not None:
                text, pointer = w
                where = "the root" if pointer == "" else pointer
                lines.append(f"      {direction}: {json.dumps(json.loads(text))} (parts at"
                             f" {where})")
    lines.append(f"  time          {r.wall_s:.2f} s for this part")
    return "\n".join(lines) + "\n"
