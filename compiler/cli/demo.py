"""`grammask demo`: a toy model asked for `{"age": 42}`, sampled with and without a grammar mask,
then (in `demo_schema`) asked for a person in JSON mode and through a strict JSON Schema, (in
`demo_tools`) calling a tool, and (in `demo_repair`) its failing answers repaired by `extract`
and the person schema's changes compared by `diff`.

The model is `toy_model.ToyModel`: sampled freely it writes a valid answer about two times in
three; sampled through a `Matcher` every finished answer is valid by construction. This module
runs both ways, counts, times and reports.
"""
from __future__ import annotations

import json
import re
import statistics
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any, TextIO

import numpy as np

from ...runtime import Matcher, Vocabulary
from ...runtime.vocab.trie import token_trie
from ..pipeline import compile_regex
from ..support.errors import GrammarError
from .demo_repair import RepairDemoResult, format_repair_report, run_repair_demo
from .demo_schema import SCHEMA_N, SchemaDemoResult, format_schema_report, run_schema_demo
from .demo_tools import TOOLS_N, ToolsDemoResult, format_tools_report, run_tools_demo
from .toy_model import MAX_TOKENS, TARGET, Generation, ToyModel, generate

__all__ = ["DEFAULT_PATTERN", "DemoResult", "format_report", "run_demo"]

DEFAULT_PATTERN = r'\{"age": [0-9]+\}'


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
    tools: ToolsDemoResult | None = None
    repair: RepairDemoResult | None = None

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
        d["tools"] = self.tools.to_dict() if self.tools is not None else None
        d["repair"] = self.repair.to_dict() if self.repair is not None else None
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
             max_tokens: int = MAX_TOKENS, schema_n: int = SCHEMA_N,
             tools_n: int = TOOLS_N) -> DemoResult:
    """Sample `n` answers freely and `n` through the compiled `pattern`, then `schema_n`
    answers in JSON mode and `schema_n` through the strict person schema (`demo_schema`; 0
    skips that part), then `tools_n` answers of a tool-calling model each way (`demo_tools`;
    0 skips it), report, and return the numbers. Validity is `re.fullmatch(pattern,
    text)` on the decoded text, independent of grammask; an answer that hits `max_tokens`
    without EOS counts as invalid. `out=None` prints nothing. Raises `GrammarError` for a
    pattern grammask rejects or one that matches nothing, and `re.error` for one Python's `re`
    rejects."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if schema_n < 0 or tools_n < 0:
        raise ValueError(f"schema_n and tools_n must not be negative, got {schema_n}, "
                         f"{tools_n}")
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
    failing: list[str] = []
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
            failing.append(text)
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
        result.schema = run_schema_demo(vocab, schema_n, seed)
    if tools_n:
        result.tools = run_tools_demo(vocab, tools_n, seed)
    result.repair = run_repair_demo(compiled, pattern, failing)
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
        lines += ["", format_schema_report(r.schema).rstrip("\n")]
    if r.tools is not None:
        lines += ["", format_tools_report(r.tools).rstrip("\n")]
    if r.repair is not None:
        lines += ["", format_repair_report(r.repair).rstrip("\n")]
    lines.append(f"  wall time       {r.wall_s:.2f} s")
    return "\n".join(lines) + "\n"

