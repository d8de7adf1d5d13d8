"""The one-pass kernels behind the token-set stores and the content plan, against numpy."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.runtime.content_tokens import known_row, plan_slices
from grammask.runtime.row_kernels import array_hash, differing_words, row_patch, write_patches

words_strategy = st.lists(st.integers(0, 2**32 - 1) | st.just(0), min_size=1, max_size=80)


@settings(max_examples=200, deadline=None)
@given(words_strategy, st.randoms(use_true_random=False))
def test_differing_words_and_patches_match_numpy(values: list[int], rng) -> None:
    words = np.array(values, dtype=np.uint32)
    base = words.copy()
    for i in range(len(base)):
        if rng.random() < 0.3:
            base[i] = rng.getrandbits(32)
    assert differing_words(words, base) == (np.count_nonzero(words),
                                            np.count_nonzero(words != base))
    for against_base, default in ((False, np.zeros_like(words)), (True, base)):
        idx = np.flatnonzero(words != default)
        patches = np.full((len(words) + 3, 2), 7, dtype=np.uint32)
        assert write_patches(words, base, against_base, patches, 2) == len(idx)
        assert (patches[2:2 + len(idx), 0] == idx).all()
        assert (patches[2:2 + len(idx), 1] == words[idx]).all()
        assert (patches[:2] == 7).all() and (patches[2 + len(idx):] == 7).all()
    for most in (0, 3, len(words)):
        default, index, value = row_patch(words, base, most)
        n_zero, n_base = np.count_nonzero(words), np.count_nonzero(words != base)
        if min(n_zero, n_base) > most:
            assert default == 2 and len(index) == len(value) == 0
            continue
        assert default == (1 if n_base < n_zero else 0)
        rebuilt = (base if default else np.zeros_like(words)).copy()
        rebuilt[index] = value
        assert (rebuilt == words).all() and len(index) == min(n_zero, n_base)
        assert index.dtype == np.int64 and (np.diff(index) > 0).all()


@settings(max_examples=200, deadline=None)
@given(words_strategy, st.integers(0, 79), st.integers(0, 31))
def test_array_hash_is_a_function_of_the_elements(values: list[int], at: int, bit: int) -> None:
    words = np.array(values, dtype=np.uint32)
    assert array_hash(words) == array_hash(words.copy())
    flipped = words.copy()
    flipped[at % len(words)] ^= np.uint32(1 << bit)
    # Each lane step and the final combination are bijections of the changed lane's value, so
    # one flipped bit always changes the hash.
    assert array_hash(flipped) != array_hash(words)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), min_size=256, max_size=256),
       st.lists(st.integers(0, 3), min_size=256, max_size=256))
def test_known_row_and_slices_match_the_plain_forms(good_list: list[bool], per_byte: list[int]
                                                     ) -> None:
    good = np.array(good_list, dtype=np.bool_)
    starts = np.concatenate(([0], np.cumsum(per_byte))).astype(np.int64)
    n = int(starts[-1])
    ids = np.random.default_rng(n).permutation(max(n, 1) * 3)[:n].astype(np.int32)
    full = np.zeros(max(1, (3 * max(n, 1) + 31) // 32), dtype=np.uint32)
    for t in ids:
        full[t >> 5] |= np.uint32(1) << np.uint32(t & 31)
    expected = full.copy()
    for b in range(256):
        if not good[b]:
            for t in ids[starts[b]:starts[b + 1]]:
                expected[t >> 5] &= ~(np.uint32(1) << np.uint32(t & 31))
    row, kept = known_row(full, ids, starts, good)
    assert (row == expected).all() and kept == sum(per_byte[b] for b in range(256) if good[b])
    rest_starts = np.concatenate(([0], np.cumsum(per_byte[::-1]))).astype(np.int64)
    cuts = np.flatnonzero(np.diff(good)) + 1
    lo, hi = np.concatenate(([0], cuts)), np.concatenate((cuts, [256]))
    which = good[lo].astype(np.int64)
    begin = np.where(which == 1, rest_starts[lo], starts[lo])
    end = np.where(which == 1, rest_starts[hi], starts[hi])
    plain = np.stack((which, begin, end), axis=1)[end > begin]
    assert (plan_slices(good, starts, rest_starts) == plain).all()
    assert plan_slices(good, starts, rest_starts).shape == plain.shape
