"""Every kernel has its declared signatures and no other, and `grammask warmup` lists them all."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from grammask.compiler.cli.main import main
from grammask.compiler.cli.warmup import COMPILER_KERNEL_MODULES
from grammask.runtime.jit import RUNTIME_KERNEL_MODULES, SOURCES_STAMP, declared, warm_up
from grammask.runtime.row_kernels import array_hash

from ..support.compile_digests import digests
from ..support.paths import ROOT

MODULES = (*RUNTIME_KERNEL_MODULES, *COMPILER_KERNEL_MODULES)


def _module(path) -> str:  # type: ignore[no-untyped-def]
    parts = path.relative_to(ROOT).with_suffix("").parts
    return "grammask." + ".".join(parts)


def test_every_kernel_module_is_listed_and_numba_is_only_used_through_kernel() -> None:
    defining = set()
    for folder in ("runtime", "compiler"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if re.search(r"^@kernel\(", text, re.M):
                defining.add(_module(path))
            if path.name != "jit.py":
                assert not re.search(r"\bnjit\b|@jit\b|numba\.jit", text), \
                    f"{path}: declare kernels with runtime.jit.kernel"
    assert defining == set(MODULES)


def test_warm_up_compiles_exactly_the_declared_signatures() -> None:
    n = warm_up(MODULES)
    kernels = [k for k in declared() if not k.inlined]
    assert n == len(kernels) >= 60
    for k in kernels:
        assert len(k.signatures) == len(k.declared_signatures), k.py_func.__qualname__


def test_a_call_that_would_need_another_signature_is_refused() -> None:
    words = np.arange(8, dtype=np.uint32)
    readonly = words.copy()
    readonly.flags.writeable = False
    assert array_hash(words) == array_hash(readonly)  # writable converts to read-only
    with pytest.raises(TypeError, match="No matching definition"):
        array_hash(words.astype(np.int64))
    assert len(array_hash.signatures) == 1


def test_warmup_command_reports_kernels_and_cache(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["warmup", "--quiet"]) == 0
    out = capsys.readouterr().out
    n = sum(not k.inlined for k in declared())
    assert re.search(rf"grammask warmup: {n} kernels ready in [0-9.]+ s", out)
    assert "cache: " in out


def test_kernels_run_as_python_give_what_compiled_kernels_give(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A fresh process with an empty cache and no limit on running as Python compiles the
    inputs of `compile_digests` with every tiered kernel as Python; the tables must be the
    very ones this process builds with the kernels compiled."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "GRAMMASK_JIT_INTERPRET_S": "1e9",
           "GRAMMASK_JIT_INTERPRET_ELEMENTS": "1e12"}
    proc = subprocess.run([sys.executable, "-m", "tests.support.compile_digests"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    child = json.loads(proc.stdout.strip().splitlines()[-1])
    assert child["compiled"] == []
    warm_up(MODULES)
    here = digests()
    assert child["digests"] == here
    assert sum(not d.startswith("error") for d in here.values()) >= 40


def test_every_kernel_is_cached_under_the_sources_stamp() -> None:
    """A kernel's cached machine code holds the kernels it calls, often from other modules, so
    its cache entry must go stale when any of them changes, not only its own file: every
    kernel's stamp (the one Numba reads and writes with its index) holds `SOURCES_STAMP`, a
    digest of all the package's sources, which changes with any of them."""
    warm_up(MODULES)
    for k in declared():
        stamp = k._cache._cache_file._source_stamp
        assert isinstance(stamp, tuple) and stamp[1] == SOURCES_STAMP, k.py_func.__qualname__
    assert re.fullmatch(r"[0-9a-f]{64}", SOURCES_STAMP)


RACE = """
import threading
import numpy as np
from grammask.runtime.row_kernels import array_hash
words = np.arange(64, dtype=np.uint32)
barrier = threading.Barrier(8)
out, errors = [], []
def run():
    barrier.wait()
    try:
        out.append(int(array_hash(words)))
    except Exception as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=run) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert not errors and len(out) == 8 and len(set(out)) == 1, (errors, out)
"""


def test_threads_calling_a_kernel_first_at_once_all_get_its_answer(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """With an empty cache, eight threads calling one kernel for the first time at once: one
    compiles it, the others wait or call it again, none meets it disabled halfway (which
    raised RuntimeError in the threads that lost the race)."""
    for attempt in range(2):
        cache = tmp_path / str(attempt)
        proc = subprocess.run([sys.executable, "-c", RACE], cwd=ROOT, capture_output=True,
                              text=True, timeout=300, check=False,
                              env={**os.environ, "NUMBA_CACHE_DIR": str(cache)})
        assert proc.returncode == 0, proc.stderr[-3000:]


VARIANTS = """
from grammask.compiler import compile_gbnf, compile_json_schema
from grammask.runtime import Matcher, Vocabulary, allocate_token_bitmask
from grammask.runtime.pushdown import kernels
vocab = Vocabulary.default()
schema = {"type": "object", "properties": {"a": {"type": "array", "items": {"$ref": "#"}}}}
g = compile_json_schema(schema, vocab)
bitmask = allocate_token_bitmask(1, g.vocab_size)
Matcher(g).fill_next_token_bitmask(bitmask)
assert kernels.fill_unbounded_mask.overloads
assert not kernels.fill_bounded_mask.overloads
assert not kernels.check_bounded_candidates.overloads
m = Matcher(compile_gbnf('root ::= "<" r ">"\\nr[max_tokens=2] ::= [a-z]*\\n', vocab))
assert m.accept_token(vocab.encode("<")[0])
m.fill_next_token_bitmask(bitmask)
assert kernels.fill_bounded_mask.overloads
assert bitmask[0, vocab.encode(">")[0] >> 5] >> (vocab.encode(">")[0] & 31) & 1
"""


def test_a_table_without_token_bounds_compiles_only_the_unbounded_fill() -> None:
    """The first pushdown mask of a process compiles the fill variant its table needs, not
    the token-bounded one (seconds more on a fresh machine): the walk of each variant is its
    own kernel, and the other is compiled when a bounded table first fills."""
    proc = subprocess.run([sys.executable, "-c", VARIANTS], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
