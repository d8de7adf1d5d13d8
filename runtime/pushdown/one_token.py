"""One-token steps: exactly one token outside an excluded set, where a grammar has a single
negated token reference (`!<[S]>` alone or counted, XGrammar's `exclude_token`).

A token's text can also be written by several tokens, so "one token" is not a property of
bytes. The compiler spells the j-th distinct excluded set S_j's step as `MARKER` + (V + j), V
the vocabulary size (`compiler/lowering/tokens.py`): an id no token has, so no token's own
spelling walks it. The matcher then reads a token t two ways at once:

- its own spelling, as everywhere (`earley.push_bytes`);
- for each j with t in `allowed[j]` (every id but S_j, the EOS ids and padding: ids that are
  neither text nor control tokens), step j's marker.

The set after t is the union of the last sets of those walks. Each walk is pushed from the
same set and its last set's items (state, origin) kept; the walk of the marker's 4 bytes can
only have origins at or before its start or in its own last set (a marker is one literal inside
one rule automaton: no state inside it calls or ends a rule), so re-reading that last origin as
the last set of the union keeps every item's meaning. `rebuild_last_set` then rebuilds the
union set from those items with its closure. A fill ORs `allowed[j]` into the row for each j
whose marker the last set can scan (pushed and dropped again).

Invariant of `OneTokenSteps` (built by `one_token_steps` only): `markers` uint8[4m], step j's
marker at 4j; `allowed` uint32[m, n_words], row j the tokens step j reads, in the bitmask's
layout (bit t % 32 of word t // 32). `excluded` keeps the sets for serialization.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba.types import int32

from ..arrays import immutable
from ..jit import R, kernel
from ..vocab.spelling import MARKER, MAX_REFERENCE_ID
from ..vocab.vocabulary import Vocabulary
from .counters import GEN, N_ITEMS, N_SETS, SCANNED, WORK
from .earley import ENGINE, GRAMMAR, OVERFLOW, add_item, close_set

__all__ = ["OneTokenSteps", "check_one_token", "one_token_steps", "rebuild_last_set"]


@dataclass(frozen=True, eq=False)
class OneTokenSteps:
    """The one-token steps of one compiled grammar (module docstring)."""

    excluded: tuple[tuple[int, ...], ...]
    markers: np.ndarray
    allowed: np.ndarray

    def reads(self, token_id: int) -> list[int]:
        """The steps that token `token_id` can be."""
        word, bit = token_id >> 5, np.uint32(1 << (token_id & 31))
        return [j for j in range(len(self.excluded)) if self.allowed[j, word] & bit]


def check_one_token(vocab: Vocabulary, excluded: tuple) -> tuple[tuple[int, ...], ...]:
    """`excluded` as a tuple of sorted unique id tuples of `vocab`, each step's marker id
    within what a marker spells; ValueError otherwise."""
    if not isinstance(excluded, tuple):
        raise ValueError("one_token must be a tuple of excluded id sets")
    if vocab.size - 1 + len(excluded) > MAX_REFERENCE_ID:
        raise ValueError(f"{len(excluded)} one-token steps past a vocabulary of {vocab.size} "
                         f"ids need marker ids past {MAX_REFERENCE_ID}")
    out = []
    for ids in excluded:
        if not isinstance(ids, (tuple, list)) or not all(
                isinstance(i, (int, np.integer)) and not isinstance(i, bool)
                and 0 <= i < vocab.size for i in ids):
            raise ValueError(f"a one-token step's excluded set must list ids of the "
                             f"vocabulary, got {ids!r}")
        out.append(tuple(sorted({int(i) for i in ids})))
    return tuple(out)


def one_token_steps(vocab: Vocabulary, offsets: np.ndarray, excluded: tuple[tuple[int, ...], ...],
                    n_words: int) -> OneTokenSteps:
    """The steps of the checked sets `excluded` over `vocab` spelled with `offsets` (a
    `TokenSpelling`'s: a token that spells something, or a text token whose bytes no text
    holds, such as a lone 0xFF, is read)."""
    size = vocab.size
    base = np.zeros(n_words * 32, dtype=bool)
    base[:size] = (np.diff(offsets[:size + 1]) > 0) | (np.diff(vocab.token_offsets[:size + 1]) > 0)
    base[vocab.eos_token_ids] = False
    allowed = np.zeros((len(excluded), n_words), dtype=np.uint32)
    markers = np.zeros(4 * len(excluded), dtype=np.uint8)
    for j, ids in enumerate(excluded):
        bits = base.copy()
        bits[list(ids)] = False
        allowed[j] = np.packbits(bits, bitorder="little").view(np.uint32)
        markers[4 * j] = MARKER
        markers[4 * j + 1:4 * j + 4] = np.frombuffer((size + j).to_bytes(3, "big"), np.uint8)
    return OneTokenSteps(excluded, immutable(markers), immutable(allowed))


@kernel(GRAMMAR, ENGINE, R(int32, 2), nrt=False)
def rebuild_last_set(g, e, seeds):  # type: ignore[no-untyped-def]
    """Rebuild the last set from the items `seeds` (rows of state, origin; each origin at most
    the last set's index) and their closure: 1, or OVERFLOW (the caller runs it again on
    grown arrays; every run starts over from the seeds)."""
    tr, bc, acc, coff, crule, cnext, srule, rstart, nullable, relax, rtok = g
    items, sets, per_state, counters = e
    counters[WORK] = 0
    k = counters[N_SETS] - 1
    counters[GEN] += 1
    counters[N_ITEMS] = sets[k, 0]
    for i in range(seeds.shape[0]):
        if add_item(items, per_state, counters, seeds[i, 0], seeds[i, 1]) == OVERFLOW:
            return OVERFLOW
    counters[SCANNED] = counters[N_ITEMS] - sets[k, 0]
    if close_set(tr, acc, coff, crule, cnext, srule, rstart, nullable, items, sets, per_state,
                 counters, k) == OVERFLOW:
        return OVERFLOW
    sets[k + 1, 0] = counters[N_ITEMS]
    return 1
