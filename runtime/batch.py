"""The masks of a batch of sequences in one call, on several threads.

Invariant: every matcher of a batch writes only its own bitmask row, matchers and rows are
pairwise distinct (checked), and a matcher's fill reads the compiled grammar's shared tables,
which are safe to read and to complete from any thread (`compiled.py`). So threads never write
the same memory, and each row is exactly what `Matcher.fill_next_token_bitmask` writes alone.

Threads: the matchers are dealt to at most `max_threads` workers in turn (worker w takes
matchers w, w + t, w + 2t, ...: a mixed batch spreads its costly fills), the calling thread
being one of them, the others from one process-wide pool. A fill's kernels release the GIL
(`jit.py`), so the workers overlap there; but the Python around each fill (the matcher's
checks, the backend's dispatch, Numba unboxing some twenty arrays per kernel call: about 3 µs)
holds it, and on the fills a server mostly makes (a warm state: a stored row, or a short
recheck of stack-dependent tokens, 3-10 µs in all) that part dominates, so a second thread
only adds GIL hand-offs: 1.5-2 times slower on JSON and arithmetic batches of 8 to 256
(`bench/bench_serving.py`). Hence one thread by default. Batches scale only once the per
matcher dispatch moves into compiled code (one call per worker over the Earley state of all
its matchers), which the matchers' separately owned arrays do not allow today.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from .bitmask import bitmask_view, bitmask_words
from .matcher import Matcher

__all__ = ["batch_fill_next_token_bitmask"]

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _executor(workers: int) -> ThreadPoolExecutor:
    """The process-wide pool, with at least `workers` threads."""
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < workers:
            old, _pool, _pool_size = _pool, ThreadPoolExecutor(
                max_workers=workers, thread_name_prefix="grammask-fill"), workers
            if old is not None:
                old.shutdown(wait=False)
        return _pool


def _checked(matchers: Any, bitmask: Any, indices: Any,
             max_threads: Any) -> tuple[list[Matcher], np.ndarray, list[int], int]:
    if isinstance(matchers, Matcher) or not isinstance(matchers, Sequence):
        raise TypeError(f"matchers must be a sequence of Matcher, got {type(matchers).__name__}")
    ms = list(matchers)
    for i, m in enumerate(ms):
        if not isinstance(m, Matcher):
            raise TypeError(f"matchers[{i}] is a {type(m).__name__}, not a Matcher")
    if len({id(m) for m in ms}) != len(ms):
        raise ValueError("a matcher appears twice in the batch (one sequence, one row)")
    if indices is None:
        rows = list(range(len(ms)))
    else:
        rows = []
        for i, r in enumerate(indices):
            if isinstance(r, bool) or not isinstance(r, (int, np.integer)):
                raise TypeError(f"indices[{i}] must be an int, got {type(r).__name__} {r!r}")
            rows.append(int(r))
        if len(rows) != len(ms):
            raise ValueError(f"{len(rows)} indices for {len(ms)} matchers")
        if len(set(rows)) != len(rows):
            raise ValueError("indices repeat a row: two matchers would write it")
    if max_threads is None:
        threads = _cpus()
    elif isinstance(max_threads, bool) or not isinstance(max_threads, (int, np.integer)):
        raise TypeError(f"max_threads must be an int or None, got {max_threads!r}")
    elif max_threads < 1:
        raise ValueError(f"max_threads must be at least 1, got {max_threads}")
    else:
        threads = int(max_threads)
    if not ms:
        return ms, bitmask, rows, 1
    words = {bitmask_words(m.vocab_size) for m in ms}
    if len(words) != 1:
        raise ValueError("the matchers' vocabularies differ in size: one bitmask cannot hold "
                         "their rows")
    array = bitmask_view(bitmask, words.pop())
    for r in rows:
        if not 0 <= r < array.shape[0]:
            raise ValueError(f"index {r} out of range for a batch of {array.shape[0]}")
    return ms, array, rows, min(threads, len(ms))


def batch_fill_next_token_bitmask(matchers: Sequence[Matcher], bitmask: Any,
                                  indices: Sequence[int] | None = None, *,
                                  max_threads: int | None = 1) -> None:
    """Fill row `indices[i]` (default: row i) of `bitmask` with the mask of `matchers[i]`,
    as `matchers[i].fill_next_token_bitmask(bitmask, indices[i])` would, on up to
    `max_threads` threads (default 1; None: the CPUs this process may run on; see the
    module docstring for when more pay). Matchers of any grammars and kinds may be mixed;
    they must share the vocabulary size.

    Bad arguments (a matcher or a row twice, an index out of range, a bitmask of the wrong
    type, dtype or shape) raise before anything is written. A fill that raises (a budget)
    leaves its row unspecified; the other rows are filled, and the first such error is
    raised after them.
    """
    ms, array, rows, threads = _checked(matchers, bitmask, indices, max_threads)
    if threads <= 1:
        for m, r in zip(ms, rows):
            m.fill_next_token_bitmask(array, r)
        return
    errors: list[BaseException] = []

    def work(first: int) -> None:
        for m, r in zip(ms[first::threads], rows[first::threads]):
            try:
                m.fill_next_token_bitmask(array, r)
            except Exception as exc:  # noqa: BLE001 - raised once the batch is done
                errors.append(exc)

    pool = _executor(threads - 1)
    futures: list[Future[None]] = [pool.submit(work, w) for w in range(1, threads)]
    work(0)
    for f in futures:
        f.result()
    if errors:
        raise errors[0]
