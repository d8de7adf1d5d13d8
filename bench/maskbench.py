"""The MaskBench protocol over JSONSchemaBench: the corpus, one engine run on one schema, and
the class of the outcome.

Per schema and engine (`run_case`): compile, timed alone and as time to first mask (compile +
matcher + first fill). Then each test instance, the text `json.dumps(data, ensure_ascii=False)`
tokenized with the vocabulary's own encoder, is walked from a reset matcher: fill the mask (each
fill timed alone), the token must be in that mask and be accepted; after the last token one more
fill (timed) and whether the text may end there (grammask: `can_terminate()`; peers: EOS in that
last mask). The garbage collector is off inside the timed regions.

Classes (`classify`), the first that applies: crash (an exception other than the engine's
compile error, or a dead worker), timeout, compile error (also when a step raises it: grammask
builds rule automata as matchers reach them, and a budget may be met then), validation error (a valid instance
rejected at some token; with `require_eos` also one that may not end after its last token),
invalidation error (an invalid instance accepted to its end where it may end), passing. A schema
without tests (or whose instances cannot be written as JSON text) is only compiled: it is
`compiled`, a compile error, a crash or a timeout.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import re
import signal
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

import numpy as np

from measure import GrammaskSession, no_gc
from peers import PeerSession

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "jsonschemabench"
GM = "grammask"

PASSING = "passing"
COMPILE_ERROR = "compile error"
VALIDATION = "validation error"
INVALIDATION = "invalidation error"
CRASH = "crash"
TIMEOUT = "timeout"
COMPILED = "compiled"
CLASSES = (PASSING, COMPILE_ERROR, VALIDATION, INVALIDATION, CRASH, TIMEOUT)

ns = time.perf_counter_ns


@dataclass(frozen=True)
class Case:
    """One schema of a split with its test instances: `(valid, data)` pairs."""

    split: str
    id: str
    schema: Any
    tests: tuple[tuple[bool, Any], ...]


def corpus_splits(corpus: Path) -> list[str]:
    """The split names of a corpus directory (one `<split>.jsonl` each), sorted."""
    return sorted(p.stem for p in corpus.glob("*.jsonl"))


def load_split(corpus: Path, split: str, limit: int | None = None) -> list[Case]:
    """The first `limit` schemas (all when None) of one split, in file order."""
    cases: list[Case] = []
    with open(corpus / f"{split}.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if limit is not None and len(cases) >= limit:
                break
            rec = json.loads(line)
            tests = tuple((bool(t["valid"]), t["data"]) for t in rec.get("tests", []))
            cases.append(Case(split, rec["id"], rec["schema"], tests))
    return cases


@dataclass
class Instance:
    """One test instance walked by one engine.

    `rejected_at` is the token position refused (None: every token was accepted), `how` says
    whether the token was missing from the mask, refused by accept, or both disagreed;
    `can_end` whether the text may end after its last token (False when rejected); `context`
    is the text before the refused token (its last 60 characters) followed by `⟦token⟧`, or the
    whole text (first 300 characters) when nothing was refused.
    """

    index: int
    valid: bool
    tokens: int
    rejected_at: int | None
    how: str | None
    can_end: bool
    context: str


@dataclass
class Outcome:
    """What one engine did on one schema. `status` is `ok`, `compile error`, `crash` or
    `timeout`; `code` the compile error's code (grammask: `GrammarError.code`; peers: their
    message with names and numbers blanked); `instances` those walked before a crash or
    timeout; `skipped` instances that are not JSON text (NaN, infinities)."""

    engine: str
    split: str
    id: str
    tested: bool
    status: str = "ok"
    code: str | None = None
    message: str | None = None
    compile_s: float | None = None
    first_mask_s: float | None = None
    instances: list[Instance] = field(default_factory=list)
    fill_ns: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    skipped: int = 0


def classify(o: Outcome, require_eos: bool) -> str:
    """The class of an outcome (module docstring); `require_eos`: the stricter variant."""
    if o.status != "ok":
        return o.status
    if not o.tested or not o.instances:
        return COMPILED
    if any(i.valid and (i.rejected_at is not None or (require_eos and not i.can_end))
           for i in o.instances):
        return VALIDATION
    if any(not i.valid and i.rejected_at is None and i.can_end for i in o.instances):
        return INVALIDATION
    return PASSING


def peer_error_code(message: str) -> str:
    """A peer's compile error message as a short code: log prefixes dropped, quoted names and
    numbers blanked, first line, at most 70 characters."""
    text = re.sub(r"^\[[0-9:]+\] \S+:\d+: ", "", message.strip())
    text = re.sub(r"^llguidance: ", "", text)
    text = re.sub(r"\"[^\"]*\"|'[^']*'|`[^`]*`", "…", text)
    text = re.sub(r"\d+", "N", text)
    return text.split("\n")[0][:70]


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    f = frames[-1]
    return f" (at {Path(f.filename).parent.name}/{Path(f.filename).name}:{f.lineno})"


class _GrammaskJsonSession(GrammaskSession):
    """grammask's bench session; the end of a text is judged by `can_terminate()`."""

    def can_end(self) -> bool:
        return self._m.can_terminate()


class _PeerJsonSession:
    """A peer's session; the end of a text is judged by EOS in the last filled mask."""

    def __init__(self, inner: PeerSession, eos: int) -> None:
        self.inner, self.eos = inner, eos
        self.fill, self.row = inner.fill, inner.row
        self.accept, self.reset = inner.accept, inner.reset

    def can_end(self) -> bool:
        return bool(int(self.inner.row()[self.eos >> 5]) >> (self.eos & 31) & 1)


@dataclass
class Engine:
    """One engine in a worker: how it compiles a schema, opens a session, and which exceptions
    of its compile are compile errors (any other is a crash)."""

    name: str
    version: str
    means: str
    compile: Callable[[Any], Any]
    session: Callable[[Any], Any]
    compile_errors: tuple[type[BaseException], ...]
    code_of: Callable[[BaseException], str]


def grammask_engine(vocab: Any, lenient: bool, order: str = "schema") -> Engine:
    """grammask's `compile_json_schema(schema, vocab, lenient=..., property_order=order)`;
    `GrammarError` is a compile error with its own code."""
    import importlib.metadata

    from grammask.compiler import GrammarError
    from grammask.compiler import compile_json_schema

    means = (f"compile_json_schema(schema, vocab{', lenient=True' if lenient else ''}"
             f"{', property_order=' + repr(order) if order != 'schema' else ''}) (lazy)")
    return Engine(GM, importlib.metadata.version("grammask"), means,
                  partial(compile_json_schema, vocab=vocab, lenient=lenient,
                          property_order=order),
                  _GrammaskJsonSession, (GrammarError,),
                  lambda e: getattr(e, "code", None) or "grammar-error")


def peer_engine(peer: Any, eos: int, lenient: bool) -> Engine:
    """A peer's `compile_json_schema`; every exception of its compile is a compile error."""
    return Engine(peer.name, peer.version, peer.json_means,
                  lambda schema: peer.compile_json_schema(schema, lenient),
                  lambda compiled: _PeerJsonSession(peer.session(compiled), eos), (Exception,),
                  lambda e: peer_error_code(str(e)))


def _texts(case: Case) -> tuple[list[tuple[int, bool, str]], int]:
    out, skipped = [], 0
    for k, (valid, data) in enumerate(case.tests):
        try:
            out.append((k, valid, json.dumps(data, ensure_ascii=False, allow_nan=False)))
        except ValueError:
            skipped += 1
    return out, skipped


def _walk(s: Any, ids: list[int], fills: list[int]) -> tuple[int | None, str | None, bool]:
    """Fill, check, accept each token, then the last fill: (refused position, how, can end)."""
    for j, tid in enumerate(ids):
        t0 = ns()
        s.fill()
        fills.append(ns() - t0)
        allowed = bool(int(s.row()[tid >> 5]) >> (tid & 31) & 1)
        ok = s.accept(tid)
        if not (allowed and ok):
            how = ("accept refused a token of the mask" if allowed else
                   "not in the mask" if not ok else "not in the mask, yet accepted")
            return j, how, False
    t0 = ns()
    s.fill()
    fills.append(ns() - t0)
    return None, None, bool(s.can_end())


def _context(vocab: Any, ids: list[int], text: str, at: int | None) -> str:
    if at is None:
        return text[:300]
    before = b"".join(vocab.token_bytes(t) for t in ids[:at]).decode("utf-8", "replace")
    token = vocab.token_bytes(ids[at]).decode("utf-8", "replace")
    return f"{before[-60:]}⟦{token}⟧"


def run_case(engine: Engine, case: Case, vocab: Any,
             progress: Callable[[str, int | None], None]) -> Outcome:
    """The protocol (module docstring) for one engine on one schema. `progress(phase, k)` is
    called as the compile (`"compile"`, None) and each instance (`"instance"`, k) start."""
    texts, skipped = _texts(case)
    out = Outcome(engine.name, case.split, case.id, bool(texts), skipped=skipped)
    fills: list[int] = []
    try:
        progress("compile", None)
        with no_gc():
            t0 = ns()
            compiled = engine.compile(case.schema)
            t1 = ns()
            s = engine.session(compiled)
            s.fill()
            t2 = ns()
        out.compile_s, out.first_mask_s = (t1 - t0) / 1e9, (t2 - t0) / 1e9
        for k, valid, text in texts:
            ids = vocab.encode(text)
            progress("instance", k)
            with no_gc():
                s.reset()
                at, how, can_end = _walk(s, ids, fills)
            out.instances.append(Instance(k, valid, len(ids), at, how, can_end,
                                          _context(vocab, ids, text, at)))
    except Exception as exc:  # every failure is an outcome, never the end of the run
        if isinstance(exc, engine.compile_errors):
            out.status, out.code = COMPILE_ERROR, engine.code_of(exc)
            out.message = str(exc)[:1000]
        else:
            out.status = CRASH
            out.message = f"{type(exc).__name__}: {str(exc)[:900]}{_where(exc)}"
    out.fill_ns = np.asarray(fills, dtype=np.int64)
    return out


def warm_up(vocab: Any) -> None:
    """Compile and walk a small flat schema, a recursive one and a bounded pattern (language
    products), so that kernel compilation and caches are loaded before any timing."""
    from grammask.compiler import compile_json_schema

    flat = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"enum": ["x"]}}}
    tree = {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}},
                                             "name": {"type": "string", "maxLength": 8}}}
    bounded = {"type": "string", "pattern": "^a+$", "maxLength": 5}
    for schema, doc in ((flat, {"a": 1, "b": "x"}), (tree, {"kids": [{"name": "é"}]}),
                        (bounded, "aa")):
        for lenient in (False, True):
            s = _GrammaskJsonSession(compile_json_schema(schema, vocab, lenient=lenient))
            _walk(s, vocab.encode(json.dumps(doc, ensure_ascii=False)), [])


# --------------------------------------------------------------------------- worker processes


@dataclass(frozen=True)
class Limits:
    """Wall-clock limits: a compile (to the first mask), each instance, a worker's start."""

    compile_s: float = 30.0
    instance_s: float = 10.0
    startup_s: float = 600.0


def _worker(conn: Connection, peers: list[str], lenient: bool, order: str,
            cpu: int | None) -> None:
    """A worker process: set up the engines, say ready (with what they are), then run tasks
    `(engine name, case)` until None, sending the start of each phase and each outcome."""
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    from harness import set_up

    setup = set_up(set(peers), warm=warm_up)
    vocab = setup.vocab
    engines = {GM: grammask_engine(vocab, lenient, order)}
    for p in setup.peers:
        engines[p.name] = peer_engine(p, vocab.eos_token_id, lenient)
    conn.send(("ready", {"setup": setup.setup_line(), "notes": setup.notes,
                         "engines": {e.name: {"version": e.version, "means": e.means}
                                     for e in engines.values()}}))

    def progress(phase: str, k: int | None) -> None:
        conn.send(("phase", phase, k, time.monotonic()))

    while (task := conn.recv()) is not None:
        name, case = task
        conn.send(("done", run_case(engines[name], case, vocab, progress)))


@dataclass
class _Slot:
    cpu: int | None
    proc: Any = None
    conn: Any = None
    ready: bool = False
    task: tuple[str, Case] | None = None
    deadline: float | None = None
    phase: str = "startup"


class WorkerPool:
    """`n` worker processes (each pinned to its own CPU when `pin`) that run `(engine, case)`
    tasks under a watchdog: a compile may take `limits.compile_s` to its first mask and each
    instance `limits.instance_s`. A worker past its deadline is killed and its task is a
    timeout; a worker that dies makes its task a crash. Either is replaced by a new worker."""

    def __init__(self, n: int, peers: list[str], lenient: bool, limits: Limits,
                 pin: bool, order: str = "schema") -> None:
        self._ctx = mp.get_context("spawn")
        self._args = (peers, lenient, order)
        self.limits = limits
        cpus = sorted(os.sched_getaffinity(0)) if pin else []
        self.info: dict[str, Any] | None = None
        self.replaced = 0
        self._failed_starts = 0
        self._slots = [_Slot(cpus[-1 - i % len(cpus)] if cpus else None) for i in range(n)]
        for s in self._slots:
            self._start(s)

    def _start(self, s: _Slot) -> None:
        parent, child = self._ctx.Pipe()
        s.proc = self._ctx.Process(target=_worker, args=(child, *self._args, s.cpu), daemon=True)
        s.proc.start()
        child.close()
        s.conn, s.ready, s.task, s.phase = parent, False, None, "startup"
        s.deadline = time.monotonic() + self.limits.startup_s

    def _replace(self, s: _Slot) -> None:
        if s.proc.is_alive():
            s.proc.kill()
        s.proc.join()
        s.conn.close()
        self.replaced += 1
        self._start(s)

    def _failed(self, s: _Slot, status: str, message: str) -> Outcome:
        assert s.task is not None
        name, case = s.task
        return Outcome(name, case.split, case.id, bool(case.tests), status=status,
                       message=message)

    def _drain(self, s: _Slot, done: Callable[[Outcome], None]) -> None:
        while True:
            try:
                if not s.conn.poll():
                    return
                msg = s.conn.recv()
            except (EOFError, OSError):
                return
            if msg[0] == "ready":
                s.ready, s.deadline, self._failed_starts = True, None, 0
                self.info = self.info or msg[1]
            elif msg[0] == "phase":
                _, phase, k, stamp = msg
                limit = self.limits.compile_s if phase == "compile" else self.limits.instance_s
                s.phase = "compile" if k is None else f"instance {k}"
                s.deadline = stamp + limit
            else:
                done(msg[1])
                s.task, s.deadline = None, None

    def _check(self, s: _Slot, done: Callable[[Outcome], None]) -> None:
        if not s.proc.is_alive():
            code = s.proc.exitcode
            why = f"signal {signal.Signals(-code).name}" if code and code < 0 else f"exit {code}"
            if s.task is not None:
                done(self._failed(s, CRASH, f"the worker died ({why}) during {s.phase}"))
            elif not s.ready:
                self._failed_starts += 1
                if self._failed_starts >= 3:
                    raise RuntimeError(f"workers fail to start ({why})")
            self._replace(s)
        elif s.deadline is not None and time.monotonic() > s.deadline:
            if s.task is None:
                raise RuntimeError(f"a worker did not start within {self.limits.startup_s:g} s")
            limit = self.limits.compile_s if s.phase == "compile" else self.limits.instance_s
            done(self._failed(s, TIMEOUT, f"{s.phase} took more than {limit:g} s"))
            self._replace(s)

    def _step(self, done: Callable[[Outcome], None]) -> None:
        """Wait for a message, a dead worker or the nearest deadline, then handle them all."""
        deadlines = [s.deadline for s in self._slots if s.deadline is not None]
        timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
        wait([s.conn for s in self._slots] + [s.proc.sentinel for s in self._slots], timeout)
        for s in self._slots:
            self._drain(s, done)
            self._check(s, done)

    def wait_ready(self) -> dict[str, Any]:
        """What the first worker to start reports: its setup line, notes, and its engines'
        versions and meanings (the peers that loaded)."""
        while self.info is None:
            self._step(lambda o: None)
        return self.info

    def run(self, tasks: list[tuple[str, Case]], done: Callable[[Outcome], None]) -> None:
        """Run every task; `done(outcome)` is called once per task, in completion order."""
        queue = deque(tasks)
        while queue or any(s.task is not None for s in self._slots):
            for s in self._slots:
                if s.ready and s.task is None and queue:
                    s.task = queue.popleft()
                    s.phase, s.deadline = "compile", time.monotonic() + self.limits.compile_s
                    s.conn.send(s.task)
            self._step(done)

    def close(self) -> None:
        """Stop every worker (killing those that do not stop within 10 s)."""
        for s in self._slots:
            try:
                s.conn.send(None)
            except (OSError, ValueError):
                pass
        for s in self._slots:
            s.proc.join(10)
            if s.proc.is_alive():
                s.proc.kill()
                s.proc.join()
