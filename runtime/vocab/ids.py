"""Token ids given by callers: one int or an iterable of them, checked against a size."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = ["Ids", "as_id", "id_set"]

Ids = Iterable[int] | int


def as_id(token_id: Any) -> int:
    if isinstance(token_id, bool) or not isinstance(token_id, (int, np.integer)):
        raise ValueError(f"token id must be an int, got {type(token_id).__name__} {token_id!r}")
    return int(token_id)


def id_set(name: str, ids: Ids, size: int) -> set[int]:
    out = set()
    for i in [ids] if isinstance(ids, (int, np.integer)) else ids:
        i = as_id(i)
        if not 0 <= i < size:
            raise ValueError(f"token id {i} in {name} out of range [0, {size})")
        out.add(i)
    return out
