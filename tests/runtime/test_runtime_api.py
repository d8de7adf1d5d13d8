"""The runtime alone: hand-built tables, bitmask helpers, and bad calls that must not corrupt state."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from grammask.runtime import (
    DFATable,
    Matcher,
    MatcherError,
    allocate_token_bitmask,
    apply_token_bitmask_inplace,
    unpack_bitmask,
)

from ..support.tables import AB_STAR_EOS as EOS, ab_star
from ..support.vocabularies import allowed_ids


def mask(m: Matcher) -> set[int]:
    bm = allocate_token_bitmask(1, m.vocab_size)
    m.fill_next_token_bitmask(bm)
    return allowed_ids(bm[0], 32 * bm.shape[1])


def test_hand_built_tables_run_without_the_compiler() -> None:
    m = Matcher(ab_star())
    assert mask(m) == {0, 2, 4, EOS}
    assert m.accept_token(0) and mask(m) == {1, 3}
    assert not m.can_terminate()
    assert m.accept_token(3) and mask(m) == {1, 3}
    assert not m.accept_token(2) and mask(m) == {1, 3}
    assert m.accept_token(1) and m.can_terminate()
    assert m.accept_string("abab") and m.accept_token(EOS) and m.is_terminated()
    assert mask(m) == {EOS}


def test_runtime_does_not_import_the_compiler() -> None:
    code = "import sys, grammask.runtime; print(sorted(m for m in sys.modules if m.startswith(('grammask.compiler', 'lark', 'sympy'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_invalid_tables_are_rejected_at_construction() -> None:
    bc = np.zeros(256, dtype=np.int32)
    with pytest.raises(ValueError, match="transitions"):
        DFATable(bc, np.array([[5]], dtype=np.int32), np.array([True]), 0)
    with pytest.raises(ValueError, match="dtype"):
        DFATable(bc, np.array([[0]], dtype=np.int64), np.array([True]), 0)
    with pytest.raises(ValueError, match="byte_class"):
        DFATable(bc + 3, np.array([[0]], dtype=np.int32), np.array([True]), 0)
    with pytest.raises(ValueError, match="start"):
        DFATable(bc, np.array([[0]], dtype=np.int32), np.array([True]), 1)
    with pytest.raises(ValueError, match="trimmed"):
        DFATable(bc, np.array([[1], [1]], dtype=np.int32), np.array([True, False]), 0)


def test_bad_calls_raise_and_leave_the_matcher_unchanged() -> None:
    m = Matcher(ab_star())
    assert m.accept_token(0)
    before = mask(m)
    for bad, err in [(-1, ValueError), (40, ValueError), (10**20, ValueError), (1.0, TypeError),
                     ("1", TypeError), (True, TypeError), (None, TypeError)]:
        with pytest.raises(err):
            m.accept_token(bad)  # type: ignore[arg-type]
        assert mask(m) == before
    assert not m.accept_token(6) and not m.accept_token(39)  # 'c', and a padding id
    with pytest.raises(ValueError, match="roll back 2"):
        m.rollback(2)
    with pytest.raises(ValueError):
        m.rollback(-1)
    with pytest.raises(TypeError):
        m.accept_string(3)  # type: ignore[arg-type]
    assert not m.accept_string("bb")
    assert mask(m) == before and m.num_rollback_steps == 1
    for bm, err in [(np.zeros((1, 1), np.int32), ValueError), (np.zeros((1, 2), np.int64), TypeError),
                    (np.zeros(2, np.int32), ValueError), ([[0, 0]], TypeError)]:
        with pytest.raises(err):
            m.fill_next_token_bitmask(bm)
    good = allocate_token_bitmask(2, 40)
    for index in (2, -1):
        with pytest.raises(ValueError, match="index"):
            m.fill_next_token_bitmask(good, index)
    m.fill_next_token_bitmask(good, 1)
    assert allowed_ids(good[1], 64) == before and not good[0].any()
    with pytest.raises(ValueError, match="index"):
        m.fill_next_token_bitmask(good, 2)
    assert m.accept_token(1) and m.accept_token(EOS)
    with pytest.raises(MatcherError):
        m.accept_token(0)
    with pytest.raises(MatcherError):
        m.accept_string("ab")
    m.rollback(1)
    assert not m.is_terminated() and m.can_terminate()


def test_bounded_history() -> None:
    m = Matcher(ab_star(), max_rollback_tokens=2)
    for _ in range(3):
        assert m.accept_token(2)
    with pytest.raises(ValueError, match="max_rollback_tokens=2"):
        m.rollback(3)
    m.rollback(2)
    assert m.num_rollback_steps == 0 and m.can_terminate()


def test_reset_and_copy() -> None:
    m = Matcher(ab_star())
    m.accept_token(0)
    c = m.fork()
    m.reset()
    assert mask(m) == {0, 2, 4, EOS} and mask(c) == {1, 3}
    assert c.accept_token(1) and c.can_terminate() and m.can_terminate()


def test_allocate_and_unpack() -> None:
    bm = allocate_token_bitmask(3, 33)
    assert bm.shape == (3, 2) and bm.dtype == np.int32 and not bm.any()
    bm[0, 1] = 1
    bm[1, 0] = -(2**31)
    u = unpack_bitmask(bm, 33)
    assert np.flatnonzero(u[0]).tolist() == [32] and np.flatnonzero(u[1]).tolist() == [31]
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError):
            allocate_token_bitmask(bad, 10)  # type: ignore[arg-type]


def test_apply_token_bitmask_numpy() -> None:
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(2, 70)).astype(np.float32)
    original = logits.copy()
    bm = allocate_token_bitmask(2, 64)
    bm[0] = [0b1011, -1]
    bm[1, 1] = 1 << 3
    apply_token_bitmask_inplace(logits, bm)
    allowed0 = {0, 1, 3} | set(range(32, 64))
    for j in range(70):
        assert (logits[0, j] == original[0, j]) == (j in allowed0)
        assert (logits[1, j] == original[1, j]) == (j == 35)
    one = original[0].copy()
    apply_token_bitmask_inplace(one, bm[1])
    assert np.isfinite(one).sum() == 1 and one[35] == original[0, 35]
    rows = original.copy()
    apply_token_bitmask_inplace(rows, bm[1:], indices=[0])
    assert np.isfinite(rows[0]).sum() == 1 and (rows[1] == original[1]).all()
    with pytest.raises(TypeError):
        apply_token_bitmask_inplace(original.astype(np.int32), bm)
    with pytest.raises(ValueError):
        apply_token_bitmask_inplace(original, bm, indices=[5, 6])


def test_apply_token_bitmask_torch() -> None:
    torch = pytest.importorskip("torch")
    logits = torch.zeros((1, 40))
    bm = torch.zeros((1, 2), dtype=torch.int32)
    bm[0, 0] = 0b101
    bm[0, 1] = 1
    apply_token_bitmask_inplace(logits, bm)
    assert torch.isfinite(logits[0]).nonzero().flatten().tolist() == [0, 2, 32]
    m = Matcher(ab_star())
    tbm = torch.zeros((1, 2), dtype=torch.int32)
    m.fill_next_token_bitmask(tbm)
    assert allowed_ids(tbm.numpy()[0], 64) == {0, 2, 4, EOS}
