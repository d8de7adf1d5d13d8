"""The JSON-Schema-Test-Suite (draft 2020-12, vendored under tests/data) run through the JSON
Schema frontend: each group compiles or raises GrammarError, and each instance
(`json.dumps(data, ensure_ascii=False)`) is accepted with EOS allowed at its end exactly when
it is valid.

`python -m tests.support.json_schema_suite` prints the pass counts per file; with `--update` it rewrites
the ratchet file of passing groups.
"""
from __future__ import annotations

import functools
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
from hypothesis import event

from grammask.compiler import BudgetExceeded, GrammarError
from grammask.compiler import compile_json_schema
from grammask.runtime import Matcher, Vocabulary

from .paths import DATA

SUITE = DATA / "json-schema-test-suite" / "draft2020-12"
REMOTES = DATA / "json-schema-test-suite" / "remotes"
RATCHET = DATA / "json_schema_suite_passing.json"


@functools.lru_cache(maxsize=1)
def remotes() -> dict[str, object]:
    """The suite's remote documents, by the URI its tests give them (served, in the suite's
    own harness, at http://localhost:1234/): passed as `resources`, never fetched."""
    return {f"http://localhost:1234/{path.relative_to(REMOTES).as_posix()}":
            json.loads(path.read_text(encoding="utf-8")) for path in sorted(REMOTES.rglob("*.json"))}


@dataclass
class GroupResult:
    """What one group did: compiled or not, and which instances went wrong."""

    name: str
    error: str | None = None
    wrong_accepts: list[str] = field(default_factory=list)
    wrong_rejects: list[str] = field(default_factory=list)
    instances: int = 0

    @property
    def passed(self) -> bool:
        return self.error is None and not self.wrong_accepts and not self.wrong_rejects


@functools.lru_cache(maxsize=1)
def byte_vocabulary() -> Vocabulary:
    """A vocabulary of the 256 single bytes and an EOS token."""
    return Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"<eos>"], 256,
                                       special_token_ids=[256])


def accepts(compiled, text: str) -> bool:  # type: ignore[no-untyped-def]
    """Whether the compiled grammar accepts exactly `text`."""
    m = Matcher(compiled)
    return m.accept_string(text.encode("utf-8", "surrogatepass")) and m.can_terminate()


def groups(files: list[Path] | None = None) -> list[tuple[str, dict]]:
    """(name, group) for every group of the suite files, named `file.json#index`."""
    out = []
    for path in files or sorted(SUITE.glob("*.json")) + sorted(SUITE.glob("optional/format/*.json")):
        rel = path.relative_to(SUITE).as_posix()
        for i, group in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            out.append((f"{rel}#{i}", group))
    return out


def run_group(name: str, group: dict, **options: object) -> GroupResult:
    """Compile one group and check every instance."""
    result = GroupResult(name)
    try:
        compiled = compile_json_schema(group["schema"], byte_vocabulary(),
                                       resources=remotes(), **options)
    except GrammarError as exc:
        result.error = f"{exc.code}: {exc}"
        return result
    for test in group["tests"]:
        result.instances += 1
        text = json.dumps(test["data"], ensure_ascii=False)
        if accepts(compiled, text) != test["valid"]:
            (result.wrong_rejects if test["valid"] else result.wrong_accepts).append(
                test["description"])
    return result


def main(argv: list[str]) -> None:
    results = [run_group(name, group) for name, group in groups()]
    by_file: dict[str, list[GroupResult]] = {}
    for r in results:
        by_file.setdefault(r.name.split("#")[0], []).append(r)
    print(f"{'file':40} groups compiled passed wrong-accepts")
    for f, rs in by_file.items():
        print(f"{f:40} {len(rs):6} {sum(r.error is None for r in rs):8} "
              f"{sum(r.passed for r in rs):6} {sum(len(r.wrong_accepts) for r in rs):6}")
    total = len(results)
    print(f"total: {total} groups, {sum(r.error is None for r in results)} compiled, "
          f"{sum(r.passed for r in results)} passed, "
          f"{sum(len(r.wrong_accepts) for r in results)} invalid instances accepted")
    for r in results:
        if r.wrong_accepts:
            print("WRONG ACCEPT", r.name, r.wrong_accepts)
    if "-v" in argv:
        for r in results:
            if not r.passed:
                print(r.name, r.error or f"rejects valid: {r.wrong_rejects}")
    if "--update" in argv:
        RATCHET.write_text(json.dumps(sorted(r.name for r in results if r.passed), indent=1)
                           + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])


REFUSALS = ("unsupported-keyword", "empty-language", "budget")
"""The codes a random schema may be refused with: inexpressible forms and empty languages."""


def agrees_on(schema: Any, universe: list[Any], refusals: tuple[str, ...] = REFUSALS,
              validated: Any = None, **options: Any) -> None:
    """Compile `schema` (with `options`) and check that it accepts exactly the instances of
    `universe` that `jsonschema` (draft 2020-12) validates against `validated` (default: the
    schema itself); a refusal must carry one of `refusals` (a `budget` one may also come
    from a rule built as the matcher reaches it). Records a Hypothesis event."""
    try:
        compiled = compile_json_schema(schema, byte_vocabulary(), **options)
    except GrammarError as exc:
        assert exc.code in refusals, exc
        event(f"refused: {exc.code}")
        return
    event("compiled")
    validator = jsonschema.Draft202012Validator(schema if validated is None else validated)
    for x in universe:
        try:
            found = accepts(compiled, json.dumps(x))
        except BudgetExceeded as exc:  # a rule built as the walk reaches it, over a bound
            assert "budget" in refusals, exc
            event("refused while matching: budget")
            return
        assert found == validator.is_valid(x), (schema, x)
