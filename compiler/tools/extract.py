"""Extraction: the matches of a compiled language inside a free text.

A model that was not constrained wraps its answer in prose ("Sure! Here is the record: {...}
Let me know if..."), in code fences, or repeats it. `extract(compiled, text)` finds the matches:
by default the longest complete match that starts earliest (leftmost-longest, as POSIX regex
search); with `every=True` every non-overlapping one from left to right, each the longest at its
start, the scan going on after its end. Empty matches are never reported.

Candidate starts are the bytes the language can begin with. From each candidate, one walk
(`recognizer.Recognizer.longest`) to the end of the longest viable prefix, remembering the last
position where the text so far is complete: a DFA in one compiled call per candidate, rule
automata (recursive languages) on the runtime's Earley recognizer one byte per step, within
`RuntimeLimits` (`MatcherBudgetExceeded` past them). Cost: the sum of the walks, at most n * m byte steps for n bytes and walks of m bytes (a text
of many `{` without a match walks from each); the walk stops where no continuation is viable.

Offsets are in bytes of the UTF-8 text; lines and columns are 1-based and count code points,
as every diagnostic does (`end_line`/`end_column`: the last character of the match).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ...runtime.compiled import CompiledGrammar
from ...runtime.run_limits import RuntimeLimits
from .recognizer import Automaton, Recognizer

__all__ = ["Match", "extract"]


@dataclass(frozen=True)
class Match:
    """One match: bytes [start, end) of the text, where it begins (`line`, `column`) and where
    its last character is (`end_line`, `end_column`), and its text."""

    start: int
    end: int
    line: int
    column: int
    end_line: int
    end_column: int
    text: str

    def as_json(self) -> dict[str, Any]:
        """The match as a JSON object (the CLI's JSON lines)."""
        return asdict(self)


class _Lines:
    """1-based line and code-point column of byte offsets of one UTF-8 text."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.starts = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 0x0A) + 1

    def point(self, offset: int) -> tuple[int, int]:
        line = int(np.searchsorted(self.starts, offset, side="right"))
        begin = int(self.starts[line - 1]) if line else 0
        return line + 1, len(self.data[begin:offset].decode("utf-8", "replace")) + 1


def extract(compiled: CompiledGrammar | Automaton, text: str | bytes, *, every: bool = False,
            limits: RuntimeLimits | None = None) -> list[Match]:
    """The leftmost-longest match of `compiled`'s language in `text` (a list of one, or empty),
    or with `every` all non-overlapping ones, left to right (module docstring). Rule automata run
    within `limits` (default: the compiled grammar's)."""
    recognizer = Recognizer(compiled, limits)
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    arr = np.frombuffer(data, dtype=np.uint8)
    spans: list[tuple[int, int]] = []
    after = 0
    for p in np.flatnonzero(recognizer.first_bytes()[arr]).tolist():
        if p < after:
            continue
        end = recognizer.longest(arr, p)
        if end > p:
            spans.append((p, end))
            if not every:
                break
            after = end
    lines = _Lines(data)
    out = []
    for start, end in spans:
        last = end - 1
        while last > start and 0x80 <= data[last] < 0xC0:
            last -= 1
        out.append(Match(start, end, *lines.point(start), *lines.point(last),
                         data[start:end].decode("utf-8", "replace")))
    return out
