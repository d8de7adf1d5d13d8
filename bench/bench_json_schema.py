"""JSON Schema benchmark (MaskBench protocol): grammask and its peers over JSONSchemaBench.

    python bench/bench_json_schema.py [--splits A,B] [--limit N] [--peers llguidance,xgrammar]
                                      [--lenient] [--property-order any] [--workers N]
                                      [--json out.json]

Every schema of the chosen splits (`../shared/corpora/jsonschemabench/<split>.jsonl`) is
compiled by every engine and its test instances are walked token by token (bench/maskbench.py
states the protocol and the classes), each (engine, schema) in a worker process under a
watchdog, so that a hang is a timeout and a dead worker a crash, never the end of the run.
Reported per engine: the classes per split (valid instances must end at EOS, or need not), mask
fill time per token, compile time and time to first mask as percentiles (p25-p100), the most
frequent compile error codes with an example, and the first failing instances (`--show N`);
with peers, passing counts and the ratios peer / grammask of mask fill p99 and compile p50
(below 1: the peer is faster). Test instances are written `json.dumps(data,
ensure_ascii=False)` and tokenized with the default vocabulary. Commands and current results:
bench/README.md.
"""
from __future__ import annotations

from harness import log  # first: sets the thread counts

# isort: split
import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from maskbench import (  # noqa: E402
    CLASSES,
    COMPILE_ERROR,
    COMPILED,
    CORPUS,
    CRASH,
    GM,
    INVALIDATION,
    PASSING,
    TIMEOUT,
    VALIDATION,
    Case,
    Limits,
    Outcome,
    WorkerPool,
    classify,
    corpus_splits,
    load_split,
)
from report import Cell, table  # noqa: E402

PCTS = (25, 50, 75, 90, 99, 100)
ALL = "all"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS, help=f"corpus folder ({CORPUS})")
    ap.add_argument("--splits", default="", help="comma-separated splits (default: all)")
    ap.add_argument("--limit", type=int, default=None, help="first N schemas of each split")
    ap.add_argument("--peers", default="llguidance,xgrammar",
                    help="comma-separated peers, in report order ('' for grammask alone; "
                         "outlines_core may be named too)")
    ap.add_argument("--lenient", action="store_true",
                    help="compile with lenient=True (peers: their lenient option, if any)")
    ap.add_argument("--property-order", choices=("schema", "any"), default="schema",
                    help="grammask's property_order: schema (the listed properties in the "
                         "schema's order, default) or any (every order, each at most once)")
    ap.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--compile-timeout", type=float, default=30.0,
                    help="seconds a compile may take to its first mask (default 30)")
    ap.add_argument("--instance-timeout", type=float, default=10.0,
                    help="seconds an instance may take (default 10)")
    ap.add_argument("--show", type=int, default=20,
                    help="failing instances listed per engine (default 20)")
    ap.add_argument("--json", metavar="PATH", help="also write the results and every schema's "
                                                   "outcome as JSON")
    ap.add_argument("--no-pin", action="store_true", help="do not pin workers to CPUs")
    args = ap.parse_args(argv)
    known = corpus_splits(args.corpus)
    args.split_list = [s for s in args.splits.split(",") if s] or known
    if not known or any(s not in known for s in args.split_list):
        ap.error(f"unknown split among {args.split_list}; {args.corpus} has {known}")
    if args.limit is not None and args.limit < 1:
        ap.error("--limit must be at least 1")
    if args.workers < 1:
        ap.error("--workers must be at least 1")
    args.peer_list = [p for p in args.peers.split(",") if p]
    return args


def percentiles(values: list[float] | np.ndarray, scale: float) -> dict[str, float | None]:
    """p25..p100 of `values` times `scale` (None when empty)."""
    a = np.asarray(values, dtype=np.float64)
    if not a.size:
        return {f"p{p}": None for p in PCTS}
    return {f"p{p}": float(v) * scale for p, v in zip(PCTS, np.percentile(a, PCTS), strict=True)}


def failures(o: Outcome) -> list[dict[str, Any]]:
    """The instances behind a validation error (EOS variant included) or invalidation error."""
    out = []
    for i in o.instances:
        if i.valid and i.rejected_at is not None:
            kind = VALIDATION
        elif i.valid and not i.can_end:
            kind = f"{VALIDATION} (EOS)"
        elif not i.valid and i.rejected_at is None and i.can_end:
            kind = INVALIDATION
        else:
            continue
        out.append({"kind": kind, "instance": i.index, "tokens": i.tokens, "at": i.rejected_at,
                    "how": i.how, "context": i.context})
    return out


@dataclass
class Tally:
    """The outcomes of one engine on one split (or on all)."""

    classes: Counter[str] = field(default_factory=Counter)
    classes_eos: Counter[str] = field(default_factory=Counter)
    untested: Counter[str] = field(default_factory=Counter)
    compile_s: list[float] = field(default_factory=list)
    first_mask_s: list[float] = field(default_factory=list)
    fills: list[np.ndarray] = field(default_factory=list)
    codes: Counter[str] = field(default_factory=Counter)
    examples: dict[str, tuple[str, str]] = field(default_factory=dict)

    def add(self, o: Outcome) -> None:
        cls, cls_eos = classify(o, False), classify(o, True)
        if cls == COMPILED or not o.tested:
            self.untested[cls] += 1
        else:
            self.classes[cls] += 1
            self.classes_eos[cls_eos] += 1
        if o.compile_s is not None:
            self.compile_s.append(o.compile_s)
        if o.first_mask_s is not None:
            self.first_mask_s.append(o.first_mask_s)
        self.fills.append(o.fill_ns)
        if o.status == COMPILE_ERROR and o.code is not None:
            self.codes[o.code] += 1
            self.examples.setdefault(o.code, (o.id, o.message or ""))

    @property
    def tested(self) -> int:
        return sum(self.classes.values())

    def mask_us(self) -> dict[str, float | None]:
        return percentiles(np.concatenate(self.fills) if self.fills else [], 1e-3)

    def summary(self) -> dict[str, Any]:
        return {"schemas": self.tested, "classes": dict(self.classes),
                "classes_eos": dict(self.classes_eos), "untested": dict(self.untested),
                "mask_us": self.mask_us(), "compile_ms": percentiles(self.compile_s, 1e3),
                "first_mask_ms": percentiles(self.first_mask_s, 1e3),
                "tokens": int(sum(len(f) for f in self.fills))}


class Results:
    """Tallies per engine and split, and every outcome."""

    def __init__(self, engines: list[str], splits: list[str]) -> None:
        self.engines, self.splits = engines, splits
        self.tally = {e: {s: Tally() for s in [*splits, ALL]} for e in engines}
        self.outcomes: dict[str, dict[str, Outcome]] = {e: {} for e in engines}

    def add(self, o: Outcome) -> None:
        self.tally[o.engine][o.split].add(o)
        self.tally[o.engine][ALL].add(o)
        self.outcomes[o.engine][o.id] = o


def class_table(r: Results, engine: str, eos: bool) -> str:
    heads = ["split", "schemas", *CLASSES]
    rows: list[list[Cell]] = []
    for split, t in r.tally[engine].items():
        counts = t.classes_eos if eos else t.classes
        row: list[Cell] = [split, t.tested, *[counts.get(c, 0) for c in CLASSES]]
        if not eos:
            row += [sum(t.untested.values()), t.untested.get(COMPILED, 0),
                    t.untested.get(COMPILE_ERROR, 0),
                    t.untested.get(CRASH, 0) + t.untested.get(TIMEOUT, 0)]
        rows.append(row)
    if not eos:
        heads += ["untested", "u. compiled", "u. compile error", "u. crash/timeout"]
    what = ("valid instances must also end at EOS (can_terminate)" if eos else
            "valid instances accepted to their last token; untested schemas: compile only")
    return table(f"{engine}: schemas with tests by class ({what})", heads, rows)


def pct_table(r: Results, engine: str, title: str, get: Any) -> str:
    rows = [[split, n, *vals.values()] for split, t in r.tally[engine].items()
            for n, vals in [get(t)]]
    return table(f"{engine}: {title}", ["split", "n", *[f"p{p}" for p in PCTS]], rows)


def timing_tables(r: Results, engine: str) -> list[str]:
    return [
        pct_table(r, engine, "mask fill per token, µs (every fill of every instance)",
                  lambda t: (sum(len(f) for f in t.fills), t.mask_us())),
        pct_table(r, engine, "compile time, ms (schemas that compiled)",
                  lambda t: (len(t.compile_s), percentiles(t.compile_s, 1e3))),
        pct_table(r, engine, "time to first mask, ms (compile + matcher + first fill)",
                  lambda t: (len(t.first_mask_s), percentiles(t.first_mask_s, 1e3))),
    ]


def codes_lines(r: Results, engine: str, top: int = 15) -> list[str]:
    """The most frequent compile error codes, each with its count and a first example."""
    t = r.tally[engine][ALL]
    out = [(f"== {engine}: top compile error codes ({sum(t.codes.values())} schemas, "
            f"{len(t.codes)} codes): schemas, code, first example")]
    for code, n in t.codes.most_common(top):
        sid, msg = t.examples[code]
        out += [f"{n:>6}  {code}", f"        e.g. {sid}: {msg[:150].replace(chr(10), ' ')}"]
    return out


def comparison_table(r: Results) -> str:
    """Passing counts of every engine per split, and peer / grammask ratios of passing (above
    1: the peer passes more), mask p99 and compile p50 (above 1: grammask is faster)."""
    peers = [e for e in r.engines if e != GM]
    heads = ["split", *[f"{e[:10]} pass" for e in r.engines],
             *[f"{p[:8]}/gm {m}" for p in peers for m in ("pass", "mask p99", "comp p50")]]
    rows: list[list[Cell]] = []
    for split in [*r.splits, ALL]:
        by = {e: r.tally[e][split] for e in r.engines}
        row: list[Cell] = [split, *[by[e].classes.get(PASSING, 0) for e in r.engines]]
        g = by[GM]
        for p in peers:
            pairs = ((by[p].classes.get(PASSING, 0), g.classes.get(PASSING, 0)),
                     (by[p].mask_us()["p99"], g.mask_us()["p99"]),
                     (percentiles(by[p].compile_s, 1)["p50"], percentiles(g.compile_s, 1)["p50"]))
            row += [f"{a / b:.2f}x" if a is not None and b else None for a, b in pairs]
        rows.append(row)
    return table("engines side by side: passing schemas (EOS not required) and peer / "
                 "grammask ratios", heads, rows)


def failure_lines(r: Results, engine: str, shown: int) -> list[str]:
    lines = []
    for o in r.outcomes[engine].values():
        for f in failures(o):
            where = "end" if f["at"] is None else f"token {f['at']}/{f['tokens']}"
            lines.append(f"  {f['kind']:<24} {o.id} #{f['instance']} at {where}"
                         f"{'' if not f['how'] else ' (' + f['how'] + ')'}: {f['context']!r}")
    head = f"{engine}: failing instances ({len(lines)}; first {min(shown, len(lines))} listed)"
    return [head, *lines[:shown]]


def print_report(r: Results, args: argparse.Namespace, info: dict[str, Any], wall_s: float,
                 replaced: int) -> None:
    eng = info["engines"]
    print(f"grammask JSON Schema benchmark (MaskBench protocol); python "
          f"{platform.python_version()}, numpy {np.__version__}; {args.workers} worker(s), "
          f"{'not pinned' if args.no_pin else 'each pinned to its own CPU'}; limits: compile "
          f"{args.compile_timeout:g} s, instance {args.instance_timeout:g} s")
    print(f"corpus {args.corpus}; splits {', '.join(r.splits)}; "
          f"{'first ' + str(args.limit) if args.limit else 'all'} schemas per split"
          f"{'; lenient' if args.lenient else ''}"
          f"{'; property_order=any' if args.property_order == 'any' else ''}")
    print(info["setup"])
    for e in r.engines:
        print(f"  {e} {eng[e]['version']}: compile = {eng[e]['means']}")
    for note in info["notes"]:
        print(f"  {note}")
    print()
    for e in r.engines:
        for block in (class_table(r, e, False), class_table(r, e, True), *timing_tables(r, e),
                      "\n".join(codes_lines(r, e))):
            print(block)
            print()
    if len(r.engines) > 1:
        print(comparison_table(r))
        print()
    for e in r.engines:
        print("\n".join(failure_lines(r, e, args.show)))
        print()
    print(f"total wall time {wall_s:.0f} s ({replaced} workers replaced after a timeout or "
          f"crash)")


def json_doc(r: Results, args: argparse.Namespace, info: dict[str, Any], wall_s: float,
             replaced: int) -> dict[str, Any]:
    """Every summary number, and per engine every schema's outcome (class, error, failures)."""
    engines: dict[str, Any] = {}
    for e in r.engines:
        t = r.tally[e]
        examples = t[ALL].examples
        engines[e] = {**info["engines"][e],
                      "splits": {s: t[s].summary() for s in r.splits}, "all": t[ALL].summary(),
                      "compile_errors": [{"code": c, "count": n, "example_id": examples[c][0],
                                          "example_message": examples[c][1]}
                                         for c, n in t[ALL].codes.most_common()],
                      "schemas": {o.id: {
                          "split": o.split, "class": classify(o, False),
                          "class_eos": classify(o, True), "code": o.code, "message": o.message,
                          "compile_ms": None if o.compile_s is None else o.compile_s * 1e3,
                          "first_mask_ms": (None if o.first_mask_s is None
                                            else o.first_mask_s * 1e3),
                          "instances": len(o.instances), "skipped": o.skipped,
                          "failures": failures(o)} for o in r.outcomes[e].values()}}
    return {"command": sys.argv, "corpus": str(args.corpus), "splits": r.splits,
            "limit": args.limit, "lenient": args.lenient, "workers": args.workers,
            "property_order": args.property_order,
            "limits_s": {"compile": args.compile_timeout, "instance": args.instance_timeout},
            "wall_s": wall_s, "workers_replaced": replaced, "setup": info["setup"],
            "notes": info["notes"], "engines": engines}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    t_start = time.perf_counter()
    cases: list[Case] = [c for s in args.split_list
                         for c in load_split(args.corpus, s, args.limit)]
    log(f"{len(cases)} schemas in {len(args.split_list)} splits; starting {args.workers} "
        f"worker(s)")
    limits = Limits(args.compile_timeout, args.instance_timeout)
    pool = WorkerPool(args.workers, args.peer_list, args.lenient, limits, not args.no_pin,
                      args.property_order)
    try:
        info = pool.wait_ready()
        engines = [e for e in [GM, *args.peer_list] if e in info["engines"]]
        results = Results(engines, args.split_list)
        tasks = [(e, c) for c in cases for e in engines]

        def done(o: Outcome) -> None:
            results.add(o)
            n = sum(len(v) for v in results.outcomes.values())
            if n % 200 == 0 or n == len(tasks):
                log(f"{n}/{len(tasks)} (engine, schema) runs done")

        pool.run(tasks, done)
    finally:
        pool.close()
    wall_s = time.perf_counter() - t_start
    print_report(results, args, info, wall_s, pool.replaced)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(json_doc(results, args, info, wall_s, pool.replaced), fh, indent=1,
                      ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
