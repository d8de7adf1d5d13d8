"""vLLM's structured-output backend (`vllm/v1/structured_output/backend_types.py`, v0.34).

`GrammaskBackend(vllm_config, tokenizer, vocab_size)` is a `StructuredOutputBackend`: one per
engine, holding the vocabulary (the model's `vocab_size` ids) and a `CompileCache`;
`compile_grammar(request_type, grammar_spec, stop_token_ids)` gives a `GrammaskGrammar` per
request (`requests.py` reads the spec). Where vLLM is installed both subclass its abstract
classes; where it is not they are plain classes with the same methods, which the tests drive in
the order vLLM's scheduler calls them. vLLM picks its backend from a fixed list
(`StructuredOutputsConfig.backend`), so using this one means patching its manager's backend
choice; nothing here patches vLLM.

The grammar object keeps vLLM's contract: `accept_tokens` is all or nothing (a rejected token
rolls back the ones before it) and accepts nothing past termination; `validate_tokens` returns
the prefix the grammar would accept, changing nothing; `rollback` undoes accepted tokens
(speculative rows and rejected drafts). The request's `stop_token_ids` are its EOS ids:
masked until the grammar may end, as with XGrammar's `override_stop_tokens`.
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ..compiler import CompileCache
from ..runtime import CompiledGrammar, Matcher, Vocabulary, allocate_token_bitmask
from .requests import compile_request, vocabulary_of

try:  # pragma: no cover - vLLM is not a dependency
    from vllm.v1.structured_output.backend_types import StructuredOutputBackend as _BackendBase
    from vllm.v1.structured_output.backend_types import StructuredOutputGrammar as _GrammarBase
except ImportError:
    _BackendBase = _GrammarBase = object

__all__ = ["GrammaskBackend", "GrammaskGrammar"]


class GrammaskGrammar(_GrammarBase):  # type: ignore[misc, valid-type]
    """One request's grammar state (vLLM's `StructuredOutputGrammar`)."""

    def __init__(self, compiled: CompiledGrammar) -> None:
        self.compiled = compiled
        self.matcher = Matcher(compiled)
        self.num_processed_tokens = 0

    def accept_tokens(self, request_id: str, tokens: list[int]) -> bool:
        """Accept `tokens` in order, up to termination; False (nothing accepted) if one is
        not allowed."""
        m = self.matcher
        done = 0
        for token in tokens:
            if m.is_terminated():
                break
            if not m.accept_token(int(token)):
                m.rollback(done)
                return False
            done += 1
        self.num_processed_tokens += done
        return True

    def validate_tokens(self, tokens: list[int]) -> list[int]:
        """The longest prefix of `tokens` that `accept_tokens` would take; nothing changes."""
        if self.matcher.is_terminated():
            return []
        return list(tokens[:self.matcher.validate_tokens([int(t) for t in tokens])])

    def rollback(self, num_tokens: int) -> None:
        self.matcher.rollback(num_tokens)
        self.num_processed_tokens -= num_tokens

    def fill_bitmask(self, bitmask: Any, batch_index: int) -> None:
        """Row `batch_index` of vLLM's CPU int32 bitmask (a torch tensor or numpy array)."""
        self.matcher.fill_next_token_bitmask(bitmask, batch_index)

    def is_terminated(self) -> bool:
        return self.matcher.is_terminated()

    def reset(self) -> None:
        self.matcher.reset()
        self.num_processed_tokens = 0


class GrammaskBackend(_BackendBase):  # type: ignore[misc, valid-type]
    """vLLM's `StructuredOutputBackend` (a dataclass there: `vllm_config`, `tokenizer`,
    `vocab_size`). `tokenizer` may also be a `Vocabulary`; `cache` bounds the grammars kept
    (default: a `CompileCache` of 1 GiB in memory)."""

    def __init__(self, vllm_config: Any, tokenizer: Any, vocab_size: int,
                 cache: CompileCache | None = None) -> None:
        self.vllm_config = vllm_config
        self.tokenizer = tokenizer
        self.vocab_size = vocab_size
        self.vocab = vocabulary_of(tokenizer, vocab_size)
        self.cache = cache if cache is not None else CompileCache()
        self._by_stops: dict[frozenset[int], Vocabulary] = {}
        self._lock = threading.Lock()

    def _vocab(self, stop_token_ids: set[int] | None) -> Vocabulary:
        if not stop_token_ids:
            return self.vocab
        key = frozenset(int(i) for i in stop_token_ids)
        with self._lock:
            vocab = self._by_stops.get(key)
            if vocab is None:
                vocab = self._by_stops[key] = self.vocab.with_eos_token_ids(sorted(key))
        return vocab

    def compile_grammar(self, request_type: Any, grammar_spec: str,
                        stop_token_ids: set[int] | None = None) -> GrammaskGrammar:
        """A request's grammar; `request_type` is a `StructuredOutputOptions` (or its name).
        A bad spec raises ValueError, which vLLM reports as the request's validation error."""
        kind = getattr(request_type, "name", request_type)
        vocab = self._vocab(stop_token_ids)
        return GrammaskGrammar(compile_request(str(kind), grammar_spec, vocab, self.cache))

    def allocate_token_bitmask(self, max_num_seqs: int) -> Any:
        """A zeroed int32 bitmask (a torch tensor where torch is installed, else numpy)."""
        bitmask = allocate_token_bitmask(max_num_seqs, self.vocab_size)
        try:
            import torch
        except ImportError:
            return bitmask
        return torch.from_numpy(np.ascontiguousarray(bitmask))

    def destroy(self) -> None:
        self.cache.clear()
