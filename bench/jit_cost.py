"""The cold cost of each Numba kernel, and of each first step of a fresh process.

A child interpreter runs with an empty `NUMBA_CACHE_DIR` and does, in order: import, load the
default vocabulary, compile and mask a regex (the demo's), a JSON Schema (the demo's person),
JSON mode (`{}`) and arithmetic.gbnf (compile, first mask, a short walk), then `warm_up` (every
kernel not needed so far). Numba's `numba:compile` events time each kernel compile; a kernel's
own cost excludes the kernels compiled while typing it (its callees), which are listed under
their own names. A second child with the cache now warm times the same steps.

    python bench/jit_cost.py              # about a minute and a half
    python bench/jit_cost.py --json out.json

The report: each step's seconds cold and warm, then every kernel with its own cold cost, the
step that first needed it, and its signatures (more than one is a defect: `runtime/jit.py`).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEPS = ("import", "vocabulary", "regex compile", "regex first mask", "schema compile",
         "schema first mask", "json mode compile", "json mode first mask", "gbnf compile",
         "gbnf first mask", "warm up the rest")
PERSON = {"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 20}, "age": {"type": "integer"},
    "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["name"]}
GBNF = Path(__file__).resolve().parent.parent / "tests" / "data" / "gbnf" / "arithmetic.gbnf"


def _child() -> dict[str, object]:
    from numba.core import event

    compiles: list[dict[str, object]] = []
    stack: list[float] = []
    step = ["import"]

    class _Timer(event.Listener):  # type: ignore[misc]
        def on_start(self, ev: event.Event) -> None:
            stack.append(time.perf_counter())
            stack.append(0.0)

        def on_end(self, ev: event.Event) -> None:
            inner = stack.pop()
            took = time.perf_counter() - stack.pop()
            if stack:
                stack[-1] += took
            d = ev.data["dispatcher"]
            name = f"{d.py_func.__module__}.{d.py_func.__qualname__}"
            if name.startswith("grammask."):
                compiles.append({"kernel": name, "args": str(ev.data["args"]),
                                 "own_s": took - inner, "step": step[0]})

    event.register("numba:compile", _Timer())
    times: dict[str, float] = {}
    t = time.perf_counter()

    def done(next_step: str) -> None:
        nonlocal t
        now = time.perf_counter()
        times[step[0]] = now - t
        t, step[0] = now, next_step

    import grammask.compiler as gc
    import grammask.runtime as gr
    from grammask.runtime.jit import RUNTIME_KERNEL_MODULES, warm_up
    done("vocabulary")
    vocab = gr.Vocabulary.default()
    bitmask = gr.allocate_token_bitmask(1, vocab.size)

    def walk(compiled: object, text: str, label: str) -> None:
        matcher = gr.Matcher(compiled)
        matcher.fill_next_token_bitmask(bitmask, 0)
        done(f"{label} walk")
        for token in vocab.encode(text):
            matcher.accept_token(token)
            matcher.fill_next_token_bitmask(bitmask, 0)

    work = [("regex", lambda: gc.compile_regex(r'\{"age": [0-9]+\}', vocab), '{"age": 42}'),
            ("schema", lambda: gc.compile_json_schema(PERSON, vocab), '{"name": "Ada", "age": 3}'),
            ("json mode", lambda: gc.compile_json_schema({}, vocab), '{"a": [1, {"b": null}]}'),
            ("gbnf", lambda: gc.compile_gbnf(GBNF.read_text(), vocab), "(1+2)*x\n")]
    done("regex compile")
    for i, (label, build, text) in enumerate(work):
        compiled = build()
        done(f"{label} first mask")
        walk(compiled, text, label)
        done(f"{work[i + 1][0]} compile" if i + 1 < len(work) else "warm up the rest")
    from grammask.compiler.cli.warmup import COMPILER_KERNEL_MODULES
    warm_up((*RUNTIME_KERNEL_MODULES, *COMPILER_KERNEL_MODULES))
    done("end")
    return {"steps": times, "compiles": compiles}


def _run(cache_dir: str) -> dict[str, object]:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, "PYTHONDONTWRITEBYTECODE": "1"}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child"], env=env,
                          capture_output=True, text=True, timeout=1200, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"child failed: {proc.stderr.strip()[-3000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process_s"] = time.perf_counter() - t0
    return out


def report(cold: dict, warm: dict) -> str:  # type: ignore[type-arg]
    lines = ["| step | cold cache, s | warm cache, s |", "|---|---|---|"]
    for s in STEPS:
        lines.append(f"| {s} | {cold['steps'].get(s, 0):.2f} | {warm['steps'].get(s, 0):.3f} |")
    walks = sum(v for k, v in cold["steps"].items() if k.endswith("walk"))
    lines.append(f"| (the walks after each first mask) | {walks:.2f} | "
                 f"{sum(v for k, v in warm['steps'].items() if k.endswith('walk')):.3f} |")
    lines.append(f"| whole process | {cold['process_s']:.1f} | {warm['process_s']:.2f} |")
    per: dict[str, dict[str, object]] = {}
    for c in cold["compiles"]:
        k = per.setdefault(c["kernel"], {"own_s": 0.0, "step": c["step"], "sigs": 0})
        k["own_s"] += c["own_s"]
        k["sigs"] += 1
    total = sum(k["own_s"] for k in per.values())
    lines += ["", f"{len(per)} kernels, {total:.1f} s of their own compile time:", "",
              "| kernel | own cold s | first needed by | signatures |", "|---|---|---|---|"]
    for name, k in sorted(per.items(), key=lambda kv: -kv[1]["own_s"]):
        lines.append(f"| `{name.removeprefix('grammask.')}` | {k['own_s']:.2f} | {k['step']} |"
                     f" {k['sigs']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", metavar="PATH", help="write every number to PATH")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child()))
        return
    with tempfile.TemporaryDirectory(prefix="grammask-numba-cache-") as cache_dir:
        print("cold child (empty Numba cache)...", file=sys.stderr, flush=True)
        cold = _run(cache_dir)
        print("warm child...", file=sys.stderr, flush=True)
        warm = _run(cache_dir)
    print(report(cold, warm))
    if args.json:
        Path(args.json).write_text(json.dumps({"cold": cold, "warm": warm}, indent=1))


if __name__ == "__main__":
    main()
