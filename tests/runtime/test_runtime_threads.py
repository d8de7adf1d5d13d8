"""One compiled grammar shared by many matchers on many threads: every walk matches its
single-threaded replay, on both backends."""
from __future__ import annotations

import hashlib
import os
import random
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

from grammask.compiler import compile_gbnf, compile_regex
from grammask.runtime import CompiledGrammar, Matcher, Vocabulary, allocate_token_bitmask

from ..support.grammars import RECORD_REGEX

# A recursive grammar: nested lists and sums, so the pushdown path is taken.
LISTS_GBNF = r'''
root ::= item
item ::= num | "[" ( item ( "," item )* )? "]" | "(" item "+" item ")"
num ::= [0-9] [0-9]?
'''


def _digest(rows: np.ndarray) -> bytes:
    """Masks compared by digest: a 10 s walk keeps tens of thousands of them."""
    return hashlib.blake2b(rows.tobytes(), digest_size=16).digest()


def walk(compiled: CompiledGrammar, seed: int, steps: int) -> Iterator[tuple]:
    """A random walk of one matcher (accept an allowed or any token, roll back, fork, verify
    a draft, reset), yielding after each step what it saw: the same seed gives the same walk
    iff every mask and answer is the same."""
    rng = random.Random(seed)
    m = Matcher(compiled, max_rollback_tokens=8)
    bm = allocate_token_bitmask(2, compiled.vocab.size)
    for _ in range(steps):
        row = rng.randrange(2)
        m.fill_next_token_bitmask(bm, row)
        allowed = np.flatnonzero(np.unpackbits(bm[row].view(np.uint8), bitorder="little"))
        r = rng.random()
        if m.is_terminated() or r < 0.1:
            n = rng.randint(0, m.num_rollback_steps)
            m.rollback(n)
            event: tuple = ("rollback", n)
        elif r < 0.75:
            tid = int(allowed[rng.randrange(len(allowed))])
            event = ("allowed", tid, m.accept_token(tid))
        elif r < 0.93:
            tid = rng.randrange(compiled.vocab.size)
            event = ("any", tid, m.accept_token(tid))
        elif r < 0.95:
            m = m.fork()
            event = ("copy",)
        elif r < 0.97:  # a speculative draft: verified and masked, the matcher unchanged
            draft = [int(allowed[rng.randrange(len(allowed))]) for _ in range(3)]
            rows = allocate_token_bitmask(len(draft) + 1, compiled.vocab.size)
            event = ("draft", m.validate_tokens(draft), m.fill_draft_bitmasks(draft, rows),
                     _digest(rows))
        else:
            m.reset()
            event = ("reset",)
        yield event, _digest(bm[row]), m.can_terminate(), m.num_rollback_steps


SECONDS = float(os.environ.get("GRAMMASK_THREAD_SECONDS", "10"))
"""How long the threads walk (at least 60 steps each)."""


@pytest.mark.parametrize("kind", ["dfa", "pushdown"])
def test_many_matchers_on_many_threads_match_a_single_threaded_replay(kind: str) -> None:
    vocab = Vocabulary.default()
    # Compiled here, not cached: every thread races to compute the lazy token sets.
    compiled = compile_regex(RECORD_REGEX, vocab) if kind == "dfa" else compile_gbnf(LISTS_GBNF, vocab)
    assert compiled.kind == kind
    n_threads, per_thread, endless = 8, 4, 1 << 30
    logs: dict[int, list[tuple]] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(n_threads)
    deadline: list[float] = []

    def run(t: int) -> None:
        try:
            seeds = [t * per_thread + j for j in range(per_thread)]
            walks = [walk(compiled, s, endless) for s in seeds]
            out: list[list[tuple]] = [[] for _ in seeds]
            if start.wait() == 0:
                deadline.append(time.monotonic() + SECONDS)
            start.wait()
            while len(out[0]) < 60 or time.monotonic() < deadline[0]:
                for j, w in enumerate(walks):
                    out[j].append(next(w))
            logs.update(zip(seeds, out))
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    assert sorted(logs) == list(range(n_threads * per_thread))
    for seed, log in logs.items():
        assert log == list(walk(compiled, seed, len(log))), seed
    taken = [e[0] for log in logs.values() for e in log if e[0][0] == "allowed"]
    assert len(taken) > 100 and all(accepted for _, _, accepted in taken)
