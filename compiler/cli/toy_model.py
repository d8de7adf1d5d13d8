"""The demo's toy language model and its sampling loop.

`ToyModel` is a few lines of NumPy that produce real logits vectors over the default (Qwen2.5)
vocabulary. It mostly copies the usual tokenization of the target answer, with noise on every
choice, a handful of plausible slips (a wrong digit, an extra space, a stray newline, a missing
brace, end-of-text too early, chatter) and a habit of opening with "Sure". Sampled freely it
writes a valid answer about two times in three; sampled through a `Matcher` (`generate`) every
finished answer is valid by construction.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ...runtime import Matcher, Vocabulary, allocate_token_bitmask, apply_token_bitmask_inplace

__all__ = ["MAX_TOKENS", "TARGET", "Generation", "ToyModel", "generate", "sample_token"]

TARGET = '{"age": 42}'
MAX_TOKENS = 24
_BLOCK = 1024

_OPENING = {"Sure": 0.12, "Here": 0.04, " Sure": 0.02, "\n": 0.01, '"': 0.01}
_CHATTER = {
    "Sure": {"!": 0.6, ",": 0.5, "\n": 0.2},
    " Sure": {"!": 0.6, ",": 0.5},
    ",": {" here": 1.2, ' {"': 0.2},
    " here": {":": 0.8, "\n": 0.3},
    "": {"\n": 0.4, ' {"': 0.3},
}
_SLIPS = {" ": 0.008, "\n": 0.006, " Sure": 0.002}
_DONE = {"\n": 0.02, " ": 0.005, "!": 0.005}


class ToyModel:
    """A pretend language model that has mostly learned to answer `target`.

    `logits(tokens)` returns a float32 vector over the whole vocabulary. The model aligns the
    text generated so far against the target byte by byte (a wrong digit stands in for the
    right one, a skipped byte is tolerated, anything else counts as an insertion) and prefers
    the first token of the usual tokenization of what remains, or EOS once it is all written.
    Every candidate's logit gets fresh normal noise at every step, the rest of the vocabulary
    keeps fixed low logits (about 0.2% of the mass in all), and the preference for EOS and "}"
    grows with the answer's length, so that a model knocked off its script still closes.
    With `respell` > 0 the token of the next character alone gets that weight too when the
    usual next token is longer (the same text in smaller pieces, which a real model also gives
    some probability), so that a mask forbidding the usual token still leaves a likely way on.
    """

    def __init__(self, vocab: Vocabulary, seed: int | np.random.SeedSequence = 0,
                 target: str = TARGET, *,
                 noise: float = 0.5, respell: float = 0.0) -> None:
        self.vocab = vocab
        self.target = target.encode("utf-8")
        self.noise = noise
        self.respell = respell
        self.eos = vocab.eos_token_id
        self._rng = np.random.default_rng(seed)
        background = self._rng.normal(-18.6, 1.0, vocab.size).astype(np.float32)
        background[vocab.special_token_ids] = -40.0
        self._background = background
        self._script_len = len(vocab.encode(target))
        self._digits = [t for t in (self._token(str(d)) for d in range(10)) if t is not None]
        self._brace = self._token("}")
        self._opening = self._table(_OPENING)
        self._chatter = {self._token(prev) if prev else None: self._table(follow)
                         for prev, follow in _CHATTER.items()}
        self._slips = self._table(_SLIPS)
        self._done = self._table(_DONE)
        self._next: dict[int, int] = {}
        self._piece: dict[int, int | None] = {}

    def _token(self, text: str) -> int | None:
        ids = self.vocab.encode(text)
        return ids[0] if len(ids) == 1 else None

    def _table(self, weights: dict[str, float]) -> dict[int, float]:
        out: dict[int, float] = {}
        for text, w in weights.items():
            tok = self._token(text)
            if tok is not None:
                out[tok] = out.get(tok, 0.0) + w
        return out

    def progress(self, text: bytes) -> int:
        """How many bytes of the target `text` has written, aligned as described above."""
        t, k = self.target, 0
        for b in text:
            if k < len(t) and (b == t[k] or (0x30 <= b <= 0x39 and 0x30 <= t[k] <= 0x39)):
                k += 1
            elif k + 1 < len(t) and b == t[k + 1]:
                k += 2
        return k

    def _preferred(self, k: int) -> int:
        if k not in self._next:
            rest = self.target[k:].decode("utf-8", "ignore")
            ids = self.vocab.encode(rest) if rest else []
            self._next[k] = ids[0] if ids else self.eos
        return self._next[k]

    def _first_piece(self, k: int) -> int | None:
        """The token of the next character of the target alone, when the usual next token is
        longer than it."""
        if k not in self._piece:
            rest = self.target[k:].decode("utf-8", "ignore")
            piece = self._token(rest[:1]) if rest else None
            self._piece[k] = None if piece == self._preferred(k) else piece
        return self._piece[k]

    def candidates(self, tokens: Sequence[int]) -> dict[int, float]:
        """The tokens the model considers next, with unnormalized weights (before noise)."""
        n = len(tokens)
        k = self.progress(self.vocab.decode(tokens))
        weights: dict[int, float] = {}

        def add(table: dict[int, float], scale: float = 1.0) -> None:
            for tok, w in table.items():
                weights[tok] = weights.get(tok, 0.0) + w * scale

        eos = {self.eos: 1.0}
        add({self._preferred(k): 1.0})
        piece = self._first_piece(k) if self.respell and k < len(self.target) else None
        if piece is not None:
            add({piece: self.respell})
        if n == 0:
            add(self._opening)
        elif k == 0:
            add(self._chatter.get(tokens[-1], self._chatter[None]))
            add(eos, 0.01)
        elif k < len(self.target):
            add(self._slips)
            add(eos, 0.006)
            if 0x30 <= self.target[k] <= 0x39:
                add({d: 0.0035 for d in self._digits})
            if self.target[k:k + 1] == b"}":
                add(eos, 0.02)
                add({d: 0.001 for d in self._digits})
        else:
            add(self._done)
        extra = n - self._script_len
        if extra > 0:
            boost = float(np.exp(0.8 * extra))
            for tok in (self.eos, self._brace):
                if tok is not None:
                    weights[tok] = weights.get(tok, 0.005) * boost
        return weights

    def logits(self, tokens: Sequence[int]) -> np.ndarray:
        """The next-token logits (float32, one per vocabulary id) after `tokens`."""
        weights = self.candidates(tokens)
        ids = np.fromiter(weights, dtype=np.int64, count=len(weights))
        w = np.fromiter(weights.values(), dtype=np.float64, count=len(weights))
        out = self._background.copy()
        out[ids] = np.log(w) + self.noise * self._rng.standard_normal(len(ids))
        return out


def sample_token(logits: np.ndarray, rng: np.random.Generator) -> int:
    """A token drawn from softmax(logits) at temperature 1; -inf logits are never drawn.

    Inverse-CDF sampling in two levels (blocks of `_BLOCK` tokens, then within the block), so
    a step over a 150k vocabulary costs a few vectorized passes instead of a full cumsum.
    """
    top = float(logits.max())
    if not np.isfinite(top):
        raise ValueError("every token is masked: nothing can be sampled")
    size = logits.shape[-1]
    blocks = -(-size // _BLOCK)
    p = np.zeros(blocks * _BLOCK, dtype=np.float32)
    np.subtract(logits, np.float32(top), out=p[:size])
    np.exp(p[:size], out=p[:size])
    sums = np.cumsum(p.reshape(blocks, _BLOCK).sum(axis=1, dtype=np.float64))
    r = rng.random() * sums[-1]
    b = min(int(np.searchsorted(sums, r, side="right")), blocks - 1)
    block = p[b * _BLOCK:(b + 1) * _BLOCK]
    within = np.cumsum(block, dtype=np.float64)
    j = int(np.searchsorted(within, r - (sums[b - 1] if b else 0.0), side="right"))
    if j >= _BLOCK or block[j] == 0:
        j = int(np.flatnonzero(block)[-1])
    return b * _BLOCK + j


@dataclass
class Generation:
    """One sampled answer: its tokens (EOS excluded), whether it ended with EOS, and timings."""

    tokens: list[int]
    finished: bool
    mask_ns: list[int] = field(default_factory=list)
    accept_ns: list[int] = field(default_factory=list)


def generate(model: ToyModel, rng: np.random.Generator, matcher: Matcher | None = None,
             max_tokens: int = MAX_TOKENS) -> Generation:
    """Sample one answer; with `matcher`, mask every step's logits with its bitmask."""
    tokens: list[int] = []
    out = Generation(tokens, finished=False)
    bitmask = allocate_token_bitmask(1, model.vocab.size) if matcher is not None else None
    while len(tokens) < max_tokens:
        logits = model.logits(tokens)
        if matcher is not None:
            t0 = time.perf_counter_ns()
            matcher.fill_next_token_bitmask(bitmask)
            out.mask_ns.append(time.perf_counter_ns() - t0)
            apply_token_bitmask_inplace(logits, bitmask)
        tok = sample_token(logits, rng)
        if matcher is not None:
            t0 = time.perf_counter_ns()
            ok = matcher.accept_token(tok)
            out.accept_ns.append(time.perf_counter_ns() - t0)
            if not ok:
                raise RuntimeError(f"the matcher rejected token {tok} that its own mask allowed")
        if tok == model.eos:
            out.finished = True
            break
        tokens.append(tok)
    return out


