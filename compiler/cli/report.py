"""What `grammask compile` reports about a compiled grammar's token sets: computing them all
now (with a progress bar on a terminal for the pushdown runtime, whose states each cost a trie
walk), and a one-line summary of their sizes."""
from __future__ import annotations

import statistics
import sys
import time

from ...runtime.compiled import CompiledGrammar
from ...runtime.dfa.token_sets import DFATokenSets
from ...runtime.pushdown.token_sets import PushdownTokenSets
from ..pipeline import precompute_token_sets as precompute
from ..support.limits import Limits

__all__ = ["precompute_token_sets", "token_sets_line"]

_BAR = 30


def precompute_token_sets(compiled: CompiledGrammar, limits: Limits) -> float:
    """Compute every token set now, within `limits`; the seconds it took. For a pushdown
    grammar (slower: a trie walk per state) with a progress bar on stderr when it is a
    terminal, and a one-line summary there either way."""
    sets = compiled.token_sets
    t0 = time.perf_counter()
    if isinstance(sets, DFATokenSets):
        precompute(compiled, limits)
        return time.perf_counter() - t0
    sys.stdout.flush()
    tty = sys.stderr.isatty()
    drawn_at, width = 0.0, 0

    def progress(done: int, total: int) -> None:
        nonlocal drawn_at, width
        now = time.perf_counter()
        if done < total and now - drawn_at < 0.1:
            return
        filled = _BAR * done // total
        line = f"token sets [{'#' * filled}{'.' * (_BAR - filled)}] {done:,}/{total:,} states"
        print("\r" + line, end="", file=sys.stderr, flush=True)
        drawn_at, width = now, len(line)

    precompute(compiled, limits, progress if tty else None)
    seconds = time.perf_counter() - t0
    summary = f"token sets: {sets.n_computed:,} states computed in {seconds:.2f} s"
    print(("\r" + summary.ljust(width)) if tty else summary, file=sys.stderr, flush=True)
    return seconds


def token_sets_line(sets: DFATokenSets | PushdownTokenSets, seconds: float) -> str:
    """How many token sets were computed in `seconds`, their memory, and how many tokens
    they allow per state."""
    done = f"{sets.n_computed:,} states in {seconds * 1e3:.1f} ms"
    if isinstance(sets, DFATokenSets):
        allowed = [sets.get(s).n_allowed for s in range(sets.dfa.n_states)]
        return (f"{done}, {sets.nbytes():,} bytes; allowed tokens per state: min"
                f" {min(allowed):,}, median {statistics.median(allowed):,.0f}, max"
                f" {max(allowed):,}")
    n = max(sets.n_computed, 1)
    return (f"{done}, {sets.nbytes():,} bytes; tokens per state on average:"
            f" {sets.n_accepted / n:,.0f} accepted, {sets.n_uncertain / n:,.0f} uncertain"
            " (checked against the stack when a mask is filled)")
