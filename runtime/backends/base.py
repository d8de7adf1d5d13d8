"""What a `Matcher` asks of the recognizer of one grammar kind: the backend interface.

Invariant: a backend holds the recognizer state of one sequence (a DFA state, or the Earley
sets of a pushdown grammar) and nothing else of the matcher: arguments, EOS, termination and
history belong to `Matcher`, which checks every argument before it calls a hook. The state is
always a viable prefix of the language. A step (`advance_token`, `advance_bytes`) is all or
nothing: False, or `MatcherBudgetExceeded`, leaves the state as it was.

A history entry is whatever `snapshot` returns (a DFA state; the number of Earley sets): a
plain int, so the matcher keeps one per step in a deque and `restore` goes back to it in
constant time. The hot loop of a decoding step is then one hook call per token or fill, with
the matcher's checks around it; the hooks work in place on the backend's own arrays and the
compiled grammar's shared, read-only tables, never copying either.
"""
from __future__ import annotations

from typing import Protocol

import numpy as np

from ..run_limits import RuntimeLimits


class Backend(Protocol):
    """The recognizer hooks of one grammar kind (`DFABackend`, `PushdownBackend`)."""

    def fill(self, row: np.ndarray) -> None:
        """Write the allowed next tokens (EOS included where the text may end) into `row`,
        an int32 bitmask row of the vocabulary's words."""

    def advance_token(self, token_id: int) -> bool:
        """Advance by the bytes of token `token_id` (in range, not EOS); False (nothing
        changes) when they do not continue the language, or the token has no bytes."""

    def advance_bytes(self, data: bytes) -> bool:
        """Advance by `data` as one step; all or nothing."""

    def is_complete(self) -> bool:
        """Whether the text so far is a complete match (EOS allowed)."""

    def snapshot(self) -> int:
        """The history entry that `restore` goes back to."""

    def restore(self, entry: int) -> None:
        """Go back to the state of `entry`, a `snapshot` of this backend or of the one it
        was copied from."""

    def copy(self) -> Backend:
        """An independent backend in the same state, sharing the compiled tables."""

    def set_limits(self, limits: RuntimeLimits) -> None:
        """Bound each later step's work and the recognizer's memory by `limits`."""

    def jump_forward_bytes(self, max_bytes: int) -> bytes:
        """The bytes every continuation must start with (empty when there is a choice or
        when the text may end here), up to `max_bytes`."""

    def memory_bytes(self) -> int:
        """Memory held by this sequence's recognizer state."""
