"""Cold start of grammask in fresh interpreters: import, vocabulary, compile, first mask.

`run_cold_start(pattern)` makes an empty Numba cache directory and runs this file as a child
process twice with `NUMBA_CACHE_DIR` pointing at it: first with the cache empty (every
`@njit(cache=True)` kernel compiles and is written there), then with it warm (kernels load from
it). The source tree's own `__pycache__` is never touched: with `NUMBA_CACHE_DIR` set, Numba
reads and writes only that directory.

As a child (`python cold_start.py --child PATTERN`) it prints one JSON object of phase times in
seconds: `import` (grammask.runtime + grammask.compiler), `vocabulary` (Vocabulary.default()),
`compile` (compile_regex, lazy), `first_mask` (Matcher + first fill_next_token_bitmask), and
`compile_again` (the same compile once more in that process: what is left once the one-time,
per-process and per-vocabulary setup is done).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

PHASES = ("import", "vocabulary", "compile", "first_mask", "compile_again")


@dataclass
class ColdStartRun:
    """Phase times of one child, and its whole wall time (interpreter start included)."""

    label: str
    phases: dict[str, float]
    process_s: float


def _child(pattern: str) -> None:
    t0 = time.perf_counter()
    import grammask.compiler  # noqa: F401
    import grammask.runtime
    t1 = time.perf_counter()
    vocab = grammask.runtime.Vocabulary.default()
    t2 = time.perf_counter()
    compiled = grammask.compiler.compile_regex(pattern, vocab)
    t3 = time.perf_counter()
    matcher = grammask.runtime.Matcher(compiled)
    bitmask = grammask.runtime.allocate_token_bitmask(1, vocab.size)
    matcher.fill_next_token_bitmask(bitmask, 0)
    t4 = time.perf_counter()
    grammask.compiler.compile_regex(pattern, vocab)
    t5 = time.perf_counter()
    print(json.dumps({"import": t1 - t0, "vocabulary": t2 - t1, "compile": t3 - t2,
                      "first_mask": t4 - t3, "compile_again": t5 - t4}))


def _run_child(pattern: str, env: dict[str, str], label: str) -> ColdStartRun:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", pattern],
                          env=env, capture_output=True, text=True, timeout=600, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"cold-start child failed ({label}): {proc.stderr.strip()[-2000:]}")
    return ColdStartRun(label, json.loads(proc.stdout.strip().splitlines()[-1]), wall)


def run_cold_start(pattern: str, repeats: int = 1) -> list[ColdStartRun]:
    """Cache-empty then cache-warm children, `repeats` times each with a new empty cache.

    With `repeats > 1` the phases reported are the per-phase medians over the repeats.
    """
    empties: list[ColdStartRun] = []
    warms: list[ColdStartRun] = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="grammask-numba-cache-") as cache_dir:
            env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, "PYTHONDONTWRITEBYTECODE": "1"}
            empties.append(_run_child(pattern, env, "cache empty"))
            warms.append(_run_child(pattern, env, "cache warm"))
    return [_median_run(empties), _median_run(warms)]


def _median_run(runs: list[ColdStartRun]) -> ColdStartRun:
    def med(xs: list[float]) -> float:
        s = sorted(xs)
        n = len(s)
        return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2

    return ColdStartRun(runs[0].label, {p: med([r.phases[p] for r in runs]) for p in PHASES},
                        med([r.process_s for r in runs]))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        _child(sys.argv[2])
    else:
        for run in run_cold_start(sys.argv[1] if len(sys.argv) > 1 else r'\{"age": [0-9]+\}'):
            print(run)
