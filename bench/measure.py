"""Timing of grammask and of the peers on one workload, and the per-step mask cross-check.

Every per-call time is one `time.perf_counter_ns()` pair around one public call (a fill, an
accept), the same way for every engine and for the `np.copyto` baseline, with the garbage
collector off inside timed loops. A *pass* walks the target's tokens: fill, accept token 0,
fill, ..., accept the last token, fill (the last mask, where EOS must be allowed).

- cold pass: the first pass on a freshly compiled grammar (grammask's lazy token sets are
  computed as states are first reached; peers do whatever they do on first use);
- warm passes: later passes on the same compiled grammar (reset between passes).
"""
from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from grammask.compiler import compile_regex
from grammask.runtime import (
    CompiledGrammar,
    Matcher,
    Vocabulary,
    allocate_token_bitmask,
)
from peers import Peer

ns = time.perf_counter_ns


@dataclass(frozen=True)
class Plan:
    """How much to repeat: compile repeats run until `min_reps` and the time budget are met."""

    compile_min: int
    compile_max: int
    compile_budget_s: float
    peer_compile_min: int
    peer_compile_max: int
    peer_compile_budget_s: float
    warm_passes: int
    copy_samples: int


FULL = Plan(7, 21, 1.5, 3, 7, 3.0, 100, 20000)
QUICK = Plan(2, 3, 0.2, 1, 1, 0.0, 8, 3000)


@dataclass
class EngineRun:
    """What one engine did on one workload (times in ns, compile times in s)."""

    compile_s: list[float] = field(default_factory=list)
    first_mask_s: list[float] = field(default_factory=list)
    cold_fill_ns: list[int] = field(default_factory=list)
    warm_fill_ns: list[int] = field(default_factory=list)
    accept_ns: list[int] = field(default_factory=list)
    error: str | None = None


@dataclass
class GrammaskRun(EngineRun):
    """grammask's run, plus the precompute compile, sizes and the rows of each step."""

    compile_pre_s: list[float] = field(default_factory=list)
    nbytes: int = 0
    states: int = 0
    rows: list[np.ndarray] = field(default_factory=list)  # bool per token id, per step


@dataclass
class StepDiff:
    """One step where a peer's allowed set differs from grammask's."""

    step: int
    n_grammask: int
    n_peer: int
    only_grammask: np.ndarray
    only_peer: np.ndarray
    gm_allowed: np.ndarray | None  # grammask's allowed ids when there are few (<= 64)


@dataclass
class CrossCheck:
    """Per-step comparison of a peer's masks with grammask's on one workload."""

    steps: int = 0
    equal: int = 0
    diffs: list[StepDiff] = field(default_factory=list)


@contextmanager
def no_gc() -> Iterator[None]:
    """Collect, then keep the collector off for a timed region."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def summarize(samples: list[int] | list[float], scale: float) -> dict[str, float]:
    """median, p99 and max of `samples` times `scale` (nan when empty)."""
    if not samples:
        return {"median": float("nan"), "p99": float("nan"), "max": float("nan"), "n": 0}
    a = np.asarray(samples, dtype=np.float64) * scale
    return {"median": float(np.median(a)), "p99": float(np.percentile(a, 99)),
            "max": float(a.max()), "n": int(len(a))}


def to_bits(row: np.ndarray, size: int) -> np.ndarray:
    """bool per token id of an int32 bitmask row (padding bits past `size` dropped)."""
    raw = np.ascontiguousarray(row).view(np.uint8)
    return np.unpackbits(raw, bitorder="little")[:size].astype(bool)


def _repeat(run_once: Callable[[], float], lo: int, hi: int, budget_s: float) -> None:
    spent, n = 0.0, 0
    while n < lo or (n < hi and spent < budget_s):
        spent += run_once()
        n += 1


def copy_baseline_ns(n_words: int, samples: int) -> tuple[list[int], int]:
    """Per-call `np.copyto` of a precomputed int32 row, and the bare timer overhead (median).

    Timed exactly like a fill: one `perf_counter_ns` pair around one call.
    """
    src = np.random.default_rng(0).integers(-2**31, 2**31, n_words, dtype=np.int64).astype(np.int32)
    dst = np.zeros(n_words, dtype=np.int32)
    out: list[int] = []
    empty: list[int] = []
    with no_gc():
        for _ in range(200):
            np.copyto(dst, src)
        for _ in range(samples):
            t0 = ns()
            np.copyto(dst, src)
            out.append(ns() - t0)
        for _ in range(samples):
            t0 = ns()
            empty.append(ns() - t0)
    return out, int(np.median(empty))


def _compare(step: int, peer_bits: np.ndarray, gm_bits: np.ndarray, check: CrossCheck) -> None:
    check.steps += 1
    if np.array_equal(peer_bits, gm_bits):
        check.equal += 1
        return
    n_gm = int(gm_bits.sum())
    check.diffs.append(StepDiff(step, n_gm, int(peer_bits.sum()),
                                np.flatnonzero(gm_bits & ~peer_bits),
                                np.flatnonzero(peer_bits & ~gm_bits),
                                np.flatnonzero(gm_bits) if n_gm <= 64 else None))


class _GrammaskSession:
    """grammask behind the same one-row-buffer interface as the peers (same call overhead)."""

    def __init__(self, compiled: CompiledGrammar) -> None:
        self._m = Matcher(compiled)
        self._buf = allocate_token_bitmask(1, compiled.vocab_size)

    def fill(self) -> None:
        self._m.fill_next_token_bitmask(self._buf, 0)

    def row(self) -> np.ndarray:
        return self._buf[0]

    def accept(self, token_id: int) -> bool:
        return self._m.accept_token(token_id)

    def reset(self) -> None:
        self._m.reset()


class GrammaskEngine:
    """grammask as an engine: lazy `compile_regex`, a `Matcher` per session."""

    name = "grammask"
    compile_means = "compile_regex(regex, vocab) (lazy token sets)"

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab

    def compile(self, pattern: str) -> CompiledGrammar:
        return compile_regex(pattern, self.vocab)

    def session(self, compiled: CompiledGrammar) -> _GrammaskSession:
        return _GrammaskSession(compiled)


def run_grammask(vocab: Vocabulary, pattern: str, ids: list[int], plan: Plan) -> GrammaskRun:
    """The common engine run, plus precomputed compiles, sizes, and each step's allowed set."""
    engine = GrammaskEngine(vocab)
    res = GrammaskRun()
    run_engine(engine, pattern, ids, plan, res, lo=plan.compile_min, hi=plan.compile_max,
               budget_s=plan.compile_budget_s)
    if res.error:
        raise RuntimeError(f"grammask: {res.error}")

    def pre_once() -> float:
        with no_gc():
            t0 = ns()
            compiled = compile_regex(pattern, vocab, precompute=True)
            dt = (ns() - t0) / 1e9
        res.compile_pre_s.append(dt)
        res.nbytes = compiled.nbytes()
        res.states = int(compiled.stats()["states"])
        return dt

    _repeat(pre_once, max(1, plan.compile_min // 2), plan.compile_max, plan.compile_budget_s)
    s = engine.session(engine.compile(pattern))
    for tid in [*ids, None]:
        s.fill()
        res.rows.append(to_bits(s.row(), vocab.size))
        if tid is not None:
            s.accept(tid)
    return res


def run_peer(peer: Peer, pattern: str, ids: list[int], gm_rows: list[np.ndarray],
             size: int, plan: Plan) -> tuple[EngineRun, CrossCheck]:
    """The common engine run of a peer, its first pass cross-checked against `gm_rows`."""
    res, check = EngineRun(), CrossCheck()
    run_engine(peer, pattern, ids, plan, res, lo=plan.peer_compile_min, hi=plan.peer_compile_max,
               budget_s=plan.peer_compile_budget_s, check=(gm_rows, size, check))
    return res, check


def run_engine(engine: Peer | GrammaskEngine, pattern: str, ids: list[int], plan: Plan,
               res: EngineRun, *, lo: int, hi: int, budget_s: float,
               check: tuple[list[np.ndarray], int, CrossCheck] | None = None) -> None:
    """Compile repeats, each followed by a timed cold pass (the first one cross-checked when
    `check` is given), then `plan.warm_passes` warm passes on the last session. Errors of the
    engine land in `res.error`."""
    state: dict[str, Any] = {}

    def once() -> float:
        compare = check if check is not None and not res.compile_s else None
        with no_gc():
            t0 = ns()
            compiled = engine.compile(pattern)
            t1 = ns()
            s = engine.session(compiled)
            t2 = ns()
            s.fill()
            t3 = ns()
            cold = [t3 - t2]
            for k, tid in enumerate(ids):
                if compare:
                    _compare(k, to_bits(s.row(), compare[1]), compare[0][k], compare[2])
                if not s.accept(tid):
                    raise RuntimeError(f"rejected target token {k} (id {tid}) on a first pass")
                t0f = ns()
                s.fill()
                cold.append(ns() - t0f)
            if compare:
                _compare(len(ids), to_bits(s.row(), compare[1]), compare[0][len(ids)], compare[2])
        res.compile_s.append((t1 - t0) / 1e9)
        res.first_mask_s.append((t3 - t0) / 1e9)
        res.cold_fill_ns.extend(cold)
        state["s"] = s
        return (t3 - t0) / 1e9

    try:
        _repeat(once, lo, hi, budget_s)
        s = state["s"]
        with no_gc():
            for _ in range(plan.warm_passes):
                s.reset()
                for tid in ids:
                    t0 = ns()
                    s.fill()
                    t1 = ns()
                    ok = s.accept(tid)
                    t2 = ns()
                    if not ok:
                        raise RuntimeError(f"rejected target token id {tid} on a warm pass")
                    res.warm_fill_ns.append(t1 - t0)
                    res.accept_ns.append(t2 - t1)
                t0 = ns()
                s.fill()
                res.warm_fill_ns.append(ns() - t0)
    except Exception as exc:  # an engine failing on one workload must not stop the benchmark
        res.error = f"{type(exc).__name__}: {exc}"
