"""The `Matcher` backend of pushdown grammars: an Earley recognizer walked one token at a time.

Invariant: the bytes accepted so far always leave a non-empty last Earley set, and every item
the recognizer keeps can be completed (the rule automata are trimmed and every rule derives a
string), so the text is a viable prefix and the mask is never empty before termination. The
state is one `EarleyArrays` (see `earley.py`: sets are only appended or truncated), with set 0
the closure of the start rule; a history entry is the number of sets before a step, and
rolling back truncates to it.

The hot loop relies on it: a token's bytes are pushed straight from the vocabulary's flat
spelling (`vocab.spelling`) in one `push_bytes` call, and a fill is one call of the table's fill
kernel (`fill_kernel`) over the last set, with the scratch rows and candidate buffers kept
here between calls. Every kernel call goes
through `EarleyArrays.run`, which grows the arrays within the `RuntimeLimits` and calls again,
so an OVERFLOW is paid for once per doubling, never per step. A step that reaches a rule the
shared table has not built yet (`RuleNeeded`) has the token sets extend the table (`need`) and
runs again on it: once per rule per compiled grammar, whichever matcher meets it first.
A grammar with one-token steps (`pushdown/one_token.py`) reads a token as each step it can be
as well, and fills one by one (never in a batch call).
"""
from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from ..compiled import CompiledGrammar
from ..completion import CompletionCosts
from ..jit import on_threads
from ..pushdown.budget import WITHIN, candidate_buffers, fill_budget
from ..pushdown.costs import MEMO_SLOTS, TAIL_SETS, earley_cost
from ..pushdown.counters import N_SETS
from ..pushdown.earley import (
    OVERFLOW,
    EarleyArrays,
    RuleNeeded,
    earley_start,
    next_bytes,
    push_bytes,
)
from ..pushdown.kernels import NEED, fill_kernel, fill_rows, fill_rows_parallel
from ..pushdown.one_token import rebuild_last_set
from ..pushdown.token_sets import PushdownTokenSets
from ..run_limits import RuntimeLimits

_SCRATCH = threading.local()  # the scratch rows of the batches this thread last filled


class PushdownBackend:
    """`Backend` of a pushdown `CompiledGrammar`."""

    def __init__(self, compiled: CompiledGrammar, limits: RuntimeLimits) -> None:
        table = compiled.pushdown
        assert table is not None
        self._sets = cast(PushdownTokenSets, compiled.token_sets)
        self._g = self._sets.g
        spelling = compiled.spelling
        self._token_data = spelling.data
        self._token_offsets = spelling.offsets
        self._scratch = np.zeros(self._sets.n_words, dtype=np.uint32)
        self._earley = EarleyArrays.empty(self._sets.table.n_states)
        self.set_limits(limits)
        self._run("the start", earley_start, np.int32(table.rule_start[table.start_rule]))
        self._compiled = compiled
        self._costs: tuple[CompletionCosts, tuple[np.ndarray, ...]] | None = None
        self._steps = compiled.one_token_steps

    def set_limits(self, limits: RuntimeLimits) -> None:
        self._limits = limits
        self._earley.limit(limits)

    def _run(self, what: str, kernel: Callable[..., Any], *args: Any) -> Any:
        """`EarleyArrays.run` on the table, extended by each rule a step needs."""
        while True:
            try:
                return self._earley.run(self._limits, what, kernel, self._g, *args)
            except RuleNeeded as need:
                rule = need.rule
            self._extend(rule)

    def _extend(self, rule: int) -> None:
        self._g = self._sets.need(rule)
        self._earley.cover(self._sets.table.n_states)

    def fill(self, row: np.ndarray) -> None:
        words = row.view(np.uint32)
        sets = self._sets
        while True:
            try:
                r = self._earley.run(self._limits, "fill_next_token_bitmask",
                                     fill_kernel(self._g), self._g, sets.snapshot, sets.trie_args, sets.eos_ids,
                                     words, self._scratch)
            except RuleNeeded as need:
                rule = need.rule
            else:
                if r == 0:
                    break
                sets.get(NEED - r)
                continue
            self._extend(rule)
        if self._steps is not None:
            self._fill_steps(words, None)

    def _fill_steps(self, words: np.ndarray, bound: int | None) -> None:
        """OR into `words` the tokens of each one-token step the last set can take (with
        `bound`, only where the text can then end within `bound` more tokens)."""
        steps = self._steps
        assert steps is not None
        e = self._earley
        n0 = e.n_sets
        for j in range(len(steps.excluded)):
            if self._push(steps.markers, 4 * j, 4 * j + 4, 1, "fill_next_token_bitmask"):
                try:  # the marker's walk is dropped even when the cost raises (a budget)
                    ok = bound is None or self.completion_cost() <= bound
                finally:
                    e.truncate(n0)
                if ok:
                    np.bitwise_or(words, steps.allowed[j], out=words)

    @property
    def batchable(self) -> bool:
        """Whether `fill_many` can fill this recognizer's row (not with one-token steps)."""
        return self._steps is None

    def batch_entry(self) -> tuple[tuple[np.ndarray, ...], PushdownTokenSets, np.ndarray]:
        """(the table arrays this recognizer walks, the token sets, its `EarleyArrays.header`):
        what `fill_many` needs to fill its row along with others of the same table arrays,
        good while `EarleyArrays.relocations` is unchanged."""
        return self._g, self._sets, self._earley.header

    def _push(self, data: np.ndarray, begin: int, end: int, token: int, what: str) -> bool:
        """Push data[begin:end] all or nothing, within the limits: one token's bytes (`token`
        1) or text (0; `earley.py`'s token bounds)."""
        return bool(self._run(what, push_bytes, data, begin, end, token) == 1)

    def advance_token(self, token_id: int) -> bool:
        if self._steps is not None:
            return self._advance_steps(token_id)
        # `_push` inlined (but for a rule not built yet): this is the hot step.
        begin, end = int(self._token_offsets[token_id]), int(self._token_offsets[token_id + 1])
        try:
            return begin < end and self._earley.run(self._limits, "accept", push_bytes,
                                                    self._g, self._token_data, begin, end,
                                                    1) == 1
        except RuleNeeded:
            pass
        return self._push(self._token_data, begin, end, 1, "accept")

    def _advance_steps(self, token_id: int) -> bool:
        """`advance_token` where the token may also be one-token steps: each walk pushed from
        the same set, the last set rebuilt as their union (`pushdown/one_token.py`)."""
        steps = self._steps
        assert steps is not None
        e = self._earley
        n0 = e.n_sets
        walks: list[tuple[int, np.ndarray]] = []  # (step, its last set's items)
        for j in steps.reads(token_id):
            if self._push(steps.markers, 4 * j, 4 * j + 4, 1, "accept"):
                k = e.n_sets - 1
                walks.append((j, e.items[e.sets[k, 0]:e.sets[k + 1, 0], :2].copy()))
                e.truncate(n0)
        begin, end = int(self._token_offsets[token_id]), int(self._token_offsets[token_id + 1])
        if not (begin < end and self._push(self._token_data, begin, end, 1, "accept")):
            if not walks:
                return False
            j = walks.pop(0)[0]  # the first step's walk again: the union of it and the rest
            self._push(steps.markers, 4 * j, 4 * j + 4, 1, "accept")
            if not walks:
                return True
        k = e.n_sets - 1
        seeds = [e.items[e.sets[k, 0]:e.sets[k + 1, 0], :2].copy()]
        for _, items in walks:
            items[items[:, 1] == n0 + 3, 1] = k  # the marker walk's last set is the union's
            seeds.append(items)
        try:
            self._run("accept", rebuild_last_set, np.ascontiguousarray(
                np.concatenate(seeds), dtype=np.int32))
        except BaseException:
            e.truncate(n0)
            raise
        return True

    def advance_bytes(self, data: bytes) -> bool:
        arr = np.frombuffer(data, dtype=np.uint8)
        return self._push(arr, 0, len(arr), 0, "accept")

    def is_complete(self) -> bool:
        e = self._earley
        return bool(e.sets[e.n_sets - 1, 1] == 1)

    def snapshot(self) -> int:
        return int(self._earley.counters[N_SETS])

    def restore(self, entry: int) -> None:
        self._earley.truncate(entry)
        if self._costs is not None:
            bstate = self._costs[1][4]
            bstate[TAIL_SETS] = min(int(bstate[TAIL_SETS]), entry)

    def copy(self) -> PushdownBackend:
        other = copy.copy(self)
        other._earley = self._earley.copy()
        other._scratch = np.zeros_like(self._scratch)
        if self._costs is not None:
            other._costs = (self._costs[0], tuple(a if i == 0 else a.copy()
                                                  for i, a in enumerate(self._costs[1])))
        return other

    def _cost_args(self) -> tuple[CompletionCosts, tuple[np.ndarray, ...]]:
        """The grammar's completion costs and this recognizer's `costs` arrays
        (`pushdown/costs.py`), made on first use; `tails` grown to the items' capacity.
        Every rule is built first, and the recognizer moved onto the complete table."""
        if self._costs is None:
            shared = self._compiled.completion_costs
            self._g = self._sets.g
            self._earley.cover(self._sets.table.n_states)
            self._costs = (shared, (shared.cost, np.zeros(self._earley.capacity, np.int64),
                                    np.zeros((MEMO_SLOTS, 4), np.int64),
                                    np.zeros((self._sets.table.n_rules, 2), np.int64),
                                    np.zeros(4, np.int64)))
        shared, arrays = self._costs
        if len(arrays[1]) < self._earley.capacity:
            tails = np.zeros(self._earley.capacity, np.int64)
            tails[:len(arrays[1])] = arrays[1]
            self._costs = shared, arrays = (shared, arrays[:1] + (tails,) + arrays[2:])
        return shared, arrays

    def completion_cost(self) -> int:
        """The fewest steps that finish the text from here (`pushdown/costs.py`)."""
        return int(earley_cost(self._g, self._earley.kernel_args(), self._cost_args()[1]))

    def fill_within(self, row: np.ndarray, bound: int) -> None:
        """`fill` keeping only the tokens after which the text can end within `bound` more
        tokens (`pushdown/budget.py`)."""
        words = row.view(np.uint32)
        sets = self._sets
        buffers = candidate_buffers(sets.trie, sets.vocab.size)
        while True:
            shared, arrays = self._cost_args()  # tails follow the arrays' growth
            r = fill_budget(self._g, self._earley.kernel_args(), sets.snapshot, sets.trie_args,
                            sets.eos_ids, words, self._scratch, arrays, shared.within, *buffers,
                            bound)
            if r == 0:
                if self._steps is not None:
                    self._fill_steps(words, bound)
                return
            if r == OVERFLOW:
                self._earley.overflowed(self._limits, "fill_next_token_bitmask")
            elif r >= WITHIN:
                shared.within[r - WITHIN] = sets.within_cost(r - WITHIN, shared.cost)
            else:
                sets.get(NEED - r)

    def jump_forward_bytes(self, max_bytes: int) -> bytes:
        e = self._earley
        n0 = e.n_sets
        out = bytearray()
        seen = np.zeros(256, dtype=np.bool_)
        one = np.zeros(1, dtype=np.uint8)
        try:
            while len(out) < max_bytes and not self.is_complete():
                seen[:] = False
                if next_bytes(self._g, e.kernel_args(), seen) != 1:
                    break
                one[0] = int(np.flatnonzero(seen)[0])
                if not self._push(one, 0, 1, 0, "find_jump_forward_bytes"):
                    break
                out.append(int(one[0]))
        finally:
            e.truncate(n0)
        return bytes(out)

    def memory_bytes(self) -> int:
        costs = 0 if self._costs is None else sum(a.nbytes for a in self._costs[1][1:])
        return self._earley.nbytes() + self._scratch.nbytes + costs


def fill_many(g: tuple[np.ndarray, ...], sets: PushdownTokenSets, headers: np.ndarray,
              words: np.ndarray, row_ids: np.ndarray, threads: int = 1) -> np.ndarray:
    """Fill row row_ids[i] of `words` (a whole bitmask as uint32) for the recognizers of
    `headers` (`batch_entry`, all with the table arrays `g` of `sets`) in one call that holds
    no GIL, on `threads` of Numba's threads; their results (0: filled; else the row is to
    be filled by the recognizer's own `fill`, which extends, grows or raises as that needs)."""
    results = np.zeros(len(headers), dtype=np.int64)
    scratch = getattr(_SCRATCH, "rows", None)
    if scratch is None or scratch.shape[0] < threads or scratch.shape[1] != sets.n_words:
        scratch = _SCRATCH.rows = np.zeros((threads, sets.n_words), dtype=np.uint32)
    args = (g, sets.snapshot, sets.trie_args, sets.eos_ids, headers, words, row_ids, scratch,
            results)
    if threads == 1:
        fill_rows(*args)
    else:
        on_threads(fill_rows_parallel, threads, *args)
    return results
