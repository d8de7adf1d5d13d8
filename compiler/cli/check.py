"""Checking texts against a compiled language, byte by byte: whether a text fully matches, and
if not, where it stops being a viable prefix (or that it ends too early) and which bytes could
have come there.

A DFA is walked along its transitions; the rule automata of a pushdown grammar are run by the
runtime's Earley recognizer, whose last set gives the bytes that can come next and whether the
text so far is complete. Both walk chunks of bytes at once and redo only the chunk that fails
one byte at a time.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

import numpy as np

from ...runtime.dfa.kernels import walk_bytes
from ...runtime.dfa.table import DFATable
from ...runtime.errors import MatcherBudgetExceeded
from ...runtime.pushdown.assembly import complete
from ...runtime.pushdown.earley import EarleyArrays, earley_start, next_bytes, push_bytes
from ...runtime.pushdown.table import PushdownTable
from ...runtime.run_limits import DEFAULT_RUNTIME_LIMITS, RuntimeLimits
from ..support.errors import BudgetExceeded, GrammarError

__all__ = ["CompiledTable", "Walk", "check_text", "expected_bytes", "walk"]

CompiledTable: TypeAlias = DFATable | PushdownTable
_CHUNK = 4096


@dataclass(frozen=True)
class Walk:
    """How far a text got: its first `read` bytes are a viable prefix; `died` when the byte
    after them cannot continue any match. `expected` (bool[256]) marks the bytes that can come
    after those `read` bytes, and `can_end` says whether the text may end there."""

    read: int
    died: bool
    expected: np.ndarray
    can_end: bool


def _dfa_walk(dfa: DFATable, data: bytes) -> Walk:
    arr = np.frombuffer(data, dtype=np.uint8)
    state = dfa.start
    read, died = len(data), False
    for begin in range(0, len(arr), _CHUNK):
        end = min(begin + _CHUNK, len(arr))
        nxt = int(walk_bytes(dfa.transitions, dfa.byte_class, arr, begin, end, state))
        if nxt >= 0:
            state = nxt
            continue
        for p in range(begin, end):
            after = dfa.step(state, data[p])
            if after < 0:
                read, died = p, True
                break
            state = after
        break
    return Walk(read, died, dfa.transitions[state][dfa.byte_class] >= 0,
                bool(dfa.accepting[state]))


def _earley_push(g: tuple[np.ndarray, ...], e: EarleyArrays, arr: np.ndarray, begin: int,
                 end: int, limits: RuntimeLimits) -> bool:
    """Push arr[begin:end] all or nothing within `limits`; whether it survived."""
    return bool(e.run(limits, f"checking byte {begin}", push_bytes, g, arr, begin, end, 0)
                == 1)


def _pushdown_walk(t: PushdownTable, data: bytes, limits: RuntimeLimits) -> Walk:
    t = complete(t)
    g = t.kernel_args()
    e = EarleyArrays.empty(t.n_states)
    e.limit(limits)
    start = np.int32(t.rule_start[t.start_rule])
    e.run(limits, "the start", earley_start, g, start)
    arr = np.frombuffer(data, dtype=np.uint8)
    read, died = len(data), False
    for begin in range(0, len(arr), _CHUNK):
        end = min(begin + _CHUNK, len(arr))
        if _earley_push(g, e, arr, begin, end, limits):
            continue
        read = next(p for p in range(begin, end)
                    if not _earley_push(g, e, arr, p, p + 1, limits))
        died = True
        break
    expected = np.zeros(256, dtype=np.bool_)
    next_bytes(g, e.kernel_args(), expected)
    return Walk(read, died, expected, bool(e.sets[e.n_sets - 1, 1] == 1))


def walk(automaton: CompiledTable, data: bytes,
         limits: RuntimeLimits = DEFAULT_RUNTIME_LIMITS) -> Walk:
    """Walk `data` from the start of `automaton` (a DFA with a non-empty language, or rule
    automata) until a byte cannot continue any match or the data ends; rule automata are run
    within `limits` (`MatcherBudgetExceeded` past them)."""
    if isinstance(automaton, DFATable):
        return _dfa_walk(automaton, data)
    return _pushdown_walk(automaton, data, limits)


def _position(data: bytes, offset: int) -> tuple[int, int, str]:
    """1-based line and character column of the character holding byte `offset`, and it."""
    start = offset
    while 0 < start < len(data) and 0x80 <= data[start] < 0xC0:
        start -= 1
    line_start = data.rfind(b"\n", 0, start) + 1
    column = len(data[line_start:start].decode("utf-8", "replace")) + 1
    char = data[start:start + 4].decode("utf-8", "replace")[:1]
    return data.count(b"\n", 0, start) + 1, column, char


def _show_byte(b: int) -> str:
    if 0x20 <= b < 0x7F and b != 0x27:
        return f"'{chr(b)}'"
    return {0x27: '"\'"', 0x0A: "'\\n'", 0x09: "'\\t'", 0x0D: "'\\r'"}.get(b, f"\\x{b:02x}")


def expected_bytes(allowed: np.ndarray, can_end: bool, limit: int = 8) -> str:
    """The bytes marked in `allowed` (bool[256]) as ranges ('0'-'9', \\xc2-\\xdf), and "the end
    of the text" when `can_end`; at most `limit` ranges are listed."""
    ranges: list[tuple[int, int]] = []
    for b in np.flatnonzero(allowed).tolist():
        if ranges and ranges[-1][1] == b - 1:
            ranges[-1] = (ranges[-1][0], b)
        else:
            ranges.append((b, b))
    parts = [_show_byte(lo) if lo == hi else f"{_show_byte(lo)}-{_show_byte(hi)}"
             for lo, hi in ranges[:limit]]
    if len(ranges) > limit:
        parts.append(f"... ({len(ranges) - limit} more ranges)")
    if can_end:
        parts.append("the end of the text")
    if not parts:
        return "nothing"
    return parts[0] if len(parts) == 1 else "one of " + ", ".join(parts)


def check_text(automaton: CompiledTable, text: str,
               limits: RuntimeLimits = DEFAULT_RUNTIME_LIMITS) -> GrammarError | None:
    """None if `text` (as UTF-8; undecodable argv bytes kept as they were) fully matches;
    otherwise why not, located at the first byte that cannot continue a match (code
    "no-match") or at the end of a viable but incomplete prefix (code "incomplete"), with the
    bytes that were expected there, or the runtime bound the walk went past (code "budget")."""
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        data = text.encode("utf-8", "surrogatepass")
    if isinstance(automaton, DFATable) and automaton.is_empty_language:
        return GrammarError("no match: the pattern matches no text at all", code="empty-language")
    try:
        w = walk(automaton, data, limits)
    except MatcherBudgetExceeded as exc:
        # A `RuntimeLimits` bound (the `--limit` names are the same): its name and setting.
        return BudgetExceeded(str(exc), code="budget", limit=exc.limit, value=exc.value)
    line, column, char = _position(data, w.read)
    expected = expected_bytes(w.expected, w.can_end)
    if w.died:
        return GrammarError(
            f"no match: at byte offset {w.read}, {char!r} cannot continue any match (after a"
            f" viable prefix of {w.read} byte{'' if w.read == 1 else 's'}); expected"
            f" {expected}", line=line, column=column, code="no-match")
    if not w.can_end:
        return GrammarError(
            f"incomplete: all {w.read} bytes are a viable prefix, but the text ends before a"
            f" complete match; expected next {expected}", line=line, column=column,
            code="incomplete")
    return None
