"""JSON string literals (RFC 8259) whose decoded value satisfies JSON Schema's string keywords.

`json_string(content, min_length=, max_length=, pattern=)` is the IR of complete literals,
quotes included, whose decoded value is in `content` (a language over code points, each as its
UTF-8 bytes; None: any), has between `min_length` and `max_length` code points, and contains a
match of the ECMA-262 `pattern` (`ecma_regex.ecma_pattern`). Values are strings of Unicode
scalar values. Each character c of a value may be written:
- raw, as its UTF-8 bytes, unless c is '"', '\\' or a control character U+0000-U+001F;
- as a short escape `\\" \\\\ \\/ \\b \\f \\n \\r \\t` for those eight characters;
- as `\\uXXXX` (hex digits in either case) when c is in the BMP, or as a surrogate pair
  `\\uD8xx\\uDCxx` (high D800-DBFF then low DC00-DFFF, either case) when c is above U+FFFF.
An escape is one character for the length. Lone surrogate escapes are never accepted.

Without content and pattern, and with length bounds, the result is plain IR: `"`
character{min,max} `"` (the grammar's own automaton builds the counter in compiled code, two to
three times faster than the encoding, for the same minimal states). Otherwise the value
language (content ∩ pattern ∩ length, the length by `counted`) is determinized and its minimal
DFA mapped to the literal language (`spellings.json_string_automaton`). When there is a length
bound and a content or pattern, and that literal automaton exceeds `Limits.max_dfa_states`, it
is built once more with raw spellings only (relaxation `string-escapes`, `relaxations.py`): every
character JSON allows raw is written raw, so the hex digit trees that multiply the states go
away. Only the spelling is restricted; the decoded values are exactly those above, and every
complement is taken on decoded values, never on these literals. Such an automaton is labelled
`RAW_SPELLINGS` and `spelling_notes` words the note the compiled grammar carries for it.
Where the length counter itself exceeds the budget under a `maxLength`, the values are those of
at most k characters for the largest k that fits (`shortened`, relaxation `string-length`,
noted likewise); complements always count exactly.

The result is a minimal `Automaton`, computed once per (content, pattern, bounds, limits), the
languages compared by object (automata by their interned DFA); the same `Automaton` object is
returned for each use.

Errors carry `pointer`: bad bounds are `invalid-schema`, no value satisfying the constraints is
`empty-language`, bounds above `Limits.max_repeat` or automata above `Limits.max_dfa_states`
(the raw spellings included) are `BudgetExceeded`, and pattern errors are those of
`ecma_pattern`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba.types import boolean, int32, int64

from ....runtime.csr import csr_order
from ....runtime.dfa.table import DFATable
from ....runtime.jit import R, kernel
from ...automata.dfa import trim
from ...automata.language_ops import as_dfa, difference, intersect
from ...automata.minimize import minimize
from ...automata.nfa import IdentityKey
from ...ir.nodes import Automaton, CharClass, Choice, Literal, Node, Repeat, Seq
from ...support.caches import memo
from ...support.diagnostics import Diagnostic
from ...support.errors import BudgetExceeded, GrammarError
from ...support.limits import DEFAULT_LIMITS, Limits
from .ecma_regex import ANY_STRING, ecma_pattern
from .relaxations import relaxation_note
from .spellings import json_string_automaton

__all__ = ["ANY_STRING", "RAW_SPELLINGS", "chunked_string", "counted", "ecma_pattern",
           "excluding", "json_string", "json_string_automaton", "raw_spellings_note", "shortened",
           "spelling_notes", "string_literals"]

RAW_SPELLINGS = "JSON string, raw spellings (string-escapes)"
"""The label of a literal automaton built in the `string-escapes` domain."""

_QUOTE = Literal(b'"')
_HEX = CharClass.of([(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)])
_D = CharClass.of([(0x44, 0x44), (0x64, 0x64)])
_CHARACTER = Choice((
    CharClass.of([(0x20, 0x21), (0x23, 0x5B), (0x5D, 0x10FFFF)]),
    Seq((Literal(b"\\"), CharClass.of([(c, c) for c in b'"\\/bfnrt']))),
    Seq((Literal(b"\\u"), Choice((
        Seq((CharClass.of([(0x30, 0x39), (0x41, 0x43), (0x45, 0x46), (0x61, 0x63), (0x65, 0x66)]),
             _HEX, _HEX, _HEX)),
        Seq((_D, CharClass.of([(0x30, 0x37)]), _HEX, _HEX)),
        Seq((_D, CharClass.of([(0x38, 0x39), (0x41, 0x42), (0x61, 0x62)]), _HEX, _HEX,
             Literal(b"\\u"), _D, CharClass.of([(0x43, 0x46), (0x63, 0x66)]), _HEX, _HEX)),
    )))),
))


def _closure(frontier: np.ndarray, moves: np.ndarray, completes: np.ndarray) -> np.ndarray:
    """The states reached from `frontier` by moves that do not complete a character."""
    seen = np.zeros(moves.shape[0], dtype=bool)
    seen[frontier] = True
    todo = frontier
    while todo.size:
        t = moves[todo][~completes[todo]]
        t = np.unique(t[t >= 0])
        todo = t[~seen[t]]
        seen[todo] = True
    return np.flatnonzero(seen)


@kernel(R(int32, 2), R(boolean, 2), R(boolean), int64, tiered=True)
def _completion_lengths(moves, completes, accepting, cap):  # type: ignore[no-untyped-def]
    """(shortest, longest): per state, the fewest and the most characters (`completes` moves)
    read from it to acceptance, longest capped at `cap` (reached when unbounded); -1 in both
    where acceptance cannot be reached."""
    n, k = moves.shape
    source = np.empty(n * k, np.int64)
    target = np.empty(n * k, np.int64)
    reads = np.empty(n * k, np.int64)
    m = 0
    for s in range(n):
        for c in range(k):
            if moves[s, c] >= 0:
                source[m], target[m], reads[m] = s, moves[s, c], 1 if completes[s, c] else 0
                m += 1
    first, order = csr_order(n, target[:m])  # the moves into each state
    pred = source[:m][order]
    weight = reads[:m][order]
    shortest = np.full(n, -1, np.int64)
    current = np.empty(first[n] + n, np.int64)
    later = np.empty(first[n] + n, np.int64)
    n_current = n_later = 0
    for s in range(n):
        if accepting[s]:
            current[n_current] = s
            n_current += 1
    d = 0
    while n_current:
        while n_current:
            n_current -= 1
            v = current[n_current]
            if shortest[v] >= 0:
                continue
            shortest[v] = d
            for e in range(first[v], first[v + 1]):
                u = pred[e]
                if shortest[u] < 0:
                    if weight[e]:
                        later[n_later] = u
                        n_later += 1
                    else:
                        current[n_current] = u
                        n_current += 1
        current[:n_later] = later[:n_later]
        n_current, n_later = n_later, 0
        d += 1
    pending = np.zeros(n, np.int64)
    for s in range(n):
        if shortest[s] >= 0:
            for c in range(k):
                if moves[s, c] >= 0 and shortest[moves[s, c]] >= 0:
                    pending[s] += 1
    longest = np.full(n, -1, np.int64)
    best = np.where(accepting, 0, -1)
    ready = np.empty(n, np.int64)
    n_ready = 0
    for s in range(n):
        if shortest[s] >= 0 and pending[s] == 0:
            ready[n_ready] = s
            n_ready += 1
    while n_ready:
        n_ready -= 1
        v = ready[n_ready]
        longest[v] = min(best[v], cap)
        for e in range(first[v], first[v + 1]):
            u = pred[e]
            if shortest[u] >= 0:
                best[u] = max(best[u], longest[v] + weight[e])
                pending[u] -= 1
                if pending[u] == 0:
                    ready[n_ready] = u
                    n_ready += 1
    for s in range(n):
        if shortest[s] >= 0 and longest[s] < 0:
            longest[s] = cap
    return shortest, longest


def shortened(values: DFATable, lo: int, hi: int | None,
              limits: Limits) -> tuple[DFATable, int | None]:
    """`counted`, or where its states exceed `Limits.max_dfa_states` under an upper bound, the
    values of lo to k code points for the largest k whose states fit in nine tenths of it
    (relaxation `string-length`): (the automaton, k or None when exact). Only for a string that must hold:
    a complement takes the exact `counted`."""
    try:
        return counted(values, lo, hi, limits), None
    except BudgetExceeded as exc:
        # Nine tenths of the budget: the literal automaton and its rule have a few more.
        totals = getattr(exc, "level_totals", [])
        fits = sum(1 for total in totals if total <= limits.max_dfa_states * 9 // 10) - 1
        if hi is None or fits < max(lo, 1):
            raise
        return counted(values, lo, fits, limits), fits


def counted(values: DFATable, lo: int, hi: int | None, limits: Limits) -> DFATable:
    """`values` (UTF-8 text) restricted to strings of lo to hi code points (hi None: no upper
    bound): one copy of each state per number of characters read, capped at lo without hi.

    A move completes a character iff it enters a state at a character boundary, and those are
    the accepting states and the states with a move on a byte that is not a continuation byte.
    A copy (c, q) is made only when some accepted completion from q has at most hi - c
    characters and some has at least lo - c (`_completion_lengths`), so the budget counts no
    copy the trimmed result would drop (the copies of a hostname's short labels after 200
    characters, say). A bound every value meets already is dropped first (`values` itself
    when both are: a hostname's 241 characters under `maxLength: 255`).
    """
    moves = values.transitions
    starters = np.unique(values.byte_class[np.r_[0:0x80, 0xC0:0x100]])
    boundary = values.accepting | (moves[:, starters] >= 0).any(axis=1)
    completes = (moves >= 0) & boundary[np.maximum(moves, 0)]
    shortest, longest = _completion_lengths(np.array(moves, dtype=np.int32), completes,
                                            np.array(values.accepting, dtype=np.bool_),
                                            lo if hi is None else max(lo, hi + 1))
    if hi is not None and longest[values.start] <= hi:
        hi = None  # no value is longer (a hostname, say): the bound says nothing
    if hi is None and lo <= max(shortest[values.start], 0):
        return values
    levels: list[np.ndarray] = []
    frontier = np.array([values.start])
    total = 0
    while frontier.size:
        states = _closure(frontier, moves, completes)
        c = len(levels)
        if hi is None and c == lo:
            while True:
                more = _closure(np.union1d(states, moves[states][completes[states]]), moves,
                                completes)
                if more.size == states.size:
                    break
                states = more
        keep = (shortest[states] >= 0) & (c + longest[states] >= lo)
        if hi is not None:
            keep &= c + shortest[states] <= hi
        states = states[keep]
        levels.append(states)
        total += states.size
        if total > limits.max_dfa_states:
            exc = limits.exceeded("max_dfa_states", f"more than {total}",
                                  "string length counter states")
            exc.level_totals = np.cumsum([q.size for q in levels])  # type: ignore[attr-defined]
            raise exc  # (`shortened` reads the states per level)
        if len(levels) - 1 == (lo if hi is None else hi):
            break
        frontier = np.unique(moves[states][completes[states]])
    offsets = np.cumsum([0] + [q.size for q in levels])
    position = [np.full(moves.shape[0], -1, dtype=np.int64) for _ in levels]
    for c, q in enumerate(levels):
        position[c][q] = offsets[c] + np.arange(q.size)
    table = np.full((total, moves.shape[1]), -1, dtype=np.int32)
    accepting = np.zeros(total, dtype=bool)
    for c, q in enumerate(levels):
        nxt = c if hi is None and c == lo else c + 1
        after = position[nxt] if nxt < len(levels) else np.full(moves.shape[0], -1)
        t = moves[q]
        safe = np.maximum(t, 0)
        table[offsets[c]:offsets[c + 1]] = np.where(
            t < 0, -1, np.where(completes[q], after[safe], position[c][safe]))
        accepting[offsets[c]:offsets[c + 1]] = values.accepting[q] & (c >= lo)
    if not total:
        return trim(values.byte_class, np.full((1, moves.shape[1]), -1, dtype=np.int32),
                    np.zeros(1, dtype=bool), 0)
    return minimize(trim(values.byte_class, table, accepting, int(position[0][values.start])))


def _bound(value: Any, name: str, pointer: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or (
            isinstance(value, float) and not value.is_integer()):
        raise GrammarError(f"{name} must be a non-negative integer, got {value!r}",
                           pointer=pointer, code="invalid-schema")
    return int(value)


def json_string(
    content: Node | None = None,
    *,
    min_length: int = 0,
    max_length: int | None = None,
    pattern: str | None = None,
    pointer: str = "",
    limits: Limits = DEFAULT_LIMITS,
) -> Node:
    """The JSON string literals (quotes included) whose decoded value is in `content` (None:
    any), has `min_length` to `max_length` code points and contains a match of `pattern`.
    `pointer` is the JSON pointer attached to every error."""
    lo = _bound(min_length, "minLength", pointer)
    hi = None if max_length is None else _bound(max_length, "maxLength", pointer)
    matches = None if pattern is None else ecma_pattern(pattern, pointer=pointer, limits=limits)
    if hi is not None and lo > hi:
        raise GrammarError(f"no string has at least {lo} and at most {hi} characters",
                           pointer=pointer, code="empty-language")
    plain = content is None and matches is None
    if lo > limits.max_repeat or (plain and (hi or 0) > limits.max_repeat):
        # (With a content or pattern, `counted` copies states per character read, within
        # `Limits.max_dfa_states`: an upper bound past it is `shortened`.)
        budget = limits.exceeded("max_repeat", max(lo, hi or 0), "string length bound")
        raise budget.located(pointer=pointer)
    if plain and (lo, hi) != (0, None):
        return Seq((_QUOTE, Repeat(_CHARACTER, lo, hi), _QUOTE))
    try:
        return string_literals(_key(content), _key(matches), lo, hi, limits)
    except BudgetExceeded as exc:
        raise exc.located(pointer=pointer) from None
    except GrammarError as exc:
        raise GrammarError(exc.message, pointer=pointer, code=exc.code) from None


CHUNK = 64
"""Characters per kept chunk rule of a long unconstrained string (`chunked_string`)."""

CHUNKED_FROM = 512
"""Length bounds from which an unconstrained string is counted in kept chunk rules."""


def chunked_string(lo: int, hi: int | None, kept_rule: Callable[[str, Node], Node]) -> Node:
    """The JSON string literals of lo to hi (None: any) characters, counted in chunks of
    CHUNK characters: a call of the kept rule "exactly CHUNK characters" per chunk, then a
    kept tail rule of the last characters and the closing quote, so no automaton counts past
    CHUNK and the chunk's token sets serve every chunk. A length m is read as m = j * CHUNK + i
    with i < CHUNK, one way only; `kept_rule(name, body)` makes (once per name) the rule."""
    chunk = kept_rule(f"string-chunk-{CHUNK}", Repeat(_CHARACTER, CHUNK, CHUNK))

    def tail(a: int, b: int | None) -> Node:
        return kept_rule(f"string-tail-{a}-{b if b is not None else 'more'}",
                         Seq((Repeat(_CHARACTER, a, b), _QUOTE)))

    def chunks(n: int, m: int | None) -> Node:
        return Repeat(chunk, n, m)

    j0, i0 = divmod(lo, CHUNK)
    if hi is None:
        return Seq((_QUOTE, chunks(j0, j0), Choice((
            tail(i0, CHUNK - 1),
            Seq((chunk, chunks(0, None), tail(0, CHUNK - 1)))))))
    q, r = divmod(hi, CHUNK)
    if j0 == q:
        return Seq((_QUOTE, chunks(j0, j0), tail(i0, r)))
    alternatives = [Seq((chunks(j0, j0), tail(i0, CHUNK - 1)))]
    if q - j0 > 1:
        alternatives.append(Seq((chunks(j0 + 1, q - 1), tail(0, CHUNK - 1))))
    alternatives.append(Seq((chunks(q, q), tail(0, r))))
    return Seq((_QUOTE, Choice(tuple(alternatives))))


def _key(node: Node | None) -> IdentityKey | None:
    """A cache key for a value language: its node, or the DFA of an `Automaton` (interned, so
    equal automata share one key)."""
    if node is None:
        return None
    return IdentityKey(node.dfa if isinstance(node, Automaton) else node)


@memo(maxsize=256)
def string_literals(content: IdentityKey | None, matches: IdentityKey | None, lo: int,
                    hi: int | None, limits: Limits) -> Automaton:
    """The literal automaton of the values in `content` and `matches` with lo to hi code
    points, computed once per (value languages, bounds); with raw spellings only when a format,
    a pattern or removed values make every spelling exceed the budget (`string-escapes`)."""
    operands = [ANY_STRING] + [k.node for k in (content, matches) if k is not None]
    values = (as_dfa(ANY_STRING, limits) if len(operands) == 1 else
              intersect(*operands, limits=limits, label="string value").dfa)
    fits = None
    counted_values = values
    if (lo, hi) != (0, None) and not values.is_empty_language:
        counted_values, fits = shortened(values, lo, hi, limits)
    if counted_values.is_empty_language:
        raise GrammarError("no string satisfies the length bounds, format and pattern together",
                           code="empty-language")
    while True:
        try:
            return Automaton(json_string_automaton(counted_values, limits),
                             label=_label(False, fits))
        except BudgetExceeded:
            if len(operands) == 1:
                raise
        try:
            return Automaton(json_string_automaton(counted_values, limits, escape_raw=False),
                             _label(True, fits))
        except BudgetExceeded:
            # A shortened count whose literals are still over budget: half as many characters.
            if fits is None or fits // 2 < max(lo, 1):
                raise
        fits //= 2
        counted_values = counted(values, lo, fits, limits)


_SHORTENED = " characters at most (string-length)"


def _label(raw: bool, fits: int | None) -> str:
    """The label of a literal automaton: `RAW_SPELLINGS` or "JSON string", and the bound
    `shortened` took, if any (read back by `spelling_notes`)."""
    label = RAW_SPELLINGS if raw else "JSON string"
    return label if fits is None else f"{label}, {fits}{_SHORTENED}"


def excluding(node: Node, excludes: tuple[str, ...], limits: Limits) -> Node:
    """The texts of `node` in which no text of `excludes` occurs (`node` itself when none)."""
    if not excludes:
        return node
    found = Seq((ANY_STRING, Choice(tuple(Literal(x.encode("utf-8")) for x in excludes)),
                 ANY_STRING))
    return difference(node, found, limits=limits, label="string without excluded texts")


def spelling_notes(node: Node | None, pointer: str) -> list[Diagnostic]:
    """The notes for the compiled grammar when `node`, the literals of the string whose
    keywords are at `pointer`, were restricted to raw spellings (`string-escapes`) or to
    fewer characters (`string-length`)."""
    if not isinstance(node, Automaton) or not node.label.startswith(("JSON string",
                                                                      RAW_SPELLINGS)):
        return []
    notes = [raw_spellings_note(pointer)] if node.label.startswith(RAW_SPELLINGS) else []
    if node.label.endswith(_SHORTENED):
        fits = int(node.label[:-len(_SHORTENED)].rsplit(" ", 1)[1])
        notes.append(relaxation_note(
            pointer, "string-length", f"strings of at most {fits} characters",
            "counting the characters of the format or pattern up to maxLength needs more "
            "than Limits.max_dfa_states states, so longer values are rejected"))
    return notes


def raw_spellings_note(pointer: str, why: str = "with every escape the literal automaton "
                       "needs more than Limits.max_dfa_states states") -> Diagnostic:
    """The `string-escapes` note for the string whose keywords are at `pointer`."""
    return relaxation_note(pointer, "string-escapes", "string spellings restricted to raw "
                           "characters", f"{why}, so characters that JSON allows raw are "
                           "accepted only raw")
