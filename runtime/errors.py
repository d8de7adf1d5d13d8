"""The errors a matcher raises besides TypeError and ValueError for bad arguments."""
from __future__ import annotations


class MatcherError(RuntimeError):
    """A call the matcher's current state does not allow (e.g. a token after termination)."""


class MatcherBudgetExceeded(MatcherError):
    """A step that would exceed a `RuntimeLimits` bound; the matcher is left as it was.

    `limit` names the bound (`max_step_work` or `max_earley_items`), `value` is its setting.
    """

    def __init__(self, message: str, limit: str, value: int) -> None:
        super().__init__(message)
        self.limit = limit
        self.value = value


class SerializedGrammarError(ValueError):
    """Bytes that `CompiledGrammar.from_bytes` cannot load: not a serialized grammar, another
    format version, changed after serialization, made for another vocabulary, or tables that
    fail their checks. `offset` is the byte offset the problem was found at (None: the whole).
    """

    def __init__(self, message: str, offset: int | None = None) -> None:
        super().__init__(message if offset is None else f"{message} (at byte {offset})")
        self.offset = offset
