"""Compiled grammars kept by request: in memory (LRU, bounded in bytes) and in a directory.

A key is a digest of everything a compile depends on: which compile function, the request
exactly as given (a schema's key order is part of it: properties are generated in declared
order), every option and limit, the vocabulary's fingerprint, the grammask version and the
serialized format's version. Equal keys give interchangeable grammars, so a hit returns the
cached `CompiledGrammar` itself (immutable, shared by any number of matchers and threads; the
token sets its masks computed come with it).

Memory: each entry counts `CompiledGrammar.nbytes()` (its automata and the token sets computed
so far), measured when stored and again at each hit, since masks grow the token sets; the
least recently used entries go while the total is over `max_bytes`. A grammar larger than
`max_bytes` is returned but not kept.

Directory (optional): one file per key, `<key>.grammar`, the `to_bytes` form. A memory miss
reads it (`from_bytes` checks it whole: a file cut, changed or from another version is a
miss, removed and written again); a compile writes it to a temporary name and renames it in
place, so processes sharing the directory never read part of a file. With `max_disk_bytes`,
the oldest files go while the directory holds more.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ... import __version__
from ...runtime.compiled import CompiledGrammar
from ...runtime.errors import SerializedGrammarError
from ...runtime.serialized import FORMAT_VERSION
from ...runtime.vocab.vocabulary import Vocabulary

__all__ = ["CompileCache"]

SUFFIX = ".grammar"


class CompileCache:
    """Compiled grammars by request (module docstring): pass one as `cache=` to the compile
    functions. Thread-safe; `directory` may be shared by processes."""

    def __init__(self, directory: str | os.PathLike[str] | None = None, *,
                 max_bytes: int = 1 << 30, max_disk_bytes: int | None = None) -> None:
        for name, value in (("max_bytes", max_bytes), ("max_disk_bytes", max_disk_bytes)):
            if value is None and name == "max_disk_bytes":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative int, got {value!r}")
        self.directory = None if directory is None else Path(directory)
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)
        self.max_bytes = max_bytes
        self.max_disk_bytes = max_disk_bytes
        self._entries: OrderedDict[str, tuple[CompiledGrammar, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.disk_hits = self.misses = 0

    @property
    def nbytes(self) -> int:
        """The bytes the entries in memory held when last measured."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Forget the entries in memory (the directory is kept)."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def get(self, what: str, request: Any, options: dict[str, Any], vocab: Vocabulary,
            build: Callable[[], CompiledGrammar]) -> CompiledGrammar:
        """The grammar of `request` compiled by `what` with `options` for `vocab`: from
        memory, from the directory, or `build()` (then stored). A request that is not
        JSON (a schema holding a set, say) is built every time."""
        try:
            key = _key(what, request, options, vocab)
        except (TypeError, ValueError):
            return build()
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self.hits += 1
                self._entries.move_to_end(key)
                self._store(key, hit[0])
                return hit[0]
        compiled = self._read(key, vocab)
        if compiled is not None:
            self.disk_hits += 1
        else:
            self.misses += 1
            compiled = build()
            self._write(key, compiled)
        with self._lock:
            self._store(key, compiled)
        return compiled

    def _store(self, key: str, compiled: CompiledGrammar) -> None:
        """Put (or re-measure) an entry and evict down to `max_bytes`; under the lock."""
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= old[1]
        size = compiled.nbytes()
        if size <= self.max_bytes:
            self._entries[key] = (compiled, size)
            self._bytes += size
        while self._bytes > self.max_bytes:
            _, (_, evicted) = self._entries.popitem(last=False)
            self._bytes -= evicted

    def _path(self, key: str) -> Path | None:
        return None if self.directory is None else self.directory / f"{key}{SUFFIX}"

    def _read(self, key: str, vocab: Vocabulary) -> CompiledGrammar | None:
        path = self._path(key)
        if path is None:
            return None
        try:
            return CompiledGrammar.from_bytes(path.read_bytes(), vocab)
        except OSError:
            return None
        except SerializedGrammarError:
            with contextlib.suppress(OSError):
                path.unlink()
            return None

    def _write(self, key: str, compiled: CompiledGrammar) -> None:
        path = self._path(key)
        if path is None:
            return
        tmp = path.with_name(f".{key}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            tmp.write_bytes(compiled.to_bytes())
            os.replace(tmp, path)
        except OSError:  # a full or read-only disk: the cache works from memory alone
            with contextlib.suppress(OSError):
                tmp.unlink()
            return
        if self.max_disk_bytes is not None:
            self._trim_directory()

    def _trim_directory(self) -> None:
        assert self.directory is not None and self.max_disk_bytes is not None
        files = []
        for p in self.directory.glob(f"*{SUFFIX}"):
            with contextlib.suppress(OSError):
                st = p.stat()
                files.append((st.st_mtime, st.st_size, p))
        total = sum(size for _, size, _ in files)
        for _, size, p in sorted(files, key=lambda f: (f[0], f[2].name)):
            if total <= self.max_disk_bytes:
                break
            with contextlib.suppress(OSError):
                p.unlink()
            total -= size


def _key(what: str, request: Any, options: dict[str, Any], vocab: Vocabulary) -> str:
    text = json.dumps([what, request, options, vocab.fingerprint, __version__, FORMAT_VERSION],
                      ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
