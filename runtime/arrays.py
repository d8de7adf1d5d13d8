"""Immutable arrays for the tables that Numba kernels read without bounds checks.

A table validated once must not change afterwards: not through the caller's array, a view of
it, or by setting the WRITEABLE flag back. An array backed by an immutable `bytes` object
through read-only views only satisfies all three (numpy refuses to make it writeable again).

A table that grows by appending rows (a lazily built pushdown table, `pushdown/assembly.py`)
would copy every row it has at each extension. A `RowArena` instead hands out immutable
prefixes of one append-only buffer: an anonymous memory map that its prefixes see through a
read-only memoryview (numpy refuses to make those writeable too), and that only the arena
writes, past the longest prefix it has handed out. So rows a prefix covers never change, and
an extension writes its new rows only (the buffer doubles when full: one copy per doubling).
"""
from __future__ import annotations

import mmap
import threading
import weakref

import numpy as np


def is_immutable(a: np.ndarray) -> bool:
    """Whether `a` is C-contiguous, aligned, and read-only down to an immutable bytes buffer
    or a `RowArena`'s read-only view."""
    if not (a.flags.c_contiguous and a.flags.aligned):
        return False
    base: object = a
    while isinstance(base, np.ndarray):
        if base.flags.writeable:
            return False
        base = base.base
    return isinstance(base, bytes) or (isinstance(base, memoryview) and base.readonly
                                       and type(base.obj) is _ArenaBuffer)


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


class _ArenaBuffer(mmap.mmap):
    """The memory of one `RowArena` (a type of its own, which `is_immutable` recognizes)."""


class RowArena:
    """Rows of one dtype and shape, appended to a buffer whose prefixes are immutable arrays
    (module docstring). `length` rows are claimed: every prefix handed out is at most that
    long, and only rows past it are written."""

    def __init__(self, dtype: np.dtype, row_shape: tuple[int, ...], capacity: int) -> None:
        self.dtype = np.dtype(dtype)
        self.row_shape = row_shape
        self.capacity = max(1, capacity)
        size = int(np.prod(row_shape, dtype=np.int64)) * self.dtype.itemsize
        self._buffer = _ArenaBuffer(-1, max(1, self.capacity * size))
        self._buffer.arena = self  # type: ignore[attr-defined]
        self._rows = np.frombuffer(self._buffer, dtype=self.dtype,
                                   count=self.capacity * size // self.dtype.itemsize
                                   ).reshape((self.capacity, *row_shape))
        self._view = memoryview(self._buffer).toreadonly()
        self.length = 0
        self._lock = threading.Lock()
        self._origin: weakref.ref[np.ndarray] | None = None

    def holds(self, a: np.ndarray, b: np.ndarray) -> bool:
        """Whether `a`, a prefix of this arena, begins with the rows of the immutable `b`
        because the arena was made from them (`appended` copied them to its first rows)."""
        return self._origin is not None and self._origin() is b and a.shape[0] >= b.shape[0]

    @staticmethod
    def of(a: np.ndarray) -> "RowArena | None":
        """The arena whose prefix `a` is (its rows from row 0), or None."""
        base: object = a
        while isinstance(base, np.ndarray):
            base = base.base
        if isinstance(base, memoryview) and type(base.obj) is _ArenaBuffer:
            arena = getattr(base.obj, "arena", None)
            if isinstance(arena, RowArena) and a.shape[1:] == arena.row_shape \
                    and a.dtype == arena.dtype and a.ctypes.data == arena._rows.ctypes.data:
                return arena
        return None

    def _prefix(self, n: int) -> np.ndarray:
        count = n * (self._rows.size // self.capacity)
        return np.frombuffer(self._view, dtype=self.dtype, count=count).reshape(
            (n, *self.row_shape))

    @classmethod
    def appended(cls, head: np.ndarray, tail: np.ndarray) -> np.ndarray:
        """The rows of `head` (immutable) then those of `tail` (same dtype and row shape), as
        an immutable prefix of an arena: `head`'s own when `head` is the longest prefix of
        one with room (only the rows of `tail` written), else of a new arena of twice the
        rows (all copied)."""
        n, m = head.shape[0], tail.shape[0]
        if tail.dtype != head.dtype or tail.shape[1:] != head.shape[1:]:
            raise ValueError(f"cannot append rows {tail.dtype}{tail.shape[1:]} to rows "
                             f"{head.dtype}{head.shape[1:]}")
        arena = cls.of(head)
        if arena is not None:
            with arena._lock:
                if arena.length == n and n + m <= arena.capacity:
                    arena._rows[n:n + m] = tail
                    arena.length = n + m
                    return arena._prefix(n + m)
        arena = cls(head.dtype, head.shape[1:], 2 * (n + m))
        if is_immutable(head):
            arena._origin = weakref.ref(head)
        arena._rows[:n] = head
        arena._rows[n:n + m] = tail
        arena.length = n + m
        return arena._prefix(n + m)


def same_prefix(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether `b`'s rows are the first rows of `a`: at once when both are immutable views of
    the same memory from the same address (an arena's prefixes) or `a` is an arena's prefix
    made from `b`, else compared."""
    if a.dtype != b.dtype or a.shape[1:] != b.shape[1:] or a.shape[0] < b.shape[0]:
        return False
    if a.ctypes.data == b.ctypes.data and is_immutable(a) and is_immutable(b):
        return True
    arena = RowArena.of(a)
    if arena is not None and arena.holds(a, b):
        return True
    return bool(np.array_equal(a[:b.shape[0]], b))
