"""Per-state token sets of a DFA, stored compactly and filled into bitmask rows.

A row of the bitmask is stored as a *default row* (all zeros, or the vocabulary's base row of
every grammar-producible token) plus *patches*: the words that differ from the default and
their values; or, when more than 1/16 of the words differ, as a row of its own. So a state that
allows a handful of tokens costs a few words, a state that allows nearly everything costs a few
words, and only mixed states pay for a full row. Filling is then one row copy and at most a
small scatter, with no Python loop over tokens.

Sets are computed on first use per state (compile time stays near zero) and memoized;
`precompute()` computes every state up front. Computation is guarded by a lock, so one
`DFATokenSets` may serve many matchers on many threads; a stored row is immutable.
"""
from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np

from ..arrays import immutable
from ..bitmask import bitmask_words, ids_to_row
from ..content_tokens import ContentSplit, content_split
from ..row_kernels import array_hash, row_patch
from ..vocab.trie import TokenTrie, token_trie, trie_index
from ..vocab.vocabulary import Vocabulary
from .kernels import trie_token_row
from .table import DFATable

NO_COST = np.zeros(1, dtype=np.int64)
"""The `cost` of `trie_token_row` without a bound."""
BASE_ROW, OWN_ROW = 1, 2
"""`row_patch`'s defaults besides the zero row (0)."""
_NO_INDEX = immutable(np.zeros(0, dtype=np.intp))
_NO_VALUE = immutable(np.zeros(0, dtype=np.int32))

_BASE_ROWS: "weakref.WeakKeyDictionary[TokenTrie, np.ndarray]" = weakref.WeakKeyDictionary()


def _base_row(trie: TokenTrie, n_words: int) -> np.ndarray:
    """The immutable row of every token of `trie`, shared by every grammar over it."""
    row = _BASE_ROWS.get(trie)
    if row is None or len(row) != n_words:
        row = _BASE_ROWS[trie] = immutable(ids_to_row(trie.ids, n_words))
    return row


@dataclass(frozen=True, eq=False)
class StateTokens:
    """One state's row: `default` (shared or own) with `words[patch_index] = patch_value`."""

    default: np.ndarray
    patch_index: np.ndarray
    patch_value: np.ndarray
    n_allowed: int

    def fill(self, out: np.ndarray) -> None:
        np.copyto(out, self.default)
        if len(self.patch_index):
            out[self.patch_index] = self.patch_value


class DFATokenSets:
    """Lazily computed, memoized token sets of every state of one DFA over one vocabulary."""

    def __init__(self, dfa: DFATable, vocab: Vocabulary,
                 named: tuple[int, ...] = ()) -> None:
        self.dfa = dfa
        self.vocab = vocab
        self.trie: TokenTrie = token_trie(vocab, named)
        self.trie.check_ids(vocab.size)
        self.skip, self.byte_start = trie_index(self.trie)
        self.n_words = bitmask_words(vocab.size)
        self.zero_row = immutable(np.zeros(self.n_words, dtype=np.int32))
        self.base_row = _base_row(self.trie, self.n_words)
        self.eos_row = immutable(ids_to_row(vocab.eos_token_ids, self.n_words))
        # Past this many differing words a scatter costs more than copying a row of its own.
        self.max_patch_words = max(64, self.n_words // 16)
        self._split: ContentSplit | None = None
        self._rows: list[StateTokens | None] = [None] * dfa.n_states
        # Per state, where its stored row lies (`copy_rows`): the addresses of the default
        # row, patch indices and values, and the patch count; zeros until computed.
        self.headers = np.zeros((dfa.n_states, 4), dtype=np.int64)
        self._own_rows: dict[int, list[np.ndarray]] = {}
        self._stored_bytes = 0
        self._lock = threading.Lock()

    def compute(self, state: int) -> StateTokens:
        """The token set of `state`, computed now and not stored (`get` stores it)."""
        tr, bc = self.dfa.transitions, self.dfa.byte_class
        if self._split is None:
            self._split = content_split(self.trie, self.n_words)
        known, n_allowed, level, slices = self._split.plan(tr, bc, state)
        words = np.zeros(self.n_words, dtype=np.uint32) if known is None else known
        for which, a, b in slices.tolist():
            t, skip, starts = (self.trie, self.skip, self.byte_start) if which == 0 else (
                level.rest, level.rest_skip, level.rest_byte_start)
            n_allowed += trie_token_row(tr, bc, np.int32(state), t.data, t.offsets, t.lcp, skip,
                                        starts, t.ids, a, b, t.max_len, NO_COST, -1, words)
        if self.dfa.accepting[state]:
            words |= self.eos_row.view(np.uint32)
            n_allowed += len(self.vocab.eos_token_ids)
        default, index, value = row_patch(words, self.base_row.view(np.uint32),
                                          self.max_patch_words)
        if default == OWN_ROW:
            return StateTokens(self._shared_row(words.view(np.int32)), _NO_INDEX, _NO_VALUE,
                               int(n_allowed))
        return StateTokens(self.base_row if default == BASE_ROW else self.zero_row,
                           immutable(index), immutable(value.view(np.int32)), int(n_allowed))

    def bounded(self, state: int, cost: np.ndarray, bound: int) -> np.ndarray:
        """The row of `state` (int32 words, immutable, not stored) keeping only the tokens
        after which `cost` is at most `bound`, with EOS where `state` accepts: one walk of
        the whole trie (a token budget's end, `backends/token_budget.py`)."""
        words = np.zeros(self.n_words, dtype=np.uint32)
        t = self.trie
        trie_token_row(self.dfa.transitions, self.dfa.byte_class, np.int32(state), t.data,
                       t.offsets, t.lcp, self.skip, self.byte_start, t.ids, 0, t.n_tokens,
                       t.max_len, cost, bound, words)
        row = words.view(np.int32)
        if self.dfa.accepting[state]:
            row |= self.eos_row
        return immutable(row)

    def _shared_row(self, row: np.ndarray) -> np.ndarray:
        """`row` as an immutable array, the one already stored if an equal row is (many states
        of a grammar accept the very same tokens)."""
        key = int(array_hash(row.view(np.uint32)))
        for stored in self._own_rows.get(key, ()):
            if np.array_equal(stored, row):
                return stored
        kept = immutable(row)
        self._own_rows.setdefault(key, []).append(kept)
        self._stored_bytes += kept.nbytes
        return kept

    def get(self, state: int) -> StateTokens:
        """The stored row of `state`, computing it on first use."""
        if not 0 <= state < len(self._rows):
            raise ValueError(f"state {state} out of range [0, {len(self._rows)})")
        entry = self._rows[state]
        if entry is None:
            with self._lock:
                entry = self._rows[state]
                if entry is None:
                    entry = self.compute(state)
                    self._stored_bytes += entry.patch_index.nbytes + entry.patch_value.nbytes
                    self._rows[state] = entry
                    self.headers[state, 1:] = (entry.patch_index.ctypes.data,
                                               entry.patch_value.ctypes.data,
                                               len(entry.patch_index))
                    self.headers[state, 0] = entry.default.ctypes.data  # last: complete
        return entry

    def precompute(self) -> None:
        """Compute every state's set now."""
        for s in range(self.dfa.n_states):
            self.get(s)

    @property
    def n_computed(self) -> int:
        return sum(r is not None for r in self._rows)

    def nbytes(self) -> int:
        """Memory of the stored sets (shared rows counted once)."""
        return (self.zero_row.nbytes + self.base_row.nbytes + self.eos_row.nbytes
                + self._stored_bytes)
