"""The Matcher for pushdown grammars: an Earley recognizer walked one token at a time.

Invariant: the bytes accepted so far always leave a non-empty last Earley set, and every item
the recognizer keeps can be completed (the rule automata are trimmed and every rule derives a
string), so the text is a viable prefix and the mask is never empty before termination. Each
history entry is the number of sets before that step; rolling back truncates to it.
"""
from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from .bitmask import as_bitmask_array
from .compiled import CompiledGrammar
from .earley import OVERFLOW, EarleyArrays, earley_start, next_bytes, push_bytes
from .matcher import Matcher, MatcherError, _check_token_id
from .pushdown_kernels import NEED, fill_mask
from .pushdown_token_sets import PushdownTokenSets
from .token_sets import ids_to_row


class PushdownMatcher(Matcher):
    """`Matcher` for a pushdown `CompiledGrammar` (made by `Matcher(compiled)`)."""

    def __init__(self, compiled: CompiledGrammar, *, max_rollback_tokens: int | None = None) -> None:
        self._check_args(compiled, max_rollback_tokens)
        self.compiled = compiled
        self.max_rollback_tokens = max_rollback_tokens
        vocab = compiled.vocab
        self._table = compiled.pushdown
        sets = compiled.token_sets
        assert isinstance(sets, PushdownTokenSets)
        self._sets = sets
        self._g = sets.g
        self._eos = frozenset(int(i) for i in vocab.eos_token_ids)
        self._size = vocab.size
        self._n_words = sets.n_words
        self._token_data = vocab.token_data
        self._token_offsets = vocab.token_offsets
        self._eos_row = ids_to_row(vocab.eos_token_ids, sets.n_words)
        self._scratch = np.zeros(sets.n_words, dtype=np.uint32)
        self._cand = np.zeros(64, dtype=np.int32)
        self._merged = np.zeros(64, dtype=np.int32)
        self._checked_bitmask: np.ndarray | None = None
        self._checked_rows = 0
        self._earley = EarleyArrays.empty(self._table.n_states)  # type: ignore[union-attr]
        self._start()
        self._terminated = False
        self._history: deque[int] = deque(maxlen=max_rollback_tokens)

    def _start(self) -> None:
        state = np.int32(self._table.rule_start[self._table.start_rule])  # type: ignore[union-attr]
        while earley_start(self._g, self._earley.kernel_args(), state) == OVERFLOW:
            self._earley.grow()

    def fill_next_token_bitmask(self, bitmask: Any, index: int = 0) -> None:
        """Write the allowed next tokens into row `index` of `bitmask` (after termination:
        only the EOS tokens)."""
        if bitmask is self._checked_bitmask and type(index) is int and 0 <= index < self._checked_rows:
            row = bitmask[index]
        else:
            row = as_bitmask_array(bitmask, self._n_words, index)
            if type(bitmask) is np.ndarray:
                self._checked_bitmask = bitmask
                self._checked_rows = bitmask.shape[0]
        if self._terminated:
            np.copyto(row, self._eos_row)
            return
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
                self._earley.grow()
            else:
                sets.ensure(NEED - r)

    def _push(self, data: np.ndarray, begin: int, end: int) -> bool:
        while True:
            r = push_bytes(self._g, self._earley.kernel_args(), data, begin, end)
            if r != OVERFLOW:
                return r == 1
            self._earley.grow()

    def _step(self) -> None:
        self._history.append(self._earley.n_sets)

    def accept_token(self, token_id: int) -> bool:
        """Advance by one token; False (and nothing changes) when it is not allowed here."""
        if type(token_id) is int and 0 <= token_id < self._size:
            tid = token_id
        else:
            tid = _check_token_id(token_id, self._size)
        if self._terminated:
            raise MatcherError("the matcher has terminated (EOS accepted); reset or roll back first")
        if tid in self._eos:
            if not self.can_terminate():
                return False
            self._step()
            self._terminated = True
            return True
        begin, end = int(self._token_offsets[tid]), int(self._token_offsets[tid + 1])
        if begin == end:
            return False
        n_sets = self._earley.n_sets
        if not self._push(self._token_data, begin, end):
            return False
        self._history.append(n_sets)
        return True

    def accept_string(self, text: str | bytes) -> bool:
        """Advance by the bytes of `text` as one step; all or nothing."""
        data = self._string_bytes(text)
        if self._terminated:
            raise MatcherError("the matcher has terminated (EOS accepted); reset or roll back first")
        n_sets = self._earley.n_sets
        arr = np.frombuffer(data, dtype=np.uint8)
        if not self._push(arr, 0, len(arr)):
            return False
        self._history.append(n_sets)
        return True

    def can_terminate(self) -> bool:
        """Whether EOS is allowed now: the text so far is a complete string of the grammar."""
        e = self._earley
        return not self._terminated and bool(e.sets[e.n_sets - 1, 1] == 1)

    def rollback(self, num_tokens: int) -> None:
        """Undo the last `num_tokens` accepted steps (tokens, strings, EOS)."""
        n = self._rollback_count(num_tokens)
        if n == 0:
            return
        for _ in range(n - 1):
            self._history.pop()
        self._earley.truncate(self._history.pop())
        self._terminated = False

    def reset(self) -> None:
        """Back to the start of the grammar, history cleared."""
        self._earley.truncate(1)
        self._terminated = False
        self._history.clear()

    def copy(self) -> "PushdownMatcher":
        """An independent matcher in the same state, sharing the compiled grammar."""
        other = object.__new__(PushdownMatcher)
        other.__dict__.update(self.__dict__)
        other._history = deque(self._history, maxlen=self.max_rollback_tokens)
        other._earley = self._earley.copy()
        other._scratch = np.zeros_like(self._scratch)
        other._cand = np.zeros_like(self._cand)
        other._merged = np.zeros_like(self._merged)
        other._checked_bitmask = None
        return other

    def find_jump_forward_bytes(self, max_bytes: int = 1024) -> bytes:
        """The bytes every continuation must start with (empty when there is a choice, when
        the text may end here, or after termination), up to `max_bytes`."""
        if self._terminated:
            return b""
        e = self._earley
        n0 = e.n_sets
        out = bytearray()
        seen = np.zeros(256, dtype=np.bool_)
        try:
            while len(out) < max_bytes and not e.sets[e.n_sets - 1, 1]:
                seen[:] = False
                if next_bytes(self._g, e.kernel_args(), seen) != 1:
                    break
                b = int(np.flatnonzero(seen)[0])
                if not self._push(np.array([b], dtype=np.uint8), 0, 1):
                    break
                out.append(b)
        finally:
            e.truncate(n0)
        return bytes(out)

    def memory_bytes(self) -> int:
        """Memory held by this matcher's recognizer state."""
        return self._earley.nbytes() + self._scratch.nbytes
