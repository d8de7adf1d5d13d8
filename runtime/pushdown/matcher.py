"""The Matcher for pushdown grammars: an Earley recognizer walked one token at a time.

Invariant: the bytes accepted so far always leave a non-empty last Earley set, and every item
the recognizer keeps can be completed (the rule automata are trimmed and every rule derives a
string), so the text is a viable prefix and the mask is never empty before termination. A
history entry is the number of sets before that step; rolling back truncates to it.
"""
from __future__ import annotations

import numpy as np

from .earley import OVERFLOW, EarleyArrays, earley_start, next_bytes, push_bytes
from ..matcher import Matcher
from .kernels import NEED, fill_mask
from .token_sets import PushdownTokenSets


class PushdownMatcher(Matcher):
    """`Matcher` for a pushdown `CompiledGrammar` (made by `Matcher(compiled)`)."""

    def _init_backend(self) -> None:
        compiled = self.compiled
        table = compiled.pushdown
        assert table is not None and isinstance(compiled.token_sets, PushdownTokenSets)
        self._table = table
        self._sets = compiled.token_sets
        self._g = self._sets.g
        self._token_data = compiled.vocab.token_data
        self._token_offsets = compiled.vocab.token_offsets
        self._scratch = np.zeros(self._n_words, dtype=np.uint32)
        self._cand = np.zeros(64, dtype=np.int32)
        self._merged = np.zeros(64, dtype=np.int32)
        self._earley = EarleyArrays.empty(table.n_states)
        self._earley.limit(self.limits)
        state = np.int32(table.rule_start[table.start_rule])
        while earley_start(self._g, self._earley.kernel_args(), state) == OVERFLOW:
            self._earley.overflowed(self.limits, "the start")

    def _limits_changed(self) -> None:
        if hasattr(self, "_earley"):
            self._earley.limit(self.limits)

    def _fill(self, row: np.ndarray) -> None:
        words = row.view(np.uint32)
        sets = self._sets
        while True:
            r = fill_mask(self._g, self._earley.kernel_args(), sets.snapshot, sets.trie_args,
                          sets.eos_ids, words, self._scratch, self._cand, self._merged)
            if r == 0:
                return
            if r > 0:
                self._cand = np.zeros(2 * r, dtype=np.int32)
                self._merged = np.zeros(2 * r, dtype=np.int32)
            elif r == OVERFLOW:
                self._earley.overflowed(self.limits, "fill_next_token_bitmask")
            else:
                sets.ensure(NEED - r)

    def _push_all(self, data: np.ndarray, begin: int, end: int, what: str) -> bool:
        """Push data[begin:end] all or nothing, within the limits."""
        while (r := push_bytes(self._g, self._earley.kernel_args(), data, begin, end)) == OVERFLOW:
            self._earley.overflowed(self.limits, what)
        return r == 1

    def _push(self, data: np.ndarray, begin: int, end: int) -> bool:
        n_sets = self._earley.n_sets
        if not self._push_all(data, begin, end, "accept"):
            return False
        self._history.append(n_sets)
        return True

    def _advance_token(self, tid: int) -> bool:
        begin, end = int(self._token_offsets[tid]), int(self._token_offsets[tid + 1])
        return begin < end and self._push(self._token_data, begin, end)

    def _advance_bytes(self, data: bytes) -> bool:
        arr = np.frombuffer(data, dtype=np.uint8)
        return self._push(arr, 0, len(arr))

    def _complete(self) -> bool:
        e = self._earley
        return bool(e.sets[e.n_sets - 1, 1] == 1)

    def _snapshot(self) -> int:
        return self._earley.n_sets

    def _restore(self, entry: int) -> None:
        self._earley.truncate(entry)

    def _copy_backend(self, other: Matcher) -> None:
        assert isinstance(other, PushdownMatcher)
        other._earley = self._earley.copy()
        other._scratch = np.zeros_like(self._scratch)
        other._cand = np.zeros_like(self._cand)
        other._merged = np.zeros_like(self._merged)

    def find_jump_forward_bytes(self, max_bytes: int = 1024) -> bytes:
        """The bytes every continuation must start with (empty when there is a choice, when
        the text may end here, or after termination), up to `max_bytes`."""
        if self._terminated:
            return b""
        e = self._earley
        n0 = e.n_sets
        out = bytearray()
        seen = np.zeros(256, dtype=np.bool_)
        one = np.zeros(1, dtype=np.uint8)
        try:
            while len(out) < max_bytes and not self._complete():
                seen[:] = False
                if next_bytes(self._g, e.kernel_args(), seen) != 1:
                    break
                one[0] = int(np.flatnonzero(seen)[0])
                if not self._push_all(one, 0, 1, "find_jump_forward_bytes"):
                    break
                out.append(int(one[0]))
        finally:
            e.truncate(n0)
        return bytes(out)

    def memory_bytes(self) -> int:
        """Memory held by this matcher's recognizer state."""
        return self._earley.nbytes() + self._scratch.nbytes
