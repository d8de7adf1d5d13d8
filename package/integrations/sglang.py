"""SGLang's grammar backend (`python/sglang/srt/constrained/base_grammar_backend.py`, v0.5).

`GrammaskGrammarBackend(tokenizer, vocab_size, eos_token_ids)` answers the scheduler's
`dispatch_json`, `dispatch_regex`, `dispatch_ebnf` and `dispatch_structural_tag` with a
`GrammaskGrammarObject` per request, or an invalid-grammar object carrying the compiler's
message (SGLang aborts that request with it). `register()` adds it to SGLang's registry as
`"grammask"` (`--grammar-backend grammask`). Where SGLang is installed the classes subclass
its base classes and the backend uses its cache and thread pool; where it is not they are
plain classes with the same methods, which the tests drive in the scheduler's order.

The grammar object keeps SGLang's contract: `accept_token` raises ValueError for a token the
grammar does not allow (SGLang aborts the request) and does nothing after termination; the
vocabulary mask is XGrammar's packed int32 layout, allowing everything when allocated, filled
per row, moved to the logits' device and applied in place; `copy()` is a fresh matcher at the
grammar's start (SGLang copies the cached template for each new request).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..compiler import CompileCache
from ..runtime import (
    CompiledGrammar,
    Matcher,
    Vocabulary,
    allocate_token_bitmask,
    apply_token_bitmask_inplace,
)
from .requests import compile_request, vocabulary_of

try:  # pragma: no cover - SGLang is not a dependency
    from sglang.srt.constrained.base_grammar_backend import BaseGrammarBackend as _BackendBase
    from sglang.srt.constrained.base_grammar_backend import BaseGrammarObject as _ObjectBase
    from sglang.srt.constrained.base_grammar_backend import InvalidGrammarObject
except ImportError:
    _BackendBase = _ObjectBase = object

    class InvalidGrammarObject:  # type: ignore[no-redef]
        """A request whose grammar did not compile (SGLang's class of the same name)."""

        def __init__(self, error_message: str = "Unknown grammar error") -> None:
            self.error_message = error_message

__all__ = ["GrammaskGrammarBackend", "GrammaskGrammarObject", "InvalidGrammarObject",
           "register"]


class GrammaskGrammarObject(_ObjectBase):  # type: ignore[misc, valid-type]
    """One request's grammar state (SGLang's `BaseGrammarObject`)."""

    def __init__(self, compiled: CompiledGrammar) -> None:
        if _ObjectBase is not object:
            super().__init__()
        self.compiled = compiled
        self.matcher = Matcher(compiled)
        self.finished = False
        self.current_token: int | None = None

    def maybe_init_reasoning(self, reasoning: bool) -> None:
        """Reasoning is the structural tag's part (`<think>` formats), not the backend's."""

    def accept_token(self, token: int) -> None:
        if self.matcher.is_terminated():
            return
        if not self.matcher.accept_token(int(token)):
            raise ValueError(f"token {token} is not allowed by the grammar here")
        self.current_token = int(token)

    def rollback(self, k: int) -> None:
        self.matcher.rollback(k)

    def is_terminated(self) -> bool:
        return self.matcher.is_terminated()

    def allocate_vocab_mask(self, vocab_size: int, batch_size: int, device: Any) -> Any:
        """An int32 (batch_size, ceil(vocab_size / 32)) CPU mask allowing every token."""
        import torch

        mask = allocate_token_bitmask(batch_size, vocab_size)
        mask.fill(-1)
        return torch.from_numpy(np.ascontiguousarray(mask))

    def fill_vocab_mask(self, vocab_mask: Any, idx: int) -> None:
        self.matcher.fill_next_token_bitmask(vocab_mask, idx)

    @staticmethod
    def move_vocab_mask(vocab_mask: Any, device: Any) -> Any:
        return vocab_mask.to(device, non_blocking=True)

    @staticmethod
    def apply_vocab_mask(logits: Any, vocab_mask: Any) -> None:
        apply_token_bitmask_inplace(logits, vocab_mask.to(logits.device))

    def copy(self) -> GrammaskGrammarObject:
        return GrammaskGrammarObject(self.compiled)

    def try_jump_forward(self, tokenizer: Any) -> tuple[list[int], str] | None:
        """The text every continuation starts with, encoded, or None (SGLang 0.5 no longer
        calls it)."""
        text = self.matcher.find_jump_forward_string()
        return ([], text) if text else None


class GrammaskGrammarBackend(_BackendBase):  # type: ignore[misc, valid-type]
    """SGLang's grammar backend over `tokenizer` (or a `Vocabulary`) with `vocab_size` ids
    (the model's) and `eos_token_ids`; `cache` bounds the compiled grammars kept (SGLang keeps
    one template object per key besides)."""

    def __init__(self, tokenizer: Any, vocab_size: int,
                 eos_token_ids: Iterable[int] | None = None,
                 cache: CompileCache | None = None) -> None:
        if _BackendBase is not object:
            super().__init__()
        vocab = vocabulary_of(tokenizer, vocab_size)
        eos = sorted(int(i) for i in eos_token_ids or ())
        self.vocab: Vocabulary = vocab.with_eos_token_ids(eos) if eos else vocab
        self.compile_cache = cache if cache is not None else CompileCache()

    def _dispatch(self, kind: str, key_string: str) -> Any:
        try:
            return GrammaskGrammarObject(compile_request(kind, key_string, self.vocab,
                                                         self.compile_cache))
        except ValueError as exc:
            return InvalidGrammarObject(str(exc))

    def dispatch_json(self, key_string: str) -> Any:
        return self._dispatch("json", key_string)

    def dispatch_regex(self, key_string: str) -> Any:
        return self._dispatch("regex", key_string)

    def dispatch_ebnf(self, key_string: str) -> Any:
        return self._dispatch("ebnf", key_string)

    def dispatch_structural_tag(self, key_string: str) -> Any:
        return self._dispatch("structural_tag", key_string)

    def reset(self) -> None:
        if _BackendBase is not object:
            super().reset()
        self.compile_cache.clear()


def register(name: str = "grammask") -> None:
    """Add the backend to SGLang's registry under `name` (needs SGLang)."""
    from sglang.srt.constrained.base_grammar_backend import register_grammar_backend

    register_grammar_backend(name, lambda server_args, tokenizer, vocab_size, eos_token_ids:
                             GrammaskGrammarBackend(tokenizer, vocab_size, eos_token_ids))
