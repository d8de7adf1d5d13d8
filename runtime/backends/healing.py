"""Token healing: a backend that first regenerates the bytes taken off the prompt's end.

With healing bytes h (`Vocabulary.heal`), the language is h·L: the text must begin with h, and
what follows h is in the grammar's language L. While `pos` < len(h) bytes of h are written,
a token t is allowed if it is a prefix of the rest r = h[pos:] (it writes part of it), or if
it starts with r and what follows r in t keeps the grammar alive (it finishes h and begins
the grammar's text); EOS is not, since h is not written yet. Once `pos` reaches len(h) every
call goes to the grammar's own backend (`inner`), which until then stays at its start.

Invariant: `inner` has advanced only after `pos` reached len(h), so a history entry is the
pair (inner's entry, pos) in one int: inner * (len(h) + 1) + pos. The mask of a healing
position is computed the first time it is filled (the tokens that start with r are a range of
the vocabulary's trie, `TokenTrie.prefixed`; each is checked by advancing `inner` and going
back, and a dead prefix skips every later token that starts with it, as the trie walks do:
cheap where few bytes can start the grammar's text, a step per token of the range where most
can, such as free text after a one-byte r), and kept for the matcher and its forks.
"""
from __future__ import annotations

import numpy as np

from ..bitmask import ids_to_row
from ..run_limits import RuntimeLimits
from ..vocab.trie import TokenTrie
from .base import Backend


class HealingBackend:
    """`Backend` of a matcher with healing bytes, around the grammar's own backend."""

    def __init__(self, inner: Backend, healing: bytes, tokens: list[bytes], trie: TokenTrie,
                 n_words: int) -> None:
        self._inner = inner
        self._h = healing
        self._pos = 0
        self._tokens = tokens
        self._trie = trie
        self._n_words = n_words
        self._rows: dict[int, np.ndarray] = {}  # shared with forks

    def _row(self) -> np.ndarray:
        row = self._rows.get(self._pos)
        if row is not None:
            return row
        rest, trie = self._h[self._pos:], self._trie
        ids = [i for p in range(1, len(rest) + 1) for i in self._ids_of(rest[:p])]
        lo, hi = trie.prefixed(rest)
        k = lo
        while k < hi:
            after = trie.token(k)[len(rest):]
            live = self._live_length(after) if after else -1
            if live == len(after):
                ids.append(int(trie.ids[k]))
                k += 1
            elif live < 0:
                k += 1
            else:  # every later token that starts with the dead prefix is dead too
                k = trie.prefixed(rest + after[:live + 1])[1]
        row = ids_to_row(np.array(sorted(set(ids)), dtype=np.int64), self._n_words)
        self._rows[self._pos] = row
        return row

    def _live_length(self, data: bytes) -> int:
        """How many leading bytes of `data` keep the grammar alive from its start (a binary
        search over all-or-nothing advances of `inner`, which is left at its start)."""
        inner = self._inner
        start = inner.snapshot()
        if inner.advance_bytes(data):
            inner.restore(start)
            return len(data)
        good, bad = 0, len(data)
        while bad - good > 1:
            mid = (good + bad) // 2
            if inner.advance_bytes(data[:mid]):
                inner.restore(start)
                good = mid
            else:
                bad = mid
        return good

    def _ids_of(self, spelled: bytes) -> list[int]:
        """The ids spelling exactly `spelled`: the first of the tokens that start with it."""
        trie = self._trie
        lo, hi = trie.prefixed(spelled)
        out = []
        while lo < hi and trie.offsets[lo + 1] - trie.offsets[lo] == len(spelled):
            out.append(int(trie.ids[lo]))
            lo += 1
        return out

    def fill(self, row: np.ndarray) -> None:
        if self._pos == len(self._h):
            self._inner.fill(row)
        else:
            np.copyto(row, self._row())

    def advance_bytes(self, data: bytes) -> bool:
        if self._pos == len(self._h):
            return self._inner.advance_bytes(data)
        rest = self._h[self._pos:]
        if not data:
            return False
        if rest.startswith(data):
            self._pos += len(data)
            return True
        if data.startswith(rest) and self._inner.advance_bytes(data[len(rest):]):
            self._pos = len(self._h)
            return True
        return False

    def advance_token(self, token_id: int) -> bool:
        if self._pos == len(self._h):
            return self._inner.advance_token(token_id)
        return self.advance_bytes(self._tokens[token_id])

    def is_complete(self) -> bool:
        return self._pos == len(self._h) and self._inner.is_complete()

    def snapshot(self) -> int:
        return self._inner.snapshot() * (len(self._h) + 1) + self._pos

    def restore(self, entry: int) -> None:
        inner, self._pos = divmod(entry, len(self._h) + 1)
        self._inner.restore(inner)

    def copy(self) -> HealingBackend:
        other = object.__new__(HealingBackend)
        other.__dict__.update(self.__dict__)
        other._inner = self._inner.copy()
        return other

    def set_limits(self, limits: RuntimeLimits) -> None:
        self._inner.set_limits(limits)

    def jump_forward_bytes(self, max_bytes: int) -> bytes:
        rest = self._h[self._pos:]
        if len(rest) >= max_bytes:
            return rest[:max_bytes]
        return rest + self._inner.jump_forward_bytes(max_bytes - len(rest))

    def memory_bytes(self) -> int:
        return self._inner.memory_bytes() + sum(r.nbytes for r in self._rows.values())
