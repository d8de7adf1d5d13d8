"""`csr_order`: a stable grouping of keys into CSR offsets and order."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.runtime.csr import csr_order

from ..support.budget import examples


@given(st.integers(1, 20).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.integers(0, n - 1), max_size=60))))
@settings(max_examples=examples(100), deadline=None)
def test_csr_order_is_a_stable_grouping(case: tuple[int, list[int]]) -> None:
    n, keys = case
    offsets, order = csr_order(n, np.array(keys, dtype=np.int64))
    assert order.tolist() == np.argsort(np.array(keys, dtype=np.int64), kind="stable").tolist()
    assert offsets.tolist() == [0, *np.cumsum(np.bincount(keys, minlength=n)).tolist()]


@pytest.mark.parametrize("keys", [[3], [-1], [0, 5, 1]])
def test_csr_order_refuses_keys_out_of_range(keys: list[int]) -> None:
    with pytest.raises(ValueError, match="outside"):
        csr_order(3, np.array(keys, dtype=np.int64))
