"""The Matcher: one decoding sequence walking a compiled grammar token by token.

Invariant: the text accepted so far is always a viable prefix of the language (the automata are
trimmed, and a token is accepted only if all of its bytes keep the walk alive), so the filled
mask is never empty before termination: EOS is allowed exactly at complete matches, and some
token always continues an incomplete one (for vocabularies that hold every single byte).

`Matcher` holds what every grammar kind shares (argument checks, EOS and termination, history
for rollback, bitmask rows) and walks DFA grammars; `Matcher(compiled)` of a pushdown grammar
gives a `PushdownMatcher`, which overrides the backend hooks (`_fill`, `_advance_token`,
`_advance_bytes`, `_complete`, `_snapshot`, `_restore`, `_copy_backend`, `_limits_changed`,
`find_jump_forward_bytes`). A history entry is whatever `_snapshot` returns before a step.
"""
from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from .bitmask import as_bitmask_array
from .compiled import CompiledGrammar
from .dfa.kernels import walk_bytes
from .errors import MatcherBudgetExceeded, MatcherError
from .run_limits import RuntimeLimits
from .dfa.token_sets import bitmask_words, ids_to_row

__all__ = ["Matcher", "MatcherBudgetExceeded", "MatcherError"]


def _check_token_id(token_id: Any, size: int) -> int:
    if isinstance(token_id, bool) or not isinstance(token_id, (int, np.integer)):
        raise TypeError(f"token id must be an int, got {type(token_id).__name__} {token_id!r}")
    tid = int(token_id)
    if not 0 <= tid < size:
        raise ValueError(f"token id {tid} out of range [0, {size})")
    return tid


def _check_count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be non-negative, got {value}")
    return int(value)


def _string_bytes(text: str | bytes) -> bytes:
    if isinstance(text, str):
        return text.encode("utf-8", "surrogatepass")
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text)
    raise TypeError(f"accept_string takes str or bytes, got {type(text).__name__}")


class Matcher:
    """Walks one sequence through a `CompiledGrammar` and fills its next-token bitmask.

    `max_rollback_tokens` bounds the history kept for `rollback` (None: keep everything);
    `limits` bounds each step's work and the recognizer's memory (default: the compiled
    grammar's, from the compile's `Limits`); going past them raises `MatcherBudgetExceeded`
    and changes nothing (a fill then leaves its row's contents unspecified).
    A matcher belongs to one sequence and one thread at a time; the compiled grammar it walks
    may be shared by any number of matchers on any threads.

    Bad calls raise and leave the matcher as it was: a token id that is not an int (bool,
    float, str, None; numpy integers are ints) gives TypeError, one outside [0, vocab_size)
    ValueError; `accept_token` and `accept_string` after EOS give `MatcherError`; `rollback`
    of a negative count or more steps than are kept gives ValueError; a bitmask of the wrong
    type or dtype gives TypeError, of the wrong shape, read-only, with non-contiguous rows or
    an index outside the batch ValueError. A token that is merely not allowed is no error:
    `accept_token` returns False and nothing changes.
    """

    def __new__(cls, compiled: CompiledGrammar, **kwargs: Any) -> "Matcher":
        if cls is Matcher and isinstance(compiled, CompiledGrammar) and compiled.kind == "pushdown":
            from .pushdown.matcher import PushdownMatcher

            return super().__new__(PushdownMatcher)
        return super().__new__(cls)

    def __init__(self, compiled: CompiledGrammar, *, max_rollback_tokens: int | None = None,
                 limits: RuntimeLimits | None = None) -> None:
        if not isinstance(compiled, CompiledGrammar):
            raise TypeError(f"Matcher needs a CompiledGrammar, got {type(compiled).__name__}")
        if max_rollback_tokens is not None:
            max_rollback_tokens = _check_count("max_rollback_tokens", max_rollback_tokens)
        self.compiled = compiled
        self.max_rollback_tokens = max_rollback_tokens
        self.limits = compiled.runtime_limits if limits is None else limits
        vocab = compiled.vocab
        self._eos = frozenset(int(i) for i in vocab.eos_token_ids)
        self._size = vocab.size
        self._n_words = bitmask_words(vocab.size)
        self._eos_row = ids_to_row(vocab.eos_token_ids, self._n_words)
        self._terminated = False
        self._history: deque[Any] = deque(maxlen=max_rollback_tokens)
        self._init_backend()
        self._initial = self._snapshot()

    @property
    def limits(self) -> RuntimeLimits:
        """The bounds of each step's work and of the recognizer's memory (settable)."""
        return self._limits

    @limits.setter
    def limits(self, limits: RuntimeLimits) -> None:
        if not isinstance(limits, RuntimeLimits):
            raise TypeError(f"limits must be a RuntimeLimits, got {type(limits).__name__}")
        self._limits = limits
        self._limits_changed()

    def _limits_changed(self) -> None:
        """Backend hook: `limits` was set (a DFA step is constant work: nothing to bound)."""

    # -- DFA backend ---------------------------------------------------------------------

    def _init_backend(self) -> None:
        compiled = self.compiled
        assert compiled.dfa is not None
        self._dfa = compiled.dfa
        self._sets = compiled.token_sets
        self._tokens = compiled.vocab.grammar_token_list
        self._tl, self._bc, self._accepting = compiled.transition_lists
        self._state = self._dfa.start

    def _fill(self, row: np.ndarray) -> None:
        self._sets.get(self._state).fill(row)  # type: ignore[union-attr]

    def _walk(self, data: bytes) -> int:
        if len(data) > 64:
            dfa = self._dfa
            arr = np.frombuffer(data, dtype=np.uint8)
            return int(walk_bytes(dfa.transitions, dfa.byte_class, arr, 0, len(arr), self._state))
        s = self._state
        tl, bc = self._tl, self._bc
        for b in data:
            s = tl[s][bc[b]]
            if s < 0:
                return -1
        return s

    def _advance_bytes(self, data: bytes) -> bool:
        nxt = self._walk(data)
        if nxt < 0:
            return False
        self._history.append(self._state)
        self._state = nxt
        return True

    def _advance_token(self, tid: int) -> bool:
        data = self._tokens[tid]
        return bool(data) and self._advance_bytes(data)

    def _complete(self) -> bool:
        return bool(self._accepting[self._state])

    def _snapshot(self) -> Any:
        return self._state

    def _restore(self, entry: Any) -> None:
        self._state = entry

    def _copy_backend(self, other: "Matcher") -> None:
        """Give `other` (a shallow copy of self) state of its own."""

    def find_jump_forward_bytes(self, max_bytes: int = 1024) -> bytes:
        """The bytes every continuation must start with (empty when there is a choice, when
        the text may end here, or after termination), up to `max_bytes`."""
        if self._terminated:
            return b""
        tl, bc, accepting = self._tl, self._bc, self._accepting
        classes: list[list[int]] = [[] for _ in range(self._dfa.n_classes)]
        for b, c in enumerate(bc):
            classes[c].append(b)
        out = bytearray()
        s = self._state
        while len(out) < max_bytes and not accepting[s]:
            moves = [c for c, t in enumerate(tl[s]) if t >= 0]
            if len(moves) != 1 or len(classes[moves[0]]) != 1:
                break
            out.append(classes[moves[0]][0])
            s = tl[s][bc[out[-1]]]
        return bytes(out)

    # -- shared --------------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        return self._size

    def fill_next_token_bitmask(self, bitmask: Any, index: int = 0) -> None:
        """Write the allowed next tokens into row `index` of `bitmask` (int32, shape
        (batch, ceil(vocab_size / 32)), numpy or CPU torch); other rows are untouched.

        After termination the row allows only the EOS tokens, so a finished sequence in a batch
        keeps a well-defined row.
        """
        row = as_bitmask_array(bitmask, self._n_words, index)
        if self._terminated:
            np.copyto(row, self._eos_row)
        else:
            self._fill(row)

    def accept_token(self, token_id: int) -> bool:
        """Advance by one token; False (and nothing changes) when it is not allowed here."""
        if type(token_id) is int and 0 <= token_id < self._size:
            tid = token_id
        else:
            tid = _check_token_id(token_id, self._size)
        if self._terminated:
            raise MatcherError("the matcher has terminated (EOS accepted); reset or roll back first")
        if tid in self._eos:
            if not self._complete():
                return False
            self._history.append(self._snapshot())
            self._terminated = True
            return True
        return self._advance_token(tid)

    def accept_string(self, text: str | bytes) -> bool:
        """Advance by the bytes of `text` as one step; all or nothing."""
        data = _string_bytes(text)
        if self._terminated:
            raise MatcherError("the matcher has terminated (EOS accepted); reset or roll back first")
        return self._advance_bytes(data)

    def can_terminate(self) -> bool:
        """Whether EOS is allowed now: the text so far is a complete match."""
        return not self._terminated and self._complete()

    def is_terminated(self) -> bool:
        """Whether EOS has been accepted."""
        return self._terminated

    @property
    def num_rollback_steps(self) -> int:
        """How many steps `rollback` can undo now."""
        return len(self._history)

    def rollback(self, num_tokens: int) -> None:
        """Undo the last `num_tokens` accepted steps (tokens, strings, EOS); at most
        `num_rollback_steps`."""
        n = _check_count("num_tokens", num_tokens)
        if n > len(self._history):
            raise ValueError(
                f"cannot roll back {n} steps: {len(self._history)} are kept"
                + (f" (max_rollback_tokens={self.max_rollback_tokens})"
                   if self.max_rollback_tokens is not None else "")
            )
        if n == 0:
            return
        for _ in range(n - 1):
            self._history.pop()
        self._restore(self._history.pop())
        self._terminated = False

    def reset(self) -> None:
        """Back to the start of the grammar, history cleared."""
        self._restore(self._initial)
        self._terminated = False
        self._history.clear()

    def find_jump_forward_string(self, max_bytes: int = 1024) -> str:
        """`find_jump_forward_bytes` cut to whole UTF-8 characters, as text."""
        data = self.find_jump_forward_bytes(max_bytes)
        for cut in range(len(data), max(-1, len(data) - 4), -1):
            try:
                return data[:cut].decode("utf-8")
            except UnicodeDecodeError:
                continue
        return ""

    def copy(self) -> "Matcher":
        """An independent matcher in the same state, sharing the compiled grammar."""
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other._history = deque(self._history, maxlen=self.max_rollback_tokens)
        self._copy_backend(other)
        return other
