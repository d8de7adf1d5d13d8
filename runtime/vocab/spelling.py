"""What the automata read for each token id: its spelling, and token references.

Automata are byte-level; a token is accepted by walking its spelling. Text tokens spell their
bytes. A *token reference* in a grammar (`<[151645]>`, `<|im_end|>`, `<think>`) consumes one
token as one step, never text, so the tokens a grammar can reference are spelled with a marker
that no text contains:

| token | spelling |
|---|---|
| a text token | its bytes (none if they contain `MARKER`: such a token never spells UTF-8 text) |
| a control token (special, not EOS) | `MARKER` + its id in 3 bytes, big-endian |
| a text token the grammar names in a reference (`named`) | `MARKER` + id + its bytes (just `MARKER` + id if they contain `MARKER`) |
| EOS, padding | nothing (EOS is allowed where the text may end, by the matcher) |

`MARKER` is 0xFF, which never occurs in UTF-8, and every grammar frontend produces UTF-8 text
only, so a text automaton never reads it and never allows a control token; an automaton that
reads `MARKER` + id allows exactly that token there. No text token can produce a marker (none
spells 0xFF), and a spelling is read whole by one token, so an automaton is never inside a
marker between two tokens. A named text token is read as a reference everywhere in that grammar:
where the grammar names it, or a negated reference admits it, it is allowed as one step; where
the grammar has only text its text must come from other tokens.

Invariant of a `TokenSpelling` (built here only): `data` uint8 and `offsets` int64[size + 1]
as in `Vocabulary`; `named` sorted, unique ids of text tokens (bytes that are not empty).
"""
from __future__ import annotations

import functools
import threading
import weakref
from dataclasses import dataclass

import numpy as np

from ..arrays import immutable
from .vocabulary import Vocabulary

__all__ = ["MARKER", "MAX_REFERENCE_ID", "TokenSpelling", "check_named", "marker",
           "token_spelling"]

MARKER = 0xFF
MAX_REFERENCE_ID = (1 << 24) - 1
"""The largest id a marker spells (3 bytes); a larger vocabulary has no control-token markers."""


def marker(token_id: int) -> bytes:
    """`MARKER` + the id in 3 bytes: how a reference to `token_id` starts."""
    if not 0 <= token_id <= MAX_REFERENCE_ID:
        raise ValueError(f"token id {token_id} is past the {MAX_REFERENCE_ID} a marker spells")
    return bytes([MARKER]) + token_id.to_bytes(3, "big")


@dataclass(frozen=True, eq=False)
class TokenSpelling:
    """The spelling of every token id of `vocab`, with the text tokens in `named` read as
    references."""

    vocab: Vocabulary
    named: tuple[int, ...]
    data: np.ndarray
    offsets: np.ndarray

    @functools.cached_property
    def list(self) -> list[bytes]:
        """Each id's spelling as Python bytes (the hot path of walking one token)."""
        raw = self.data.tobytes()
        offs = self.offsets.tolist()
        return [raw[offs[i]:offs[i + 1]] for i in range(self.vocab.size)]


def _build(vocab: Vocabulary, named: tuple[int, ...]) -> TokenSpelling:
    text = vocab.grammar_token_list
    pieces = [b"" if MARKER in t else t for t in text]
    if vocab.size - 1 <= MAX_REFERENCE_ID:
        eos = set(vocab.eos_token_ids.tolist())
        for i in vocab.special_token_ids.tolist():
            if i not in eos:
                pieces[i] = marker(i)
    for i in named:
        pieces[i] = marker(i) + pieces[i]
    offsets = np.zeros(vocab.size + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64, count=vocab.size), out=offsets[1:])
    data = np.frombuffer(b"".join(pieces), dtype=np.uint8)
    return TokenSpelling(vocab, named, immutable(data), immutable(offsets))


def check_named(vocab: Vocabulary, named: tuple[int, ...]) -> tuple[int, ...]:
    """`named` as sorted unique ids, each a text token of `vocab` that a marker can spell;
    ValueError otherwise."""
    ids = sorted(set(named))
    text = vocab.grammar_token_list
    for i in ids:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < vocab.size:
            raise ValueError(f"named token {i!r} is not an id of the vocabulary")
        if not text[i]:
            raise ValueError(f"named token {i} is not a text token")
        if i > MAX_REFERENCE_ID:
            raise ValueError(f"named token {i} is past the {MAX_REFERENCE_ID} a marker spells")
    return tuple(int(i) for i in ids)


_SPELLINGS: "weakref.WeakKeyDictionary[Vocabulary, dict[tuple[int, ...], TokenSpelling]]" = \
    weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def token_spelling(vocab: Vocabulary, named: tuple[int, ...] = ()) -> TokenSpelling:
    """The (cached) spelling of `vocab` with the text tokens `named` read as references."""
    named = check_named(vocab, named)
    with _LOCK:
        per_vocab = _SPELLINGS.setdefault(vocab, {})
        found = per_vocab.get(named)
    if found is None:
        found = _build(vocab, named)
        with _LOCK:
            if len(per_vocab) >= 64:
                per_vocab.clear()
            found = per_vocab.setdefault(named, found)
    return found
