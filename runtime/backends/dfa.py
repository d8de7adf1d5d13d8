"""The `Matcher` backend of DFA grammars: one state of a trimmed DFA.

Invariant: `state` is a live state of the compiled grammar's `DFATable` (reachable and able to
reach acceptance, as the table is trimmed), so the text walked so far is a viable prefix. The
DFA is held twice: as numpy arrays for `walk_bytes`, and as Python lists (`transition_lists`:
transitions[state][class], byte_class[byte], accepting[state]) for walking a short token
without a call into compiled code; the lists are made on the first step of the grammar's first
matcher, not before its first mask. A history entry is the state before a step.

The hot loop relies on it: a token of at most 64 bytes is walked through the lists (a few list
lookups per byte), a longer one in `walk_bytes`; filling a row copies the state's stored row
(`DFATokenSets.get`). A step is constant work per byte, so `RuntimeLimits` bound nothing here.
"""
from __future__ import annotations

import copy
from typing import cast

import numpy as np

from ..compiled import CompiledGrammar
from ..completion import CompletionCosts
from ..dfa.kernels import copy_rows, copy_rows_parallel, walk_bytes
from ..dfa.token_sets import DFATokenSets
from ..jit import on_threads
from ..run_limits import RuntimeLimits


class DFABackend:
    """`Backend` of a DFA `CompiledGrammar`."""

    def __init__(self, compiled: CompiledGrammar, limits: RuntimeLimits) -> None:
        dfa = compiled.dfa
        assert dfa is not None
        self._dfa = dfa
        self._compiled = compiled
        self._sets = cast(DFATokenSets, compiled.token_sets)
        self._tokens = compiled.spelling.list
        self._state = dfa.start
        self._costs: CompletionCosts | None = None

    @property
    def state(self) -> int:
        """The DFA state of the text so far."""
        return self._state

    @property
    def token_sets(self) -> DFATokenSets:
        return self._sets

    def fill(self, row: np.ndarray) -> None:
        self._sets.get(self._state).fill(row)

    def _walk(self, data: bytes) -> int:
        if len(data) > 64:
            dfa = self._dfa
            arr = np.frombuffer(data, dtype=np.uint8)
            return int(walk_bytes(dfa.transitions, dfa.byte_class, arr, 0, len(arr), self._state))
        s = self._state
        tl, bc, _ = self._compiled.transition_lists
        for b in data:
            s = tl[s][bc[b]]
            if s < 0:
                return -1
        return s

    def advance_bytes(self, data: bytes) -> bool:
        nxt = self._walk(data)
        if nxt < 0:
            return False
        self._state = nxt
        return True

    def advance_token(self, token_id: int) -> bool:
        data = self._tokens[token_id]
        nxt = self._walk(data) if data else -1
        if nxt < 0:
            return False
        self._state = nxt
        return True

    def _cost_table(self) -> CompletionCosts:
        if self._costs is None:
            self._costs = self._compiled.completion_costs
        return self._costs

    def completion_cost(self) -> int:
        """The fewest steps that finish the text from here (`completion.py`)."""
        return int(self._cost_table().cost[self._state])

    def fill_within(self, row: np.ndarray, bound: int) -> None:
        """`fill` keeping only the tokens after which the text can end within `bound` more
        tokens: the stored row when no state costs more, else a bounded row (kept per state
        and bound, `CompletionCosts.rows`)."""
        costs = self._cost_table()
        if bound >= costs.max_cost:
            self.fill(row)
            return
        kept = costs.kept_row(self._state, bound)
        if kept is None:
            kept = self._sets.bounded(self._state, costs.cost, bound)
            costs.keep_row(self._state, bound, kept)
        np.copyto(row, kept)

    def is_complete(self) -> bool:
        return bool(self._dfa.accepting[self._state])

    def snapshot(self) -> int:
        return self._state

    def restore(self, entry: int) -> None:
        self._state = entry

    def copy(self) -> DFABackend:
        return copy.copy(self)

    def set_limits(self, limits: RuntimeLimits) -> None:
        """Nothing to bound: a DFA step is constant work per byte."""

    def jump_forward_bytes(self, max_bytes: int) -> bytes:
        tl, bc, accepting = self._compiled.transition_lists
        classes: list[list[int]] = [[] for _ in range(self._dfa.n_classes)]
        for b, c in enumerate(bc):
            classes[c].append(b)
        out = bytearray()
        s = self._state
        while len(out) < max_bytes and not accepting[s]:
            moves = [c for c, t in enumerate(tl[s]) if t >= 0]
            if len(moves) != 1 or len(classes[moves[0]]) != 1:
                break
            out.append(classes[moves[0]][0])
            s = tl[s][bc[out[-1]]]
        return bytes(out)

    def memory_bytes(self) -> int:
        """Nothing beyond the state number: the tables belong to the compiled grammar."""
        return 0


def copy_many(sets: DFATokenSets, states: np.ndarray, array: np.ndarray, row_ids: np.ndarray,
              threads: int = 1) -> np.ndarray:
    """Fill row row_ids[i] of `array` (a whole int32 bitmask) with the stored row of state
    states[i] of `sets`, in one call that holds no GIL, on `threads` of Numba's threads;
    the results (1 where the state has no stored row yet: the matcher's own `fill` makes
    it)."""
    results = np.zeros(len(states), dtype=np.int64)
    args = (sets.headers, states, array, row_ids, results)
    if threads == 1:
        copy_rows(*args)
    else:
        on_threads(copy_rows_parallel, threads, *args)
    return results
