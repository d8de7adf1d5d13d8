"""Tool-calling benchmark: grammask's compile_tool_calls against llguidance's Lark, same
vocabulary, same answers.

    python bench/bench_tool_calls.py [--quick] [--peers llguidance] [--json out.json]

Workloads: Qwen3's format (`<tool_call>\\n{"name": ..., "arguments": ...}\\n</tool_call>` in
free text) with 1, 16 and 128 tools, and a reasoning-then-JSON request (free reasoning text up
to `</think>`, then one JSON object). Each engine compiles each workload (repeats, median), then
walks the same answers token by token (a short text, a call, two calls; the reasoning and the
JSON answer), timing every fill, with Qwen's added tokens (`<tool_call>`, `</think>`) as the
single tokens a model emits; masks are compared bit for bit. llguidance gets the same
language as Lark: free text a lexeme without the markers (`TEXT: /(?s:.*)/ & ~/.../`), the
text before a call a lazy lexeme ending with `<tool_call>`, arguments
`%json {...}` with `additionalProperties: false` where the tool lists properties (grammask's
strict reading); xgrammar the very structural tag grammask compiles (`tool_calls_spec`), through
`GrammarCompiler.compile_structural_tag`. grammask's compile includes the JSON Schema
translation of every tool, and every compiler cache is cleared before each compile
(`clear_caches()`). Method: bench/harness.py docstring; commands and current results:
bench/README.md.

Known mask differences (the cross-check's classes): xgrammar allows, in free text, tokens made
of lone UTF-8 continuation bytes (grammask's free text is UTF-8 text), and unbounded whitespace
in JSON. llguidance allows only its canonical tokens where text is forced (after a call's
arguments `}` but not the added token `</tool_call>`, which it then accepts: reported as
problem steps), and refuses `\\x7f` and `\\/` in JSON strings. grammask allows the added tokens
`<tool_call>` and `</think>` wherever their text may stand; llguidance's Lark needs the text
before a trigger written as a lazy lexeme ending with it to allow them at all.
"""
from __future__ import annotations

import harness  # noqa: F401  (sets the thread counts before numpy and the peers load)

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from harness import log, pin_to_one_cpu, set_up  # noqa: E402
from measure import FULL, QUICK, GrammaskSession, Walk, run_engine, summary_of  # noqa: E402
from report import metric_table, pick, table  # noqa: E402

from grammask.compiler import clear_caches, compile_tool_calls  # noqa: E402
from grammask.compiler.frontends.tool_calls import tool_calls_spec  # noqa: E402

GM = "grammask"
EOS_CHAT = [151643, 151645]


def tool(i: int) -> dict[str, Any]:
    """A tool with a few typical arguments (a string, an enum, a bounded integer, a list)."""
    return {"type": "function", "function": {"name": f"tool_{i}", "description": "",
            "parameters": {"type": "object", "properties": {
                "query": {"type": "string"}, f"unit_{i}": {"enum": ["c", "f", "k"]},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "tags": {"type": "array", "items": {"type": "string"}}},
                "required": ["query"]}}}


def _strict(schema: Any) -> Any:
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(s) for s in schema]
    return schema


def qwen_lark(tools: list[dict[str, Any]]) -> str:
    """The same language as compile_tool_calls(format="qwen_3"), in llguidance's Lark: free
    text up to a trigger is one lazy lexeme that ends with the trigger, so that the added token
    `<tool_call>` can end it (an unbounded text lexeme followed by the literal is never left)."""
    lines = ["start: (open call)* TEXT",
             "TEXT: /(?s:.*)/ & ~/(?s:.*)(<tool_call>|<\\/tool_call>|<think>|<\\/think>)(?s:.*)/",
             "open[lazy]: /(?s:.*)<tool_call>/ & ~/(?s:.*)(<\\/tool_call>|<think>|<\\/think>)(?s:.*)/",
             "call: " + " | ".join(f"call_{i}" for i in range(len(tools)))]
    for i, t in enumerate(tools):
        f = t["function"]
        begin = '\n{"name": "' + f["name"] + '", "arguments": '
        end = "}\n</tool_call>"
        lines.append(f"call_{i}: {json.dumps(begin)} args_{i} {json.dumps(end)}")
        lines.append(f"args_{i}: %json {json.dumps(_strict(f['parameters']))}")
    return "\n".join(lines)


ANSWER = {"type": "object", "properties": {"answer": {"type": "string"},
                                           "confidence": {"type": "number"}},
          "required": ["answer", "confidence"]}


def reasoning_lark() -> str:
    return "\n".join([
        "start: think \"\\n\\n\" answer",
        "think[lazy]: /(?s:.*)<\\/think>/",
        f"answer: %json {json.dumps(_strict(ANSWER))}"])


def call_text(i: int, args: dict[str, Any]) -> str:
    return ('<tool_call>\n{"name": "tool_' + str(i) + '", "arguments": ' + json.dumps(args)
            + "}\n</tool_call>")


@dataclass
class Workload:
    name: str
    label: str
    compile: Any  # vocab -> CompiledGrammar
    lark: str
    texts: list[str]
    spec: dict[str, Any]  # the same request as a structural tag, for xgrammar


def workloads() -> list[Workload]:
    out = []
    for n in (1, 16, 128):
        tools = [tool(i) for i in range(n)]
        k = n - 1
        texts = ["The weather in Oslo is mild today.",
                 "Let me look that up. " + call_text(k, {"query": "Oslo", f"unit_{k}": "c"}),
                 call_text(0, {"query": "a", "limit": 5}) + "\n"
                 + call_text(k, {"query": "b", "tags": ["x", "y"]})]
        out.append(Workload(f"qwen3_{n}", f"qwen_3 format, {n} tool{'s' * (n > 1)}",
                            lambda v, tools=tools: compile_tool_calls(tools, v, format="qwen_3"),
                            qwen_lark(tools), texts,
                            tool_calls_spec(tools, frozenset(), format="qwen_3")[0]))
    out.append(Workload(
        "think_json", "reasoning text, then one JSON object",
        lambda v: compile_tool_calls([], v, format="qwen_3", reasoning=True,
                                     tool_choice="none", response_format=ANSWER),
        reasoning_lark(),
        ['The user asks for a number. 2 + 2 = 4.</think>\n\n{"answer": "4", "confidence": 0.9}'],
        tool_calls_spec([], frozenset(), format="qwen_3", reasoning=True, tool_choice="none",
                        response_format=ANSWER)[0]))
    return out


def tokenize(vocab: Any, text: str) -> list[int]:
    """`text` as a model writes it: Qwen's added tokens (`<tool_call>`, `</think>`, ...) as
    their single tokens, the rest by the vocabulary's BPE."""
    added = {vocab.token_bytes(i).decode(): i for i in range(151657, 151669)}
    ids: list[int] = []
    while text:
        hit = min(((text.find(a), a) for a in added if a in text), default=None)
        cut = len(text) if hit is None else hit[0]
        ids.extend(vocab.encode(text[:cut]))
        if hit is None:
            break
        ids.append(added[hit[1]])
        text = text[cut + len(hit[1]):]
    return ids


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--peers", default="xgrammar,llguidance",
                    help="comma-separated ('' for none)")
    ap.add_argument("--json", help="write every number to this file")
    ap.add_argument("--no-pin", action="store_true", help="do not pin to one CPU")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    plan = QUICK if args.quick else FULL
    pin = "not pinned (--no-pin)" if args.no_pin else pin_to_one_cpu()
    t_start = time.perf_counter()
    order = [p for p in args.peers.split(",") if p]
    setup = set_up(set(order), warm=lambda v: compile_tool_calls([tool(0)], v, format="qwen_3"))
    vocab = setup.vocab
    peers = sorted((p for p in setup.peers if p.name in order and p.name != "outlines_core"),
                   key=lambda p: order.index(p.name))
    engines = [GM, *[p.name for p in peers]]
    summaries: dict[str, dict[str, Any]] = {}
    agree: dict[str, list[str]] = {}
    for w in workloads():
        log(w.name)
        seqs = [tokenize(vocab, t) for t in w.texts]
        walk = Walk(seqs, vocab.size, vocab.eos_token_id)

        def compile_gm(w: Workload = w) -> Any:
            clear_caches()
            return w.compile(vocab)

        runs = {GM: run_engine(compile_gm, GrammaskSession, walk, plan, grammask=True,
                               nbytes=lambda c: c.nbytes())}
        for p in peers:
            compile_peer = ((lambda p=p, w=w: p.compile_grammar(w.lark)) if p.name == "llguidance"
                            else (lambda p=p, w=w: p.compile_structural_tag(w.spec)))
            runs[p.name] = run_engine(compile_peer, p.session, walk, plan, grammask=False)
        summaries[w.name] = {e: summary_of(r) for e, r in runs.items()}
        for e, r in runs.items():
            if e == GM or not r.rows or not runs[GM].rows:
                continue
            steps = [(a, b) for sa, sb in zip(runs[GM].rows, r.rows) for a, b in zip(sa, sb)]
            same = sum(bool(np.array_equal(a, b)) for a, b in steps)
            agree.setdefault(w.name, []).append(f"{e} {same}/{len(steps)}")
    print(f"grammask tool-calling benchmark ({'quick' if args.quick else 'full'}); python "
          f"{platform.python_version()}; {pin}; vocabulary {vocab.size:,} ids")
    print(setup.setup_line())
    for n in setup.notes:
        print(f"  {n}")
    print()
    print(table("status (masks: steps where a peer's mask equals grammask's)",
                ["workload", *engines, "masks"],
                [[wl, *[("error: " + s[e]["error"][:60]) if s.get(e, {}).get("error") else
                        f"ok, {len(s[e]['rejected']) + len(s[e]['not_allowed'])} problem steps"
                        if e in s else "-" for e in engines], ", ".join(agree.get(wl, ["-"]))]
                 for wl, s in summaries.items()]))
    print()
    for key, title in (("compile_ms", "compile, ms (median)"),
                       ("first_mask_ms", "time to first mask, ms (compile + first fill)")):
        print(metric_table(title, pick(summaries, engines, key), engines))
        print()
    for stat in ("median", "p99"):
        print(metric_table(f"mask fill, µs ({stat}, warm passes)",
                           pick(summaries, engines, "warm_fill_us", stat), engines))
        print()
    print(f"total benchmark wall time {time.perf_counter() - t_start:.0f} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"mode": "quick" if args.quick else "full", "pin": pin,
                       "workloads": summaries, "agreement": agree}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
