"""Pushdown masks under a token budget: the tokens after which the text can still end in time.

A token t is allowed with `bound` tokens left after it when the grammar allows it and the sets
after it cost at most `bound` (`costs.py`). Walking every allowed token on the real sets would
cost a whole-vocabulary walk per fill; instead most tokens are proven in time by their state:

- `within[s]` (`CompletionCosts.within`) is the largest cost, inside s's rule, after a token of
  s's stored row (the tokens a root item (s, -1) consumes without leaving the rule), walked
  once per state (`within_cost`). A live item (s, o) of tail T finishes after any such token
  within within[s] + T, so when that is at most `bound` s's whole row is allowed at once (the
  state is *safe*);
- the rest is walked on the real sets with its cost (`check_costed_candidates`): the
  stored rows of the other live states (*tight*), and the uncertain tokens of every live state
  (they leave the state's rule: only the stack tells where they go).

Far from the budget's end every state is safe and a fill costs what an unbounded one does, with
the uncertain tokens' costs on top; near it the tight rows are walked. Candidates are gathered
as trie positions in a bit set (`posbits`, cleared as it is read), so they come out ascending,
each once, with no sort. The kernels rely on `kernels.py`'s and `costs.py`'s invariants, and on
their callers for `positions` (int32[vocab size]: each id's trie position, -1 if none),
`posbits` (a bit per trie position, all clear) and `cand` (a slot per trie position).
"""
from __future__ import annotations

import threading
import weakref

import numpy as np
from numba.types import int32, int64, uint32

from ..completion import UNREACHABLE
from ..jit import A, R, kernel
from ..vocab.trie import TokenTrie
from .costs import COSTS, TAIL_SETS, begin_costs
from .counters import MARK, N_SETS, TOKEN, WORK
from .earley import ENGINE, GRAMMAR, OVERFLOW, live_state, start_step
from .kernels import (
    NEED,
    STATUS,
    STORE,
    TRIE,
    UNC_BEGIN,
    UNC_LEN,
    add_eos,
    check_costed_candidates,
    state_row,
)

WITHIN = 1
"""`fill_budget` returns WITHIN + s when state s has no `within` yet."""


@kernel(A(uint32), R(int32), A(uint32), nrt=False, inline=True)
def _gather(words, positions, posbits):  # type: ignore[no-untyped-def]
    """Mark in `posbits` the trie positions of the tokens set in `words`."""
    for w in range(len(words)):
        bits = words[w]
        if bits:
            for b in range(32):
                if bits & (np.uint32(1) << np.uint32(b)):
                    p = positions[w * 32 + b]
                    if p >= 0:
                        posbits[p >> 5] |= np.uint32(1) << np.uint32(p & 31)


@kernel(A(uint32), A(int32), nrt=False, inline=True)
def _drain(posbits, cand):  # type: ignore[no-untyped-def]
    """Write the positions set in `posbits` into `cand` ascending, clearing them; how many."""
    n = 0
    for w in range(len(posbits)):
        bits = posbits[w]
        if bits:
            posbits[w] = 0
            for b in range(32):
                if bits & (np.uint32(1) << np.uint32(b)):
                    cand[n] = w * 32 + b
                    n += 1
    return n


@kernel(GRAMMAR, ENGINE, STORE, TRIE, R(int64), A(uint32), A(uint32), COSTS, R(int64),
        R(int32), A(uint32), A(int32), int64, nrt=False)
def fill_budget(g, e, store, trie, eos_ids, row, scratch, costs, within, positions, posbits,  # type: ignore[no-untyped-def]
                cand, bound):
    """Write into `row` the tokens allowed after the last set with at most `bound` tokens left
    after them (EOS where the text may end): 0, NEED - s when state s has no token set yet,
    WITHIN + s when it has no `within` yet, or OVERFLOW (sets unchanged)."""
    meta, dense, base, patches, uncertain_store = store
    tr, bc, acc, coff, crule, cnext, srule, rstart, nullable, relax, rtok = g
    items, sets, per_state, counters = e
    tails = costs[1]
    counters[WORK] = 0
    k = counters[N_SETS] - 1
    tok = sets[k, 2]
    counters[TOKEN] = tok
    begin_costs(coff, crule, cnext, srule, items, sets, costs, k)
    # Four marks per fill: safe, safe and ORed, tight and gathered, uncertain gathered.
    counters[MARK] += 4
    mark = counters[MARK]
    for i in range(sets[k, 0], sets[k + 1, 0]):
        if items[i, 1] == k:
            continue
        s = live_state(relax, rtok, srule, items, sets, i, tok)
        if meta[s, STATUS] < 0:
            return NEED - s
        if within[s] < 0:
            return WITHIN + s
        if within[s] + tails[i] <= bound:
            per_state[s, 2] = mark
    for w in range(len(row)):
        row[w] = 0
    for i in range(sets[k, 0], sets[k + 1, 0]):
        if items[i, 1] == k:
            continue
        s = live_state(relax, rtok, srule, items, sets, i, tok)
        if per_state[s, 2] == mark:
            state_row(meta, dense, base, patches, s, scratch)
            for w in range(len(row)):
                row[w] |= scratch[w]
            per_state[s, 2] = mark - 1
        elif per_state[s, 2] != mark - 1 and per_state[s, 2] != mark - 2:
            state_row(meta, dense, base, patches, s, scratch)
            _gather(scratch, positions, posbits)
            per_state[s, 2] = mark - 2
    for i in range(sets[k, 0], sets[k + 1, 0]):
        if items[i, 1] == k:
            continue
        s = live_state(relax, rtok, srule, items, sets, i, tok)
        if per_state[s, 2] == mark - 3:
            continue
        per_state[s, 2] = mark - 3
        for j in range(meta[s, UNC_BEGIN], meta[s, UNC_BEGIN] + meta[s, UNC_LEN]):
            p = uncertain_store[j]
            posbits[p >> 5] |= np.uint32(1) << np.uint32(p & 31)
    n = _drain(posbits, cand)
    r = check_costed_candidates(g, e, cand, n, trie, row, costs, bound)
    counters[N_SETS] = k + 1
    if r == OVERFLOW:
        return OVERFLOW
    add_eos(sets, k, eos_ids, row)
    return 0


@kernel(GRAMMAR, ENGINE, int32, STORE, TRIE, A(uint32), A(uint32), COSTS, R(int32), A(uint32),
        A(int32), nrt=False)
def within_cost(g, e, state, store, trie, words, row, costs, positions, posbits, cand):  # type: ignore[no-untyped-def]
    """The largest cost inside `state`'s rule after a token of its stored row (which must be
    computed), walked from the root item (state, -1) on `e`; or OVERFLOW (`e` must grow).
    `words` and `row` are scratch rows."""
    meta, dense, base, patches, uncertain_store = store
    tr, bc, acc, coff, crule, cnext, srule, rstart, nullable, relax, rtok = g
    items, sets, per_state, counters = e
    counters[WORK] = 0
    if start_step(tr, acc, coff, crule, cnext, srule, rstart, nullable, items, sets, per_state,
                  counters, state) == OVERFLOW:
        return OVERFLOW
    costs[4][TAIL_SETS] = 0
    begin_costs(coff, crule, cnext, srule, items, sets, costs, 0)
    state_row(meta, dense, base, patches, state, words)
    _gather(words, positions, posbits)
    n = _drain(posbits, cand)
    for w in range(len(row)):
        row[w] = 0
    return check_costed_candidates(g, e, cand, n, trie, row, costs, UNREACHABLE - 1)


_POSITIONS: "weakref.WeakKeyDictionary[TokenTrie, np.ndarray]" = weakref.WeakKeyDictionary()
_THREAD = threading.local()


def candidate_buffers(trie: TokenTrie, vocab_size: int) -> tuple[np.ndarray, np.ndarray,
                                                                  np.ndarray]:
    """(positions, posbits, cand) of the kernels here over `trie`: the positions shared by
    every grammar over it, the scratch one per thread (for the trie it last walked)."""
    positions = _POSITIONS.get(trie)
    if positions is None or len(positions) != vocab_size:
        positions = np.full(vocab_size, -1, dtype=np.int32)
        positions[trie.ids] = np.arange(trie.n_tokens, dtype=np.int32)
        _POSITIONS[trie] = positions
    held = getattr(_THREAD, "buffers", None)
    if held is None or held[0]() is not trie:
        held = (weakref.ref(trie), np.zeros((trie.n_tokens + 31) // 32, dtype=np.uint32),
                np.zeros(max(1, trie.n_tokens), dtype=np.int32))
        _THREAD.buffers = held
    return positions, held[1], held[2]
