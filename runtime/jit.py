"""Numba kernels with one declared signature each, compiled on first use, listed for warm-up.

Invariant: every kernel of grammask (runtime and compiler) is made by `kernel(*types)` and is
compiled for exactly that signature, once per process (or loaded from Numba's cache), the
first time it is called from Python or typed inside another kernel. After that its dispatcher
accepts only arguments that convert safely to the declared types (an int32 for an int64, a
writable array for a read-only one, a literal constant for its type) and raises `TypeError`
for anything else: no call can silently compile a second specialization.

Why: on a machine with an empty Numba cache each compiled signature costs from a tenth of a
second to seconds (`bench/jit_cost.py`). Undeclared kernels were compiled once per distinct
argument type: a literal `0` and an int64, an int32 and an int64, a read-only and a writable
array each cost a full compile. Declaring the signature also documents the data layout a
kernel relies on (it does no bounds checks): `R(int32, 2)` is a read-only C-contiguous 2-D
table, `A(int64)` a writable 1-D scratch array.

Tiers: the kernels that build automata (`tiered=True`: the compiler's, and the runtime's table
checks) first run as plain Python, on small inputs, while they are neither compiled nor in the
cache. Compiling them all costs about 25 s on a fresh machine, while the first grammars a
process compiles (a regex, a schema of a few properties) take them milliseconds as Python. A
tiered kernel compiles once its input is over `INTERPRET_MAX_ELEMENTS` array elements or it has
run `INTERPRET_BUDGET_S` seconds as Python (so a busy process pays at most twice the compile
time it saves). When the cache holds it, loading it still costs 5 to 30 ms (and Numba's first
load in a process about 0.2 s more), while a small grammar's inputs take it well under a
millisecond as Python: its first call, if of at most `INTERPRET_CACHED_ELEMENTS` elements, runs
as Python, and the next loads it (a process that compiles one small regex loads none of the
dozen kernels that build it; a busy one pays one small call per kernel). As Python, a kernel
calls the Python functions of the kernels it calls, under `np.errstate(all="raise")`: where
numpy's integer semantics part from Numba's (an int32 outgrowing int32, which Numba computes in
int64; a wrap-around), the call is undone and the compiled kernel runs, so both tiers give the
same results (`tests/runtime/test_jit.py`). Kernels that fill masks always compile.

Cache freshness: Numba keys a cached kernel by its own source file's time stamp and its own
bytecode, but a kernel's machine code also holds the kernels it calls or inlines, often from
other modules: a cache entry could outlive an edit of a callee (a changed `close_set` in
`earley.py` under an unchanged `fill_mask` in `kernels.py`) and run the old code. So every
kernel's stamp also holds a digest of the time stamps and sizes of all the package's Python
files (`SOURCES_STAMP`): any change to grammask's sources makes every cached kernel stale.

Variants: a kernel specialized on a few flags (the fill of a table with token bounds and of
one without, the walk with costs and without) is made by a factory whose flags are constants
of the kernel's closure. Numba prunes the branches on them before it inlines anything, so a
variant neither inlines nor types what only another uses, and keys its cache on the closure's
values. The other way, a large kernel inlined with constant arguments into thin wrappers,
costs seconds on a fresh machine: Numba copies an inlined kernel's IR block by block, each with
its whole scope (numba/numba#8989), so the copy grows with blocks times variables (1.3 s of the
3 s the unbounded fill's walk took to compile).

Compilation stays lazy: importing a module compiles nothing, so kernels that only `precompute`,
minimization or lint use cost nothing until used. `declared()` lists every kernel of the
modules imported so far; `warm_up` (behind `grammask warmup`, which adds the compiler's
modules) imports them and compiles each, so that a container image or a read-only install can
pay the cold cost once, ahead of time (see the README).
"""
from __future__ import annotations

import hashlib
import importlib
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import FunctionType
from typing import Any

import numpy as np
from numba import njit, set_num_threads, types
from numba.core import cgutils, typeinfer
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher
from numba.extending import intrinsic

__all__ = ["A", "R", "RUNTIME_KERNEL_MODULES", "address", "declared", "kernel", "on_threads",
           "warm_up"]

_REGISTRY: list[CPUDispatcher] = []


def A(dtype: types.Type, ndim: int = 1) -> types.Array:  # noqa: N802 (a type constructor)
    """A writable C-contiguous array of `dtype` and rank `ndim`."""
    return types.Array(dtype, ndim, "C")


def R(dtype: types.Type, ndim: int = 1) -> types.Array:  # noqa: N802 (a type constructor)
    """A read-only C-contiguous array (a writable one converts to it)."""
    return types.Array(dtype, ndim, "C", readonly=True)


@intrinsic
def address(typingctx, value):  # type: ignore[no-untyped-def]
    """Inside a kernel: the int64 `value` as a pointer, for `numba.carray(address(a), shape,
    dtype)` over an array whose data address Python gave (`EarleyArrays.header`): how one
    call reaches the arrays of many recognizers. Unchecked: the caller keeps the array alive
    and gives its true address, shape and dtype."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.inttoptr(args[0], cgutils.voidptr_t)
    return types.voidptr(types.int64), codegen


_THREADED = threading.Lock()


def on_threads(parallel_kernel: Callable[..., Any], threads: int, *args: Any) -> Any:
    """`parallel_kernel(*args)` (a `kernel(..., parallel=True)`) on `threads` of Numba's
    threads, one such call at a time in the process: the workqueue threading layer (where
    neither TBB nor OpenMP is installed) may not be entered from two threads at once."""
    with _THREADED:
        set_num_threads(threads)
        return parallel_kernel(*args)


def _setting(name: str, default: float) -> float:
    text = os.environ.get(name, "")
    try:
        value = float(text) if text else default
    except ValueError:
        raise ValueError(f"{name} must be a number, got {text!r}") from None
    if not value >= 0:
        raise ValueError(f"{name} must be at least 0, got {text!r}")
    return value


INTERPRET_MAX_ELEMENTS = int(_setting("GRAMMASK_JIT_INTERPRET_ELEMENTS", 200_000))
"""A tiered kernel runs as Python while its array arguments hold at most this many elements
in all (larger inputs compile it at once); environment variable
`GRAMMASK_JIT_INTERPRET_ELEMENTS`."""
INTERPRET_BUDGET_S = _setting("GRAMMASK_JIT_INTERPRET_S", 0.25)
"""...and while it has run as Python for less than this many seconds in this process
(`GRAMMASK_JIT_INTERPRET_S`; 0 compiles every kernel on first use)."""
INTERPRET_CACHED_ELEMENTS = min(INTERPRET_MAX_ELEMENTS, 2_000) if INTERPRET_BUDGET_S else -1
"""A tiered kernel in the cache runs its first call as Python when the call's arrays hold at
most this many elements (about a millisecond as Python; -1 when nothing runs as Python)."""


def _sources_stamp() -> str:
    """A digest of (path, modification time, size) of every Python file of the runtime and
    compiler packages (about 140 `stat` calls, once per process)."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for part in ("runtime", "compiler"):
        for path in sorted((root / part).rglob("*.py")):
            st = path.stat()
            h.update(f"{path.relative_to(root)}:{st.st_mtime_ns}:{st.st_size}\n".encode())
    return h.hexdigest()


SOURCES_STAMP = _sources_stamp()
"""Part of every kernel's cache stamp (module docstring, "Cache freshness")."""


def _stamp_cache(dispatcher: CPUDispatcher) -> None:
    """Add `SOURCES_STAMP` to the source stamp under which Numba caches `dispatcher` (read
    and written with its index file; absent if Numba's cache internals differ, which then
    keep their own stamp)."""
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if cache_file is not None and hasattr(cache_file, "_source_stamp"):
        cache_file._source_stamp = (cache_file._source_stamp, SOURCES_STAMP)


def _arrays(args: tuple[Any, ...]) -> Iterator[np.ndarray]:
    """The numpy arrays among `args` and in their tuples."""
    for a in args:
        for x in (a if isinstance(a, tuple) else (a,)):
            if isinstance(x, np.ndarray):
                yield x


_retrying = threading.local()
"""The kernel this thread calls again after another thread compiled it (`_again`)."""


class _Declared(CPUDispatcher):  # type: ignore[misc]
    """A dispatcher that compiles its declared signatures the first time it is needed, then
    refuses to compile any other; a tiered one first runs as Python on small inputs."""

    declared_signatures: tuple[tuple[types.Type, ...], ...]
    inlined: bool
    tiered: bool
    interpreted_s: float
    interpreted_calls: int
    _cache_looked: bool
    _python: Callable[..., Any] | None

    def _declare(self) -> None:
        # Under Numba's compiler lock (re-entrant, and taken by `compile`): two threads that
        # call a kernel first at once compile it once, and neither meets it disabled halfway.
        with global_compiler_lock:
            if self._can_compile:
                with typeinfer.register_dispatcher(self):
                    for signature in self.declared_signatures:
                        self.compile(signature)
                self.disable_compile()

    def _load_cached(self) -> bool:
        """Load every declared signature from Numba's cache if all are there (once)."""
        if self._cache_looked:
            return False
        self._cache_looked = True
        with global_compiler_lock:
            found = [self._cache.load_overload(s, self.targetctx)
                     for s in self.declared_signatures]
            if any(c is None for c in found):
                return False
            # What `Dispatcher.compile` does with a cache hit.
            for cres in found:
                self.targetctx.insert_user_function(cres.entry_point, cres.fndesc,
                                                    [cres.library])
                self.add_overload(cres)
            self.disable_compile()
        return True

    def _as_python(self, args: tuple[Any, ...]) -> bool:
        if not self.tiered:
            return False
        size = sum(a.size for a in _arrays(args))
        if size <= INTERPRET_CACHED_ELEMENTS and not self.interpreted_calls:
            return True  # a first small call: cheaper as Python than loading it
        if size > INTERPRET_MAX_ELEMENTS or self.interpreted_s >= INTERPRET_BUDGET_S:
            return False
        return not self._load_cached()

    def python(self) -> Callable[..., Any]:
        """The kernel's Python function, calling the Python functions of the kernels it calls."""
        if self._python is None:
            fn = self.py_func
            scope = dict(fn.__globals__)
            self._python = FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__,
                                        fn.__closure__)
            for name, value in scope.items():
                if isinstance(value, _Declared):
                    scope[name] = value.python()
        return self._python

    def _run_python(self, *args: Any) -> Any:
        # Python's numpy scalars are not Numba's integers: an int32 that outgrows int32 stays
        # int32 in numpy (Numba computes in int64), and numpy checks what Numba wraps. Any such
        # overflow (or a division by zero) raises here; the arguments are then put back as they
        # were and the compiled kernel decides, so results never differ between the tiers.
        saved = [(a, a.copy()) for a in _arrays(args) if a.flags.writeable]
        began = time.perf_counter()
        try:
            with np.errstate(all="raise"):
                return self.python()(*args)
        except (FloatingPointError, OverflowError, ZeroDivisionError):
            for a, copy in saved:
                a[...] = copy
            self.tiered = False
        finally:
            self.interpreted_s += time.perf_counter() - began
            self.interpreted_calls += 1
        self._declare()
        return self(*args)

    def _compile_for_args(self, *args: Any, **kws: Any) -> Any:
        # Called by the C dispatcher when no compiled signature matches: run as Python, or
        # compile the declared signatures and let the caller call again (which converts its
        # arguments or raises TypeError).
        if not self._can_compile:
            if getattr(_retrying, "kernel", None) is self:
                return super()._compile_for_args(*args, **kws)  # no declared signature fits
            return self._again  # compiled by another thread since this call was dispatched
        if not kws and self._as_python(args):
            return self._run_python
        self._declare()
        return self

    def _again(self, *args: Any, **kws: Any) -> Any:
        """Call again, now that the declared signatures are compiled; a second miss is
        then an argument that fits none of them (the dispatcher's TypeError)."""
        _retrying.kernel = self
        try:
            return self(*args, **kws)
        finally:
            _retrying.kernel = None

    def get_call_template(self, args: Any, kws: Any) -> Any:
        # Typing a call from another kernel: the declared signatures, with conversions.
        self._declare()
        return super().get_call_template(args, kws)


def kernel(*signature: types.Type, nrt: bool = True, tiered: bool = False,
           inline: bool = False, parallel: bool = False,
           also: tuple[tuple[types.Type, ...], ...] = (), name: str | None = None
           ) -> Callable[[Callable[..., Any]], Any]:
    """`@njit(cache=True, nogil=True)` compiled for the argument types `signature` only (and
    the further signatures `also`, for a helper generic over a few array types); `nrt=False`
    for kernels that allocate nothing (no reference counting in their calls). An `inline`
    kernel is a small step of hot loops, inlined into each kernel that calls it at Numba's
    level (LLVM does not inline across kernels compiled apart: the recognizer's small steps
    inlined fill pushdown masks about 20% faster, see `pushdown/earley.py`) and never compiled
    alone, so `warm_up` skips it. A `tiered`
    kernel (one that compiles grammars, not one that fills masks) runs as Python while it is
    neither compiled nor in the cache, for inputs of at most `INTERPRET_MAX_ELEMENTS` array
    elements and up to `INTERPRET_BUDGET_S` seconds in all; then it compiles. Its results are
    the same either way (`tests/runtime/test_jit.py` compares them). A `parallel` kernel runs
    its `prange` loops on Numba's threading layer (`numba.set_num_threads` threads): only
    where a caller asks for threads, since the layer's threads start at its first run. `name`
    names a variant made in a factory (module docstring): its cache files, reports and
    `warm_up`'s progress then say which."""
    def wrap(fn: Callable[..., Any]) -> Any:
        if name is not None:
            fn.__name__ = fn.__qualname__ = name
        options: dict[str, Any] = dict(cache=True, nogil=True)
        if parallel:
            options["parallel"] = True
        if not nrt:
            options["_nrt"] = False
        if inline:
            options["inline"] = "always"
        dispatcher = njit(**options)(fn)
        if not isinstance(dispatcher, CPUDispatcher):
            return dispatcher  # NUMBA_DISABLE_JIT: the plain function
        _stamp_cache(dispatcher)
        dispatcher.__class__ = _Declared
        dispatcher.declared_signatures = (tuple(signature), *also)
        dispatcher.inlined = inline
        dispatcher.tiered = tiered
        dispatcher.interpreted_s = 0.0
        dispatcher.interpreted_calls = 0
        dispatcher._cache_looked = False
        dispatcher._python = None
        _REGISTRY.append(dispatcher)
        return dispatcher
    return wrap


def declared() -> list[CPUDispatcher]:
    """Every kernel of the modules imported so far, in definition order."""
    return list(_REGISTRY)


RUNTIME_KERNEL_MODULES = (
    "grammask.runtime.csr",
    "grammask.runtime.row_kernels",
    "grammask.runtime.vocab.trie",
    "grammask.runtime.content_tokens",
    "grammask.runtime.dfa.kernels",
    "grammask.runtime.pushdown.leo",
    "grammask.runtime.pushdown.earley",
    "grammask.runtime.pushdown.derive",
    "grammask.runtime.pushdown.kernels",
    "grammask.runtime.pushdown.costs",
    "grammask.runtime.pushdown.budget",
    "grammask.runtime.pushdown.one_token",
    "grammask.runtime.completion",
)
"""The runtime's modules that define kernels (the compiler lists its own)."""


def warm_up(modules: Iterable[str] = RUNTIME_KERNEL_MODULES,
            progress: Callable[[int, int, str], None] | None = None) -> int:
    """Import `modules` and compile (or load from the cache) every kernel declared so far;
    `progress(done, total, name)` after each. Returns how many kernels there are."""
    for name in modules:
        importlib.import_module(name)
    kernels = [k for k in declared() if not k.inlined]
    for i, dispatcher in enumerate(kernels):
        dispatcher._declare()
        if progress is not None:
            progress(i + 1, len(kernels), f"{dispatcher.py_func.__module__}."
                                          f"{dispatcher.py_func.__qualname__}")
    return len(kernels)
