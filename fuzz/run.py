"""Time-bounded fuzzing of every frontend and of the matcher.

    python fuzz/run.py [--seconds 60] [--target regex|gbnf|lark|matcher|all] [--seed N]

Frontends get random mutations of seed inputs (the shipped grammars and a few patterns): each
input must either compile (to a DFA, or to rule automata for the pushdown runtime) or raise
grammask's own `GrammarError`; anything else is a finding. What compiles is also walked for a
few steps on a byte vocabulary. The matcher target interleaves accept/rollback/copy/reset/fill
on compiled regexes and recursive grammars (JSON, arithmetic) over the default vocabulary and
checks every filled mask against accepting each allowed token. Findings are printed with the input
that caused them, and the exit status is 1 when there were any.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import numpy as np

from grammask.compiler import GrammarError, Limits, compile_gbnf, compile_grammar, compile_ir, compile_regex
from grammask.compiler.gbnf import parse_gbnf
from grammask.compiler.lark_grammar import parse_lark
from grammask.compiler.regex import parse_regex
from grammask.runtime import Matcher, Vocabulary, allocate_token_bitmask

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
LIMITS = Limits(max_nfa_states=20_000, max_dfa_states=2_000, max_repeat=200)
PATTERNS = [r'\{"age": [0-9]+\}', r"[a-z]+( [a-z]+)*\.", r"(ab|a)*c?", r"中+文?", r"\d{3}-\d{4}",
            r'"([^"\\]|\\.)*"', r"(?:x|y){2,5}z?", r"[^\x00-\x1f]{0,8}"]
ALPHABET = list("()[]{}|*+?.^$\\-:=\"'#/ \n\tabcxyz019_,<>!%~") + ["中", "é", "\x00", "\udcff"]


def mutate(text: str, rng: random.Random) -> str:
    """A few random character-level edits: insert, delete, replace, duplicate a slice."""
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(4)
        i = rng.randint(0, len(chars))
        if op == 0:
            chars.insert(i, rng.choice(ALPHABET))
        elif op == 1 and chars:
            del chars[min(i, len(chars) - 1)]
        elif op == 2 and chars:
            chars[min(i, len(chars) - 1)] = rng.choice(ALPHABET)
        elif chars:
            j = rng.randint(i, min(len(chars), i + 8))
            chars[i:i] = chars[i:j]
    return "".join(chars)


BYTES = Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256])


def frontend(parse: Callable[[str], object], rng: random.Random) -> Callable[[str], None]:
    """A target that parses, compiles within LIMITS on a byte vocabulary and walks a little."""
    def run(text: str) -> None:
        try:
            result = parse(text)
            grammar = result[0] if isinstance(result, tuple) else result
            compiled = (compile_grammar(grammar, BYTES, limits=LIMITS) if hasattr(grammar, "rules")
                        else compile_ir(grammar, BYTES, limits=LIMITS))  # type: ignore[arg-type]
        except GrammarError:
            return
        walk(Matcher(compiled), BYTES, rng, rng.randint(1, 12))
    return run


def seeds(kind: str) -> list[str]:
    if kind == "regex":
        return PATTERNS
    return [p.read_text(encoding="utf-8") for p in sorted((DATA / kind).rglob(f"*.{kind}"))]


def walk(m: Matcher, vocab: Vocabulary, rng: random.Random, steps: int) -> None:
    """Random fills, accepts, rollbacks, copies and resets, each mask checked against the
    tokens it allows and a random token against its bit."""
    bitmask = allocate_token_bitmask(1, vocab.size)
    for _step in range(steps):
        m.fill_next_token_bitmask(bitmask)
        bits = np.unpackbits(bitmask[0].view(np.uint8), bitorder="little")[:vocab.size]
        allowed = np.flatnonzero(bits)
        if m.is_terminated():
            assert set(allowed.tolist()) == set(vocab.eos_token_ids.tolist())
            m.rollback(1)
            continue
        assert len(allowed), "a live prefix always has a continuation"
        op = rng.random()
        if op < 0.6:
            tid = int(rng.choice(allowed.tolist()))
            assert m.accept_token(tid), tid
        elif op < 0.75:
            tid = rng.randrange(vocab.size)
            assert m.accept_token(tid) == bool(bits[tid]), tid
        elif op < 0.85 and m.num_rollback_steps:
            m.rollback(rng.randint(1, m.num_rollback_steps))
        elif op < 0.95:
            m = m.copy()
        else:
            m.reset()


def matcher_target(rng: random.Random, vocab: Vocabulary) -> Callable[[str], None]:
    compiled = [compile_regex(p, vocab, limits=LIMITS) for p in PATTERNS]
    compiled += [compile_gbnf((DATA / "gbnf" / f"{name}.gbnf").read_text(encoding="utf-8"), vocab,
                              limits=LIMITS) for name in ("json", "arithmetic")]

    def run(_: str) -> None:
        walk(Matcher(rng.choice(compiled)), vocab, rng, rng.randint(1, 30))
    return run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--target", default="all", choices=["all", "regex", "gbnf", "lark", "matcher"])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    targets: dict[str, tuple[Callable[[str], None], list[str]]] = {
        "regex": (frontend(lambda t: parse_regex(t, limits=LIMITS), rng), seeds("regex")),
        "gbnf": (frontend(lambda t: parse_gbnf(t, limits=LIMITS), rng), seeds("gbnf")),
        "lark": (frontend(lambda t: parse_lark(t, limits=LIMITS), rng), seeds("lark")),
    }
    if args.target in ("all", "matcher"):
        targets["matcher"] = (matcher_target(rng, Vocabulary.default()), [""])
    chosen = list(targets) if args.target == "all" else [args.target]
    budget = args.seconds / len(chosen)
    findings = 0
    for name in chosen:
        run, corpus = targets[name]
        deadline = time.monotonic() + budget
        count = 0
        while time.monotonic() < deadline:
            text = mutate(rng.choice(corpus), rng) if corpus != [""] else ""
            try:
                run(text)
            except Exception:  # noqa: BLE001 - every other exception is a finding
                findings += 1
                print(f"[{name}] finding on input {text[:300]!r}:", file=sys.stderr)
                traceback.print_exc()
            count += 1
        print(f"{name}: {count} executions in {budget:.0f} s")
    print(f"{findings} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
