"""`grammask warmup`: compile every Numba kernel now and say where the compiled code is kept.

grammask's kernels are compiled by Numba the first time each is needed and cached on disk
(`runtime/jit.py`; the folder is chosen in `grammask/__init__.py`: `NUMBA_CACHE_DIR`, else a
per-user cache folder); with an empty cache that costs up to seconds per kernel, on the first
compiles and masks of a process. `warmup` pays it all at once with a progress bar: in a
container image's build step (with `NUMBA_CACHE_DIR` inside the image), on a new machine, or
before timing anything. With a warm cache it only loads each kernel.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from ... import numba_cache_dir
from ...runtime.jit import RUNTIME_KERNEL_MODULES, declared, warm_up
from .report import ProgressBar

__all__ = ["COMPILER_KERNEL_MODULES", "Warmup", "run_warmup"]

COMPILER_KERNEL_MODULES = (
    "grammask.compiler.automata.flat_ir",
    "grammask.compiler.automata.hashing",
    "grammask.compiler.automata.thompson",
    "grammask.compiler.automata.subset_kernel",
    "grammask.compiler.automata.dfa",
    "grammask.compiler.automata.minimize",
    "grammask.compiler.automata.counted",
    "grammask.compiler.automata.language_ops",
    "grammask.compiler.frontends.json_schema.strings",
    "grammask.compiler.frontends.json_schema.excluded_names",
)
"""The compiler's modules that define kernels (`tests/runtime/test_jit.py` checks the list)."""


@dataclass(frozen=True)
class Warmup:
    """What `run_warmup` did: kernels, how many were compiled now (the others were loaded from
    the cache or already in this process), the seconds, and the cache folder."""

    kernels: int
    compiled: int
    seconds: float
    cache_dir: str | None

    def summary(self) -> str:
        """One line for the terminal."""
        where = self.cache_dir or "Numba's default (no writable folder was found)"
        return (f"grammask warmup: {self.kernels} kernels ready in {self.seconds:.1f} s"
                f" ({self.compiled} compiled now, {self.kernels - self.compiled} from the"
                f" cache); cache: {where}")


def run_warmup(show_progress: bool = True) -> Warmup:
    """Compile or load every kernel of the runtime and the compiler."""
    bar = ProgressBar("compiling kernels", "kernels")
    t0 = time.perf_counter()
    n = warm_up((*RUNTIME_KERNEL_MODULES, *COMPILER_KERNEL_MODULES),
                bar.update if show_progress else None)
    seconds = time.perf_counter() - t0
    compiled = sum(1 for k in declared() if sum(k.stats.cache_misses.values()))
    result = Warmup(n, compiled, seconds, numba_cache_dir)
    if show_progress:
        bar.finish(result.summary())
    return result

