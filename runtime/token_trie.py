"""The vocabulary as a flat trie: grammar-producible tokens sorted by their bytes.

Invariants:
- `ids[i]` is the token id of the i-th token in byte-lexicographic order; every id has
  non-empty bytes `data[offsets[i]:offsets[i+1]]`; `offsets` is int64, non-decreasing.
- `lcp[i]` is the length of the common prefix of tokens i-1 and i (`lcp[0] == 0`).
- `max_len` is the longest token's length.
Walking tokens in this order lets an automaton reuse the states of the shared prefix and skip
every token that extends a prefix already rejected: a depth-first walk of the trie, flat.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
from numba import njit

from .vocabulary import Vocabulary


@dataclass(frozen=True, eq=False)
class TokenTrie:
    """Sorted token bytes with common-prefix lengths, for automaton walks over the vocabulary."""

    ids: np.ndarray
    data: np.ndarray
    offsets: np.ndarray
    lcp: np.ndarray
    max_len: int

    def __post_init__(self) -> None:
        m = len(self.ids)
        if self.ids.dtype != np.int32 or self.lcp.dtype != np.int32 or self.lcp.shape != (m,):
            raise ValueError("ids and lcp must be int32 arrays of one length")
        if self.offsets.dtype != np.int64 or self.offsets.shape != (m + 1,):
            raise ValueError("offsets must be int64 of length len(ids) + 1")
        if self.data.dtype != np.uint8 or int(self.offsets[-1]) != len(self.data):
            raise ValueError("data must be uint8 and end at offsets[-1]")
        lengths = np.diff(self.offsets)
        if m and (lengths.min() < 1 or int(lengths.max()) != self.max_len):
            raise ValueError("every token in the trie must be non-empty; max_len must match")
        if m and (self.lcp[0] != 0 or (self.lcp[1:] > np.minimum(lengths[1:], lengths[:-1])).any()):
            raise ValueError("lcp out of range")
        for a in (self.ids, self.data, self.offsets, self.lcp):
            a.flags.writeable = False

    @property
    def n_tokens(self) -> int:
        return len(self.ids)

    @classmethod
    def build(cls, vocab: Vocabulary) -> "TokenTrie":
        """The trie of every token of `vocab` with non-empty grammar bytes."""
        offs = vocab.token_offsets
        raw = vocab.token_data.tobytes()
        lengths = np.diff(offs)
        present = np.flatnonzero(lengths > 0)
        tokens = [raw[offs[i]:offs[i + 1]] for i in present.tolist()]
        order = sorted(range(len(tokens)), key=tokens.__getitem__)
        sorted_tokens = [tokens[j] for j in order]
        ids = present[np.array(order, dtype=np.int64)].astype(np.int32) if tokens else \
            np.zeros(0, dtype=np.int32)
        sizes = np.fromiter((len(t) for t in sorted_tokens), dtype=np.int64,
                            count=len(sorted_tokens))
        offsets = np.zeros(len(sorted_tokens) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        data = np.frombuffer(b"".join(sorted_tokens), dtype=np.uint8).copy()
        lcp = _common_prefix_lengths(data, offsets)
        return cls(ids=ids, data=data, offsets=offsets, lcp=lcp,
                   max_len=int(sizes.max()) if len(sizes) else 0)


@njit(cache=True, nogil=True)
def _common_prefix_lengths(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    m = len(offsets) - 1
    lcp = np.zeros(m, dtype=np.int32)
    for i in range(1, m):
        a, b = offsets[i - 1], offsets[i]
        n = min(offsets[i] - a, offsets[i + 1] - b)
        k = 0
        while k < n and data[a + k] == data[b + k]:
            k += 1
        lcp[i] = k
    return lcp


_TRIES: "weakref.WeakKeyDictionary[Vocabulary, TokenTrie]" = weakref.WeakKeyDictionary()


def token_trie(vocab: Vocabulary) -> TokenTrie:
    """The (cached) trie of `vocab`."""
    trie = _TRIES.get(vocab)
    if trie is None:
        trie = TokenTrie.build(vocab)
        _TRIES[vocab] = trie
    return trie
