"""Timing of grammask and of the peers on one workload, and the per-step mask cross-check.

Every per-call time is one `time.perf_counter_ns()` pair around one public call (a fill, an
accept), the same way for every engine and for the `np.copyto` baseline, with the garbage
collector off inside timed loops. A workload is one or more token sequences; a *pass* walks
each of them: fill, accept token 0, fill, ..., accept the last token, fill (the last mask,
where EOS must be allowed), with `reset()` before every sequence but the first of a session.

- cold pass: the first pass on a freshly compiled grammar (grammask's lazy token sets are
  computed as states are first reached; peers do whatever they do on first use);
- warm passes: later passes on the same compiled grammar.
"""
from __future__ import annotations

import gc
import math
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

from peers import PeerSession as Session

ns = time.perf_counter_ns


@dataclass(frozen=True)
class Plan:
    """How much to repeat: compile repeats run until the minimum count and the time budget
    (compile + first mask) are met. The first `cold_passes` compiles are each followed by a
    pass over every sequence, and `warm_passes` passes follow on the last session; once the
    cold (or warm) passes have taken `pass_budget_s`, no more of them run (one always does)."""

    compile_min: int
    compile_max: int
    compile_budget_s: float
    peer_compile_min: int
    peer_compile_max: int
    peer_compile_budget_s: float
    warm_passes: int
    copy_samples: int
    cold_passes: int = 1 << 30
    pass_budget_s: float = math.inf


FULL = Plan(7, 21, 1.5, 3, 7, 3.0, 100, 20000)
QUICK = Plan(2, 3, 0.2, 1, 1, 0.0, 8, 3000)


@dataclass(frozen=True)
class Walk:
    """The token sequences every engine walks, over `size` token ids, each ending in `eos`."""

    seqs: list[list[int]]
    size: int
    eos: int


@dataclass
class EngineRun:
    """What one engine did on one workload (times in ns, compile times in s).

    `rejected` and `not_allowed` hold `(sequence, step, token id)` of the first pass: tokens the
    engine refused to accept (the rest of that sequence is skipped), and tokens (EOS after the
    last one) missing from the engine's own mask at the step where they are taken.
    """

    compile_s: list[float] = field(default_factory=list)
    first_mask_s: list[float] = field(default_factory=list)
    cold_fill_ns: list[int] = field(default_factory=list)
    warm_fill_ns: list[int] = field(default_factory=list)
    accept_ns: list[int] = field(default_factory=list)
    error: str | None = None
    nbytes: int | None = None
    rejected: list[tuple[int, int, int]] = field(default_factory=list)
    not_allowed: list[tuple[int, int, int]] = field(default_factory=list)
    unsupported: str | None = None  # the first compile raised one of the `unsupported` types
    rows: list[list[np.ndarray]] = field(default_factory=list)  # packed masks; seq, step


@dataclass
class GrammaskRun(EngineRun):
    """grammask's regex run, plus the precompute compile and the number of states."""

    compile_pre_s: list[float] = field(default_factory=list)
    states: int = 0


@dataclass
class StepDiff:
    """One step where a peer's allowed set differs from the reference engine's (ids)."""

    seq: int
    step: int
    n_ref: int
    n_peer: int
    only_ref: np.ndarray
    only_peer: np.ndarray
    ref_allowed: np.ndarray | None  # the reference's allowed ids when there are few (<= 64)


@dataclass
class CrossCheck:
    """Per-step comparison of a peer's masks with the reference engine's on one workload."""

    ref: str
    peer: str
    steps: int = 0
    equal: int = 0
    diffs: list[StepDiff] = field(default_factory=list)


def pack(row: np.ndarray, size: int) -> np.ndarray:
    """A copy of an int32 bitmask row as bytes, bits past `size` cleared (comparable as is)."""
    out = np.ascontiguousarray(row).view(np.uint8)[:(size + 7) // 8].copy()
    if size % 8:
        out[-1] &= (1 << (size % 8)) - 1
    return out


def to_bits(packed: np.ndarray, size: int) -> np.ndarray:
    """bool per token id of a packed row."""
    return np.unpackbits(packed, bitorder="little")[:size].astype(bool)


def allows(packed: np.ndarray, token: int) -> bool:
    """Whether a packed row allows `token`."""
    return bool(packed[token >> 3] >> (token & 7) & 1)


@dataclass
class Masks:
    """Each engine's first-pass masks on one workload: packed rows per sequence, per step."""

    size: int
    rows: dict[str, list[list[np.ndarray]]] = field(default_factory=dict)

    def allowed_by(self, seq: int, step: int, token: int) -> list[str]:
        """The engines whose mask at that step allows `token`."""
        return [e for e, r in self.rows.items()
                if seq < len(r) and step < len(r[seq]) and allows(r[seq][step], token)]

    def compare(self, ref: str, peer: str) -> CrossCheck:
        """Every step both engines reached, `peer`'s mask against `ref`'s."""
        chk = CrossCheck(ref, peer)
        for k, (rs, ps) in enumerate(zip(self.rows[ref], self.rows[peer], strict=True)):
            for j, (r, p) in enumerate(zip(rs, ps, strict=False)):
                chk.steps += 1
                if np.array_equal(r, p):
                    chk.equal += 1
                    continue
                rb, pb = to_bits(r, self.size), to_bits(p, self.size)
                n_ref = int(rb.sum())
                chk.diffs.append(StepDiff(k, j, n_ref, int(pb.sum()), np.flatnonzero(rb & ~pb),
                                          np.flatnonzero(pb & ~rb),
                                          np.flatnonzero(rb) if n_ref <= 64 else None))
        return chk


@contextmanager
def no_gc() -> Iterator[None]:
    """Collect, then keep the collector off for a timed region."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def summarize(samples: list[int] | list[float], scale: float) -> dict[str, float | None]:
    """median, p99 and max of `samples` times `scale` (None when empty: valid JSON)."""
    if not samples:
        return {"median": None, "p99": None, "max": None, "n": 0}
    a = np.asarray(samples, dtype=np.float64) * scale
    return {"median": float(np.median(a)), "p99": float(np.percentile(a, 99)),
            "max": float(a.max()), "n": int(len(a))}


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
        "nbytes": run.nbytes,
        "rejected": [list(x) for x in run.rejected],
        "not_allowed": [list(x) for x in run.not_allowed],
        "error": run.error,
        "unsupported": run.unsupported,
    }
    if isinstance(run, GrammaskRun):
        out["compile_precompute_ms"] = _med_ms(run.compile_pre_s)
        out["states"] = run.states
    return out


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


class GrammaskSession:
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


class _FirstPass:
    """The checks of the first pass: each step's own mask must allow the token then taken (EOS
    after the last); the masks are recorded, packed."""

    def __init__(self, walk: Walk, res: EngineRun) -> None:
        self.walk, self.res = walk, res
        res.rows = [[] for _ in walk.seqs]

    def __call__(self, k: int, j: int, row: np.ndarray, tid: int | None) -> None:
        packed = pack(row, self.walk.size)
        taken = self.walk.eos if tid is None else tid
        if not allows(packed, taken):
            self.res.not_allowed.append((k, j, taken))
        self.res.rows[k].append(packed)


def _walk(s: Session, ids: list[int], fills: list[int], accepts: list[int],
          inspect: _FirstPass | None = None, k: int = 0) -> int | None:
    """One sequence: fill, accept, ..., fill after the last token, each call timed on its own.
    Returns the step whose token was rejected, None when all were accepted."""
    for j, tid in enumerate(ids):
        t0 = ns()
        s.fill()
        t1 = ns()
        if inspect is not None:
            inspect(k, j, s.row(), tid)
        t2 = ns()
        ok = s.accept(tid)
        t3 = ns()
        fills.append(t1 - t0)
        accepts.append(t3 - t2)
        if not ok:
            return j
    t0 = ns()
    s.fill()
    fills.append(ns() - t0)
    if inspect is not None:
        inspect(k, len(ids), s.row(), None)
    return None


def run_engine(compile: Callable[[], Any], session: Callable[[Any], Session], walk: Walk,
               plan: Plan, *, grammask: bool, res: EngineRun | None = None,
               nbytes: Callable[[Any], int | None] | None = None,
               unsupported: tuple[type[BaseException], ...] = ()) -> EngineRun:
    """Compile repeats (grammask's or the peers' counts of `plan`), each followed by a timed cold
    pass over every sequence (the first one checked and its masks recorded), then
    `plan.warm_passes` warm passes on the last session; `nbytes` of the last compiled grammar
    after them. A first compile raising one of `unsupported` lands in `res.unsupported`, other
    errors of the engine in `res.error`."""
    res = res if res is not None else EngineRun()
    first = _FirstPass(walk, res)
    state: dict[str, Any] = {}

    def once(full: bool) -> tuple[float, float]:
        """One compile, session and first fill, then the rest of a pass when `full`: the
        seconds to the first mask and in all."""
        inspect = first if not res.compile_s else None
        cold: list[int] = []
        with no_gc():
            t0 = ns()
            compiled = compile()
            t1 = ns()
            s = session(compiled)
            t2 = ns()
            for k, ids in enumerate(walk.seqs if full else []):
                if k:
                    s.reset()
                bad = _walk(s, ids, cold, [], inspect, k)
                if bad is not None and inspect is not None:
                    res.rejected.append((k, bad, ids[bad]))
            if not full:
                t3 = ns()
                s.fill()
                cold.append(ns() - t3)
            t3 = ns()
        res.compile_s.append((t1 - t0) / 1e9)
        res.first_mask_s.append((t2 - t0 + cold[0]) / 1e9)
        if full:
            res.cold_fill_ns.extend(cold)
            state["s"], state["compiled"] = s, compiled
        return res.first_mask_s[-1], (t3 - t0) / 1e9

    lo, hi, budget_s = ((plan.compile_min, plan.compile_max, plan.compile_budget_s) if grammask
                        else (plan.peer_compile_min, plan.peer_compile_max,
                              plan.peer_compile_budget_s))
    try:
        n, spent, pass_spent = 0, 0.0, 0.0
        while n < lo or (n < hi and spent < budget_s):
            full = n == 0 or (n < plan.cold_passes and pass_spent < plan.pass_budget_s)
            to_mask, total = once(full)
            spent += to_mask
            pass_spent += total if full else 0.0
            n += 1
        s = state["s"]
        with no_gc():
            t0 = ns()
            for i in range(plan.warm_passes):
                if i and (ns() - t0) / 1e9 >= plan.pass_budget_s:
                    break
                for ids in walk.seqs:
                    s.reset()
                    _walk(s, ids, res.warm_fill_ns, res.accept_ns)
        if nbytes is not None:
            res.nbytes = nbytes(state["compiled"])
    except Exception as exc:  # an engine failing on one workload must not stop the benchmark
        if isinstance(exc, unsupported) and not res.compile_s:
            res.unsupported = str(exc)
        else:
            res.error = f"{type(exc).__name__}: {exc}"
    return res


def run_grammask_regex(vocab: Vocabulary, pattern: str, walk: Walk, plan: Plan) -> GrammaskRun:
    """grammask's regex run, plus precomputed compiles and sizes."""
    res = GrammaskRun()
    run_engine(lambda: compile_regex(pattern, vocab), GrammaskSession, walk, plan,
               grammask=True, res=res)
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
    return res
