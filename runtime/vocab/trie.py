"""The vocabulary as a flat trie: every token with a spelling (`spelling`), sorted by it.

Invariants (checked once in `__post_init__`, trusted by the Numba kernels afterwards):
- `ids` is int32[m], distinct ids >= 0; `ids[i]` is the token id of the i-th token in
  byte-lexicographic order (equal spellings in any order).
- `offsets` is int64[m + 1], from 0 to len(data), strictly increasing: every token's bytes
  `data[offsets[i]:offsets[i+1]]` (uint8) are non-empty.
- `lcp` is int32[m]: `lcp[i]` is exactly the length of the common prefix of tokens i-1 and i
  (`lcp[0] == 0`), so `lcp[i] <= max_len`.
- `max_len` is the longest token's length (0 for an empty trie); `max_id` (derived) the
  largest id (-1 for an empty trie).
- Every array is C-contiguous and immutable (see `DFATable`).
A token-set store over a vocabulary of `size` ids also needs `ids < size` (`check_ids`).
Walking tokens in this order lets an automaton reuse the states of the shared prefix and skip
every token that extends a prefix already rejected: a depth-first walk of the trie, flat
(`next_shorter_prefix` of `lcp` says where each such run of tokens ends).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np
from numba.types import int32, int64, uint8

from ..arrays import checked_array
from ..jit import A, R, kernel
from .spelling import TokenSpelling, token_spelling
from .vocabulary import Vocabulary


@dataclass(frozen=True, eq=False)
class TokenTrie:
    """Sorted token bytes with common-prefix lengths, for automaton walks over the vocabulary."""

    ids: np.ndarray
    data: np.ndarray
    offsets: np.ndarray
    lcp: np.ndarray
    max_len: int
    max_id: int = field(init=False)

    def __post_init__(self) -> None:
        for name, dtype in (("ids", np.int32), ("data", np.uint8), ("offsets", np.int64),
                            ("lcp", np.int32)):
            object.__setattr__(self, name, checked_array(getattr(self, name), dtype, name, 1))
        ids, data, offsets, lcp = self.ids, self.data, self.offsets, self.lcp
        m = len(ids)
        if lcp.shape != (m,):
            raise ValueError("ids and lcp must have one length")
        if offsets.shape != (m + 1,) or offsets[0] != 0 or offsets[-1] != len(data):
            raise ValueError("offsets must have length len(ids) + 1 and run from 0 to len(data)")
        lengths = np.diff(offsets)
        max_len = self.max_len
        if isinstance(max_len, bool) or not isinstance(max_len, (int, np.integer)):
            raise TypeError(f"max_len must be an int, got {max_len!r}")
        if m and lengths.min() < 1:
            raise ValueError("every token in the trie must be non-empty")
        if max_len != (int(lengths.max()) if m else 0):
            raise ValueError("max_len must be the longest token's length")
        object.__setattr__(self, "max_len", int(max_len))
        if m and (ids.min() < 0 or not _distinct(ids)):
            raise ValueError("ids must be distinct and non-negative")
        object.__setattr__(self, "max_id", int(ids.max()) if m else -1)
        if not _sorted_with_prefixes(data, offsets, lcp):
            raise ValueError("tokens must be sorted by their bytes, with lcp their common prefixes")

    def __reduce__(self) -> tuple:
        return (TokenTrie, (self.ids, self.data, self.offsets, self.lcp, self.max_len))

    def check_ids(self, size: int) -> None:
        """Raise ValueError unless every id is below `size` (the bitmask covers the trie)."""
        if self.max_id >= size:
            raise ValueError(f"trie token id {self.max_id} out of range [0, {size})")

    @property
    def n_tokens(self) -> int:
        return len(self.ids)

    def token(self, i: int) -> bytes:
        """The bytes of the i-th token in trie order."""
        return self.data[self.offsets[i]:self.offsets[i + 1]].tobytes()

    def prefixed(self, prefix: bytes) -> tuple[int, int]:
        """The positions [lo, hi) of the tokens that start with `prefix` (a binary search:
        they are contiguous in byte order)."""
        lo, hi = 0, self.n_tokens
        while lo < hi:  # the first token >= prefix
            mid = (lo + hi) // 2
            if self.token(mid) < prefix:
                lo = mid + 1
            else:
                hi = mid
        end, hi = lo, self.n_tokens
        while end < hi:  # the first token past those that start with prefix
            mid = (end + hi) // 2
            if self.token(mid)[:len(prefix)] == prefix:
                end = mid + 1
            else:
                hi = mid
        return lo, end

    @classmethod
    def build(cls, spelling: TokenSpelling) -> "TokenTrie":
        """The trie of every token with a non-empty spelling (`vocab.spelling`): the order
        from one sort of the spellings as `bytes`, the arrays gathered by numpy."""
        offs, lengths = spelling.offsets, np.diff(spelling.offsets)
        present = np.flatnonzero(lengths > 0)
        raw = spelling.data.tobytes()
        tokens = [raw[a:b] for a, b in zip(offs[present].tolist(), offs[present + 1].tolist())]
        order = np.array(sorted(range(len(tokens)), key=tokens.__getitem__), dtype=np.int64)
        ids = present[order].astype(np.int32)
        sizes = lengths[ids]
        offsets = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        # Byte k of the i-th token in trie order is spelling byte offs[ids[i]] + k.
        data = spelling.data[np.repeat(offs[ids] - offsets[:-1], sizes)
                             + np.arange(offsets[-1], dtype=np.int64)]
        lcp = common_prefix_lengths(data, offsets)
        return cls(ids=ids, data=data, offsets=offsets, lcp=lcp,
                   max_len=int(sizes.max()) if len(sizes) else 0)


@kernel(R(uint8), R(int64), R(int32))
def _sorted_with_prefixes(data: np.ndarray, offsets: np.ndarray, lcp: np.ndarray) -> bool:
    """Whether the tokens ascend by their bytes and lcp holds their exact common prefixes
    (offsets already checked to run from 0 to len(data), strictly increasing)."""
    m = len(offsets) - 1
    if m and lcp[0] != 0:
        return False
    for i in range(1, m):
        a, b = offsets[i - 1], offsets[i]
        la, lb = offsets[i] - a, offsets[i + 1] - b
        k = lcp[i]
        if k < 0 or k > la or k > lb:
            return False
        for j in range(k):
            if data[a + j] != data[b + j]:
                return False
        if k < la and (k == lb or data[a + k] >= data[b + k]):
            return False
    return True


@kernel(R(uint8), R(int64))
def common_prefix_lengths(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """`lcp` of the tokens data[offsets[i]:offsets[i + 1]], in their order."""
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


# Without reference counting, like the Earley kernels it serves: it allocates nothing.
@kernel(R(int32), A(int32), nrt=False)
def next_shorter_prefix(lcp, out):  # type: ignore[no-untyped-def]
    """out[i] = the first j > i with lcp[j] < lcp[i] (len(lcp) if none): every token from i up
    to it starts with the first lcp[i] bytes of token i - 1, so once a walk rejected a prefix of
    token i - 1 no longer than that, it skips them all."""
    m = len(lcp)
    for i in range(m - 1, -1, -1):
        j = i + 1
        while j < m and lcp[j] >= lcp[i]:
            j = out[j]
        out[i] = j


def _distinct(ids: np.ndarray) -> bool:
    """Whether the non-negative `ids` are distinct: a mark per id where they are dense (a
    vocabulary's are: ten times faster than `np.unique`), else a sort."""
    top = int(ids.max())
    if top > 4 * len(ids) + 1024:
        return len(np.unique(ids)) == len(ids)
    seen = np.zeros(top + 1, dtype=np.bool_)
    seen[ids] = True
    return int(np.count_nonzero(seen)) == len(ids)


_TRIES: "weakref.WeakKeyDictionary[TokenSpelling, TokenTrie]" = weakref.WeakKeyDictionary()
_INDEXES: "weakref.WeakKeyDictionary[TokenTrie, tuple[np.ndarray, np.ndarray]]" = \
    weakref.WeakKeyDictionary()


def trie_index(trie: TokenTrie) -> tuple[np.ndarray, np.ndarray]:
    """(skip, byte_start) of `trie`, computed once per trie and never written (kept writeable,
    so that every kernel sees one array type): `skip` (int32 per token) is `next_shorter_prefix`
    of its lcp; the tokens that start with byte b are byte_start[b]:byte_start[b + 1]
    (int64[257])."""
    index = _INDEXES.get(trie)
    if index is None:
        skip = np.empty(trie.n_tokens, dtype=np.int32)
        next_shorter_prefix(trie.lcp, skip)
        first = trie.data[trie.offsets[:-1]] if trie.n_tokens else np.zeros(0, dtype=np.uint8)
        byte_start = np.searchsorted(first, np.arange(257), side="left").astype(np.int64)
        index = _INDEXES[trie] = (skip, byte_start)
    return index


def token_trie(vocab: Vocabulary, named: tuple[int, ...] = ()) -> TokenTrie:
    """The (cached) trie of `vocab`'s spellings with the text tokens `named` read as
    references (`spelling.token_spelling`)."""
    spelling = token_spelling(vocab, named)
    trie = _TRIES.get(spelling)
    if trie is None:
        trie = TokenTrie.build(spelling)
        _TRIES[spelling] = trie
    return trie
