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

__all__ = ["ProgressBar", "precompute_token_sets", "token_sets_line"]

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
    bar = ProgressBar("token sets", "states")
    precompute(compiled, limits, bar.update if bar.tty else None)
    seconds = time.perf_counter() - t0
    bar.finish(f"token sets: {sets.n_computed:,} states computed in {seconds:.2f} s")
    return seconds


class ProgressBar:
    """A one-line progress bar on stderr, redrawn at most ten times a second, drawn only when
    stderr is a terminal; `finish` replaces it with a summary line (printed either way)."""

    def __init__(self, label: str, unit: str) -> None:
        sys.stdout.flush()
        self.label, self.unit = label, unit
        self.tty = sys.stderr.isatty()
        self._drawn_at, self._width = 0.0, 0

    def update(self, done: int, total: int, what: str = "") -> None:
        """Show `done` of `total` (and `what`, shortened), if it is time to redraw."""
        now = time.perf_counter()
        if not self.tty or (done < total and now - self._drawn_at < 0.1):
            return
        filled = _BAR * done // max(total, 1)
        line = (f"{self.label} [{'#' * filled}{'.' * (_BAR - filled)}] {done:,}/{total:,}"
                f" {self.unit}" + (f" {what[-40:]}" if what else ""))
        print("\r" + line.ljust(self._width), end="", file=sys.stderr, flush=True)
        self._drawn_at, self._width = now, len(line)

    def finish(self, summary: str) -> None:
        """Replace the bar by `summary`."""
        print(("\r" + summary.ljust(self._width)) if self.tty else summary, file=sys.stderr,
              flush=True)


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
