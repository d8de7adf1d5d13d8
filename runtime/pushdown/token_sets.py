"""Per-state token sets of rule automata: accepted rows and uncertain tokens, stored compactly.

For each state that a fill meets, `classify_tokens` splits the vocabulary into accepted,
uncertain and rejected tokens (see `kernels.py`). The accepted row is stored like the DFA
path's rows: a default (zero row, or the base row of every producible token) plus patched
words, or a row of its own past 1/16 of the words; uncertain tokens are stored as ascending
trie positions. A row or uncertain list equal to one already stored is shared, not stored
again: states of one grammar mostly repeat a few of them (the inside of every string, the
tokens past the end of every number), which keeps the stores small and their growth rare.
Sets are computed on first use and memoized (`get` computes one state's and returns it as a
`PushdownStateTokens`, `precompute` does every state).

The table itself may grow (rules built as the recognizer reaches them, `assembly.py`): `need`
extends it under the lock, meta rows first, so a kernel given the new table's arrays (`g`)
also finds a meta row for each of its states. States keep their numbers, so stored sets stay
valid.

The store is one snapshot tuple (meta, dense, base, patches, uncertain) that kernels read.
Writers hold the lock; an entry's data is written before its STATUS, and arrays that must grow
are replaced by grown copies in a new snapshot, so a kernel holding any snapshot reads only
complete entries and asks for (NEED) the ones it lacks.
"""
from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..bitmask import bitmask_words
from ..content_tokens import content_split
from ..row_kernels import array_hash, differing_words, write_patches
from ..vocab.trie import TokenTrie, token_trie, trie_index
from ..vocab.vocabulary import Vocabulary
from .assembly import complete, extended
from .budget import candidate_buffers, within_cost
from .costs import MEMO_SLOTS
from .counters import NEEDED
from .earley import OVERFLOW, EarleyArrays
from .kernels import (
    BASE,
    DEFAULT,
    OWN,
    PATCH_BEGIN,
    PATCH_LEN,
    SLOT,
    STATUS,
    UNC_BEGIN,
    UNC_LEN,
    ZERO,
    classify_tokens,
)
from .table import PushdownTable


def _grown(a: np.ndarray, need: int) -> np.ndarray:
    if need <= a.shape[0]:
        return a
    out = np.zeros((max(need, 2 * a.shape[0]),) + a.shape[1:], dtype=a.dtype)
    out[:a.shape[0]] = a
    return out


_THREAD = threading.local()


def _walk_scratch(trie: TokenTrie) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The scratch arrays of `classify_tokens` over `trie` (a token's worth, and a position
    per token: 0.6 MB for 150k tokens), one set per thread for the trie it last walked: shared
    by every grammar a thread classifies, instead of one set per grammar kept for its life."""
    held = getattr(_THREAD, "walk", None)
    if held is None or held[0]() is not trie:
        held = (weakref.ref(trie), (np.zeros(trie.max_len + 2, dtype=np.bool_),
                                    np.zeros((trie.max_len + 2, 3), dtype=np.int64),
                                    np.empty(max(1, trie.n_tokens), dtype=np.int32)))
        _THREAD.walk = held
    return held[1]


_PER_TRIE: weakref.WeakKeyDictionary[TokenTrie, tuple[np.ndarray, np.ndarray]] = \
    weakref.WeakKeyDictionary()


def _trie_arrays(trie: TokenTrie, n_words: int) -> tuple[np.ndarray, np.ndarray]:
    """(the uint32 row of every token in `trie`, the trie positions 0..n-1), shared by every
    grammar over it and never written (kept writeable so kernels see one array type)."""
    cached = _PER_TRIE.get(trie)
    if cached is None or len(cached[0]) != n_words:
        bits = np.zeros(32 * n_words, dtype=np.bool_)
        bits[trie.ids] = True
        cached = (np.packbits(bits, bitorder="little").view(np.uint32),
                  np.arange(trie.n_tokens, dtype=np.int32))
        _PER_TRIE[trie] = cached
    return cached


@dataclass(frozen=True, eq=False)
class PushdownStateTokens:
    """One state's stored set, read from a store `snapshot` that holds it: the tokens accepted
    whatever the stack (`fill`) and the trie positions of the uncertain ones (`uncertain`,
    ascending), which a fill checks against the real stack."""

    snapshot: tuple[np.ndarray, ...]
    state: int

    def fill(self, out: np.ndarray) -> None:
        """Write the accepted row into `out` (int32 or uint32 words of the bitmask)."""
        meta, dense, base, patches, _ = self.snapshot
        entry = meta[self.state]
        words = out.view(np.uint32)
        if entry[DEFAULT] == OWN:
            np.copyto(words, dense[entry[SLOT]])
        elif entry[DEFAULT] == BASE:
            np.copyto(words, base)
        else:
            words[:] = 0
        patch = patches[entry[PATCH_BEGIN]:entry[PATCH_BEGIN] + entry[PATCH_LEN]]
        words[patch[:, 0]] = patch[:, 1]

    @property
    def uncertain(self) -> np.ndarray:
        entry = self.snapshot[0][self.state]
        view = self.snapshot[4][entry[UNC_BEGIN]:entry[UNC_BEGIN] + entry[UNC_LEN]]
        view.flags.writeable = False
        return view


class PushdownTokenSets:
    """Lazily computed, memoized token sets of every state of one `PushdownTable`."""

    def __init__(self, table: PushdownTable, vocab: Vocabulary,
                 named: tuple[int, ...] = ()) -> None:
        self.table = table
        self.vocab = vocab
        self.trie: TokenTrie = token_trie(vocab, named)
        self.trie.check_ids(vocab.size)
        self.n_words = bitmask_words(vocab.size)
        self.base_row, self._identity = _trie_arrays(self.trie, self.n_words)
        self.skip, self.byte_start = trie_index(self.trie)
        self.split = content_split(self.trie, self.n_words)
        self.eos_ids = np.asarray(vocab.eos_token_ids, dtype=np.int64)
        self.max_patch_words = max(64, self.n_words // 16)
        self.g = table.kernel_args()
        self.trie_args = (self.trie.data, self.trie.offsets, self.trie.ids, self.trie.lcp,
                          self.skip)
        meta = np.zeros((table.n_states, 7), dtype=np.int64)
        meta[:, STATUS] = -1
        self._n = {"dense": 0, "patches": 0, "uncertain": 0}
        self.snapshot: tuple[np.ndarray, ...] = (
            meta, np.zeros((0, self.n_words), dtype=np.uint32), self.base_row,
            np.zeros((64, 2), dtype=np.uint32), np.zeros(64, dtype=np.int32))
        self._unc_store = self.snapshot[4]
        self._unc_index: dict[int, list[int]] = {}
        self._row_index: dict[int, list[int]] = {}
        self._scratch = EarleyArrays.empty(table.n_states)
        self._lock = threading.RLock()
        self.n_computed = 0
        self.n_accepted = 0
        self.n_uncertain = 0

    def get(self, state: int) -> PushdownStateTokens:
        """The stored set of `state`, computing it on first use."""
        if not 0 <= state < self.table.n_states:
            raise ValueError(f"state {state} out of range [0, {self.table.n_states})")
        snapshot = self.snapshot
        if snapshot[0][state, STATUS] < 0:
            with self._lock:
                if self.snapshot[0][state, STATUS] < 0:
                    self._store(state, *self.classify(state))
                snapshot = self.snapshot
        return PushdownStateTokens(snapshot, state)

    def need(self, rule: int) -> tuple[np.ndarray, ...]:
        """The table's kernel arrays (`g`) once rule `rule` is built (`RuleNeeded`)."""
        with self._lock:
            if self.table.rule_start[rule] < 0:
                self._grown_to(extended(self.table, rule))
            return self.g

    def complete(self) -> PushdownTable:
        """The table with every rule built."""
        with self._lock:
            if not self.table.complete:
                self._grown_to(complete(self.table))
            return self.table

    def _grown_to(self, table: PushdownTable) -> None:
        meta = self.snapshot[0]
        more = np.zeros((table.n_states - meta.shape[0], 7), dtype=np.int64)
        more[:, STATUS] = -1
        self.snapshot = (np.concatenate([meta, more]),) + self.snapshot[1:]
        self._scratch.cover(table.n_states)
        self.table = table
        self.g = table.kernel_args()

    def precompute(self, progress: Callable[[int, int], None] | None = None) -> None:
        """Compute every state's set now; `progress(done, total)` after each."""
        n = self.complete().n_states
        for s in range(n):
            self.get(s)
            if progress is not None:
                progress(s + 1, n)

    def classify(self, state: int) -> tuple[np.ndarray, np.ndarray, int]:
        """(accepted row, uncertain trie positions, accepted count) of `state`, computed now
        and not stored (`get` stores it): content tokens that lead into enough content
        characters are accepted unwalked (`ContentSplit.plan`), the rest walked in one kernel
        call."""
        with self._lock:
            return self._classified(state)

    def _classified(self, state: int) -> tuple[np.ndarray, np.ndarray, int]:
        tr, bc = self.table.transitions, self.table.byte_class
        known, n_known, level, slices = self.split.plan(tr, bc, state)
        words = np.zeros(self.n_words, dtype=np.uint32) if known is None else known
        t = self.trie
        rest, skip, starts, position = (t, self.skip, self.byte_start, self._identity) \
            if level is None else (level.rest, level.rest_skip, level.rest_byte_start,
                                   level.rest_position)
        tries = (t.data, t.offsets, t.lcp, self.skip, t.ids, self.byte_start,
                 rest.data, rest.offsets, rest.lcp, skip, rest.ids, starts, position)
        popok, chain, uncertain = _walk_scratch(t)
        while True:
            # A pass cut short by OVERFLOW set only bits of accepted tokens: kept.
            n_acc, n_unc = classify_tokens(self.g, self._scratch.kernel_args(), np.int32(state),
                                           self.table.follow, tries, slices, popok, chain, words,
                                           uncertain)
            if n_acc != OVERFLOW:
                return words, uncertain[:n_unc].copy(), int(n_acc) + n_known
            counters = self._scratch.counters
            if counters[NEEDED] >= 0:
                rule, counters[NEEDED] = int(counters[NEEDED]), -1
                self.need(rule)
            else:
                self._scratch.grow()

    def within_cost(self, state: int, cost: np.ndarray) -> int:
        """The largest cost inside `state`'s rule after a token of its stored row, from the
        rule automata's completion costs `cost` (`budget.py`); every rule must be built."""
        self.get(state)
        with self._lock:
            e, words = self._scratch, np.zeros((2, self.n_words), dtype=np.uint32)
            costs = (cost, np.zeros(0, dtype=np.int64), np.zeros((MEMO_SLOTS, 4), dtype=np.int64),
                     np.zeros((self.table.n_rules, 2), dtype=np.int64), np.zeros(4, np.int64))
            buffers = candidate_buffers(self.trie, self.vocab.size)
            while True:
                costs = costs[:1] + (np.zeros(e.capacity, dtype=np.int64),) + costs[2:]
                r = within_cost(self.g, e.kernel_args(), np.int32(state), self.snapshot,
                                self.trie_args, words[0], words[1], costs, *buffers)
                if r != OVERFLOW:
                    return int(r)
                e.grow()

    def _store(self, state: int, words: np.ndarray, uncertain: np.ndarray, n_accepted: int
               ) -> None:
        meta, dense, base, patches, unc_store = self.snapshot
        n_zero, n_base = differing_words(words, base)
        against_base = n_base < n_zero
        n = n_base if against_base else n_zero
        entry = np.zeros(7, dtype=np.int64)
        if n > self.max_patch_words:
            dense, slot = self._stored_row(dense, words)
            entry[DEFAULT], entry[SLOT] = OWN, slot
        else:
            p = self._n["patches"]
            patches = _grown(patches, p + n)
            write_patches(words, base, against_base, patches, p)
            self._n["patches"] = p + n
            entry[DEFAULT] = BASE if against_base else ZERO
            entry[PATCH_BEGIN], entry[PATCH_LEN] = p, n
        entry[UNC_BEGIN], entry[UNC_LEN] = self._stored_uncertain(uncertain), len(uncertain)
        unc_store = self._unc_store
        old = self.snapshot
        if dense is not old[1] or patches is not old[3] or unc_store is not old[4]:
            meta = meta.copy()
        meta[state, 1:] = entry[1:]
        self.snapshot = (meta, dense, base, patches, unc_store)
        meta[state, STATUS] = 0
        self.n_computed += 1
        self.n_accepted += n_accepted
        self.n_uncertain += len(uncertain)

    def _stored_row(self, dense: np.ndarray, words: np.ndarray) -> tuple[np.ndarray, int]:
        """(the dense store, grown when needed; the slot of `words` in it): many states accept
        the very same tokens (the inside of every string, say), so an equal row is stored once."""
        key = int(array_hash(words))
        for slot in self._row_index.get(key, ()):
            if np.array_equal(dense[slot], words):
                return dense, slot
        slot = self._n["dense"]
        dense = _grown(dense, slot + 1)
        dense[slot] = words
        self._n["dense"] = slot + 1
        self._row_index.setdefault(key, []).append(slot)
        return dense, slot

    def _stored_uncertain(self, uncertain: np.ndarray) -> int:
        """Where `uncertain` begins in the store (`_unc_store`, grown when needed): states of
        one rule often share their uncertain tokens, so an equal list is stored once."""
        if not len(uncertain):
            return 0
        key = int(array_hash(uncertain.view(np.uint32)))
        store = self._unc_store
        for begin in self._unc_index.get(key, ()):
            if np.array_equal(store[begin:begin + len(uncertain)], uncertain):
                return begin
        u = self._n["uncertain"]
        self._unc_store = store = _grown(store, u + len(uncertain))
        store[u:u + len(uncertain)] = uncertain
        self._n["uncertain"] = u + len(uncertain)
        self._unc_index.setdefault(key, []).append(u)
        return u

    def nbytes(self) -> int:
        """Memory of the stored sets and of the recognizer the walks use."""
        meta, dense, base, patches, unc = self.snapshot
        return int(meta.nbytes + self._n["dense"] * self.n_words * 4 + base.nbytes
                   + self._n["patches"] * 8 + self._n["uncertain"] * 4
                   + self._scratch.nbytes())
