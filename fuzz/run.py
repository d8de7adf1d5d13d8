"""Time-bounded fuzzing of every surface: the regex, GBNF, Lark and JSON Schema frontends, the
command line's `lint` and `check`, and the matcher.

    python fuzz/run.py [--seconds 60] [--target all|NAME[,NAME...]] [--seed N]
    python fuzz/run.py --target NAME --replay FILE...      # rerun saved inputs
    python fuzz/run.py --target NAME --minimize FILE       # shrink a saved input
    python fuzz/run.py --engine atheris ...                # coverage-guided, where installed

Each target mutates seed inputs (the shared corpora beside the repository when present, else
the vendored ones in tests/data), structure-aware for JSON Schemas. Bad input may only raise
grammask's own `GrammarError`; anything else, a violated property (a mask that disagrees with
accepting, with the reference recognizer, or a finished output that does not validate), a
traceback or internal error printed by the CLI, or an input running past --input-seconds is
a finding. Findings are printed with a command that replays them and saved under --findings;
the exit status is 1 when there were any. The seed is printed, so a run can be repeated.
"""
from __future__ import annotations

import argparse
import hashlib
import random
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

# The repository root, for `fuzz` and `tests` (imported late: atheris instruments them as they load).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

if TYPE_CHECKING:
    from fuzz.common import Target

FUZZ = Path(__file__).resolve().parent
TARGETS = ("regex", "gbnf", "lark", "jsonschema", "jsonschema-diff", "cli", "matcher",
           "structural-tag", "serialized")
# Inputs run before the clock starts bounding them: they pay for JIT compilation.
WARMUP = 3


class SlowInput(BaseException):
    """An input ran past its time bound (a BaseException, so no `except Exception` hides it)."""


def build_target(name: str, seed: int) -> Target:
    """The target called `name`, its seed choices made with `seed`."""
    rng = random.Random(f"{seed}:{name}")
    if name == "jsonschema":
        from fuzz.targets import json_schema_target
        return json_schema_target(rng)
    if name == "jsonschema-diff":
        from fuzz.diff_target import diff_target
        return diff_target(rng)
    if name == "cli":
        from fuzz.cli_target import cli_target
        return cli_target(rng)
    if name == "matcher":
        from fuzz.targets import matcher_target
        from grammask.runtime import Vocabulary
        return matcher_target(Vocabulary.default())
    if name == "serialized":
        from fuzz.targets import serialized_target
        return serialized_target()
    from fuzz.targets import frontend_targets
    return frontend_targets()[name]()


def _alarm(_signum: int, _frame: object) -> None:
    raise SlowInput


def run_one(target: Target, text: str, bound: float | None) -> tuple[bool, BaseException | None]:
    """Run one input: whether it was accepted, and the finding it raised, if any."""
    if bound is not None:
        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, bound)
    start = time.perf_counter()
    try:
        accepted = target.run(text)
    except (Exception, SlowInput) as exc:  # noqa: BLE001 - every other exception is a finding
        return False, exc
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    elapsed = time.perf_counter() - start
    if bound is not None and elapsed > bound:
        return accepted, SlowInput(f"{elapsed:.1f} s")
    return accepted, None


def signature(exc: BaseException) -> str:
    """What tells findings apart: the exception type and where it was raised."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.name != "_expect"]
    where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
    return f"{type(exc).__name__} at {where}"


def report(name: str, text: str, exc: BaseException, findings: Path) -> None:
    """Print a finding with its traceback and save its input for --replay."""
    findings.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    path = findings / f"{name}-{digest}.txt"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    kind = "slow input" if isinstance(exc, SlowInput) else signature(exc)
    print(f"[{name}] finding ({kind}) on input {text[:300]!r}:", file=sys.stderr)
    traceback.print_exception(exc, file=sys.stderr)
    print(f"  replay: python fuzz/run.py --target {name} --replay {path}", file=sys.stderr)


def fuzz(target: Target, seconds: float, rng: random.Random, bound: float,
         findings: Path) -> tuple[int, int, int]:
    """Mutate and run inputs for `seconds`; the executions, how many of them were accepted,
    and the findings (each distinct finding is reported once)."""
    pool = list(target.seeds)
    seen: set[str] = set()
    count = found = compiled = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        text = target.mutate(rng.choice(pool), rng)
        accepted, exc = run_one(target, text, bound if count >= WARMUP else None)
        if isinstance(exc, SlowInput):
            # Once more, with caches filled: a one-time cost or a busy machine is no finding.
            accepted, exc = run_one(target, text, bound)
        count += 1
        if exc is not None:
            found += 1
            key = "slow" if isinstance(exc, SlowInput) else signature(exc)
            if key not in seen:
                seen.add(key)
                report(target.name, text, exc, findings)
        elif accepted:
            compiled += 1
            if len(pool) < 4 * len(target.seeds) + 500:
                pool.append(text)
    return count, compiled, found


def minimize(target: Target, text: str, bound: float) -> str:
    """A shorter input raising the same kind of finding: chunks removed while it still does."""
    _, exc = run_one(target, text, bound)
    if exc is None:
        return text
    wanted = signature(exc)

    def same(candidate: str) -> bool:
        _, e = run_one(target, candidate, bound)
        return e is not None and signature(e) == wanted

    chunk = max(1, len(text) // 2)
    while chunk >= 1:
        i = 0
        while i < len(text):
            candidate = text[:i] + text[i + chunk:]
            if candidate != text and same(candidate):
                text = candidate
            else:
                i += chunk
        chunk //= 2
    return text


def _jitted() -> list[str]:
    """The modules with Numba kernels, which instrumented bytecode would break."""
    return [f"grammask.{package}." + ".".join(p.relative_to(FUZZ.parent / package)
                                               .with_suffix("").parts)
            for package in ("compiler", "runtime")
            for p in sorted((FUZZ.parent / package).rglob("*.py"))
            if "numba" in p.read_text(encoding="utf-8")]


def _atheris(name: str, seconds: float, seed: int, bound: float, findings: Path) -> int:
    """Fuzz the target `name` coverage-guided with atheris (libFuzzer), with its mutator as
    libFuzzer's custom mutator half of the time; does not return."""
    import tempfile

    import atheris

    with atheris.instrument_imports(include=["grammask"], exclude=_jitted()):
        target = build_target(name, seed)

    corpus = Path(tempfile.mkdtemp(prefix=f"grammask-{target.name}-"))
    for i, text in enumerate(target.seeds[:500]):
        (corpus / f"seed{i}").write_bytes(text.encode("utf-8", "surrogatepass"))

    def one(data: bytes) -> None:
        accepted, exc = run_one(target, data.decode("utf-8", "replace"), None)
        if exc is not None:
            raise exc

    def mutator(data: bytes, max_size: int, mutation_seed: int) -> bytes:
        rng = random.Random(mutation_seed)
        if rng.random() < 0.5:
            return atheris.Mutate(data, max_size)
        text = target.mutate(data.decode("utf-8", "replace"), rng)
        return text.encode("utf-8", "surrogatepass")[:max_size]

    findings.mkdir(parents=True, exist_ok=True)
    atheris.Setup([sys.argv[0], str(corpus), f"-max_total_time={int(seconds)}", f"-seed={seed}",
                   f"-timeout={int(bound) + 1}", f"-artifact_prefix={findings}/{target.name}-",
                   "-max_len=65536"], one, custom_mutator=mutator)
    atheris.Fuzz()
    return 0


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="seconds per target (60)")
    ap.add_argument("--target", default="all", help="all, or names: " + ", ".join(TARGETS))
    ap.add_argument("--seed", type=int, help="random seed (default: a fresh one, printed)")
    ap.add_argument("--input-seconds", type=float, default=5.0,
                    help="time bound of one input; slower ones are findings (5)")
    ap.add_argument("--findings", type=Path, default=FUZZ / "findings",
                    help="where inputs of findings are saved (fuzz/findings)")
    ap.add_argument("--engine", choices=("random", "atheris"), default="random",
                    help="random mutation (default) or atheris coverage-guided fuzzing")
    ap.add_argument("--replay", nargs="+", type=Path, metavar="FILE", help="run saved inputs")
    ap.add_argument("--minimize", type=Path, metavar="FILE",
                    help="shrink a saved input keeping its finding; print the result")
    return ap


def _targets(spec: str) -> list[str]:
    names = list(TARGETS) if spec == "all" else [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in TARGETS]
    if unknown or not names:
        raise SystemExit(f"unknown target {unknown or spec!r}; the targets are"
                         f" {', '.join(TARGETS)}")
    return names


def _replay(target: Target, files: list[Path], bound: float) -> int:
    found = 0
    for path in files:
        text = path.read_bytes().decode("utf-8", "surrogatepass")
        _, exc = run_one(target, text, bound)
        if exc is not None:
            found += 1
            report(target.name, text, exc, path.parent)
        print(f"{path}: {'finding' if exc is not None else 'ok'}")
    return 1 if found else 0


def main(argv: list[str] | None = None) -> int:
    """Run the fuzzer with `argv`; the exit status (1 when there were findings)."""
    args = _parser().parse_args(argv)
    names = _targets(args.target)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    if args.replay or args.minimize:
        if len(names) != 1:
            raise SystemExit("--replay and --minimize need one --target")
        target = build_target(names[0], seed)
        if args.replay:
            return _replay(target, args.replay, args.input_seconds)
        text = args.minimize.read_bytes().decode("utf-8", "surrogatepass")
        print(repr(minimize(target, text, args.input_seconds)))
        return 0
    print(f"fuzzing {', '.join(names)} for {args.seconds:g} s each, seed {seed}", flush=True)
    if args.engine == "atheris":
        return _run_atheris(names, args, seed)
    findings = 0
    for name in names:
        target = build_target(name, seed)
        count, compiled, found = fuzz(target, args.seconds, random.Random(f"{seed}:{name}:inputs"),
                            args.input_seconds, args.findings)
        findings += found
        print(f"{name}: {count} executions in {args.seconds:g} s ({compiled} accepted),"
              f" {found} findings", flush=True)
    print(f"{findings} findings")
    if findings:
        print(f"repeat with: python fuzz/run.py --target {args.target} --seed {seed}"
              f" --seconds {args.seconds:g}")
    return 1 if findings else 0


def _run_atheris(names: list[str], args: argparse.Namespace, seed: int) -> int:
    """Each target in its own process, since libFuzzer runs one target per process."""
    if len(names) == 1:
        return _atheris(names[0], args.seconds, seed, args.input_seconds, args.findings)
    status = 0
    for name in names:
        command = [sys.executable, __file__, "--engine", "atheris", "--target", name,
                   "--seed", str(seed), "--seconds", str(args.seconds),
                   "--input-seconds", str(args.input_seconds), "--findings", str(args.findings)]
        status = max(status, 1 if subprocess.run(command, check=False).returncode else 0)
    return status


if __name__ == "__main__":
    sys.exit(main())
