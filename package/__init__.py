"""grammask: a formally-tested grammar compiler toolkit for constrained decoding.

Regexes, EBNF grammars (GBNF, Lark) and JSON Schemas are compiled to byte-level automata and
per-state token sets over a vocabulary, and turned into token bitmasks for an inference engine.

Subpackages:

- `grammask.compiler` -- frontends, the grammar IR, analyses (`grammask lint`), NFA -> DFA ->
  minimal DFA, rule automata for recursive grammars, `Limits`, and the `grammask` command line.
- `grammask.runtime` -- numpy + Numba only: `Vocabulary`, compiled tables, the `Matcher` and the
  bitmask helpers.
- `grammask.integrations` -- adapters to transformers, vLLM and SGLang, each imported only on
  request (never by the compiler or the runtime).
- `grammask.specs` -- package data: meta-grammars, the supported syntax of each input language,
  diagnostics, invariants and limits.

Importing any of them first runs this module, which chooses where Numba caches grammask's
compiled kernels: in `NUMBA_CACHE_DIR` when it is set, else in a per-user cache folder
(`$XDG_CACHE_HOME/grammask/numba` or `~/.cache/grammask/numba`, on Windows
`%LOCALAPPDATA%\\grammask\\numba`), never inside the installed package, so read-only installs
work and uninstalling leaves nothing behind. When that folder cannot be created the kernels go to
a temporary folder removed at exit: nothing is cached across runs, and nothing fails.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

__all__ = ["__version__", "numba_cache_dir"]


def _read_version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover - importlib.metadata is in every supported Python
        return "0+unknown"
    try:
        return version("grammask")
    except PackageNotFoundError:
        return "0+unknown"


__version__ = _read_version()


def _default_cache_dir() -> Path:
    """The per-user folder for grammask's Numba cache (not created here)."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        # The XDG spec ignores relative values.
        base = xdg if os.path.isabs(xdg) else str(Path.home() / ".cache")
    return Path(base) / "grammask" / "numba"


def _writable_dir(path: Path) -> bool:
    """Create `path` if needed; whether a file can be written in it (Numba's own test)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except (OSError, RuntimeError):
        return False
    return True


def _throwaway_dir() -> str | None:
    """A temporary folder removed at exit, or None when there is none to be had."""
    import atexit
    import shutil

    try:
        path = tempfile.mkdtemp(prefix="grammask-numba-")
    except OSError:
        return None
    atexit.register(shutil.rmtree, path, True)
    return path


def _configure_numba_cache() -> str | None:
    """Point Numba's cache at the folder described in the module docstring; return it.

    Numba picks a cached function's folder when the function is decorated, from
    `numba.config.CACHE_DIR`, which it reads from `NUMBA_CACHE_DIR` when numba is first imported
    (and again before compiling, whenever a `NUMBA_*` variable changed). So the variable is set
    for a numba not yet imported, and the config as well when numba already is; both happen
    before any grammask kernel is decorated, since every grammask module imports this one first.
    """
    config = sys.modules.get("numba.core.config")
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.environ["NUMBA_CACHE_DIR"]
    if config is not None and getattr(config, "CACHE_DIR", ""):
        return str(config.CACHE_DIR)  # set by the user (a .numba_config.yaml or code)
    try:
        path: Path | None = _default_cache_dir()
    except (RuntimeError, KeyError, OSError):  # no home folder to be found
        path = None
    if path is not None and _writable_dir(path):
        cache_dir = str(path)
        # Inherited by child processes, which would choose the same folder anyway.
        os.environ["NUMBA_CACHE_DIR"] = cache_dir
    else:
        throwaway = _throwaway_dir()
        if throwaway is None:
            return None  # nothing writable at all: Numba's own defaults apply
        cache_dir = throwaway
        if config is None:
            import numba.core.config as config  # the variable would outlive this process's folder
    if config is not None:
        config.CACHE_DIR = cache_dir
    return cache_dir


numba_cache_dir: str | None = _configure_numba_cache()
"""Where Numba caches grammask's kernels in this process (None: Numba's defaults)."""
