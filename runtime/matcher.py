"""The Matcher: one decoding sequence walking a compiled grammar token by token.

Invariant: the text accepted so far is always a viable prefix of the language (the automata are
trimmed, and a token is accepted only if all of its bytes keep the walk alive), so the filled
mask is never empty before termination: EOS is allowed exactly at complete matches, and some
token always continues an incomplete one (for vocabularies that hold every single byte).

`Matcher` holds what every grammar kind shares: argument checks, EOS and termination, the
history for rollback (a deque of the backend's `snapshot` before each step, at most
`max_rollback_tokens` long) and bitmask rows. The recognizer of the grammar's kind is a
`Backend` (`backends/base.py`): `DFABackend` or `PushdownBackend`, picked in `_BACKENDS` from
`CompiledGrammar.kind`, the one place that tells the kinds apart. A step checks its arguments,
takes a snapshot, calls one backend hook and appends the snapshot only if the hook advanced;
the hot loop is that one hook call with a few attribute reads around it.

Errors of a step: `MatcherBudgetExceeded` past the `RuntimeLimits`; and, on a pushdown grammar
whose rules are built as matchers reach them (`pushdown/assembly.py`), whatever building a rule
raises: the compiler's `BudgetExceeded` for a rule over the compile `Limits`, naming the rule and
the bound. Either way the step changes nothing.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

from .backends.base import Backend
from .backends.dfa import DFABackend
from .backends.healing import HealingBackend
from .backends.pushdown import PushdownBackend
from .backends.token_budget import TokenBudgetBackend
from .bitmask import as_bitmask_array, bitmask_words, ids_to_row
from .compiled import CompiledGrammar
from .completion import UNREACHABLE
from .errors import MatcherBudgetExceeded, MatcherError
from .run_limits import RuntimeLimits
from .vocab.spelling import MARKER

__all__ = ["Matcher", "MatcherBudgetExceeded", "MatcherError"]

_BACKENDS: dict[str, Callable[[CompiledGrammar, RuntimeLimits], Backend]] = {
    "dfa": DFABackend, "pushdown": PushdownBackend}
"""The backend of each `CompiledGrammar.kind`."""


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


def _check_limits(limits: Any) -> None:
    if not isinstance(limits, RuntimeLimits):
        raise TypeError(f"limits must be a RuntimeLimits, got {type(limits).__name__}")


def _string_bytes(text: str | bytes) -> bytes:
    if isinstance(text, str):
        return text.encode("utf-8", "surrogatepass")
    if isinstance(text, (bytes, bytearray, memoryview)):
        data = bytes(text)
        at = data.find(MARKER)
        if at >= 0:
            raise ValueError(f"accept_string: byte 0x{MARKER:X} at offset {at} is not text (it "
                             f"never occurs in UTF-8); a token reference is accepted as a token")
        return data
    raise TypeError(f"accept_string takes str or bytes, got {type(text).__name__}")


class Matcher:
    """Walks one sequence through a `CompiledGrammar` and fills its next-token bitmask.

    `max_rollback_tokens` bounds the history kept for `rollback` (None: keep everything);
    `limits` bounds each step's work and the recognizer's memory (default: the compiled
    grammar's, from the compile's `Limits`); going past them raises `MatcherBudgetExceeded`
    and changes nothing (a fill then leaves its row's contents unspecified).
    `healing` (bytes or text, from `Vocabulary.heal`) are bytes taken off the prompt's end:
    the output must write them again first, in tokens of its choice, and what follows them
    is in the grammar's language (`backends/healing.py`).
    `max_tokens` is a token budget: every mask allows only tokens after which the text can
    still be finished within the tokens left, so an output that follows the masks is complete
    after at most `max_tokens` tokens, EOS not counted (`backends/token_budget.py`; costs are
    counted in single-byte tokens and token references, so for a vocabulary with every single
    byte each state has one). A budget shorter than the grammar's shortest output is a
    ValueError; `accept_string` uses none of it but may not leave the text unfinishable.
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

    def __init__(self, compiled: CompiledGrammar, *, max_rollback_tokens: int | None = None,
                 limits: RuntimeLimits | None = None, healing: bytes | str = b"",
                 max_tokens: int | None = None) -> None:
        if not isinstance(compiled, CompiledGrammar):
            raise TypeError(f"Matcher needs a CompiledGrammar, got {type(compiled).__name__}")
        if max_rollback_tokens is not None:
            max_rollback_tokens = _check_count("max_rollback_tokens", max_rollback_tokens)
        limits = compiled.runtime_limits if limits is None else limits
        _check_limits(limits)
        self.compiled = compiled
        self.max_rollback_tokens = max_rollback_tokens
        self._limits = limits
        vocab = compiled.vocab
        self._eos = frozenset(int(i) for i in vocab.eos_token_ids)
        self._size = vocab.size
        self._n_words = bitmask_words(vocab.size)
        self._eos_row = ids_to_row(vocab.eos_token_ids, self._n_words)
        self._terminated = False
        self._history: deque[int] = deque(maxlen=max_rollback_tokens)
        if not isinstance(healing, (str, bytes, bytearray, memoryview)):
            raise TypeError(f"healing must be bytes or str, got {type(healing).__name__}")
        self._backend: Backend = _BACKENDS[compiled.kind](compiled, limits)
        if max_tokens is not None:
            max_tokens = _check_count("max_tokens", max_tokens)
            if healing:
                raise ValueError("healing and max_tokens together are not supported")
            self._backend = TokenBudgetBackend(self._backend, max_tokens, self._eos_row)
        self.max_tokens = max_tokens
        if healing:
            self._backend = HealingBackend(self._backend, _string_bytes(healing),
                                           compiled.spelling.list, compiled.token_sets.trie,
                                           self._n_words)
        self._initial = self._backend.snapshot()

    @property
    def limits(self) -> RuntimeLimits:
        """The bounds of each step's work and of the recognizer's memory (settable)."""
        return self._limits

    @limits.setter
    def limits(self, limits: RuntimeLimits) -> None:
        _check_limits(limits)
        self._limits = limits
        self._backend.set_limits(limits)

    @property
    def tokens_left(self) -> int | None:
        """Tokens left of `max_tokens` (None without a budget); EOS uses none."""
        backend = self._backend
        return backend.tokens_left if isinstance(backend, TokenBudgetBackend) else None

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
            self._backend.fill(row)

    def batch_backend(self) -> DFABackend | PushdownBackend | None:
        """For `batch_fill_next_token_bitmask`: the recognizer, when a compiled batch fill
        can write this matcher's row from it; None when `fill_next_token_bitmask` must (after
        EOS, with healing bytes or a token budget)."""
        backend = self._backend
        if self._terminated or type(backend) not in (DFABackend, PushdownBackend):
            return None
        return backend  # type: ignore[return-value]

    def accept_token(self, token_id: int) -> bool:
        """Advance by one token; False (and nothing changes) when it is not allowed here."""
        if type(token_id) is int and 0 <= token_id < self._size:
            tid = token_id
        else:
            tid = _check_token_id(token_id, self._size)
        if self._terminated:
            raise MatcherError("the matcher has terminated (EOS accepted); reset or roll back first")
        entry = self._backend.snapshot()
        if not self._step(tid):
            return False
        self._history.append(entry)
        return True

    def accept_string(self, text: str | bytes) -> bool:
        """Advance by the bytes of `text` as one step; all or nothing."""
        data = _string_bytes(text)
        if self._terminated:
            raise MatcherError("the matcher has terminated (EOS accepted); reset or roll back first")
        entry = self._backend.snapshot()
        if not self._backend.advance_bytes(data):
            return False
        self._history.append(entry)
        return True

    def can_terminate(self) -> bool:
        """Whether EOS is allowed now: the text so far is a complete match."""
        return not self._terminated and self._backend.is_complete()

    def completion_cost(self) -> int | None:
        """The fewest tokens that surely finish the text from here: steps of single-byte
        tokens and token references (`completion.py`), so an upper bound of what the
        shortest completion needs; 0 at the end, None when no completion is counted (a byte
        it needs has no token of its own)."""
        if self._terminated:
            return 0
        backend = self._backend
        if isinstance(backend, HealingBackend):
            raise MatcherError("a matcher with healing bytes has no completion cost")
        cost = backend.completion_cost()  # type: ignore[attr-defined]
        return None if cost >= UNREACHABLE else int(cost)

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
        self._backend.restore(self._history.pop())
        self._terminated = False

    def _token_ids(self, token_ids: Any) -> list[int]:
        if isinstance(token_ids, (str, bytes)) or not hasattr(token_ids, "__iter__"):
            raise TypeError(f"token ids must be a sequence of ints, got {type(token_ids).__name__}")
        return [_check_token_id(t, self._size) for t in token_ids]

    def _step(self, tid: int) -> bool:
        """Advance the backend by one token (EOS: only where the text may end, and then
        terminate); False, changing nothing, when it is not allowed. Not kept in history:
        `accept_token` keeps it, the draft calls go back."""
        if tid in self._eos:
            if not self._backend.is_complete():
                return False
            self._terminated = True
            return True
        return self._backend.advance_token(tid)

    def validate_tokens(self, token_ids: Any) -> int:
        """How many leading tokens of `token_ids` `accept_token` would accept one after the
        other (an EOS where the text may end, and nothing after it); the matcher is left as it
        was. 0 after termination. For verifying a draft without a rollback."""
        ids = self._token_ids(token_ids)
        backend, entry, terminated = self._backend, self._backend.snapshot(), self._terminated
        n = 0
        try:
            for tid in ids:
                if self._terminated or not self._step(tid):
                    break
                n += 1
        finally:
            backend.restore(entry)
            self._terminated = terminated
        return n

    def fill_draft_bitmasks(self, draft_ids: Any, bitmask: Any, start_index: int = 0) -> int:
        """Fill row `start_index + k` of `bitmask` with the mask after accepting
        `draft_ids[:k]`, for k = 0, 1, ... up to `len(draft_ids)`, stopping after the row
        before the first token that is not allowed; return how many rows were filled. The
        matcher is left as it was. The rows `start_index` to `start_index + len(draft_ids)`
        must exist (checked before anything is written). What an engine needs to verify a
        speculative draft in one call: row k masks the target model's logits at draft
        position k."""
        ids = self._token_ids(draft_ids)
        start = _check_count("start_index", start_index)
        rows = [as_bitmask_array(bitmask, self._n_words, start + k) for k in range(len(ids) + 1)]
        backend, entry, terminated = self._backend, self._backend.snapshot(), self._terminated
        filled = 0
        try:
            for k, row in enumerate(rows):
                if self._terminated:
                    np.copyto(row, self._eos_row)
                else:
                    backend.fill(row)
                filled += 1
                if k == len(ids) or self._terminated or not self._step(ids[k]):
                    break
        finally:
            backend.restore(entry)
            self._terminated = terminated
        return filled

    def reset(self) -> None:
        """Back to the start of the grammar, history cleared."""
        self._backend.restore(self._initial)
        self._terminated = False
        self._history.clear()

    def find_jump_forward_bytes(self, max_bytes: int = 1024) -> bytes:
        """The bytes every continuation must start with (empty when there is a choice, when
        the text may end here, or after termination), up to `max_bytes`."""
        if self._terminated:
            return b""
        data = self._backend.jump_forward_bytes(max_bytes)
        at = data.find(MARKER)  # a token reference is a token to accept, never text
        return data if at < 0 else data[:at]

    def find_jump_forward_string(self, max_bytes: int = 1024) -> str:
        """`find_jump_forward_bytes` cut to whole UTF-8 characters, as text."""
        data = self.find_jump_forward_bytes(max_bytes)
        for cut in range(len(data), max(-1, len(data) - 4), -1):
            try:
                return data[:cut].decode("utf-8")
            except UnicodeDecodeError:
                continue
        return ""

    def fork(self) -> "Matcher":
        """An independent matcher in the same state, sharing the compiled grammar: a copy of
        this one's recognizer state (a DFA state, or the Earley sets: linear in the bytes
        accepted) and of its history, so either can roll back across the steps before the
        fork. For a beam or a tree of drafts."""
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other._history = deque(self._history, maxlen=self.max_rollback_tokens)
        other._backend = self._backend.copy()
        return other

    def memory_bytes(self) -> int:
        """Memory held by this matcher's recognizer state (its grammar's tables not counted)."""
        return self._backend.memory_bytes()
