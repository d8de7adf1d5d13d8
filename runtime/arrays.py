"""Immutable arrays for the tables that Numba kernels read without bounds checks.

A table validated once must not change afterwards: not through the caller's array, a view of
it, or by setting the WRITEABLE flag back. An array backed by an immutable `bytes` object
through read-only views only satisfies all three (numpy refuses to make it writeable again).
"""
from __future__ import annotations

import numpy as np


def is_immutable(a: np.ndarray) -> bool:
    """Whether `a` is C-contiguous, aligned, and read-only down to an immutable bytes buffer."""
    if not (a.flags.c_contiguous and a.flags.aligned):
        return False
    base: object = a
    while isinstance(base, np.ndarray):
        if base.flags.writeable:
            return False
        base = base.base
    return isinstance(base, bytes)


def immutable(a: np.ndarray) -> np.ndarray:
    """`a` if it is already immutable (see `is_immutable`), else an immutable copy of it."""
    if is_immutable(a):
        return a
    return np.frombuffer(np.ascontiguousarray(a).tobytes(), dtype=a.dtype).reshape(a.shape)


def checked_array(a: object, dtype: type, name: str, ndim: int) -> np.ndarray:
    """`a` as an immutable array, after checking it is a numpy array of `dtype` and rank `ndim`."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got {type(a).__name__}")
    if a.dtype != dtype:
        raise ValueError(f"{name} must have dtype {np.dtype(dtype)}, got {a.dtype}")
    if a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {a.shape}")
    return immutable(a)
