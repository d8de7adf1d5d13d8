"""The regular-language workloads of the benchmark: a pattern and a fixed target per workload.

Every target fullmatches its pattern (checked with Python's `re` under `re.ASCII` when the
workloads are built), so walking its tokens never leaves the language. Patterns stick to syntax
that every engine in the comparison reads the same way: `[0-9]` rather than `\\d` (Unicode
digits in some engines), no lookaround, no flags.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

from grammask.runtime import Vocabulary


@dataclass(frozen=True)
class Workload:
    """One benchmark case: `pattern` (a fullmatch regex) and a `target` in its language."""

    name: str
    pattern: str
    target: str


_OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"

_FIXED: tuple[Workload, ...] = (
    Workload("age_object", r'\{"age": [0-9]+\}', '{"age": 42}'),
    Workload(
        "email",
        r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)*\.[a-zA-Z]{2,24}",
        "jane.doe+bench@mail-relay.example.co.uk",
    ),
    Workload(
        "iso_datetime",
        r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
        r"T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,6})?"
        r"(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])",
        "2024-02-29T13:45:07.123456+05:30",
    ),
    Workload(
        "uuid",
        r"[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
        "123e4567-e89b-42d3-a456-426614174000",
    ),
    Workload(
        "phone",
        r"(\+1 )?\(?[0-9]{3}\)?[ .-]?[0-9]{3}[ .-][0-9]{4}",
        "+1 (415) 555-0132",
    ),
    Workload(
        "sentence",
        r"[a-z]+( [a-z]+)*\.",
        "the quick brown fox jumps over the lazy dog while grammars compile quickly.",
    ),
    Workload(
        "json_flat",
        r'\{"name": "[^"\\\x00-\x1f]{0,40}", "age": [0-9]{1,3}, "ok": (true|false)\}',
        '{"name": "Zoë Brontë-Smith", "age": 37, "ok": true}',
    ),
    Workload("ipv4", rf"({_OCTET}\.){{3}}{_OCTET}", "192.168.10.254"),
)


def enum_words(vocab: Vocabulary, n: int = 200, seed: int = 0) -> list[str]:
    """`n` distinct lowercase words, each two vocabulary word-pieces glued (deterministic).

    Gluing pieces gives a realistic alternation: shared prefixes, words that span several
    tokens, and no word that is a single token.
    """
    pieces = sorted({
        text for i in range(vocab.size)
        if (text := vocab.token_bytes(i).decode("ascii", "ignore"))
        and re.fullmatch(r"[a-z]{3,7}", text)
    })
    rng = random.Random(seed)
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < n:
        word = rng.choice(pieces) + rng.choice(pieces)
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def build_workloads(vocab: Vocabulary) -> list[Workload]:
    """All workloads, the 200-word enum included; every target is checked to fullmatch."""
    words = enum_words(vocab)
    enum = Workload("enum_200", "(" + "|".join(words) + ")", words[137])
    out = [*_FIXED, enum]
    for w in out:
        if re.fullmatch(w.pattern, w.target, re.ASCII) is None:
            raise AssertionError(f"{w.name}: target {w.target!r} does not fullmatch its pattern")
    return out
