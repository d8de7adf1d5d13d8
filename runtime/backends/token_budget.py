"""A token budget: a backend that lets the text end within `max_tokens` tokens, always.

Engines stop a sequence at `max_tokens`, and a constrained answer cut there is as broken as an
unconstrained one. With n tokens used of N, the mask allows a token only when, after it, the
text can still be finished in the N - n - 1 tokens left: its completion cost (`completion.py`:
the fewest tokens the vocabulary surely has that finish the text) is at most that. EOS is
allowed where the text may end, as always, and needs no budget of its own: after N tokens the
text is complete, whether or not an EOS fits.

Invariant: cost(state) <= N - n. It holds at the start (checked: a budget shorter than the
grammar's shortest output is a ValueError) and every step keeps it, so the mask is never empty
before the end (the first step of a cheapest completion is a token within the budget, or the
text may end) and an output that follows the masks is complete after at most N tokens. A string
step (`accept_string`, bytes an engine writes itself) uses no budget but must keep the
invariant. Exact for the costs it promises: a token is refused only when no completion
counted in steps fits after it.

A history entry is the pair (inner's entry, n) in one int: inner * (N + 1) + n, so rollback and
drafts restore the count with the state.
"""
from __future__ import annotations

import copy
from typing import Protocol

import numpy as np

from ..completion import UNREACHABLE
from ..run_limits import RuntimeLimits
from .base import Backend


class Bounded(Backend, Protocol):
    """A backend that knows its completion cost (`DFABackend`, `PushdownBackend`)."""

    def completion_cost(self) -> int:
        """The fewest steps that finish the text from here."""

    def fill_within(self, row: np.ndarray, bound: int) -> None:
        """`fill` keeping only the tokens after which the text can end within `bound` more
        tokens."""


class TokenBudgetBackend:
    """`Backend` of a matcher with `max_tokens`, around the grammar's own backend."""

    def __init__(self, inner: Bounded, max_tokens: int, eos_row: np.ndarray) -> None:
        cost = inner.completion_cost()
        if cost >= UNREACHABLE:
            raise ValueError(f"max_tokens={max_tokens}: no output of this grammar is counted "
                             f"in tokens of this vocabulary (a byte it needs has no token of "
                             f"its own)")
        if cost > max_tokens:
            raise ValueError(f"max_tokens={max_tokens} is too few: the shortest output of this "
                             f"grammar takes {cost} tokens of this vocabulary")
        self._inner = inner
        self._n = max_tokens
        self._used = 0
        self._eos_row = eos_row

    @property
    def tokens_left(self) -> int:
        return self._n - self._used

    def completion_cost(self) -> int:
        return self._inner.completion_cost()

    def fill(self, row: np.ndarray) -> None:
        left = self._n - self._used
        if left == 0:  # the invariant: the text is complete here
            np.copyto(row, self._eos_row)
        else:
            self._inner.fill_within(row, left - 1)

    def _kept(self, entry: int, left: int) -> bool:
        """After an inner step from `entry`: keep it if the invariant holds with `left`."""
        if self._inner.completion_cost() <= left:
            return True
        self._inner.restore(entry)
        return False

    def advance_token(self, token_id: int) -> bool:
        left = self._n - self._used
        entry = self._inner.snapshot()
        if left == 0 or not self._inner.advance_token(token_id) or \
                not self._kept(entry, left - 1):
            return False
        self._used += 1
        return True

    def advance_bytes(self, data: bytes) -> bool:
        entry = self._inner.snapshot()
        return self._inner.advance_bytes(data) and self._kept(entry, self._n - self._used)

    def is_complete(self) -> bool:
        return self._inner.is_complete()

    def snapshot(self) -> int:
        return self._inner.snapshot() * (self._n + 1) + self._used

    def restore(self, entry: int) -> None:
        inner, self._used = divmod(entry, self._n + 1)
        self._inner.restore(inner)

    def copy(self) -> TokenBudgetBackend:
        other = copy.copy(self)
        other._inner = self._inner.copy()
        return other

    def set_limits(self, limits: RuntimeLimits) -> None:
        self._inner.set_limits(limits)

    def jump_forward_bytes(self, max_bytes: int) -> bytes:
        return self._inner.jump_forward_bytes(max_bytes)

    def memory_bytes(self) -> int:
        return self._inner.memory_bytes()
