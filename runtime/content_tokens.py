"""Plain-text tokens, and the automaton states that loop on them.

A *content character* is printable ASCII other than `"` and `\\` (0x20-0x7E), or any Unicode
scalar value from U+0080 up, written as well-formed UTF-8. A *content token* is a non-empty
sequence of content characters: most of a vocabulary (96% of the default one). Inside a string,
an automaton commonly has a state L that every content character leads back to, and states
from which every content character leads to L; from such a state every content token is
viable and ends in L, so a token-set walk from it need only visit the other tokens
(`ContentSplit.rest`): a few thousand instead of the whole vocabulary.

Invariants of a `ContentSplit` of a trie T (built here, never from outside): `row` is the
uint32 bitmask row of T's content tokens (`n_content` of them); `rest` is the trie of T's
other tokens in T's order and `rest_position[i]` the position in T of rest's i-th token
(ascending). A state may also lead into a loop on content characters except those starting
with a few bytes (inside a property name that must differ from the listed ones, say): then
the content tokens starting with those bytes are walked too (`ContentSplit.plan`).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
from numba import njit

from .token_trie import TokenTrie, _common_prefix_lengths

_KERNEL = dict(cache=True, nogil=True)

# Well-formed UTF-8 of U+0080 and up (The Unicode Standard, table 3-7): per row, the byte ranges
# of each position (lo, hi), unused positions (0, -1).
_MULTIBYTE = np.array([
    [[0xC2, 0xDF], [0x80, 0xBF], [0, -1], [0, -1]],
    [[0xE0, 0xE0], [0xA0, 0xBF], [0x80, 0xBF], [0, -1]],
    [[0xE1, 0xEC], [0x80, 0xBF], [0x80, 0xBF], [0, -1]],
    [[0xED, 0xED], [0x80, 0x9F], [0x80, 0xBF], [0, -1]],
    [[0xEE, 0xEF], [0x80, 0xBF], [0x80, 0xBF], [0, -1]],
    [[0xF0, 0xF0], [0x90, 0xBF], [0x80, 0xBF], [0x80, 0xBF]],
    [[0xF1, 0xF3], [0x80, 0xBF], [0x80, 0xBF], [0x80, 0xBF]],
    [[0xF4, 0xF4], [0x80, 0x8F], [0x80, 0xBF], [0x80, 0xBF]],
], dtype=np.int64)

_MAX_FRONTIER = 64
"""States followed at once through one multibyte row; past it a state is not called a loop
(a false answer only costs the shortcut)."""


@njit(**_KERNEL)
def _content_char_length(data, p, end, rows):  # type: ignore[no-untyped-def]
    """The length of the content character at data[p:end], or 0 if there is none."""
    b = data[p]
    if b < 0x80:
        return 1 if 0x20 <= b <= 0x7E and b != 0x22 and b != 0x5C else 0
    for r in range(rows.shape[0]):
        if not rows[r, 0, 0] <= b <= rows[r, 0, 1]:
            continue
        k = 1
        while k < 4 and rows[r, k, 1] >= 0:
            if p + k >= end or not rows[r, k, 0] <= data[p + k] <= rows[r, k, 1]:
                return 0
            k += 1
        return k
    return 0


@njit(**_KERNEL)
def content_tokens(data, offsets, rows):  # type: ignore[no-untyped-def]
    """bool[m]: whether each token data[offsets[i]:offsets[i + 1]] is a content token."""
    m = len(offsets) - 1
    out = np.zeros(m, dtype=np.bool_)
    for i in range(m):
        p, end = offsets[i], offsets[i + 1]
        ok = p < end
        while ok and p < end:
            k = _content_char_length(data, p, end, rows)
            ok = k > 0
            p += k
        out[i] = ok
    return out


@njit(**_KERNEL)
def _content_target(transitions, byte_class, state, rows):  # type: ignore[no-untyped-def]
    """The one state that every content character leads to from `state`, or -1 if they lead
    to several, or one of them dies."""
    target = -1
    for b in range(0x20, 0x7F):
        if b != 0x22 and b != 0x5C:
            t = transitions[state, byte_class[b]]
            if t < 0 or (target >= 0 and t != target):
                return -1
            target = t
    frontier = np.empty(_MAX_FRONTIER, dtype=np.int64)
    following = np.empty(_MAX_FRONTIER, dtype=np.int64)
    for r in range(rows.shape[0]):
        frontier[0] = state
        n = 1
        k = 0
        while k < 4 and rows[r, k, 1] >= 0:
            m = 0
            for i in range(n):
                s = frontier[i]
                for b in range(rows[r, k, 0], rows[r, k, 1] + 1):
                    t = transitions[s, byte_class[b]]
                    if t < 0:
                        return -1
                    seen = False
                    for j in range(m):
                        if following[j] == t:
                            seen = True
                            break
                    if not seen:
                        if m == _MAX_FRONTIER:
                            return -1
                        following[m] = t
                        m += 1
            frontier[:m] = following[:m]
            n = m
            k += 1
        if n != 1 or frontier[0] != target:
            return -1
    return target


@njit(**_KERNEL)
def _entry_bytes(transitions, byte_class, state, rows, good):  # type: ignore[no-untyped-def]
    """The loop L that most printable ASCII content characters lead to from `state` (-1 when
    that state does not loop on every content character), with good[b] set for each first byte
    b such that every content character starting with b leads from `state` to L."""
    best, best_count = -1, 0
    for b in range(0x20, 0x7F):
        t = transitions[state, byte_class[b]]
        if t < 0 or b == 0x22 or b == 0x5C:
            continue
        count = 0
        for c in range(0x20, 0x7F):
            if c != 0x22 and c != 0x5C and transitions[state, byte_class[c]] == t:
                count += 1
        if count > best_count:
            best, best_count = t, count
    if best < 0 or _content_target(transitions, byte_class, best, rows) != best:
        return -1
    for b in range(0x20, 0x7F):
        good[b] = b != 0x22 and b != 0x5C and transitions[state, byte_class[b]] == best
    frontier = np.empty(_MAX_FRONTIER, dtype=np.int64)
    following = np.empty(_MAX_FRONTIER, dtype=np.int64)
    for r in range(rows.shape[0]):
        for lead in range(rows[r, 0, 0], rows[r, 0, 1] + 1):
            t = transitions[state, byte_class[lead]]
            if t < 0:
                continue
            frontier[0] = t
            n = 1
            k = 1
            alive = True
            while alive and k < 4 and rows[r, k, 1] >= 0:
                m = 0
                for i in range(n):
                    if not alive:
                        break
                    for b in range(rows[r, k, 0], rows[r, k, 1] + 1):
                        t = transitions[frontier[i], byte_class[b]]
                        if t < 0:
                            alive = False
                            break
                        seen = False
                        for j in range(m):
                            if following[j] == t:
                                seen = True
                                break
                        if not seen:
                            if m == _MAX_FRONTIER:
                                alive = False
                                break
                            following[m] = t
                            m += 1
                frontier[:m] = following[:m]
                n = m
                k += 1
            good[lead] = alive and n == 1 and frontier[0] == best
    return best


@njit(**_KERNEL)
def _clear_bits(row, ids):  # type: ignore[no-untyped-def]
    for t in ids:
        row[t >> 5] &= ~(np.uint32(1) << np.uint32(t & 31))


@dataclass(frozen=True, eq=False)
class TrieSlice:
    """Tokens begin..end of `trie` (positions in it), all starting with bytes that no token
    before `begin` starts with, so the slice walks as a trie of its own."""

    trie: TokenTrie
    begin: int
    end: int


@dataclass(frozen=True, eq=False)
class ContentSplit:
    """A trie's content tokens and the trie of the rest (module docstring), with each first
    byte's tokens located: `byte_start[b]:byte_start[b + 1]` in the trie and
    `rest_byte_start[b]:...` in `rest`; `content_ids[content_byte_start[b]:...]` are the ids of
    the content tokens starting with b."""

    trie: TokenTrie
    row: np.ndarray
    n_content: int
    rest: TokenTrie
    rest_position: np.ndarray
    byte_start: np.ndarray
    rest_byte_start: np.ndarray
    content_ids: np.ndarray
    content_byte_start: np.ndarray

    def plan(self, transitions: np.ndarray, byte_class: np.ndarray, state: int
             ) -> tuple[np.ndarray | None, int, list[TrieSlice]]:
        """How to find the tokens viable from `state` of a validated table: (a row of tokens
        known viable, or None; how many; the slices of tokens still to walk, in trie order).
        Content tokens whose first character leads into a content loop are known; the rest
        are walked."""
        good = np.zeros(256, dtype=np.bool_)
        if _entry_bytes(transitions, byte_class, np.int32(state), _MULTIBYTE, good) < 0:
            return None, 0, [TrieSlice(self.trie, 0, self.trie.n_tokens)]
        row = self.row.copy()
        n_known = self.n_content
        bad = np.flatnonzero(~good & (np.diff(self.content_byte_start) > 0))
        if len(bad):
            cleared = np.concatenate([self.content_ids[self.content_byte_start[b]:
                                                       self.content_byte_start[b + 1]]
                                      for b in bad.tolist()])
            _clear_bits(row, cleared)
            n_known -= len(cleared)
        cuts = np.flatnonzero(np.diff(good)) + 1
        slices = []
        for lo, hi in zip([0, *cuts.tolist()], [*cuts.tolist(), 256]):
            trie, starts = (self.rest, self.rest_byte_start) if good[lo] else \
                (self.trie, self.byte_start)
            if starts[hi] > starts[lo]:
                slices.append(TrieSlice(trie, int(starts[lo]), int(starts[hi])))
        return row, n_known, slices

    def position(self, piece: TrieSlice, found: np.ndarray) -> np.ndarray:
        """Positions in the split trie of the tokens at slice-relative positions `found`."""
        at = found.astype(np.int64) + piece.begin
        return (self.rest_position[at] if piece.trie is self.rest else at).astype(np.int32)


def _first_byte_starts(trie: TokenTrie) -> np.ndarray:
    first = trie.data[trie.offsets[:-1]] if trie.n_tokens else np.zeros(0, dtype=np.uint8)
    return np.searchsorted(first, np.arange(257), side="left").astype(np.int64)


_SPLITS: "weakref.WeakKeyDictionary[TokenTrie, ContentSplit]" = weakref.WeakKeyDictionary()


def content_split(trie: TokenTrie, n_words: int) -> ContentSplit:
    """The (cached) content split of `trie` over bitmask rows of `n_words` words (which cover
    every id of the trie)."""
    split = _SPLITS.get(trie)
    if split is not None and len(split.row) == n_words:
        return split
    content = content_tokens(trie.data, trie.offsets, _MULTIBYTE)
    bits = np.zeros(32 * n_words, dtype=np.bool_)
    bits[trie.ids[content]] = True
    row = np.packbits(bits, bitorder="little").view(np.uint32)
    position = np.flatnonzero(~content).astype(np.int32)
    lengths = np.diff(trie.offsets)[position]
    offsets = np.zeros(len(position) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    starts = trie.offsets[position]
    data = trie.data[np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])] \
        if len(position) else np.zeros(0, dtype=np.uint8)
    data = np.ascontiguousarray(data, dtype=np.uint8)
    rest = TokenTrie(ids=trie.ids[position], data=data, offsets=offsets,
                     lcp=_common_prefix_lengths(data, offsets),
                     max_len=int(lengths.max()) if len(position) else 0)
    byte_start = _first_byte_starts(trie)
    content_at = np.flatnonzero(content)
    split = ContentSplit(trie, row, len(content_at), rest, position, byte_start,
                         _first_byte_starts(rest), trie.ids[content_at],
                         np.searchsorted(content_at, byte_start).astype(np.int64))
    _SPLITS[trie] = split
    return split
