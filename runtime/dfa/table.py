"""The compiled form of a regular language: a trimmed byte-level DFA over byte classes.

Invariants (checked once in `__post_init__`, trusted by the Numba kernels afterwards):
- `byte_class` is int32[256] with values in [0, n_classes).
- `transitions` is C-contiguous int32[n_states, n_classes] with values in [-1, n_states);
  -1 is the dead state (no continuation).
- `accepting` is bool[n_states]; `start` is an int in [0, n_states); n_states >= 1.
- Every array is C-contiguous and immutable (`arrays.immutable`): a copy is taken unless the
  given array already is, so the table cannot change after validation.
- Trimmed: every state is reachable from `start` and can reach an accepting state, except that
  the empty language is the single non-accepting start state with no transitions. Hence a byte
  string is a viable prefix iff walking it never hits -1.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arrays import checked_array
from .kernels import reachable_and_live


def checked_state(value: object, n: int, name: str) -> int:
    """`value` as a Python int in [0, n), or ValueError/TypeError."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if not 0 <= value < n:
        raise ValueError(f"{name} must lie in [0, {n}), got {value}")
    return int(value)


@dataclass(frozen=True, eq=False)
class DFATable:
    """A trimmed byte-class DFA: the tables the matcher and the token-set kernels walk."""

    byte_class: np.ndarray
    transitions: np.ndarray
    accepting: np.ndarray
    start: int

    def __post_init__(self) -> None:
        bc = checked_array(self.byte_class, np.int32, "byte_class", 1)
        tr = checked_array(self.transitions, np.int32, "transitions", 2)
        acc = checked_array(self.accepting, np.bool_, "accepting", 1)
        object.__setattr__(self, "byte_class", bc)
        object.__setattr__(self, "transitions", tr)
        object.__setattr__(self, "accepting", acc)
        if bc.shape != (256,):
            raise ValueError(f"byte_class must have shape (256,), got {bc.shape}")
        if tr.shape[0] < 1 or tr.shape[1] < 1:
            raise ValueError(f"transitions must be 2-D and non-empty, got shape {tr.shape}")
        n, k = tr.shape
        if bc.min() < 0 or bc.max() >= k:
            raise ValueError(f"byte_class values must lie in [0, {k})")
        if tr.min() < -1 or tr.max() >= n:
            raise ValueError(f"transitions must lie in [-1, {n})")
        if acc.shape != (n,):
            raise ValueError(f"accepting must have shape ({n},), got {acc.shape}")
        object.__setattr__(self, "start", checked_state(self.start, n, "start"))
        self._check_trimmed()

    def __reduce__(self) -> tuple:
        # Unpickling goes through the constructor, so a loaded table is validated too.
        return (DFATable, (self.byte_class, self.transitions, self.accepting, self.start))

    def _check_trimmed(self) -> None:
        n = self.n_states
        if n == 1 and not self.accepting[0] and (self.transitions == -1).all():
            return
        reach, live = reachable_and_live(self.transitions, self.accepting, self.start)
        if not reach.all():
            raise ValueError(f"DFA not trimmed: {n - int(reach.sum())} states unreachable from start")
        if not live.all():
            raise ValueError(f"DFA not trimmed: {n - int(live.sum())} states cannot reach acceptance")

    @property
    def n_states(self) -> int:
        return int(self.transitions.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.transitions.shape[1])

    @property
    def is_empty_language(self) -> bool:
        return not self.accepting.any()

    def step(self, state: int, byte: int) -> int:
        """The state after one byte (-1: dead)."""
        return int(self.transitions[state, self.byte_class[byte]])

    def walk(self, data: bytes, state: int | None = None) -> int:
        """The state after `data` from `state` (default: start); -1 once dead."""
        s = self.start if state is None else state
        for b in data:
            s = int(self.transitions[s, self.byte_class[b]])
            if s < 0:
                return -1
        return s

    def fullmatch(self, data: bytes) -> bool:
        """Whether `data` is in the language."""
        s = self.walk(data)
        return s >= 0 and bool(self.accepting[s])

    def nbytes(self) -> int:
        """Memory held by the tables."""
        return int(self.byte_class.nbytes + self.transitions.nbytes + self.accepting.nbytes)
