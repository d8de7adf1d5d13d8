"""`grammask demo`: a toy model asked for `{"age": 42}`, sampled with and without a grammar mask,
then (in `demo_schema`) asked for a person in JSON mode and through a strict JSON Schema.

`ToyModel` is a few lines of NumPy that produce real logits vectors over the default (Qwen2.5)
vocabulary. It mostly copies the usual tokenization of the target answer, with noise on every
choice, a handful of plausible slips (a wrong digit, an extra space, a stray newline, a missing
brace, end-of-text too early, chatter) and a habit of opening with "Sure". Sampled freely it
writes a valid answer about two times in three; sampled through a `Matcher` every finished
answer is valid by construction.
"""
from __future__ import annotations

import json
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from ...runtime import (
    Matcher,
    Vocabulary,
    allocate_token_bitmask,
    apply_token_bitmask_inplace,
)
from ...runtime.vocab.trie import token_trie
from ..support.errors import GrammarError
from ..pipeline import compile_regex

if TYPE_CHECKING:
    from .demo_schema import SchemaDemoResult

__all__ = ["DEFAULT_PATTERN", "SCHEMA_N", "TARGET", "DemoResult", "Generation", "ToyModel",
           "generate", "run_demo", "sample_token"]

TARGET = '{"age": 42}'
DEFAULT_PATTERN = r'\{"age": [0-9]+\}'
MAX_TOKENS = 24
SCHEMA_N = 50
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


@dataclass
class DemoResult:
    """The numbers of one demo run (times in seconds, milliseconds or microseconds as named).

    Answer lists hold (text, count) pairs, most common first, of answers that ended with EOS;
    `capped_examples` shows a few that hit the token cap (counted invalid) instead. `schema`
    holds the JSON Schema part (None when it was skipped); `wall_s` covers both parts."""

    n: int
    seed: int
    pattern: str
    vocab_name: str
    vocab_size: int
    max_tokens: int
    vocab_load_s: float
    compile_ms: float
    dfa_states: int
    unconstrained_valid: int
    unconstrained_json_valid: int
    unconstrained_capped: int
    constrained_valid: int
    constrained_capped: int
    unconstrained_failures: list[tuple[str, int]]
    constrained_answers: list[tuple[str, int]]
    capped_examples: list[str]
    constrained_tokens: int
    mask_us_mean: float
    mask_us_median: float
    accept_us_mean: float
    wall_s: float
    schema: SchemaDemoResult | None = None

    @property
    def unconstrained_rate(self) -> float:
        return self.unconstrained_valid / self.n

    @property
    def unconstrained_json_rate(self) -> float:
        return self.unconstrained_json_valid / self.n

    @property
    def constrained_rate(self) -> float:
        return self.constrained_valid / self.n

    def to_dict(self) -> dict[str, Any]:
        """Every field plus the three rates, ready for `json.dumps` (answer lists as
        `{"text", "count"}` objects)."""
        d = asdict(self)
        d["schema"] = self.schema.to_dict() if self.schema is not None else None
        for name in ("unconstrained_failures", "constrained_answers"):
            d[name] = [{"text": t, "count": c} for t, c in d[name]]
        for name in ("unconstrained_rate", "unconstrained_json_rate", "constrained_rate"):
            d[name] = getattr(self, name)
        return d


def _json_age(text: str) -> bool:
    try:
        obj = json.loads(text)
    except ValueError:
        return False
    age = obj.get("age") if isinstance(obj, dict) else None
    return isinstance(age, int) and not isinstance(age, bool)


def _us(values: list[int]) -> tuple[float, float]:
    if not values:
        return 0.0, 0.0
    return statistics.fmean(values) / 1e3, statistics.median(values) / 1e3


def run_demo(n: int = 200, seed: int = 0, pattern: str = DEFAULT_PATTERN,
             out: TextIO | None = sys.stdout, *, vocab: Vocabulary | None = None,
             max_tokens: int = MAX_TOKENS, schema_n: int = SCHEMA_N) -> DemoResult:
    """Sample `n` answers freely and `n` through the compiled `pattern`, then `schema_n`
    answers in JSON mode and `schema_n` through the strict person schema (`demo_schema`; 0
    skips that part), report, and return the numbers. Validity is `re.fullmatch(pattern,
    text)` on the decoded text, independent of grammask; an answer that hits `max_tokens`
    without EOS counts as invalid. `out=None` prints nothing. Raises `GrammarError` for a
    pattern grammask rejects or one that matches nothing, and `re.error` for one Python's `re`
    rejects."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if schema_n < 0:
        raise ValueError(f"schema_n must not be negative, got {schema_n}")
    start = time.perf_counter()
    t0 = time.perf_counter()
    vocab_name = "Qwen2.5 default" if vocab is None else "custom"
    vocab = Vocabulary.default() if vocab is None else vocab
    token_trie(vocab)
    vocab.encode(TARGET)
    vocab_load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    compiled = compile_regex(pattern, vocab)
    compile_ms = (time.perf_counter() - t0) * 1e3
    if compiled.dfa.is_empty_language:
        raise GrammarError("the pattern matches no text at all, so no answer can be valid",
                           code="empty-language")
    checker = re.compile(pattern)
    seeds = np.random.SeedSequence(seed).spawn(4)
    free_model, free_rng = ToyModel(vocab, seeds[0]), np.random.default_rng(seeds[1])
    masked_model, masked_rng = ToyModel(vocab, seeds[2]), np.random.default_rng(seeds[3])
    matcher = Matcher(compiled)

    def text_of(g: Generation) -> str:
        return vocab.decode(g.tokens).decode("utf-8", "replace")

    free_failures: Counter[str] = Counter()
    free_valid = free_json = 0
    free_capped: list[str] = []
    for _ in range(n):
        g = generate(free_model, free_rng, None, max_tokens)
        text = text_of(g)
        if not g.finished:
            free_capped.append(text)
        elif checker.fullmatch(text):
            free_valid += 1
        else:
            free_failures[text] += 1
        free_json += g.finished and _json_age(text)
    masked: Counter[str] = Counter()
    masked_valid = 0
    masked_capped: list[str] = []
    mask_ns: list[int] = []
    accept_ns: list[int] = []
    for _ in range(n):
        matcher.reset()
        g = generate(masked_model, masked_rng, matcher, max_tokens)
        mask_ns += g.mask_ns
        accept_ns += g.accept_ns
        text = text_of(g)
        if not g.finished:
            masked_capped.append(text)
            continue
        masked_valid += checker.fullmatch(text) is not None
        masked[text] += 1
    mask_mean, mask_median = _us(mask_ns)
    result = DemoResult(
        n=n, seed=seed, pattern=pattern, vocab_name=vocab_name, vocab_size=vocab.size,
        max_tokens=max_tokens, vocab_load_s=vocab_load_s, compile_ms=compile_ms,
        dfa_states=compiled.dfa.n_states, unconstrained_valid=free_valid,
        unconstrained_json_valid=int(free_json), unconstrained_capped=len(free_capped),
        constrained_valid=masked_valid, constrained_capped=len(masked_capped),
        unconstrained_failures=free_failures.most_common(5),
        constrained_answers=masked.most_common(5),
        capped_examples=(free_capped + masked_capped)[:5],
        constrained_tokens=len(mask_ns), mask_us_mean=mask_mean, mask_us_median=mask_median,
        accept_us_mean=_us(accept_ns)[0], wall_s=0.0)
    if schema_n:
        from .demo_schema import run_schema_demo

        result.schema = run_schema_demo(vocab, schema_n, seed)
    result.wall_s = time.perf_counter() - start
    if out is not None:
        out.write(format_report(result))
    return result


def _rate(count: int, n: int) -> str:
    return f"{count}/{n} ({100 * count / n:.1f}%)"


def format_report(r: DemoResult) -> str:
    """The human-readable report `run_demo` prints."""
    lines = [
        f"grammask demo: a toy model asked for {TARGET}, {r.n} answers each way (seed {r.seed})",
        (f"  vocabulary      {r.vocab_size:,} ids ({r.vocab_name}), loaded and indexed in"
         f" {r.vocab_load_s:.2f} s"),
        f"  pattern         {r.pattern}",
        (f"  compiled        {r.dfa_states} DFA states in {r.compile_ms:.1f} ms"
         " (token sets filled on first use)"),
        "",
        (f"  unconstrained   valid {_rate(r.unconstrained_valid, r.n)}; valid JSON with an"
         f" integer \"age\" {_rate(r.unconstrained_json_valid, r.n)}"),
        f"  constrained     valid {_rate(r.constrained_valid, r.n)}",
    ]
    for label, capped in (("unconstrained", r.unconstrained_capped),
                          ("constrained", r.constrained_capped)):
        if capped:
            lines.append(f"  {label} answers that hit the {r.max_tokens}-token cap without"
                         f" EOS (invalid): {capped}")
    lines += [f"    {t!r}" for t in r.capped_examples]
    lines += ["", "  failing unconstrained answers (most common first):"]
    lines += [f"    {c:4d} x {t!r}" for t, c in r.unconstrained_failures] or ["    (none)"]
    lines += ["  constrained answers (most common first):"]
    lines += [f"    {c:4d} x {t!r}" for t, c in r.constrained_answers] or ["    (none)"]
    lines += [
        "",
        (f"  mask fill       mean {r.mask_us_mean:.1f} us, median {r.mask_us_median:.1f} us per"
         f" token ({r.constrained_tokens:,} tokens; a state's first fill computes its token"
         " set)"),
        f"  accept          mean {r.accept_us_mean:.1f} us per token",
    ]
    if r.schema is not None:
        from .demo_schema import format_schema_report

        lines += ["", format_schema_report(r.schema).rstrip("\n")]
    lines.append(f"  wall time       {r.wall_s:.2f} s")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    from .main import main

    sys.exit(main(["demo", *sys.argv[1:]]))
