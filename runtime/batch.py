"""The masks of a batch of sequences in one call, on several threads.

Invariant: every matcher of a batch writes only its own bitmask row, matchers and rows are
pairwise distinct (checked), and a matcher's fill reads the compiled grammar's shared tables,
which are safe to read and to complete from any thread (`compiled.py`). So threads never write
the same memory, and each row is exactly what `Matcher.fill_next_token_bitmask` writes alone.

The hot loop: the pushdown matchers of one table are filled by one compiled call
(`fill_many`), which reaches each recognizer's arrays through its header (their addresses,
`EarleyArrays.header`): no Python, no argument unboxing per sequence, and no GIL while it
runs. With `max_threads` > 1 the call spreads the sequences over Numba's threading layer
(`prange`), whose threads wait for work spinning rather than being woken, as a Python pool's
must (about 80 µs per hand-off on a shared 2-core machine: more than a whole batch of 64).
What a call needs of its matchers (headers, rows, groups) is a plan, kept for the next call
with the same matchers and rows while no recognizer's arrays moved, so a steady batch costs a
few attribute reads per sequence in Python. The DFA matchers of one grammar are one compiled
call too (`copy_many`: their states' stored rows, located by `DFATokenSets.headers`; the
states read at each call). A fill a compiled call cannot finish (a state without its token set
yet, arrays to grow, a rule to build) and every other matcher (healing, a token budget, after
EOS) are filled one by one, after them.

Threads and processes: Numba's threading layer starts at the first batch with threads (TBB,
OpenMP or its own workqueue, whichever is installed); one such batch runs at a time in a
process, and GNU OpenMP, once started, must not be used again in a child made by `fork`.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from .backends.dfa import DFABackend, copy_many
from .backends.pushdown import PushdownBackend, fill_many
from .bitmask import bitmask_view, bitmask_words
from .matcher import Matcher
from .pushdown.earley import EarleyArrays

__all__ = ["batch_fill_next_token_bitmask"]

_LAST = threading.local()  # the last plan made on this thread


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _threads(max_threads: Any, n: int) -> int:
    """The workers for a batch of n: `max_threads` (None: the CPUs), at most n, at least 1."""
    if max_threads is None:
        threads = _cpus()
    elif isinstance(max_threads, bool) or not isinstance(max_threads, (int, np.integer)):
        raise TypeError(f"max_threads must be an int or None, got {max_threads!r}")
    elif max_threads < 1:
        raise ValueError(f"max_threads must be at least 1, got {max_threads}")
    else:
        threads = int(max_threads)
    return max(1, min(threads, n, numba.config.NUMBA_NUM_THREADS))


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
    threads = _threads(max_threads, len(ms))
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
    return ms, array, rows, threads


@dataclass
class _Plan:
    """How a batch is filled: one compiled call per grammar (`fill_many` with the recognizer
    headers and rows of its pushdown matchers, `copy_many` with the states of its DFA ones),
    then the matchers filled one by one (healing, budgets). Kept for the next call on this
    thread with the same matchers, rows and threads while no recognizer's arrays moved
    (`EarleyArrays.relocations`); DFA states are read at each call."""

    matchers: tuple[Matcher, ...]
    given: tuple[Any, ...] | None
    threads: int
    relocations: int
    last_row: int
    pushdown: list[tuple[tuple[np.ndarray, ...], Any, np.ndarray, np.ndarray, list[int]]]
    dfa: list[tuple[Any, list[DFABackend], np.ndarray, list[int]]]
    singles: list[int]


def _plan(ms: list[Matcher], rows: list[int], given: tuple[Any, ...] | None,
          threads: int) -> _Plan:
    relocations = EarleyArrays.relocations
    pushdown: dict[int, tuple[tuple[np.ndarray, ...], Any, list[np.ndarray], list[int]]] = {}
    dfa: dict[int, tuple[Any, list[DFABackend], list[int]]] = {}
    singles: list[int] = []
    for i, m in enumerate(ms):
        backend = m.batch_backend()
        if isinstance(backend, PushdownBackend) and backend.batchable:
            g, sets, header = backend.batch_entry()
            group = pushdown.setdefault(id(g), (g, sets, [], []))
            group[2].append(header)
            group[3].append(i)
        elif isinstance(backend, DFABackend):
            dgroup = dfa.setdefault(id(backend.token_sets), (backend.token_sets, [], []))
            dgroup[1].append(backend)
            dgroup[2].append(i)
        else:
            singles.append(i)
    return _Plan(
        tuple(ms), given, threads, relocations, max(rows),
        [(g, sets, np.stack(headers), np.array([rows[i] for i in members], dtype=np.int64),
          members) for g, sets, headers, members in pushdown.values()],
        [(sets, backends, np.array([rows[i] for i in members], dtype=np.int64), members)
         for sets, backends, members in dfa.values()],
        singles)


def batch_fill_next_token_bitmask(matchers: Sequence[Matcher], bitmask: Any,
                                  indices: Sequence[int] | None = None, *,
                                  max_threads: int | None = 1) -> None:
    """Fill row `indices[i]` (default: row i) of `bitmask` with the mask of `matchers[i]`,
    as `matchers[i].fill_next_token_bitmask(bitmask, indices[i])` would; pushdown matchers
    in one compiled call per grammar, on up to `max_threads` threads (default 1; None: the
    CPUs this process may run on). Matchers of any grammars and kinds may be mixed; they
    must share the vocabulary size.

    Bad arguments (a matcher or a row twice, an index out of range, a bitmask of the wrong
    type, dtype or shape) raise before anything is written. A fill that raises (a budget)
    leaves its row unspecified; the other rows are filled, and the first such error is
    raised after them.
    """
    plan: _Plan | None = getattr(_LAST, "plan", None)
    given = None if indices is None else tuple(indices)
    if (plan is not None and plan.relocations == EarleyArrays.relocations
            and isinstance(matchers, (list, tuple)) and plan.matchers == tuple(matchers)
            and plan.given == given and (given is None or all(type(r) is int for r in given))
            and plan.threads == _threads(max_threads, len(plan.matchers))):
        ms = plan.matchers
        array = bitmask_view(bitmask, bitmask_words(ms[0].vocab_size))
        if plan.last_row >= array.shape[0]:
            raise ValueError(f"index {plan.last_row} out of range for a batch of "
                             f"{array.shape[0]}")
        rows = list(range(len(ms))) if given is None else list(given)
    else:
        checked, array, rows, threads = _checked(matchers, bitmask, indices, max_threads)
        if not checked:
            return
        plan = _LAST.plan = _plan(checked, rows, given, threads)
        ms = plan.matchers
    words = array.view(np.uint32)
    errors: list[BaseException] = []

    def one(i: int) -> None:
        try:
            ms[i].fill_next_token_bitmask(array, rows[i])
        except Exception as exc:  # noqa: BLE001 - raised once the batch is done
            errors.append(exc)

    if not array.flags.c_contiguous:  # rows apart from each other: no compiled call
        for i in range(len(ms)):
            one(i)
        if errors:
            raise errors[0]
        return
    for g, sets, headers, row_ids, members in plan.pushdown:
        if len(members) == 1:  # a call costs more than the matcher's own fill
            one(members[0])
            continue
        results = fill_many(g, sets, headers, words, row_ids,
                            min(plan.threads, len(members)))
        for j in np.flatnonzero(results).tolist():
            one(members[j])
    for dsets, backends, row_ids, members in plan.dfa:
        states = np.fromiter((b.state for b in backends), dtype=np.int64, count=len(backends))
        results = copy_many(dsets, states, array, row_ids, min(plan.threads, len(members)))
        for j in np.flatnonzero(results).tolist():
            one(members[j])
    for i in plan.singles:
        one(i)
    for i, m in enumerate(ms):  # after EOS: the EOS row, over what the table's fill wrote
        if m.is_terminated():
            one(i)
    if errors:
        raise errors[0]
