"""What a serving engine pays per step: batch fills over threads, and draft verification.

    python bench/bench_serving.py [--grammars json,arithmetic] [--batches 1,8,64,256]
                                  [--threads 1,2] [--peers llguidance] [--json PATH]

Batch fills: B sequences of one grammar, each a seeded number of tokens into its own document
(`grammar_workloads.py`). A pass is 8 steps of one timed call that fills all B rows (grammask
`batch_fill_next_token_bitmask(matchers, bitmask, max_threads=T)`, llguidance
`fill_next_token_bitmask_par(LLExecutor(T), ...)`), each followed by every sequence accepting
its next document token (untimed); then all roll back. One untimed pass first makes every
state's first fill (warm: a server after its first requests), so each timed fill is of a new
position, never a repeat a matcher could answer from its last mask. Reported: the median call
over the passes, per sequence, and the speed-up from the first to the last thread count. Rows
are checked equal to one-by-one fills. Not pinned: it measures threads, and Numba may use every
CPU (the other benchmarks allow it one).

Draft verification: at every position of every document, a draft of the next K tokens:
`fill_draft_bitmasks(draft, bitmask)` (K + 1 rows, the matcher unchanged) against what it
replaces, one `fill_next_token_bitmask` and `accept_token` per draft token, the last fill and
`rollback(K)`. Reported per draft token.

Token budgets: every document of the workload walked by a matcher with `max_tokens` set to
its length in bytes (the tightest budget it surely fits: costs count single-byte tokens) and by
one without, fills timed at each position (warm: one untimed walk first). Reported: median and
99th percentile µs per fill, all positions and the last 8 (where the budget binds and the
tokens of the tight states are walked with their costs).

Serialized grammars: `compile_gbnf` with the process caches cleared (a fresh worker) against
`CompiledGrammar.from_bytes` of its `to_bytes()`.

Cache churn (`--churn N`): N distinct schemas, each compiled through one bounded
`CompileCache` and given a first mask: the cache's peak bytes against its bound, and the
process's resident memory growth.
"""
from __future__ import annotations

import os

# Numba's threads (batch fills with max_threads > 1) may use every CPU here, which the harness
# would otherwise limit to one, as it does every library's threads.
for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, str(len(os.sched_getaffinity(0))))

import harness  # noqa: E402,F401  (sets the other thread variables first)

import argparse
import json
import random
import statistics
import sys
import time
from typing import Any

import numpy as np

from grammar_workloads import build_grammar_workloads
from harness import log, set_up
from report import table

from grammask.compiler import CompileCache, clear_caches, compile_gbnf, compile_json_schema
from grammask.runtime import (
    CompiledGrammar,
    Matcher,
    allocate_token_bitmask,
    batch_fill_next_token_bitmask,
)


def _starts(docs: list[list[int]], n: int, steps: int, seed: int) -> list[tuple[list[int], list[int]]]:
    """For each of n sequences: the tokens it accepts before timing (a seeded prefix of one
    of the documents) and the next `steps` tokens it accepts between timed fills."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        ids = docs[i % len(docs)]
        k = rng.randrange(max(1, len(ids) - steps))
        out.append((ids[:k], ids[k:k + steps]))
    return out


def _stepping(matchers: list[Any], plan: list[tuple[list[int], list[int]]], steps: int,
              accept: Any, rollback: Any) -> tuple[Any, Any]:
    """(advance(j): every sequence accepts its j-th next token; back(): all roll back)."""
    def advance(j: int) -> None:
        for m, (_, nxt) in zip(matchers, plan):
            if j < len(nxt):
                accept(m, nxt[j])

    def back() -> None:
        for m, (_, nxt) in zip(matchers, plan):
            rollback(m, min(steps, len(nxt)))

    return advance, back


def _passes(fill: Any, advance: Any, back: Any, steps: int, repeats: int) -> float:
    """Median µs of `fill()` over `repeats` passes of `steps` fills, each followed by
    `advance(j)` (untimed); `back()` returns to the start between passes. One untimed pass
    first, so every state's first fill is made (warm)."""
    times = []
    for r in range(repeats + 1):
        for j in range(steps):
            t0 = time.perf_counter_ns()
            fill()
            t1 = time.perf_counter_ns()
            if r:
                times.append(t1 - t0)
            advance(j)
        back()
    return statistics.median(times) / 1e3


def bench_batch(vocab: Any, workload: Any, batches: list[int], threads: list[int],
                llg: Any, steps: int, repeats: int) -> list[dict[str, Any]]:
    compiled = compile_gbnf(workload.gbnf, vocab)
    docs = [vocab.encode(d) for d in workload.docs]
    results = []
    llg_text = llg.grammar_text(workload.gbnf, workload.lark) if llg is not None else None
    for b in batches:
        plan = _starts(docs, b, steps, seed=b)
        ms = []
        for prefix, _ in plan:
            m = Matcher(compiled)
            for tok in prefix:
                if not m.accept_token(tok):
                    raise RuntimeError("a document token was rejected")
            ms.append(m)
        bm = allocate_token_bitmask(b, vocab.size)
        row: dict[str, Any] = {"grammar": workload.name, "batch": b, "steps": steps}
        advance, back = _stepping(ms, plan, steps, Matcher.accept_token, Matcher.rollback)

        expected = allocate_token_bitmask(b, vocab.size)
        for t in threads:
            batch_fill_next_token_bitmask(ms, bm, max_threads=t)
            for i, m in enumerate(ms):
                m.fill_next_token_bitmask(expected, i)
            if not np.array_equal(bm, expected):
                raise RuntimeError(f"{t} threads filled other rows than one by one")
            row[f"grammask_t{t}_us"] = _passes(
                lambda: batch_fill_next_token_bitmask(ms, bm, max_threads=t), advance, back,
                steps, repeats)
        if llg is not None:
            import llguidance
            import llguidance.numpy as lln

            lms = []
            for prefix, _ in plan:
                lm = llg.bare_matcher(llg_text)
                for tok in prefix:
                    lm.consume_token(tok)
                lms.append(lm)
            pairs = [(lm, i) for i, lm in enumerate(lms)]
            llg_advance, llg_back = _stepping(lms, plan, steps, lambda lm, t: lm.consume_token(t),
                                              lambda lm, n: lm.rollback(n))

            for t in threads:
                ex = llguidance.LLExecutor(t)
                row[f"llguidance_t{t}_us"] = _passes(
                    lambda: lln.fill_next_token_bitmask_par(ex, pairs, bm), llg_advance,
                    llg_back, steps, repeats)
        results.append(row)
        log(f"{workload.name}: batch {b} done")
    return results


def bench_drafts(vocab: Any, workload: Any, k: int, max_positions: int) -> dict[str, Any]:
    compiled = compile_gbnf(workload.gbnf, vocab)
    bm = allocate_token_bitmask(k + 1, vocab.size)
    one_call, stepwise, n = [], [], 0
    for ids in (vocab.encode(d) for d in workload.docs):
        m = Matcher(compiled)
        for pos in range(len(ids) - k):
            if n >= max_positions:
                break
            draft = ids[pos:pos + k]
            m.fill_draft_bitmasks(draft, bm)  # first fills of the states, untimed
            t0 = time.perf_counter_ns()
            m.fill_draft_bitmasks(draft, bm)
            t1 = time.perf_counter_ns()
            for j, tok in enumerate(draft):
                m.fill_next_token_bitmask(bm, j)
                m.accept_token(tok)
            m.fill_next_token_bitmask(bm, k)
            m.rollback(k)
            t2 = time.perf_counter_ns()
            one_call.append((t1 - t0) / k)
            stepwise.append((t2 - t1) / k)
            m.accept_token(ids[pos])
            n += 1
    return {"grammar": workload.name, "k": k, "positions": n,
            "draft_call_us_per_token": statistics.median(one_call) / 1e3,
            "stepwise_us_per_token": statistics.median(stepwise) / 1e3}


def bench_budget(vocab: Any, workload: Any) -> dict[str, Any]:
    compiled = compile_gbnf(workload.gbnf, vocab)
    bm = allocate_token_bitmask(1, vocab.size)
    times: dict[str, list[float]] = {"plain": [], "budget": [], "plain_end": [],
                                      "budget_end": []}
    for warm in (True, False):
        for doc in workload.docs:
            ids = vocab.encode(doc)
            for name, m in (("plain", Matcher(compiled)),
                            ("budget", Matcher(compiled, max_tokens=len(doc.encode())))):
                for pos, tok in enumerate(ids):
                    t0 = time.perf_counter_ns()
                    m.fill_next_token_bitmask(bm)
                    t1 = time.perf_counter_ns()
                    if not m.accept_token(tok):
                        raise AssertionError(f"{workload.name}: the document left its budget")
                    if not warm:
                        times[name].append((t1 - t0) / 1e3)
                        if pos >= len(ids) - 8:
                            times[f"{name}_end"].append((t1 - t0) / 1e3)
    out: dict[str, Any] = {"grammar": workload.name, "fills": len(times["plain"])}
    for name, values in times.items():
        out[f"{name}_p50_us"] = statistics.median(values)
        out[f"{name}_p99_us"] = float(np.percentile(values, 99))
    return out


def bench_load(vocab: Any, workload: Any, repeats: int) -> dict[str, Any]:
    """Compile from scratch (process caches cleared first: a fresh worker) against loading
    the serialized grammar; median ms."""
    compiled = compile_gbnf(workload.gbnf, vocab)
    data = compiled.to_bytes()
    comp, load = [], []
    for _ in range(repeats):
        clear_caches()
        t0 = time.perf_counter_ns()
        compile_gbnf(workload.gbnf, vocab)
        t1 = time.perf_counter_ns()
        CompiledGrammar.from_bytes(data, vocab)
        t2 = time.perf_counter_ns()
        comp.append(t1 - t0)
        load.append(t2 - t1)
    return {"grammar": workload.name, "bytes": len(data),
            "compile_ms": statistics.median(comp) / 1e6, "load_ms": statistics.median(load) / 1e6}


def _rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def bench_churn(vocab: Any, n: int, max_bytes: int) -> dict[str, Any]:
    """n distinct small schemas through one `CompileCache(max_bytes=...)`, each with a first
    mask: the cache's bytes stay within the bound; the process's resident memory, before
    and after, says whether anything else grows."""
    cache = CompileCache(max_bytes=max_bytes)
    bm = allocate_token_bitmask(1, vocab.size)
    before, peak, t0 = _rss_bytes(), 0, time.perf_counter()
    for i in range(n):
        schema = {"type": "object", "properties": {f"k{i}": {"type": "integer", "maximum": i},
                                                   "tag": {"enum": [f"v{i % 97}", "x"]}},
                  "required": [f"k{i}"]}
        Matcher(compile_json_schema(schema, vocab, cache=cache)).fill_next_token_bitmask(bm)
        peak = max(peak, cache.nbytes)
        if (i + 1) % 2000 == 0:
            log(f"churn: {i + 1} schemas, cache {cache.nbytes:,} bytes, "
                f"rss {_rss_bytes() - before:+,} bytes")
    return {"schemas": n, "max_bytes": max_bytes, "cache_peak": peak, "entries": len(cache),
            "seconds": time.perf_counter() - t0, "rss_growth": _rss_bytes() - before}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--grammars", default="json,arithmetic")
    ap.add_argument("--batches", default="1,8,64,256")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--peers", default="llguidance", help='"llguidance" or "" (none)')
    ap.add_argument("--docs", type=int, default=20)
    ap.add_argument("--steps", type=int, default=8, help="fills per pass (default 8)")
    ap.add_argument("--repeats", type=int, default=10, help="timed passes (default 10)")
    ap.add_argument("--draft", type=int, default=4, help="draft length K (default 4)")
    ap.add_argument("--churn", type=int, default=0, metavar="N",
                    help="also compile N distinct schemas through a CompileCache (default 0)")
    ap.add_argument("--churn-bytes", type=int, default=64 << 20)
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args()
    batches = [int(x) for x in args.batches.split(",")]
    threads = [int(x) for x in args.threads.split(",")]
    setup = set_up({p for p in args.peers.split(",") if p})
    llg = next((p for p in setup.peers if p.name == "llguidance"), None)
    workloads = build_grammar_workloads(args.grammars.split(","), args.docs)
    cpus = len(os.sched_getaffinity(0))
    print(f"grammask serving benchmark; {cpus} CPUs, not pinned; {setup.setup_line()}")
    for note in setup.notes:
        print(f"  {note}")
    rows, drafts, loads, budgets = [], [], [], []
    for w in workloads:
        rows += bench_batch(setup.vocab, w, batches, threads, llg, args.steps, args.repeats)
        drafts.append(bench_drafts(setup.vocab, w, args.draft, 2000))
        loads.append(bench_load(setup.vocab, w, 20))
        budgets.append(bench_budget(setup.vocab, w))
    engines = ["grammask"] + (["llguidance"] if llg is not None else [])
    t0, t1 = threads[0], threads[-1]
    body = []
    for r in rows:
        cells: list[Any] = [r["grammar"], r["batch"]]
        for e in engines:
            for t in threads:
                cells.append(r[f"{e}_t{t}_us"] / r["batch"])
            cells.append(r[f"{e}_t{t0}_us"] / r[f"{e}_t{t1}_us"])
        body.append(cells)
    headers = ["grammar", "batch"]
    for e in engines:
        headers += [f"{e} {t} thr µs/seq" for t in threads] + [f"{e} {t0}→{t1} speed-up"]
    print()
    print(table("batch fill, warm: median µs per sequence of one call", headers, body))
    print()
    print(table(f"draft verification (K = {args.draft}): median µs per draft token",
                ["grammar", "positions", "fill_draft_bitmasks", "fill+accept each, rollback",
                 "ratio"],
                [[d["grammar"], d["positions"], d["draft_call_us_per_token"],
                  d["stepwise_us_per_token"],
                  d["stepwise_us_per_token"] / d["draft_call_us_per_token"]] for d in drafts]))
    print()
    print(table("serialized grammar: compile from scratch against CompiledGrammar.from_bytes, "
                "median ms", ["grammar", "bytes", "compile", "load", "ratio"],
                [[d["grammar"], d["bytes"], d["compile_ms"], d["load_ms"],
                  d["compile_ms"] / d["load_ms"]] for d in loads]))
    print()
    print(table("token budget (max_tokens = the document's bytes) against none: µs per fill",
                ["grammar", "fills", "none p50", "budget p50", "none p99", "budget p99",
                 "last 8: none p50", "budget p50", "none p99", "budget p99"],
                [[b["grammar"], b["fills"], b["plain_p50_us"], b["budget_p50_us"],
                  b["plain_p99_us"], b["budget_p99_us"], b["plain_end_p50_us"],
                  b["budget_end_p50_us"], b["plain_end_p99_us"], b["budget_end_p99_us"]]
                 for b in budgets]))
    churn = bench_churn(setup.vocab, args.churn, args.churn_bytes) if args.churn else None
    if churn is not None:
        print()
        print(table("compile cache under churn", ["schemas", "bound, bytes", "peak, bytes",
                                                  "entries kept", "seconds", "RSS growth"],
                    [[churn["schemas"], churn["max_bytes"], churn["cache_peak"],
                      churn["entries"], churn["seconds"], churn["rss_growth"]]]))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"batch": rows, "drafts": drafts, "load": loads, "budget": budgets,
                       "churn": churn}, f,
                      indent=1)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
