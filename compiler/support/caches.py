"""The one registry of the compiler's process-wide caches, each with a memory bound.

Every cache a module keeps across compiles registers here: a function result cache through
`memo(maxsize)` (a `functools.lru_cache` that registers itself), any other cache (a dict with
its own eviction, values remembered per thread) through `register(name, clear, size, bound)`.
`clear_all()` empties them through the registry (`grammask.compiler.clear_caches` is it), so no
module reaches into another's private caches; `stats()` gives each one's entries and bound.

Every cache is bounded: an lru bound, or a maximum entry count that the cache enforces itself,
or (`bound` None) a bound that is not an entry count: values kept per live thread for its last
grammar only, which die with the thread. `specs/limits.md` lists them all with their bounds and
rough cost per entry.

A *static* cache holds what is computed from the code and the Unicode database alone, never
from an input: the Lark parsers of the regex and GBNF syntaxes, Unicode property tables. Its
keys are fixed by the code, and rebuilding it costs tens to hundreds of milliseconds that a
process pays once, so `clear_all()` keeps it; `clear_all(static=True)` forgets it too.
"""
from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])

PACKAGE = "grammask.compiler."
"""Dropped from module names in cache names: `automata.language_ops._node_dfa`."""


@dataclass(frozen=True)
class Cache:
    """One registered cache: `clear()` empties it, `size()` counts its entries, `bound` is
    its maximum entry count (None: bounded otherwise, see the module docstring)."""

    name: str
    clear: Callable[[], None]
    size: Callable[[], int]
    bound: int | None
    static: bool = False


class CacheStats(NamedTuple):
    """A cache's current entries, its bound (None: not an entry count) and whether it is static."""

    entries: int
    bound: int | None
    static: bool


_registry: dict[str, Cache] = {}
_lock = threading.Lock()


def cache_name(module: str, name: str) -> str:
    """The registry name of cache `name` of module `module` (a `__name__`)."""
    return f"{module.removeprefix(PACKAGE)}.{name}"


def register(name: str, clear: Callable[[], None], size: Callable[[], int],
             bound: int | None, *, static: bool = False) -> None:
    """Register the cache `name` (see `cache_name`): `clear()` empties it, `size()` counts its
    entries, `bound` is the entry count it never exceeds (None only for a cache bounded
    otherwise, whose registration says how). Registering a name again replaces it (a module
    reloaded)."""
    if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int) or bound < 1):
        raise ValueError(f"cache {name}: bound must be a positive int or None, got {bound!r}")
    with _lock:
        _registry[name] = Cache(name, clear, size, bound, static)


def memo(maxsize: int, *, static: bool = False) -> Callable[[F], F]:
    """`functools.lru_cache(maxsize)` registered under the function's module and qualified
    name: every function result cache of the compiler is one of these, with a finite bound."""
    if isinstance(maxsize, bool) or not isinstance(maxsize, int) or maxsize < 1:
        raise ValueError(f"memo needs a positive int maxsize, got {maxsize!r}")

    def decorate(f: F) -> F:
        cached = functools.lru_cache(maxsize=maxsize)(f)
        register(cache_name(f.__module__, f.__qualname__), cached.cache_clear,
                 lambda: cached.cache_info().currsize, maxsize, static=static)
        return cast(F, cached)

    return decorate


def caches() -> list[Cache]:
    """Every registered cache, by name."""
    with _lock:
        return sorted(_registry.values(), key=lambda c: c.name)


def clear_all(*, static: bool = False) -> None:
    """Empty every registered cache but the static ones (those too with `static`)."""
    for cache in caches():
        if static or not cache.static:
            cache.clear()


def stats() -> dict[str, CacheStats]:
    """Per registered cache name: its current entries, its bound and whether it is static."""
    return {c.name: CacheStats(c.size(), c.bound, c.static) for c in caches()}


__all__ = ["Cache", "CacheStats", "cache_name", "caches", "clear_all", "memo", "register",
           "stats"]
