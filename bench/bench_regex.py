r"""Regex benchmark: grammask against outlines-core, llguidance and xgrammar, same vocabulary.

    python bench/bench_regex.py [--quick] [--json out.json] [--peers a,b] [--no-cold-start]

Per workload (bench/workloads.py) it measures compile time (lazy and precomputed), time to the
first mask, per-token mask fill (warm and first-pass) and accept times, grammask's memory, and
the `np.copyto` row-copy baseline; each peer that imports is driven over the same token bytes
and its mask is compared with grammask's at every step. A cold-start section times a fresh
interpreter with an empty and then a warm Numba cache. Method: bench/harness.py docstring;
commands and current results: bench/README.md.

Workloads (bench/workloads.py): `\{"age": [0-9]+\}`, email, ISO 8601 date-time, UUID, US phone
number, `[a-z]+( [a-z]+)*\.`, a flat JSON object with three fixed keys (string/int/bool,
non-ASCII name), IPv4, and an alternation of 200 seeded words (two vocabulary word-pieces
glued), each with one target that fullmatches (`re.fullmatch(..., re.ASCII)`); `[0-9]`, not
`\d`, so every engine reads them alike. One cold pass per compile repeat; 100 warm passes (8
with `--quick`).

Report: a header (versions, pinning, per-vocabulary setup, workloads), then one table per
metric, a row per workload and a geometric mean of each ratio:

- compile time: grammask `compile_regex(p, vocab)` (lazy: no token sets yet) and, as
  `gm_precomp`, with `precompute=True` (every state's token set); outlines-core
  `Index(regex, vocabulary)` (its whole token index); llguidance
  `LLMatcher(tokenizer, grammar_from_regex(regex))` (lazy); xgrammar `compile_regex` with its
  cache off (builds its adaptive token-mask cache). Ratios are against grammask lazy.
- time to first mask: compile + matcher creation + the first fill, end to end.
- mask fill, warm: per-token fill on states already visited: median, p99, max (use p99 on
  uuid, iso_datetime, json_flat).
- mask fill, first pass: per-token fill on the cold pass: for grammask each new state's token
  set is computed here, the price of lazy compilation.
- accept: `accept_token` / `consume_token` / `advance(..., return_tokens=False)`, median.
- grammask goals: states, `compiled.nbytes()` after precompute, warm fill median; goals: warm
  fill median over the `np.copyto` median of a precomputed 4,746-word int32 row (<= 3x), and
  outlines-core compile over grammask compile (> 1x; also against the precomputed compile).

The cross-check compares first-pass masks with grammask's (forced: a step whose allowed tokens
are all prefixes of one text). Known difference: outlines-core, email, disallows three valid
domain tokens of a dot plus 25 letters (`jane.doe+bench@mail.DataGridViewTextBoxColumn.uk`
fullmatches), seemingly judged only against the 2-24-letter final label; llguidance, xgrammar
and grammask allow them.

Cold start (bench/cold_start.py; `--no-cold-start` skips it): fresh interpreters with a new
`NUMBA_CACHE_DIR`, empty (every kernel compiles) then warm; phases `import`, `vocabulary`,
`compile` (first `compile_regex`, with the trie and parser), `first_mask`, `compile_again`,
`whole process`. Median of three pairs; one with `--quick`.

JSON (`--json PATH`): every number of the report, per workload and engine, plus rejected and
not-allowed tokens (`[sequence, step, token id]`) and errors.
"""
from __future__ import annotations

from harness import Setup, log, pin_to_one_cpu, set_up  # first: sets the thread counts

# isort: split
import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from functools import partial  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from cold_start import PHASES, run_cold_start  # noqa: E402
from measure import (  # noqa: E402
    FULL,
    QUICK,
    CrossCheck,
    Masks,
    Plan,
    Walk,
    copy_baseline_ns,
    run_engine,
    run_grammask_regex,
    summarize,
    summary_of,
)
from report import (  # noqa: E402
    Cell,
    Summaries,
    crosscheck_report,
    metric_table,
    pick,
    problems_report,
    table,
)
from workloads import Workload, build_workloads  # noqa: E402

GM = "grammask"


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


def bench_workloads(workloads: list[Workload], vocab: Any, peers: list[Any], plan: Plan,
                    ) -> tuple[Summaries, dict[str, list[CrossCheck]], dict[str, Masks],
                               dict[str, int]]:
    """Run every engine on every workload: summaries[workload][engine], each peer's masks
    against grammask's, all masks, token counts."""
    summaries: Summaries = {}
    checks: dict[str, list[CrossCheck]] = {}
    masks: dict[str, Masks] = {}
    n_tokens: dict[str, int] = {}
    for w in workloads:
        ids = vocab.encode(w.target)
        n_tokens[w.name] = len(ids)
        walk = Walk([ids], vocab.size, vocab.eos_token_id)
        log(f"[{w.name}] {len(ids)} tokens: grammask")
        gm = run_grammask_regex(vocab, w.pattern, walk, plan)
        summaries[w.name] = {GM: summary_of(gm)}
        masks[w.name] = m = Masks(vocab.size, {GM: gm.rows})
        for peer in peers:
            log(f"[{w.name}] {peer.name}")
            run = run_engine(partial(peer.compile, w.pattern), peer.session, walk, plan,
                             grammask=False, nbytes=peer.nbytes)
            summaries[w.name][peer.name] = summary_of(run)
            if not run.error:
                m.rows[peer.name] = run.rows
        checks[w.name] = [m.compare(GM, p.name) for p in peers if p.name in m.rows]
    return summaries, checks, masks, n_tokens


def print_report(summaries: Summaries, engines: list[str],
                 n_tokens: dict[str, int], copy_us: dict[str, float], timer_ns: int) -> None:
    """The per-metric tables and the goal ratios."""
    print(metric_table("compile time, ms (median; grammask lazy; peers: see notes)",
                       _with_pre(summaries, engines), [GM, "gm_precomp", *engines[1:]],
                       extra=["gm_precomp"]))
    print()
    print(metric_table("time to first mask, ms (compile + matcher + first fill; median)",
                       pick(summaries, engines, "first_mask_ms"), engines))
    for key, label in (("warm_fill_us", "mask fill, warm (states seen before), µs per token"),
                       ("cold_fill_us", "mask fill, first pass on a fresh compile, µs per token")):
        for stat in ("median", "p99", "max"):
            print()
            print(metric_table(f"{label}: {stat}", pick(summaries, engines, key, stat), engines))
    print()
    print(metric_table("accept_token / consume / advance, µs per token: median",
                       pick(summaries, engines, "accept_us", "median"), engines))
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
    out = pick(summaries, engines, "compile_ms")
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

    from grammask.compiler import compile_regex

    # compile_regex("a"): the regex front end's one-time setup, outside every timing.
    setup: Setup = set_up({p for p in args.peers.split(",") if p},
                          warm=lambda v: compile_regex("a", v))
    vocab, peers, notes = setup.vocab, setup.peers, setup.notes
    workloads = build_workloads(vocab)
    if args.workloads:
        keep = set(args.workloads.split(","))
        workloads = [w for w in workloads if w.name in keep]
    engines = [GM, *[p.name for p in peers]]

    log("copy baseline (first half)")
    n_words = (vocab.size + 31) // 32
    copy_ns, timer_ns = copy_baseline_ns(n_words, plan.copy_samples // 2)
    summaries, checks, masks, n_tokens = bench_workloads(workloads, vocab, peers, plan)
    log("copy baseline (second half)")
    copy_ns += copy_baseline_ns(n_words, plan.copy_samples // 2)[0]
    copy_us = {**summarize(copy_ns, 1e-3), "words": n_words}

    print(f"grammask regex benchmark ({'quick' if args.quick else 'full'}); python "
          f"{platform.python_version()}, numpy {np.__version__}; {pin}; vocabulary "
          f"{vocab.size:,} ids ({n_words:,} words per row), EOS {vocab.eos_token_id}")
    print(setup.setup_line())
    for p in peers:
        print(f"  {p.name} compile = {p.compile_means}")
    for n in notes:
        print(f"  {n}")
    print()
    for w in workloads:
        print(f"  {w.name:<13} {n_tokens[w.name]:>3} tokens  target {w.target!r}")
    print()
    print_report(summaries, engines, n_tokens, copy_us, timer_ns)
    for line in problems_report(summaries, vocab.token_bytes):
        print(line)
    print()
    special = {int(i) for i in vocab.special_token_ids}
    print(crosscheck_report(checks, masks, vocab.token_bytes,
                            {int(i) for i in vocab.eos_token_ids}, special))
    cold: dict[str, Any] = {}
    if not args.no_cold_start:
        print()
        cold = print_cold_start(workloads[0].pattern if workloads else r"a", 1 if args.quick else 3)
    print()
    print(f"total benchmark wall time {time.perf_counter() - t_start:.0f} s")

    if args.json:
        doc = {"mode": "quick" if args.quick else "full", "pin": pin, "copy_baseline_us": copy_us,
               "timer_overhead_ns": timer_ns, "notes": notes,
               "peers": setup.peers_json("compile_means"),
               "workloads": {w.name: {"pattern": w.pattern, "target": w.target,
                                      "tokens": n_tokens[w.name], "engines": summaries[w.name],
                                      "crosscheck": {c.peer: {"steps": c.steps, "equal": c.equal}
                                                     for c in checks[w.name]}}
                             for w in workloads},
               "cold_start_s": cold}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
