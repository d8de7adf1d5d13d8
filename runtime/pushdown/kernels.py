"""Numba kernels for token sets of rule-automaton states and for filling pushdown masks.

`classify_tokens` walks the token trie (or the slices of it a `ContentSplit` plan leaves) from
one state as a root item (its rule's caller unknown) and sorts every token into: accepted (some
path consumes it within the rule instance, whatever the stack below), uncertain (every surviving
path needs to leave the rule first, at a byte that can follow the rule: only the real stack can
tell) or rejected (everything else).

`fill_mask` ORs the accepted rows of the live states of the last Earley set and checks each
uncertain token by pushing its bytes on the real sets, sharing prefixes between neighbours in
trie order. Argument groups `g` and `e` are those of `earley.py`; `store` is the token-set store
of `PushdownTokenSets` (see there); `trie` = (data, offsets, ids, lcp, skip) of a `TokenTrie`
(`skip`: `next_shorter_prefix` of its lcp). Besides the
table and trie invariants, the kernels rely on their callers for buffer sizes: `row` and
`scratch` have exactly the bitmask's words and cover every trie id and EOS id (the matcher's
bitmask check, `TokenTrie.check_ids`, `Vocabulary`), `popok` and `chain` have `max_len + 2`
rows, `uncertain` holds every trie position, and a store entry's patches and uncertain
positions lie in its arrays (written by `PushdownTokenSets` before the entry's status).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numba import carray, get_thread_id, prange
from numba.types import Tuple, boolean, int32, int64, uint8, uint32

from ..jit import A, R, address, kernel
from .costs import COSTS, set_cost, set_tails
from .counters import GEN, MARK, N_ITEMS, N_SETS, SCANNED, TOKEN, WORK
from .earley import (
    ENGINE,
    GRAMMAR,
    OVERFLOW,
    add_item,
    close_set,
    live_state,
    push_step,
    start_step,
)

TRIE = Tuple((R(uint8), R(int64), R(int32), R(int32), R(int32)))
"""The type of `trie`."""
STORE = Tuple((A(int64, 2), A(uint32, 2), A(uint32), A(uint32, 2), A(int32)))
"""The type of `store`, a token-set store snapshot (`token_sets.py`)."""

# Columns of the store's per-state metadata.
STATUS, DEFAULT, SLOT, PATCH_BEGIN, PATCH_LEN, UNC_BEGIN, UNC_LEN = range(7)
ZERO, BASE, OWN = 0, 1, 2
NEED = -2


@kernel(R(int32), R(int32, 2), R(int32, 2), R(int64), A(int64, 2), int64, nrt=False, inline=True)
def _note_chain(coff, items, sets, counters, chain, p):  # type: ignore[no-untyped-def]
    """Record in chain[p] whether the materialized set p is the closure of one scanned item
    whose state calls no rule: (state, origin, item slot), or state -1."""
    j = sets[p, 0]
    s = items[j, 0]
    if counters[SCANNED] == 1 and coff[s] == coff[s + 1]:
        chain[p, 0] = s
        chain[p, 1] = items[j, 1]
        chain[p, 2] = j
    else:
        chain[p, 0] = -1


@kernel(R(int32, 2), R(boolean), R(int32), R(int32), R(int32), R(int32), R(int32), R(boolean),
        A(int32, 2), A(int32, 2), A(int64, 2), A(int64), R(int64, 2), int64, boolean, nrt=False,
        inline=True)
def _chain_set(tr, acc, coff, crule, cnext, srule, rstart, nullable, items, sets, per_state,  # type: ignore[no-untyped-def]
               counters, chain, p, closed):
    """Write set p of a chain: its one item, with its closure when `closed`; OVERFLOW or 1."""
    j = chain[p, 2]
    if j >= items.shape[0] or p + 2 >= sets.shape[0]:
        return OVERFLOW
    sets[p, 0] = j
    sets[p, 2] = counters[TOKEN] + (p > 0)
    if not closed:
        items[j, 0] = chain[p, 0]
        items[j, 1] = chain[p, 1]
        items[j, 2] = -1
        sets[p, 1] = 0
        sets[p + 1, 0] = j + 1
        counters[N_ITEMS] = j + 1
        return 1
    counters[GEN] += 1
    counters[N_ITEMS] = j
    if add_item(items, per_state, counters, chain[p, 0], chain[p, 1]) == OVERFLOW:
        return OVERFLOW
    if close_set(tr, acc, coff, crule, cnext, srule, rstart, nullable, items, sets, per_state,
                 counters, p) == OVERFLOW:
        return OVERFLOW
    sets[p + 1, 0] = counters[N_ITEMS]
    return 1


@kernel(GRAMMAR, ENGINE, int32, R(boolean, 2), Tuple((R(uint8), R(int64), R(int32), A(int32),
        R(int32), A(int64), R(uint8), R(int64), R(int32), A(int32), R(int32), A(int64), A(int32))),
        R(int64, 2),
        A(boolean), A(int64, 2), A(uint32), A(int32), nrt=False)
def classify_tokens(g, e, state, follows, tries, slices, popok, chain, row, uncertain):  # type: ignore[no-untyped-def]
    """Walk the tokens of `slices` from root item (state, -1): set accepted tokens' bits in
    `row` (uint32 words), write the uncertain ones' positions in the first trie to `uncertain`
    (ascending); return (accepted, uncertain) counts, or (OVERFLOW, 0) when `e` must grow.

    `tries` is (data, offsets, lcp, skip, ids, byte_start) of two tries (`trie_index`), then
    the positions in the first of the second's tokens (ascending). A row
    (which, begin, end) of `slices` walks tokens begin..end of trie `which` (0 or 1), whose
    first bytes no token before `begin` has (so lcp[begin] is 0); the slices come in trie
    order. `popok` (bool) and `chain` (int64[:, 3]) are scratch of max token length + 2 rows.

    A set that is the closure of one scanned item whose state calls no rule, and each set
    after it reached by a byte to another such state, is only noted in `chain` (state,
    origin, the item slot it would take) and written when a byte leaves those states: no set
    after it can have it as its origin, so inside a string or a name the walk is one table
    lookup per byte. The items the closure of an accepting state adds (callers moved past the
    finished rule) can scan only the bytes that follow its rule (`follows`, the table's
    `follow`), so on any other byte the one item decides alone, and the set is written whole
    only before such a byte."""
    tr, bc, acc, coff, crule, cnext, srule, rstart, nullable, relax, rtok = g
    items, sets, per_state, counters = e
    if start_step(tr, acc, coff, crule, cnext, srule, rstart, nullable, items, sets, per_state,
                  counters, state) == OVERFLOW:
        return OVERFLOW, 0
    follow = follows[srule[state]]
    popok[0] = False
    _note_chain(coff, items, sets, counters, chain, 0)
    position = tries[12]
    n_acc = 0
    n_unc = 0
    for x in range(slices.shape[0]):
        which, first, end = slices[x, 0], slices[x, 1], slices[x, 2]
        if which == 0:
            data, offsets, lcp, skip, ids, starts = (tries[0], tries[1], tries[2], tries[3],
                                                     tries[4], tries[5])
        else:
            data, offsets, lcp, skip, ids, starts = (tries[6], tries[7], tries[8], tries[9],
                                                     tries[10], tries[11])
        good = 0
        dead_uncertain = False
        i = first
        while i < end:
            p = lcp[i]
            if p > good:
                if dead_uncertain:
                    uncertain[n_unc] = i if which == 0 else position[i]
                    n_unc += 1
                    i += 1
                else:
                    i = min(skip[i], end)
                continue
            begin = offsets[i]
            length = offsets[i + 1] - begin
            alive = True
            while p < length:
                b = data[begin + p]
                s = chain[p, 0]
                if s >= 0 and acc[s] and follows[srule[s], b]:
                    if _chain_set(tr, acc, coff, crule, cnext, srule, rstart, nullable, items,
                                  sets, per_state, counters, chain, p, True) == OVERFLOW:
                        return OVERFLOW, 0
                    s = -1
                if s >= 0:
                    popok[p + 1] = popok[p]
                    o = chain[p, 1]
                    if (len(relax) and relax[s] >= 0 and o >= 0
                            and counters[TOKEN] - sets[o, 2] >= rtok[srule[s]]):
                        t = tr[relax[s], bc[b]]
                    else:
                        t = tr[s, bc[b]]
                    if t < 0:
                        alive = False
                        break
                    if coff[t] == coff[t + 1]:
                        chain[p + 1, 0] = t
                        chain[p + 1, 1] = chain[p, 1]
                        chain[p + 1, 2] = chain[p, 2]
                        p += 1
                        continue
                    if _chain_set(tr, acc, coff, crule, cnext, srule, rstart, nullable, items,
                                  sets, per_state, counters, chain, p, False) == OVERFLOW:
                        return OVERFLOW, 0
                else:
                    popok[p + 1] = popok[p] or (sets[p, 1] == 1 and follow[b])
                counters[N_SETS] = 1 + p
                r = push_step(tr, bc, acc, coff, crule, cnext, srule, rstart, nullable, relax,
                              rtok, items, sets, per_state, counters, b, len(relax) > 0)
                if r == OVERFLOW:
                    return OVERFLOW, 0
                if r == 0:
                    alive = False
                    break
                p += 1
                _note_chain(coff, items, sets, counters, chain, p)
            good = p
            if alive:
                t = ids[i]
                row[t >> 5] |= np.uint32(1) << np.uint32(t & 31)
                n_acc += 1
                dead_uncertain = False
            else:
                dead_uncertain = popok[p + 1]
                if dead_uncertain:
                    uncertain[n_unc] = i if which == 0 else position[i]
                    n_unc += 1
                elif p == 0:
                    # Its first byte dies from the root item, surely: so does every token
                    # that starts with that byte (the rest of its run).
                    i = min(starts[data[begin] + 1], end)
                    continue
            i += 1
    counters[N_SETS] = 1
    return n_acc, n_unc


@kernel(R(int64, 2), R(uint32, 2), R(uint32), R(uint32, 2), int32, A(uint32), nrt=False)
def state_row(meta, dense, base, patches, s, out):  # type: ignore[no-untyped-def]
    kind = meta[s, DEFAULT]
    if kind == OWN:
        slot = meta[s, SLOT]
        for w in range(len(out)):
            out[w] = dense[slot, w]
    elif kind == BASE:
        for w in range(len(out)):
            out[w] = base[w]
    else:
        for w in range(len(out)):
            out[w] = 0
    for j in range(meta[s, PATCH_BEGIN], meta[s, PATCH_BEGIN] + meta[s, PATCH_LEN]):
        out[patches[j, 0]] = patches[j, 1]


@kernel(A(int32, 2), int64, R(int64), A(uint32), nrt=False, inline=True)
def add_eos(sets, k, eos_ids, row):  # type: ignore[no-untyped-def]
    """Set the EOS ids in `row` where set k may end the text (its root popped)."""
    if sets[k, 1] == 1:
        for t in eos_ids:
            row[t >> 5] |= np.uint32(1) << np.uint32(t & 31)


@kernel(GRAMMAR, ENGINE, STORE, TRIE, R(int64), A(uint32), A(uint32), nrt=False)
def fill_mask(g, e, store, trie, eos_ids, row, scratch):  # type: ignore[no-untyped-def]
    """Write the allowed next tokens of the last set into `row` (uint32 words): 0 on success,
    NEED - s when state s has no token set yet, OVERFLOW when `e` must grow (sets unchanged).
    The rows of the live states (`live_state`: an expired item's is its relaxed copy) are
    ORed first, then each state's uncertain tokens are checked straight from the store (a
    token in several lists is checked again only while rejected). Calls the variant of the
    table (`fill_kernel`), for a batch, whose tables may differ."""
    if len(g[9]) == 0:
        return fill_unbounded_mask(g, e, store, trie, eos_ids, row, scratch)
    return fill_bounded_mask(g, e, store, trie, eos_ids, row, scratch)


# The fill of a table without token bounds and that of one with them are two kernels, each
# calling its own walk: a process compiles only the variant its tables need on their first mask
# (each costs seconds on a fresh machine, `bench/jit_cost.py`), and the other when a table
# needs it. Each is made by `_fill_variant` with `bounded` a constant of its closure
# (`runtime/jit.py`, variants): the branches of the other are pruned before typing.
def _fill_variant(name: str, bounded: bool) -> Any:
    """`fill_mask` of a table without token bounds (`g[9]`, its `relax`, empty) or, where
    `bounded`, with them: a table without bounds reads its items' states as they are (through
    `live_state` the in-string fill of JSON was about a quarter slower)."""

    def fill(g, e, store, trie, eos_ids, row, scratch):  # type: ignore[no-untyped-def]
        meta, dense, base, patches, uncertain_store = store
        tr, bc, acc, coff, crule, cnext, srule, rstart, nullable, relax, rtok = g
        items, sets, per_state, counters = e
        counters[WORK] = 0
        k = counters[N_SETS] - 1
        tok = sets[k, 2] if bounded else 0
        counters[TOKEN] = tok
        # Three marks per fill (live, row done, candidates done), none equal to an earlier
        # fill's.
        counters[MARK] += 3
        mark = counters[MARK]
        for i in range(sets[k, 0], sets[k + 1, 0]):
            if items[i, 1] == k:
                continue
            s = live_state(relax, rtok, srule, items, sets, i, tok) if bounded else items[i, 0]
            if per_state[s, 2] == mark:
                continue
            if meta[s, STATUS] < 0:
                return NEED - s
            per_state[s, 2] = mark
        n_kernel = 0
        for i in range(sets[k, 0], sets[k + 1, 0]):
            s = live_state(relax, rtok, srule, items, sets, i, tok) if bounded else items[i, 0]
            if per_state[s, 2] != mark:
                continue
            per_state[s, 2] = mark - 1
            if n_kernel == 0:
                state_row(meta, dense, base, patches, s, row)
            else:
                state_row(meta, dense, base, patches, s, scratch)
                for w in range(len(row)):
                    row[w] |= scratch[w]
            n_kernel += 1
        if n_kernel == 0:
            for w in range(len(row)):
                row[w] = 0
        # No costs: the walk does not read them, any arrays of their types will do.
        costs = (counters, counters, per_state, per_state, counters)
        for i in range(sets[k, 0], sets[k + 1, 0]):
            s = live_state(relax, rtok, srule, items, sets, i, tok) if bounded else items[i, 0]
            if per_state[s, 2] != mark - 1:
                continue
            per_state[s, 2] = mark - 2
            b0 = meta[s, UNC_BEGIN]
            n = meta[s, UNC_LEN]
            if n:
                if bounded:
                    r = check_bounded_candidates(g, e, uncertain_store[b0:b0 + n], n, trie, row,
                                                 costs, -1)
                else:
                    r = check_candidates(g, e, uncertain_store[b0:b0 + n], n, trie, row, costs,
                                         -1)
                counters[N_SETS] = k + 1
                if r == OVERFLOW:
                    return OVERFLOW
        add_eos(sets, k, eos_ids, row)
        return 0

    return kernel(GRAMMAR, ENGINE, STORE, TRIE, R(int64), A(uint32), A(uint32), nrt=False,
                  name=name)(fill)


fill_unbounded_mask = _fill_variant("fill_unbounded_mask", False)
fill_bounded_mask = _fill_variant("fill_bounded_mask", True)


def fill_kernel(g: tuple[np.ndarray, ...]) -> Any:
    """The fill kernel of the table whose arrays are `g`: `fill_bounded_mask` where it has
    token bounds, else `fill_unbounded_mask` (a table that builds a bounded rule on the way
    changes variant, so choose at each fill)."""
    return fill_bounded_mask if len(g[9]) else fill_unbounded_mask


@kernel(GRAMMAR, STORE, TRIE, R(int64), R(int64), A(uint32, 2), int64, A(uint32), inline=True)
def _fill_at(g, store, trie, eos_ids, h, rows, row, scratch):  # type: ignore[no-untyped-def]
    """`fill_mask` of the recognizer whose arrays lie where header `h` says
    (`EarleyArrays.header`) into rows[row]."""
    e = (carray(address(h[0]), (h[1], 3), np.int32), carray(address(h[2]), (h[3], 3), np.int32),
         carray(address(h[4]), (h[5], 3), np.int64), carray(address(h[6]), (9,), np.int64))
    return fill_mask(g, e, store, trie, eos_ids, rows[row], scratch)


# `fill_rows` and `fill_rows_parallel` fill many recognizers of one table in one call (a
# batch, `runtime/batch.py`): recognizer i, whose arrays lie where headers[i] says, into row
# row_ids[i] of `rows`, its result in results[i]. They rely on their caller for headers of
# live recognizers whose `per_state` covers the table, distinct row ids in range and a scratch
# row per thread. With reference counting, which `carray` needs: the arrays it makes own
# nothing, so it costs nothing.
@kernel(GRAMMAR, STORE, TRIE, R(int64), R(int64, 2), A(uint32, 2), R(int64), A(uint32, 2),
        A(int64))
def fill_rows(g, store, trie, eos_ids, headers, rows, row_ids, scratch, results):  # type: ignore[no-untyped-def]
    """The batch on the calling thread."""
    for i in range(headers.shape[0]):
        results[i] = _fill_at(g, store, trie, eos_ids, headers[i], rows, row_ids[i], scratch[0])


@kernel(GRAMMAR, STORE, TRIE, R(int64), R(int64, 2), A(uint32, 2), R(int64), A(uint32, 2),
        A(int64), parallel=True)
def fill_rows_parallel(g, store, trie, eos_ids, headers, rows, row_ids, scratch, results):  # type: ignore[no-untyped-def]
    """The batch on Numba's threads (scratch row `get_thread_id()` each)."""
    for i in prange(headers.shape[0]):
        results[i] = _fill_at(g, store, trie, eos_ids, headers[i], rows, row_ids[i],
                              scratch[get_thread_id()])


def _walk_variant(name: str, costed: bool, bounded: bool | None) -> Any:
    """A kernel (g, e, cand, n, trie, row, costs, bound) that sets the bits of the candidate
    tokens (trie positions cand[:n], ascending) whose bytes the real sets accept and, where
    `costed`, after which the sets cost at most `bound` (`costs.py`: each set the walk builds
    gets its tails); it returns the largest cost of a candidate accepted by its bytes (0 where
    not `costed`), or OVERFLOW. `costed` and `bounded` (the table has token bounds; None: read
    from the table) are constants of the kernel (`runtime/jit.py`, variants), so the fill's
    walk carries no cost branches and, without bounds, its steps read no token counts
    (`push_step`; a quarter of the in-string fill of JSON otherwise).

    Consecutive candidates share the sets of their common prefix. Once a candidate dies at
    byte `dead`, every trie token sharing its first dead + 1 bytes dies too: the trie's skip
    chain finds where they end and a binary search the next candidate past them (after a JSON
    value, tens of thousands of candidates start with a space and a letter: one step per
    distinct two-byte prefix instead of one per token)."""

    def walk(g, e, cand, n, trie, row, costs, bound):  # type: ignore[no-untyped-def]
        tr, bc, acc, coff, crule, cnext, srule, rstart, nullable, relax, rtok = g
        items, sets, per_state, counters = e
        data, offsets, ids, lcp, skip = trie
        m = len(ids)
        base_sets = counters[N_SETS]
        prev = -1
        depth = 0
        dead = -1
        most = 0
        x = 0
        while x < n:
            c = cand[x]
            x += 1
            t = ids[c]
            if row[t >> 5] & (np.uint32(1) << np.uint32(t & 31)):
                continue
            begin = offsets[c]
            length = offsets[c + 1] - begin
            common = 0
            if prev >= 0:
                pb = offsets[prev]
                limit = min(length, max(depth, dead + 1))
                while common < limit and data[begin + common] == data[pb + common]:
                    common += 1
            if dead >= 0 and common > dead:
                continue
            if common > depth:
                common = depth
            counters[N_SETS] = base_sets + common
            p = common
            dead = -1
            while p < length:
                r = push_step(tr, bc, acc, coff, crule, cnext, srule, rstart, nullable, relax,
                              rtok, items, sets, per_state, counters, data[begin + p],
                              len(relax) > 0 if bounded is None else bounded)
                if r == OVERFLOW:
                    counters[N_SETS] = base_sets
                    return OVERFLOW
                if r == 0:
                    dead = p
                    break
                if costed:
                    set_tails(coff, crule, cnext, srule, items, sets, costs,
                              counters[N_SETS] - 1)
                p += 1
            depth = p
            prev = c
            if dead < 0:
                if costed:
                    cost = set_cost(items, sets, costs, counters[N_SETS] - 1)
                    most = max(most, cost)
                    if cost > bound:
                        continue
                row[t >> 5] |= np.uint32(1) << np.uint32(t & 31)
                continue
            end = c + 1
            while end < m and lcp[end] > dead:
                end = skip[end]
            lo, hi = x, n
            while lo < hi:
                mid = (lo + hi) >> 1
                if cand[mid] < end:
                    lo = mid + 1
                else:
                    hi = mid
            x = lo
        counters[N_SETS] = base_sets
        return most

    return kernel(GRAMMAR, ENGINE, R(int32), int64, TRIE, A(uint32), COSTS, int64, nrt=False,
                  name=name)(walk)


check_candidates = _walk_variant("check_candidates", False, False)
"""The unbounded fill's walk: no costs (`costs` and `bound` unread), no token bounds."""
check_bounded_candidates = _walk_variant("check_bounded_candidates", False, True)
"""The bounded fill's walk: no costs, token bounds."""
check_costed_candidates = _walk_variant("check_costed_candidates", True, None)
"""The walk with costs (`budget.py`): a token whose sets cost more than `bound` stays unset."""
