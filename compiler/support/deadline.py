"""The wall-clock budget of one compile, `Limits.max_compile_seconds`.

A compile entry point opens `compile_deadline(limits)`; every stage calls `check()` at its
natural loop points (NFA building, subset construction chunks, minimization, rule automata,
token sets, the JSON Schema work list), which raises `BudgetExceeded` once the time is up.
Nested entry points (a JSON Schema compile calling the grammar pipeline) share the outermost
deadline. The deadline is per thread, so concurrent compiles do not interfere.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from .limits import Limits

_local = threading.local()


class Deadline:
    """The moment a compile started and the moment it must stop by."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.start = time.monotonic()
        self.end = self.start + limits.max_compile_seconds

    def remaining(self) -> float:
        """Seconds left (negative once past)."""
        return self.end - time.monotonic()

    def check(self) -> None:
        """Raise `BudgetExceeded` for `max_compile_seconds` when the time is up."""
        now = time.monotonic()
        if now > self.end:
            raise self.limits.exceeded("max_compile_seconds", now - self.start, "compile time",
                                       shown=f"{now - self.start:.3g} s")


@contextmanager
def compile_deadline(limits: Limits) -> Iterator[Deadline]:
    """The deadline of the compile this opens, or of the one already open in this thread."""
    outer: Deadline | None = getattr(_local, "deadline", None)
    if outer is not None:
        yield outer
        return
    deadline = Deadline(limits)
    _local.deadline = deadline
    try:
        yield deadline
    finally:
        _local.deadline = None


def expired() -> bool:
    """Whether the compile running in this thread is out of time (a budget error caught to
    try another way must then be raised instead)."""
    deadline: Deadline | None = getattr(_local, "deadline", None)
    return deadline is not None and deadline.remaining() < 0


T = TypeVar("T")


def checked(items: Iterable[T], every: int = 1024) -> Iterator[T]:
    """`items` with the deadline checked every `every` of them (a token stream fed to Lark,
    whose parse could otherwise not be interrupted)."""
    for i, item in enumerate(items):
        if not i % every:
            check()
        yield item


def check() -> None:
    """Raise `BudgetExceeded` when the compile running in this thread is out of time."""
    deadline: Deadline | None = getattr(_local, "deadline", None)
    if deadline is not None:
        deadline.check()
