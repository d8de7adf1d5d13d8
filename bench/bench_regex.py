"""Regex benchmark: grammask against outlines-core, llguidance and xgrammar, same vocabulary.

    python bench/bench_regex.py [--quick] [--json out.json] [--peers a,b] [--no-cold-start]

Per workload (bench/workloads.py) it measures compile time (lazy and precomputed), time to the
first mask, per-token mask fill (warm and first-pass) and accept times, grammask's memory, and
the `np.copyto` row-copy baseline; each peer that imports is driven over the same token bytes
and its mask is compared with grammask's at every step. A cold-start section times a fresh
interpreter with an empty and then a warm Numba cache. See bench/README.md for how to read it.
"""
from __future__ import annotations

import os
import sys

# One thread everywhere, set before numpy, numba, torch or the peers load their runtimes.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS",
             "RAYON_NUM_THREADS", "TOKENIZERS_PARALLELISM"):
    os.environ.setdefault(_var, "false" if _var == "TOKENIZERS_PARALLELISM" else "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from cold_start import PHASES, run_cold_start  # noqa: E402
from measure import (  # noqa: E402
    FULL,
    QUICK,
    CrossCheck,
    EngineRun,
    GrammaskRun,
    Plan,
    copy_baseline_ns,
    run_grammask,
    run_peer,
    summarize,
)
from report import Cell, crosscheck_report, metric_table, table  # noqa: E402
from workloads import Workload, build_workloads  # noqa: E402

GM = "grammask"


_T0 = time.perf_counter()


def log(msg: str) -> None:
    """Progress on stderr (seconds since start), so stdout holds only the report."""
    print(f"{time.perf_counter() - _T0:7.1f}s {msg}", file=sys.stderr, flush=True)


def pin_to_one_cpu() -> str:
    """Pin this process (and its children) to the last CPU it may run on."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpus[-1]})
        return f"pinned to CPU {cpus[-1]} of {len(cpus)}"
    except (AttributeError, OSError) as exc:
        return f"not pinned ({exc})"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats (about a minute)")
    ap.add_argument("--json", metavar="PATH", help="also write the summary numbers as JSON")
    ap.add_argument("--peers", default="outlines_core,llguidance,xgrammar",
                    help="comma-separated peers to try ('' for none)")
    ap.add_argument("--workloads", default="", help="comma-separated workload names (default all)")
    ap.add_argument("--no-cold-start", action="store_true", help="skip the subprocess section")
    ap.add_argument("--no-pin", action="store_true", help="do not pin to one CPU")
    return ap.parse_args(argv)


def _med_ms(xs: list[float]) -> float | None:
    return float(np.median(xs)) * 1e3 if xs else None


def summary_of(run: EngineRun) -> dict[str, Any]:
    """The reported numbers of one engine on one workload (ms for compile, µs per call)."""
    out: dict[str, Any] = {
        "compile_ms": _med_ms(run.compile_s),
        "first_mask_ms": _med_ms(run.first_mask_s),
        "warm_fill_us": summarize(run.warm_fill_ns, 1e-3),
        "cold_fill_us": summarize(run.cold_fill_ns, 1e-3),
        "accept_us": summarize(run.accept_ns, 1e-3),
        "error": run.error,
    }
    if isinstance(run, GrammaskRun):
        out["compile_precompute_ms"] = _med_ms(run.compile_pre_s)
        out["nbytes"] = run.nbytes
        out["states"] = run.states
    return out


Summaries = dict[str, dict[str, dict[str, Any]]]


def bench_workloads(workloads: list[Workload], vocab: Any, peers: list[Any], plan: Plan,
                    ) -> tuple[Summaries, dict[str, dict[str, CrossCheck]], dict[str, int]]:
    """Run every engine on every workload: summaries[workload][engine], checks, token counts."""
    summaries: Summaries = {}
    checks: dict[str, dict[str, CrossCheck]] = {}
    n_tokens: dict[str, int] = {}
    for w in workloads:
        ids = vocab.encode(w.target)
        n_tokens[w.name] = len(ids)
        log(f"[{w.name}] {len(ids)} tokens: grammask")
        gm = run_grammask(vocab, w.pattern, ids, plan)
        summaries[w.name] = {GM: summary_of(gm)}
        checks[w.name] = {}
        for peer in peers:
            log(f"[{w.name}] {peer.name}")
            run, chk = run_peer(peer, w.pattern, ids, gm.rows, vocab.size, plan)
            summaries[w.name][peer.name] = summary_of(run)
            checks[w.name][peer.name] = chk
    return summaries, checks, n_tokens


def _pick(summaries: Summaries, engines: list[str], key: str,
          stat: str | None = None) -> dict[str, dict[str, float | None]]:
    out: dict[str, dict[str, float | None]] = {}
    for wl, by in summaries.items():
        row: dict[str, float | None] = {}
        for e in engines:
            s = by.get(e)
            v = None if s is None else s.get(key)
            row[e] = v.get(stat) if isinstance(v, dict) and stat else v
        out[wl] = row
    return out


def print_report(summaries: Summaries, engines: list[str],
                 n_tokens: dict[str, int], copy_us: dict[str, float], timer_ns: int) -> None:
    """The per-metric tables and the goal ratios."""
    print(metric_table("compile time, ms (median; grammask lazy; peers: see notes)",
                       _with_pre(summaries, engines), [GM, "gm_precomp", *engines[1:]],
                       extra=["gm_precomp"]))
    print()
    print(metric_table("time to first mask, ms (compile + matcher + first fill; median)",
                       _pick(summaries, engines, "first_mask_ms"), engines))
    for key, label in (("warm_fill_us", "mask fill, warm (states seen before), µs per token"),
                       ("cold_fill_us", "mask fill, first pass on a fresh compile, µs per token")):
        for stat in ("median", "p99", "max"):
            print()
            print(metric_table(f"{label}: {stat}", _pick(summaries, engines, key, stat), engines))
    print()
    print(metric_table("accept_token / consume / advance, µs per token: median",
                       _pick(summaries, engines, "accept_us", "median"), engines))
    print()
    base = copy_us["median"]
    rows: list[list[Cell]] = []
    for wl, by in summaries.items():
        g = by[GM]
        oc = by.get("outlines_core", {}).get("compile_ms")
        rows.append([wl, n_tokens[wl], g["states"], g["nbytes"] / 1024,
                     g["warm_fill_us"]["median"], f"{g['warm_fill_us']['median'] / base:.2f}x",
                     None if oc is None or not g["compile_ms"] else f"{oc / g['compile_ms']:.1f}x",
                     None if oc is None or not g["compile_precompute_ms"]
                     else f"{oc / g['compile_precompute_ms']:.1f}x"])
    print(table(f"grammask goals: baseline np.copyto of a precomputed {copy_us['words']}-word "
                f"int32 row = {base:.2f} µs median (p99 {copy_us['p99']:.2f}; sampled before and "
                f"after the workloads; timer overhead {timer_ns} ns is in every per-call time)",
                ["workload", "tokens", "states", "KiB (precomputed)", "warm fill µs",
                 "fill/copy (goal <= 3x)", "outlines/gm compile (goal > 1)",
                 "outlines/gm-precomp"], rows))


def _with_pre(summaries: Summaries, engines: list[str]
              ) -> dict[str, dict[str, float | None]]:
    out = _pick(summaries, engines, "compile_ms")
    for wl, by in summaries.items():
        out[wl]["gm_precomp"] = by[GM]["compile_precompute_ms"]
    return out


def print_cold_start(pattern: str, repeats: int) -> dict[str, Any]:
    """Run and print the cold-start section; returns its numbers."""
    log("cold start: fresh interpreters, empty then warm Numba cache")
    runs = run_cold_start(pattern, repeats)
    rows: list[list[Cell]] = [[r.label, *[r.phases[p] * 1e3 for p in PHASES], r.process_s * 1e3]
                              for r in runs]
    print(table(f"cold start, ms, fresh interpreter, NUMBA_CACHE_DIR = new temp dir "
                f"(pattern {pattern!r}; median of {repeats})",
                ["numba cache", *PHASES, "whole process"], rows))
    return {r.label: {**r.phases, "process": r.process_s} for r in runs}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    plan = QUICK if args.quick else FULL
    pin = "not pinned (--no-pin)" if args.no_pin else pin_to_one_cpu()
    t_start = time.perf_counter()

    from grammask.runtime import Vocabulary
    from grammask.runtime.token_trie import token_trie
    from peers import load_peers

    log("vocabulary")
    t0 = time.perf_counter()
    vocab = Vocabulary.default()
    t1 = time.perf_counter()
    token_trie(vocab)
    t2 = time.perf_counter()
    from grammask.compiler import compile_regex
    compile_regex("a", vocab)  # the regex front end's one-time setup, outside every timing
    workloads = build_workloads(vocab)
    if args.workloads:
        keep = set(args.workloads.split(","))
        workloads = [w for w in workloads if w.name in keep]
    wanted = {p for p in args.peers.split(",") if p}
    log("setting up peers")
    peers, notes = load_peers(vocab, wanted)
    engines = [GM, *[p.name for p in peers]]
    # Vocabulary tables and peers' token lists are long-lived: keep them out of every later
    # collection, so the collect before each timed region stays short.
    gc.collect()
    gc.freeze()

    log("copy baseline (first half)")
    n_words = (vocab.size + 31) // 32
    copy_ns, timer_ns = copy_baseline_ns(n_words, plan.copy_samples // 2)
    summaries, checks, n_tokens = bench_workloads(workloads, vocab, peers, plan)
    log("copy baseline (second half)")
    copy_ns += copy_baseline_ns(n_words, plan.copy_samples // 2)[0]
    copy_us = {**summarize(copy_ns, 1e-3), "words": n_words}

    print(f"grammask regex benchmark ({'quick' if args.quick else 'full'}); python "
          f"{platform.python_version()}, numpy {np.__version__}; {pin}; vocabulary "
          f"{vocab.size:,} ids ({n_words:,} words per row), EOS {vocab.eos_token_id}")
    setups = [f"grammask Vocabulary.default() {(t1 - t0) * 1e3:.0f} ms + token trie "
              f"{(t2 - t1) * 1e3:.0f} ms",
              *[f"{p.name} {p.version} {p.setup_s * 1e3:.0f} ms" for p in peers]]
    print("one-time setup per vocabulary: " + "; ".join(setups))
    for p in peers:
        print(f"  {p.name} compile = {p.compile_means}")
    for n in notes:
        print(f"  {n}")
    print()
    for w in workloads:
        print(f"  {w.name:<13} {n_tokens[w.name]:>3} tokens  target {w.target!r}")
    print()
    print_report(summaries, engines, n_tokens, copy_us, timer_ns)
    for wl, by in summaries.items():
        for e, s in by.items():
            if s["error"]:
                print(f"!! {e} on {wl}: {s['error']}")
    print()
    special = {int(i) for i in vocab.special_token_ids}
    print(crosscheck_report(checks, vocab.token_bytes, {int(i) for i in vocab.eos_token_ids},
                            special))
    cold: dict[str, Any] = {}
    if not args.no_cold_start:
        print()
        cold = print_cold_start(workloads[0].pattern if workloads else r"a", 1 if args.quick else 3)
    print()
    print(f"total benchmark wall time {time.perf_counter() - t_start:.0f} s")

    if args.json:
        doc = {"mode": "quick" if args.quick else "full", "pin": pin, "copy_baseline_us": copy_us,
               "timer_overhead_ns": timer_ns, "notes": notes,
               "peers": {p.name: {"version": p.version, "setup_s": p.setup_s,
                                  "compile_means": p.compile_means} for p in peers},
               "workloads": {w.name: {"pattern": w.pattern, "target": w.target,
                                      "tokens": n_tokens[w.name], "engines": summaries[w.name],
                                      "crosscheck": {p: {"steps": c.steps, "equal": c.equal}
                                                     for p, c in checks[w.name].items()}}
                             for w in workloads},
               "cold_start_s": cold}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
