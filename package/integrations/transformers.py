"""A `transformers` logits processor that constrains each row of a batch to its own grammar.

Invariant: one processor serves one `generate` call. At its first call it records the prompt
length and makes a `Matcher` per row; at each later call every row's input ids are the ones
of the previous call plus one new token, which its matcher accepts (a row whose matcher has
terminated, its EOS taken, gets padding, which is ignored). It then fills every row's mask and
sets the scores of disallowed tokens to -inf in place, on the scores' device (ids past the
vocabulary too). A call whose input ids do not extend the previous call's (beam search, which
reorders rows; a processor used for a second `generate`) raises `ValueError`, never masks
with the wrong grammar state.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from transformers import LogitsProcessor

from ..runtime import (
    CompiledGrammar,
    Matcher,
    MatcherError,
    allocate_token_bitmask,
    apply_token_bitmask_inplace,
    batch_fill_next_token_bitmask,
)

__all__ = ["GrammaskLogitsProcessor"]


class GrammaskLogitsProcessor(LogitsProcessor):  # type: ignore[misc]
    """Pass to `model.generate(..., logits_processor=LogitsProcessorList([processor]))`.

    `grammars` is one `CompiledGrammar` for every row or one per row (the batch's rows, times
    `num_return_sequences`, in `generate`'s order); all must share a vocabulary, whose ids
    must be the model's (its logits may be wider: the extra ids are masked). Greedy search
    and sampling; not beam search (module docstring). With `max_new_tokens` (the value given
    to `generate`), every row's text is complete when `generate` stops it there: each matcher
    has that token budget (`Matcher(max_tokens=)`)."""

    def __init__(self, grammars: CompiledGrammar | Sequence[CompiledGrammar], *,
                 max_new_tokens: int | None = None) -> None:
        if isinstance(grammars, CompiledGrammar):
            self._one: CompiledGrammar | None = grammars
            self._grammars: list[CompiledGrammar] = []
        else:
            self._one = None
            self._grammars = list(grammars)
            if not self._grammars:
                raise ValueError("no grammars given")
            for i, g in enumerate(self._grammars):
                if not isinstance(g, CompiledGrammar):
                    raise TypeError(f"grammars[{i}] is a {type(g).__name__}, not a "
                                    f"CompiledGrammar")
        sizes = {g.vocab.size for g in ([self._one] if self._one else self._grammars)}
        if len(sizes) != 1:
            raise ValueError("the grammars are compiled for vocabularies of different sizes")
        self._size = sizes.pop()
        self._budget = max_new_tokens
        self.matchers: list[Matcher] = []
        self._seen: torch.Tensor | None = None
        self._bitmask = np.zeros((0, 0), dtype=np.int32)

    def _start(self, input_ids: torch.Tensor) -> None:
        rows = int(input_ids.shape[0])
        grammars = [self._one] * rows if self._one is not None else self._grammars
        if len(grammars) != rows:
            raise ValueError(f"{len(grammars)} grammars for a batch of {rows} rows")
        self.matchers = [Matcher(g, max_tokens=self._budget)  # type: ignore[arg-type]
                         for g in grammars]
        self._bitmask = allocate_token_bitmask(rows, self._size)

    def _advance(self, input_ids: torch.Tensor) -> None:
        seen = self._seen
        assert seen is not None
        if input_ids.shape[0] != seen.shape[0] or input_ids.shape[1] != seen.shape[1] + 1 \
                or not torch.equal(input_ids[:, :-1], seen):
            raise ValueError("the input ids do not extend the previous step's by one token: "
                             "beam search, or a processor used for a second generate call "
                             "(make one per call)")
        for row, token in enumerate(input_ids[:, -1].tolist()):
            m = self.matchers[row]
            if m.is_terminated():
                continue
            if not 0 <= token < self._size or not m.accept_token(token):
                raise MatcherError(f"row {row}: token {token} was not allowed by the mask "
                                   f"(was the processor applied last, after other processors "
                                   f"that may raise scores?)")

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        ids = input_ids.detach().to("cpu")
        if self._seen is None:
            self._start(ids)
        else:
            self._advance(ids)
        self._seen = ids
        batch_fill_next_token_bitmask(self.matchers, self._bitmask)
        apply_token_bitmask_inplace(scores, torch.from_numpy(self._bitmask))
        return scores
