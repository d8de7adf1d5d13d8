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
three times faster than the encoding below, for the same minimal states). Otherwise the value
language (content ∩ length ∩
pattern) is determinized, and its minimal DFA D, whose
language is UTF-8 text, is mapped to the literal language: each state s of D reached at a
character boundary keeps its raw UTF-8 edges except the bytes of '"', '\\' and the controls,
and gains escape paths to δ*(s, utf8(c)) for every c. The characters leading from s to each
target are computed as code-point ranges from D's UTF-8 byte layers (per lead byte, the
continuation-byte maps shared between states), and `\\u` escapes go through digit-range
automata over the 16-bit value, shared between equal value maps. The result is a minimal
`Automaton` whose size is bounded by `Limits.max_dfa_states`. The automaton is computed once per
(content, pattern, bounds, limits), the languages compared by object (automata by their
interned DFA), and the same `Automaton` object is returned for each use.

Errors carry `pointer`: bad bounds are `invalid-schema`, no value satisfying the constraints is
`empty-language`, bounds above `Limits.max_repeat` or automata above `Limits.max_dfa_states`
are `BudgetExceeded`, and pattern errors are those of `ecma_pattern`.
"""
from __future__ import annotations

import functools
from bisect import bisect_right
from collections.abc import Callable
from typing import Any

import numpy as np

from ...runtime.dfa_table import DFATable
from ..dfa import trim
from ..errors import BudgetExceeded, GrammarError
from ..ir import Automaton, CharClass, Choice, Literal, Node, Repeat, Seq
from ..language_ops import as_dfa, intersect
from ..limits import DEFAULT_LIMITS, Limits
from ..minimize import minimize
from ..nfa import IdentityKey
from .ecma_regex import ANY_STRING, ecma_pattern

__all__ = ["ANY_STRING", "chunked_string", "counted", "ecma_pattern", "json_string",
           "json_string_automaton"]

CodePointMap = list[tuple[int, int, int]]
"""Sorted, disjoint (lo, hi, target) code-point ranges."""

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
_SHORT_ESCAPES = {ord('"'): 0x22, ord("\\"): 0x5C, ord("/"): 0x2F, ord("b"): 0x08,
                  ord("f"): 0x0C, ord("n"): 0x0A, ord("r"): 0x0D, ord("t"): 0x09}
_HEX_BYTES = [tuple({ord(c) for c in (f"{d:x}", f"{d:X}")}) for d in range(16)]
_SPECIAL_BYTES = sorted(set(range(0x20)) | set(b'"\\/u') | set(_SHORT_ESCAPES)
                        | {b for group in _HEX_BYTES for b in group})
_LEAD_MASK = {1: 0x1F, 2: 0x0F, 3: 0x07}
_LAYERS = ((0x00, 0x7F, 0), (0xC2, 0xDF, 1), (0xE0, 0xEF, 2), (0xF0, 0xF4, 3))


def _add(out: CodePointMap, lo: int, hi: int, target: int) -> None:
    """Append a range, merging it with the last one when adjacent with the same target."""
    if out and out[-1][1] + 1 == lo and out[-1][2] == target:
        out[-1] = (out[-1][0], hi, target)
    else:
        out.append((lo, hi, target))


def _runs(byte_class: np.ndarray, lo: int, hi: int) -> list[tuple[int, int, int]]:
    """Maximal runs (first, last, class) of bytes lo..hi with the same byte class."""
    part = byte_class[lo:hi + 1]
    starts = np.flatnonzero(np.diff(part, prepend=-1))
    ends = np.append(starts[1:], len(part)) - 1
    return list(zip((starts + lo).tolist(), (ends + lo).tolist(), part[starts].tolist()))


class _Encoder:
    """Builds the literal automaton of one value DFA (see the module docstring)."""

    def __init__(self, values: DFATable, limits: Limits) -> None:
        self.values = values
        self.limits = limits
        self.rows = values.transitions.tolist()
        bc = values.byte_class
        self.continuation = _runs(bc, 0x80, 0xBF)
        self.leads = [(lo, hi, c, k) for first, last, k in _LAYERS
                      for lo, hi, c in _runs(bc, first, last)]
        self.suffixes: dict[tuple[int, int], CodePointMap] = {}
        self.first_new = values.n_states + 2
        self.n_new = 0
        self.rows_of: list[tuple[int, dict[int, int]]] = []
        self.hex_rows: list[tuple[int, list[int]]] = []
        self.hex_nodes: dict[tuple[int, tuple[tuple[int, int, int], ...]], int] = {}
        self.hex_full: dict[tuple[int, int], int] = {}
        self.pending: dict[tuple[tuple[int, int, int], ...], int] = {}
        self.escapes: dict[tuple[tuple[int, int, int], ...], int] = {}

    def state(self, row: dict[int, int] | None) -> int:
        """A new state with the given byte moves (None: a hex node, moves kept in hex_rows)."""
        n = self.first_new + self.n_new
        if n >= self.limits.max_dfa_states:
            raise self.limits.exceeded("max_dfa_states", f"more than {n}",
                                       "JSON string automaton states")
        self.n_new += 1
        if row is not None:
            self.rows_of.append((n, row))
        return n

    def suffix(self, q: int, k: int) -> CodePointMap:
        """Value of the next k continuation bytes from state q -> the state after them."""
        key = (q, k)
        if key not in self.suffixes:
            out: CodePointMap = []
            span = 64 ** (k - 1)
            for lo, hi, c in self.continuation:
                t = self.rows[q][c]
                if t < 0:
                    continue
                if k == 1:
                    _add(out, lo - 0x80, hi - 0x80, t)
                    continue
                tail = self.suffix(t, k - 1)
                if len(tail) == 1 and tail[0][:2] == (0, span - 1):
                    _add(out, (lo - 0x80) * span, (hi - 0x7F) * span - 1, tail[0][2])
                    continue
                for b in range(lo, hi + 1):
                    offset = (b - 0x80) * span
                    for a, z, u in tail:
                        _add(out, offset + a, offset + z, u)
            self.suffixes[key] = out
        return self.suffixes[key]

    def code_points(self, s: int) -> CodePointMap:
        """The code points leading from boundary state s to each state, as ranges."""
        out: CodePointMap = []
        for lo, hi, c, k in self.leads:
            q = self.rows[s][c]
            if q < 0:
                continue
            if k == 0:
                _add(out, lo, hi, q)
                continue
            tail = self.suffix(q, k)
            span = 64 ** k
            if len(tail) == 1 and tail[0][:2] == (0, span - 1):
                _add(out, (lo & _LEAD_MASK[k]) * span, (hi & _LEAD_MASK[k]) * span + span - 1,
                     tail[0][2])
                continue
            for b in range(lo, hi + 1):
                base = (b & _LEAD_MASK[k]) << (6 * k)
                for a, z, t in tail:
                    _add(out, base + a, base + z, t)
        return out

    def hex_node(self, digits: int, fn: tuple[tuple[int, int, int], ...]) -> int:
        """The state reading `digits` hex digits whose value v leads to fn(v); -1 if none."""
        if not fn:
            return -1
        key = (digits, fn)
        found = self.hex_nodes.get(key)
        if found is not None:
            return found
        children = [-1] * 16
        if digits == 1:
            for a, z, t in fn:
                children[a:z + 1] = [t] * (z - a + 1)
        else:
            size = 16 ** (digits - 1)
            parts: dict[int, list[tuple[int, int, int]]] = {}
            for a, z, t in fn:
                first, last = a // size, z // size
                if a % size:
                    end = min(z, first * size + size - 1)
                    parts.setdefault(first, []).append((a - first * size, end - first * size, t))
                    first += 1
                if first > last:
                    continue
                if z % size != size - 1:
                    parts.setdefault(last, []).append((0, z - last * size, t))
                    last -= 1
                if first <= last:
                    children[first:last + 1] = [self.hex_full_node(digits - 1, t)] * (
                        last - first + 1)
            for d, part in parts.items():
                children[d] = self.hex_node(digits - 1, tuple(part))
        state = self.state(None)
        self.hex_rows.append((state, children))
        self.hex_nodes[key] = state
        return state

    def hex_full_node(self, digits: int, target: int) -> int:
        """The state reading any `digits` hex digits into `target`."""
        full = self.hex_full.get((digits, target))
        if full is None:
            full = self.hex_full[(digits, target)] = self.hex_node(
                digits, ((0, 16 ** digits - 1, target),))
        return full

    def low_surrogate(self, fn: tuple[tuple[int, int, int], ...]) -> int:
        """The state after a high surrogate escape: `\\u` and a low surrogate l lead to fn(l)."""
        if fn not in self.pending:
            digits = self.hex_node(4, tuple((0xDC00 + a, 0xDC00 + z, t) for a, z, t in fn))
            self.pending[fn] = self.state({ord("\\"): self.state({ord("u"): digits})})
        return self.pending[fn]

    def high_surrogates(self, astral: CodePointMap) -> CodePointMap:
        """High surrogate values (D800-DBFF) -> the state awaiting their low surrogate."""
        segments: list[tuple[int, int, list[tuple[int, int, int]]]] = []

        def piece(h: int, lo: int, hi: int, t: int) -> None:
            if segments and segments[-1][0] == segments[-1][1] == h:
                segments[-1][2].append((lo, hi, t))
            else:
                segments.append((h, h, [(lo, hi, t)]))

        for lo, hi, t in astral:
            a, z = lo - 0x10000, hi - 0x10000
            if a >> 10 == z >> 10:
                piece(a >> 10, a & 0x3FF, z & 0x3FF, t)
                continue
            piece(a >> 10, a & 0x3FF, 0x3FF, t)
            if (a >> 10) + 1 < z >> 10:
                segments.append(((a >> 10) + 1, (z >> 10) - 1, [(0, 0x3FF, t)]))
            piece(z >> 10, 0, z & 0x3FF, t)
        out: CodePointMap = []
        for h_lo, h_hi, pieces in segments:
            _add(out, 0xD800 + h_lo, 0xD800 + h_hi, self.low_surrogate(tuple(pieces)))
        return out

    def escape(self, cps: CodePointMap) -> int:
        """The state after `\\` from a boundary state whose characters lead as `cps` says."""
        key = tuple(cps)
        if key not in self.escapes:
            starts = [lo for lo, _, _ in cps]
            row: dict[int, int] = {}
            for letter, cp in _SHORT_ESCAPES.items():
                i = bisect_right(starts, cp) - 1
                if i >= 0 and cps[i][1] >= cp:
                    row[letter] = cps[i][2]
            bmp = [(lo, min(hi, 0xFFFF), t) for lo, hi, t in cps if lo <= 0xFFFF]
            astral = [(max(lo, 0x10000), hi, t) for lo, hi, t in cps if hi >= 0x10000]
            digits = self.hex_node(4, tuple(sorted(bmp + self.high_surrogates(astral))))
            if digits >= 0:
                row[ord("u")] = digits
            self.escapes[key] = self.state(row)
        return self.escapes[key]

    def build(self) -> DFATable:
        """The minimal literal DFA: state 0 awaits the opening quote, 1 is after the closing
        one, 2 + q is the value DFA's state q."""
        values = self.values
        boundary = {values.start: self.code_points(values.start)}
        order = [values.start]
        for s in order:
            for _, _, t in boundary[s]:
                if t not in boundary:
                    boundary[t] = self.code_points(t)
                    order.append(t)
        escapes = {s: self.escape([(lo, hi, t + 2) for lo, hi, t in cps])
                   for s, cps in boundary.items()}
        special = np.full(256, -1, dtype=np.int64)
        special[_SPECIAL_BYTES] = _SPECIAL_BYTES
        keys = values.byte_class.astype(np.int64) * 512 + special + 1
        _, first, column = np.unique(keys, return_index=True, return_inverse=True)
        column = column.reshape(256)
        n = self.first_new + self.n_new
        table = np.full((n, len(first)), -1, dtype=np.int32)
        moves = values.transitions[:, values.byte_class[first]]
        table[2:self.first_new] = np.where(moves >= 0, moves + 2, -1)
        table[0, column[ord('"')]] = values.start + 2
        for s, esc in escapes.items():
            table[s + 2, column[:0x20]] = -1
            table[s + 2, column[ord("\\")]] = esc
            table[s + 2, column[ord('"')]] = 1 if values.accepting[s] else -1
        for state, row in self.rows_of:
            for byte, t in row.items():
                table[state, column[byte]] = t
        if self.hex_rows:
            states = np.array([state for state, _ in self.hex_rows])
            children = np.array([c for _, c in self.hex_rows], dtype=np.int32)
            for d, hex_bytes in enumerate(_HEX_BYTES):
                for byte in hex_bytes:
                    table[states, column[byte]] = children[:, d]
        accepting = np.zeros(n, dtype=bool)
        accepting[1] = True
        return minimize(trim(column.astype(np.int32), table, accepting, 0))


def json_string_automaton(values: DFATable, limits: Limits = DEFAULT_LIMITS) -> DFATable:
    """The DFA of the JSON string literals whose decoded value `values` accepts. `values` must
    accept only UTF-8 text (as every DFA of IR built from code points does)."""
    return _Encoder(values, limits).build()


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


def counted(values: DFATable, lo: int, hi: int | None, limits: Limits) -> DFATable:
    """`values` (UTF-8 text) restricted to strings of lo to hi code points (hi None: no upper
    bound): one copy of each state per number of characters read, capped at lo without hi.

    A move completes a character iff it enters a state at a character boundary, and those are
    the accepting states and the states with a move on a byte that is not a continuation byte.
    """
    moves = values.transitions
    starters = np.unique(values.byte_class[np.r_[0:0x80, 0xC0:0x100]])
    boundary = values.accepting | (moves[:, starters] >= 0).any(axis=1)
    completes = (moves >= 0) & boundary[np.maximum(moves, 0)]
    levels: list[np.ndarray] = []
    frontier = np.array([values.start])
    total = 0
    while frontier.size:
        states = _closure(frontier, moves, completes)
        if hi is None and len(levels) == lo:
            while True:
                more = _closure(np.union1d(states, moves[states][completes[states]]), moves,
                                completes)
                if more.size == states.size:
                    break
                states = more
        levels.append(states)
        total += states.size
        if total > limits.max_dfa_states:
            raise limits.exceeded("max_dfa_states", f"more than {total}",
                                  "string length counter states")
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
    if max(lo, hi or 0) > limits.max_repeat:
        budget = limits.exceeded("max_repeat", max(lo, hi or 0), "string length bound")
        raise BudgetExceeded(budget.message, pointer=pointer, code=budget.code)
    if content is None and matches is None and (lo, hi) != (0, None):
        return Seq((_QUOTE, Repeat(_CHARACTER, lo, hi), _QUOTE))
    try:
        return _literals(_key(content), _key(matches), lo, hi, limits)
    except BudgetExceeded as exc:
        raise BudgetExceeded(exc.message, pointer=pointer, code=exc.code) from None
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


@functools.lru_cache(maxsize=256)
def _literals(content: IdentityKey | None, matches: IdentityKey | None, lo: int,
              hi: int | None, limits: Limits) -> Automaton:
    """The literal automaton of the values in `content` and `matches` with lo to hi code
    points, computed once per (value languages, bounds)."""
    operands = [ANY_STRING] + [k.node for k in (content, matches) if k is not None]
    values = (as_dfa(ANY_STRING, limits) if len(operands) == 1 else
              intersect(*operands, limits=limits, label="string value").dfa)
    if (lo, hi) != (0, None) and not values.is_empty_language:
        values = counted(values, lo, hi, limits)
    if values.is_empty_language:
        raise GrammarError("no string satisfies the length bounds, format and pattern together",
                           code="empty-language")
    return Automaton(json_string_automaton(values, limits), label="JSON string")
