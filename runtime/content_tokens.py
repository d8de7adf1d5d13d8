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
from numba.types import boolean, int32, int64, uint8, uint32

from .jit import A, R, kernel
from .vocab.trie import TokenTrie, common_prefix_lengths, trie_index

_KERNEL = dict(cache=True, nogil=True)

# Well-formed UTF-8 of U+0080 and up (The Unicode Standard, table 3-7): per row, the byte ranges
# of each position (lo, hi), unused positions (0, -1).
MULTIBYTE = np.array([
    [[0xC2, 0xDF], [0x80, 0xBF], [0, -1], [0, -1]],
    [[0xE0, 0xE0], [0xA0, 0xBF], [0x80, 0xBF], [0, -1]],
    [[0xE1, 0xEC], [0x80, 0xBF], [0x80, 0xBF], [0, -1]],
    [[0xED, 0xED], [0x80, 0x9F], [0x80, 0xBF], [0, -1]],
    [[0xEE, 0xEF], [0x80, 0xBF], [0x80, 0xBF], [0, -1]],
    [[0xF0, 0xF0], [0x90, 0xBF], [0x80, 0xBF], [0x80, 0xBF]],
    [[0xF1, 0xF3], [0x80, 0xBF], [0x80, 0xBF], [0x80, 0xBF]],
    [[0xF4, 0xF4], [0x80, 0x8F], [0x80, 0xBF], [0x80, 0xBF]],
], dtype=np.int64)

UNLIMITED = 1 << 30
"""Characters viable from a state that leads into a loop on content characters."""

LEVELS = (8, 16, 32, UNLIMITED)
"""Content tokens of at most this many characters are known viable from a state that reads
that many content characters in a row (inside a string of bounded length, say)."""

_CHAIN = 32

_MAX_FRONTIER = 64
"""States followed at once through one multibyte row; past it a state is not called a loop
(a false answer only costs the shortcut)."""


@kernel(R(uint8), int64, int64, R(int64, 3))
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


@kernel(R(uint8), R(int64), R(int64, 3))
def content_tokens(data, offsets, rows):  # type: ignore[no-untyped-def]
    """int32[m]: the characters of each token data[offsets[i]:offsets[i + 1]] if it is a
    content token, else 0."""
    m = len(offsets) - 1
    out = np.zeros(m, dtype=np.int32)
    for i in range(m):
        p, end = offsets[i], offsets[i + 1]
        n = 0
        while p < end:
            k = _content_char_length(data, p, end, rows)
            if k == 0:
                n = 0
                break
            p += k
            n += 1
        out[i] = n
    return out


@kernel(R(int32, 2), R(int32), int64, R(int64, 3), int64, int64, int64, A(int64), A(int64))
def _row_target(transitions, byte_class, state, rows, r, lead_lo, lead_hi, frontier, following):  # type: ignore[no-untyped-def]
    """The one state that every character of multibyte row r whose lead byte lies in
    lead_lo..lead_hi leads to from `state`, or -1 if they lead to several, or one of them dies
    (`frontier` and `following` are scratch of _MAX_FRONTIER states)."""
    frontier[0] = state
    n = 1
    k = 0
    while k < 4 and rows[r, k, 1] >= 0:
        lo, hi = (lead_lo, lead_hi) if k == 0 else (rows[r, k, 0], rows[r, k, 1])
        m = 0
        for i in range(n):
            for b in range(lo, hi + 1):
                t = transitions[frontier[i], byte_class[b]]
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
        for i in range(m):  # no slice copy: its shape checks cost most of this kernel's compile
            frontier[i] = following[i]
        n = m
        k += 1
    return frontier[0] if n == 1 else -1


@kernel(R(int32, 2), R(int32), int64, R(int64, 3))
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
        if _row_target(transitions, byte_class, state, rows, r, rows[r, 0, 0], rows[r, 0, 1],
                       frontier, following) != target:
            return -1
    return target


@kernel(R(int32, 2), R(int32), int32)
def _most_common_target(transitions, byte_class, state):  # type: ignore[no-untyped-def]
    """The state that most printable ASCII content characters lead to from `state` (of two
    equally common, the one the smaller byte leads to), or -1 if none leads anywhere."""
    targets = np.empty(0x7F - 0x20, dtype=np.int64)
    n = 0
    for b in range(0x20, 0x7F):
        t = transitions[state, byte_class[b]]
        if t >= 0 and b != 0x22 and b != 0x5C:
            targets[n] = t
            n += 1
    # Each distinct target counted from its first occurrence: linear when one target
    # dominates (the common case), and no sort to compile.
    best, best_count = -1, 0
    for i in range(n):
        t = targets[i]
        first = True
        for j in range(i):
            if targets[j] == t:
                first = False
                break
        if first:
            count = 0
            for j in range(i, n):
                count += targets[j] == t
            if count > best_count:
                best, best_count = t, count
    return best


@kernel(R(int32, 2), R(int32), int32, R(int64, 3), A(boolean))
def entry_bytes(transitions, byte_class, state, rows, good):  # type: ignore[no-untyped-def]
    """How many content characters in a row are viable from `state` (UNLIMITED once they lead
    into a loop, at most _CHAIN otherwise, 0 if not even one), through the state L that most
    printable ASCII content characters lead to; good[b] is set for each first byte b such that
    every content character starting with b leads from `state` to L."""
    best = _most_common_target(transitions, byte_class, state)
    if best < 0:
        return 0
    chars = 1
    at = best
    while chars < _CHAIN:
        following_state = _content_target(transitions, byte_class, at, rows)
        if following_state < 0:
            break
        if following_state == at:
            chars = UNLIMITED
            break
        at = following_state
        chars += 1
    for b in range(0x20, 0x7F):
        good[b] = b != 0x22 and b != 0x5C and transitions[state, byte_class[b]] == best
    frontier = np.empty(_MAX_FRONTIER, dtype=np.int64)
    following = np.empty(_MAX_FRONTIER, dtype=np.int64)
    for r in range(rows.shape[0]):
        for lead in range(rows[r, 0, 0], rows[r, 0, 1] + 1):
            good[lead] = _row_target(transitions, byte_class, state, rows, r, lead, lead,
                                     frontier, following) == best
    return chars


@kernel(R(uint32), R(int32), R(int64), R(boolean))
def known_row(full, ids, starts, good):  # type: ignore[no-untyped-def]
    """(`full` without the ids ids[starts[b]:starts[b + 1]] of every byte b not `good`, how
    many are left): cleared from a copy, or set on a zero row when fewer are left."""
    kept = 0
    for b in range(256):
        if good[b]:
            kept += starts[b + 1] - starts[b]
    if 2 * kept < len(ids):
        row = np.zeros_like(full)
        keep = True
    else:
        row = full.copy()
        keep = False
    for b in range(256):
        if good[b] == keep:
            for j in range(starts[b], starts[b + 1]):
                t = ids[j]
                if keep:
                    row[t >> 5] |= np.uint32(1) << np.uint32(t & 31)
                else:
                    row[t >> 5] &= ~(np.uint32(1) << np.uint32(t & 31))
    return row, kept


@kernel(R(boolean), R(int64), R(int64))
def plan_slices(good, byte_start, rest_byte_start):  # type: ignore[no-untyped-def]
    """int64[n, 3] rows (which, begin, end), one per run of first bytes with the same `good`
    (tokens of the level's rest trie, which 1, where good; of the split trie, which 0, elsewhere),
    empty runs left out."""
    out = np.empty((256, 3), dtype=np.int64)
    n = 0
    lo = 0
    for hi in range(1, 257):
        if hi < 256 and good[hi] == good[lo]:
            continue
        starts = rest_byte_start if good[lo] else byte_start
        if starts[hi] > starts[lo]:
            out[n, 0], out[n, 1], out[n, 2] = 1 if good[lo] else 0, starts[lo], starts[hi]
            n += 1
        lo = hi
    return out[:n].copy()


@dataclass(frozen=True, eq=False)
class ContentLevel:
    """The content tokens of at most `chars` characters (`row`, `n_known` of them), the trie of
    the other tokens (`rest`: its i-th token is at `rest_position[i]` in the split trie, those
    starting with byte b are `rest_byte_start[b]:rest_byte_start[b + 1]`, and `rest_skip` is
    `next_shorter_prefix` of its lcp), and the ids of the known tokens starting with b,
    `known_ids[known_byte_start[b]:...]`."""

    chars: int
    row: np.ndarray
    n_known: int
    rest: TokenTrie
    rest_position: np.ndarray
    rest_byte_start: np.ndarray
    rest_skip: np.ndarray
    known_ids: np.ndarray
    known_byte_start: np.ndarray


@dataclass(frozen=True, eq=False)
class ContentSplit:
    """A trie's content tokens by length (`levels`, one per `LEVELS` entry, ascending), with
    the tokens starting with byte b at `byte_start[b]:byte_start[b + 1]` of the trie."""

    trie: TokenTrie
    byte_start: np.ndarray
    levels: tuple[ContentLevel, ...]

    def plan(self, transitions: np.ndarray, byte_class: np.ndarray, state: int
             ) -> tuple[np.ndarray | None, int, ContentLevel | None, np.ndarray]:
        """How to find the tokens viable from `state` of a validated table: (a row of tokens
        known viable, or None; how many; the level they come from, or None; the slices of
        tokens still to walk, in trie order: int64[n, 3] rows (which, begin, end), tokens
        begin..end of the split trie (which 0) or of the level's `rest` (which 1), each slice
        a run of first bytes). Content tokens whose first character leads into as many
        content characters as they have are known; the rest are walked."""
        good = np.zeros(256, dtype=np.bool_)
        chars = entry_bytes(transitions, byte_class, np.int32(state), MULTIBYTE, good)
        fitting = [level for level in self.levels if level.chars <= chars]
        if not fitting:
            return None, 0, None, np.array([[0, 0, self.trie.n_tokens]], dtype=np.int64)
        level = fitting[-1]
        row, n_known = known_row(level.row, level.known_ids, level.known_byte_start, good)
        return row, int(n_known), level, plan_slices(good, self.byte_start, level.rest_byte_start)


def _subtrie(trie: TokenTrie, position: np.ndarray) -> TokenTrie:
    """The trie of the tokens at `position` (ascending) of `trie`."""
    lengths = np.diff(trie.offsets)[position]
    offsets = np.zeros(len(position) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    starts = trie.offsets[position]
    data = trie.data[np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])] \
        if len(position) else np.zeros(0, dtype=np.uint8)
    data = np.ascontiguousarray(data, dtype=np.uint8)
    return TokenTrie(ids=trie.ids[position], data=data, offsets=offsets,
                     lcp=common_prefix_lengths(data, offsets),
                     max_len=int(lengths.max()) if len(position) else 0)


def _level(trie: TokenTrie, chars: np.ndarray, limit: int, n_words: int,
           byte_start: np.ndarray) -> ContentLevel:
    known = (chars > 0) & (chars <= limit)
    bits = np.zeros(32 * n_words, dtype=np.bool_)
    bits[trie.ids[known]] = True
    position = np.flatnonzero(~known).astype(np.int32)
    rest = _subtrie(trie, position)
    known_at = np.flatnonzero(known)
    skip, starts = trie_index(rest)
    return ContentLevel(limit, np.packbits(bits, bitorder="little").view(np.uint32),
                        len(known_at), rest, position, starts, skip,
                        trie.ids[known_at].astype(np.int32),
                        np.searchsorted(known_at, byte_start).astype(np.int64))


_SPLITS: "weakref.WeakKeyDictionary[TokenTrie, ContentSplit]" = weakref.WeakKeyDictionary()


def content_split(trie: TokenTrie, n_words: int) -> ContentSplit:
    """The (cached) content split of `trie` over bitmask rows of `n_words` words (which cover
    every id of the trie)."""
    split = _SPLITS.get(trie)
    if split is not None and len(split.levels[0].row) == n_words:
        return split
    chars = content_tokens(trie.data, trie.offsets, MULTIBYTE)
    byte_start = trie_index(trie)[1]
    split = ContentSplit(trie, byte_start, tuple(_level(trie, chars, limit, n_words, byte_start)
                                                 for limit in LEVELS))
    _SPLITS[trie] = split
    return split
