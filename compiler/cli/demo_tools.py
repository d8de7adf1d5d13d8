"""The tool-calling part of `grammask demo`: Qwen3's tool-call format, unconstrained and
constrained.

The toy model was asked about the weather in Paris. In about two answers of three it calls
`get_weather(city)` the Qwen3 way (`<tool_call>\\n{"name": "get_weather", "arguments":
{"city": "Paris"}}\\n</tool_call>`, sometimes after a "Sure"), otherwise it answers in text;
its slips (a missing brace, a stray space or newline, chatter, an early end) make some calls
malformed. Answers are sampled freely and through `compile_tool_calls([get_weather], vocab,
format="qwen_3")` ("auto": text or calls), and every finished answer is checked independently
of grammask: each `<tool_call>` block must hold one JSON object naming `get_weather` with a
string `city` and nothing else, and the text around calls must not hold a stray marker.
"""
from __future__ import annotations

import json
import re
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...runtime import Matcher, Vocabulary
from ..pipeline import compile_tool_calls
from .toy_model import ToyModel, generate

__all__ = ["TOOLS_N", "ToolsDemoResult", "call_problem", "format_tools_report",
           "run_tools_demo"]

WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "The current weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}
CALL_TARGET = ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
               '</tool_call>')
TEXT_TARGET = "It is sunny in Paris today."
CALL_SHARE = 2 / 3
TOOLS_N = 60
TOOLS_MAX_TOKENS = 48
_BLOCK = re.compile(r"<tool_call>\n(.*?)\n</tool_call>", re.S)
_SHOWN = 4


def call_problem(text: str) -> str | None:
    """Why `text` is not free text with well-formed `get_weather` calls (None if it is)."""
    for block in _BLOCK.findall(text):
        try:
            call = json.loads(block)
        except ValueError:
            return "a call that is not JSON"
        if not isinstance(call, dict) or set(call) != {"name", "arguments"}:
            return "a call without exactly 'name' and 'arguments'"
        if call["name"] != "get_weather":
            return f"a call of an unknown function {call['name']!r}"
        args = call["arguments"]
        if not isinstance(args, dict) or set(args) != {"city"} or not isinstance(
                args["city"], str):
            return "arguments other than one string 'city'"
    rest = _BLOCK.sub("", text)
    if "<tool_call>" in rest or "</tool_call>" in rest:
        return "a stray or unclosed <tool_call> marker"
    return None


@dataclass
class ToolsRun:
    """One way of sampling: finished answers, calls, and what was wrong with the others."""

    finished: int
    capped: int
    calls: int
    texts: int
    valid: int
    problems: list[tuple[str, int]]
    examples: list[tuple[str, int]]


@dataclass
class ToolsDemoResult:
    """The numbers of the tool-calling part of one demo run."""

    n: int
    seed: int
    compile_ms: float
    kind: str
    unconstrained: ToolsRun
    constrained: ToolsRun
    wall_s: float

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: v for k, v in vars(self).items()
                               if k not in ("unconstrained", "constrained")}
        for name in ("unconstrained", "constrained"):
            run = dict(vars(getattr(self, name)))
            run["problems"] = [{"problem": p, "count": c} for p, c in run["problems"]]
            run["examples"] = [{"text": t, "count": c} for t, c in run["examples"]]
            out[name] = run
        return out


def _sample(vocab: Vocabulary, matcher: Matcher | None, n: int,
            seeds: list[np.random.SeedSequence]) -> ToolsRun:
    caller = ToyModel(vocab, seeds[0], CALL_TARGET, respell=0.05)
    talker = ToyModel(vocab, seeds[1], TEXT_TARGET, respell=0.05)
    rng = np.random.default_rng(seeds[2])
    problems: Counter[str] = Counter()
    examples: Counter[str] = Counter()
    finished = calls = texts = valid = 0
    for _ in range(n):
        model = caller if rng.random() < CALL_SHARE else talker
        if matcher is not None:
            matcher.reset()
        g = generate(model, rng, matcher, TOOLS_MAX_TOKENS)
        if not g.finished:
            continue
        finished += 1
        text = vocab.decode(g.tokens).decode("utf-8", "replace")
        examples[text] += 1
        if "<tool_call>" in text:
            calls += 1
        else:
            texts += 1
        problem = call_problem(text)
        if problem is None:
            valid += 1
        else:
            problems[problem] += 1
    return ToolsRun(finished, n - finished, calls, texts, valid, problems.most_common(_SHOWN),
                    examples.most_common(_SHOWN))


def run_tools_demo(vocab: Vocabulary, n: int = TOOLS_N, seed: int = 0) -> ToolsDemoResult:
    """Sample `n` answers freely and `n` through the compiled tool-calling grammar."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    start = time.perf_counter()
    t0 = time.perf_counter()
    compiled = compile_tool_calls([WEATHER_TOOL], vocab, format="qwen_3")
    compile_ms = (time.perf_counter() - t0) * 1e3
    seeds = np.random.SeedSequence([seed, 2]).spawn(6)
    free = _sample(vocab, None, n, seeds[:3])
    masked = _sample(vocab, Matcher(compiled), n, seeds[3:])
    return ToolsDemoResult(n, seed, compile_ms, compiled.kind, free, masked,
                           time.perf_counter() - start)


def _lines(title: str, r: ToolsRun) -> list[str]:
    capped = f"; {r.capped} hit the {TOOLS_MAX_TOKENS}-token cap" if r.capped else ""
    share = f"{r.valid}/{r.finished}" + (f" ({100 * r.valid / r.finished:.1f}%)"
                                        if r.finished else "")
    out = [f"  {title:<14}finished {r.finished}{capped}: {r.calls} with a call, {r.texts} "
           f"text only; well-formed {share}"]
    out += [f"    {c:4d} x {t!r}" for t, c in r.examples]
    out += [f"    malformed: {c} x {p}" for p, c in r.problems]
    return out


def format_tools_report(r: ToolsDemoResult) -> str:
    """The human-readable report of the tool-calling part."""
    lines = [
        (f"Tool calls: the toy model answers in text or calls get_weather(city) in Qwen3's"
         f" format, {r.n} answers each way (seed {r.seed})"),
        (f"  grammar       compile_tool_calls([get_weather], format=\"qwen_3\"): {r.kind},"
         f" compiled in {r.compile_ms:.1f} ms"),
        *_lines("unconstrained", r.unconstrained),
        *_lines("constrained", r.constrained),
        f"  time          {r.wall_s:.2f} s for this part",
    ]
    return "\n".join(lines) + "\n"
