"""The JSON spellings of a language of string values: `json_string_automaton(values)`.

`values` is a DFA over the UTF-8 text of decoded string values; the result is the DFA of the
complete JSON string literals, quotes included, that spell a value `values` accepts.
Invariant: a literal is accepted iff it decodes (RFC 8259) to a value `values` accepts and
each of its characters is written in a spelling the encoder emits:

- `escape_raw=True` (every spelling): a character c may be written raw, as its UTF-8 bytes,
  unless c is '"', '\\' or a control character U+0000-U+001F; as a short escape
  `\\" \\\\ \\/ \\b \\f \\n \\r \\t` for those eight characters; as `\\uXXXX` (hex digits in
  either case) when c is in the BMP, or as a surrogate pair `\\uD8xx\\uDCxx` (high D800-DBFF
  then low DC00-DFFF, either case) when c is above U+FFFF. Lone surrogate escapes are never
  accepted.
- `escape_raw=False` (the `string-escapes` relaxation, `relaxations.py`): every character JSON
  allows raw is written raw; '"', '\\' and the controls that have one are written as their
  short escape (`\\" \\\\ \\b \\f \\n \\r \\t`), the other controls as `\\u00XX` (hex digits in
  either case). One spelling per character but for the hex case, so no state needs the hex
  digit trees of every character, which multiply the states of a counted value language by
  five to eight.

Construction: the minimal value DFA D is mapped to the literal language. Each state s of D
reached at a character boundary keeps its raw UTF-8 edges except the bytes of '"', '\\' and the
controls, and gains escape paths to δ*(s, utf8(c)) for every c it may escape. The characters
leading from s to each target are computed as code-point ranges from D's UTF-8 byte layers (per
lead byte, the continuation-byte maps shared between states), and `\\u` escapes go through
digit-range automata over the 16-bit value, shared between equal value maps. The result is a
minimal `DFATable`; past `Limits.max_dfa_states` states before minimization it is
`BudgetExceeded`.
"""
from __future__ import annotations

from bisect import bisect_right

import numpy as np

from ....runtime.dfa.table import DFATable
from ...automata.dfa import trim
from ...automata.minimize import minimize
from ...support.limits import DEFAULT_LIMITS, Limits

__all__ = ["json_string_automaton"]

CodePointMap = list[tuple[int, int, int]]
"""Sorted, disjoint (lo, hi, target) code-point ranges."""

_SHORT_ESCAPES = {ord('"'): 0x22, ord("\\"): 0x5C, ord("/"): 0x2F, ord("b"): 0x08,
                  ord("f"): 0x0C, ord("n"): 0x0A, ord("r"): 0x0D, ord("t"): 0x09}
_NEEDED_SHORT = {k: v for k, v in _SHORT_ESCAPES.items() if k != ord("/")}
"""The short escapes of the `string-escapes` domain: those of the characters JSON never
allows raw."""
_NEEDED = np.array(sorted(set(range(0x20)) | {0x22, 0x5C}))
"""The characters JSON never allows raw: '"', '\\' and the controls."""
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
    """Builds the literal automaton of one value DFA (see the module docstring); `escape_raw`:
    whether a character JSON allows raw may also be escaped."""

    def __init__(self, values: DFATable, limits: Limits, escape_raw: bool = True,
                 quoted: bool = True) -> None:
        self.values = values
        self.quoted = quoted
        self.limits = limits
        self.escape_raw = escape_raw
        self.letters = _SHORT_ESCAPES if escape_raw else _NEEDED_SHORT
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
            raise self.limits.exceeded("max_dfa_states", f"more than {n}", "JSON string "
                                       "automaton states" + ("" if self.escape_raw else
                                                             " (raw spellings)"))
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
            for letter, cp in self.letters.items():
                i = bisect_right(starts, cp) - 1
                if i >= 0 and cps[i][1] >= cp:
                    row[letter] = cps[i][2]
            if not self.escape_raw:
                short = set(self.letters.values())
                hex_map: CodePointMap = []
                for cp, t in ((cp, t) for lo, hi, t in cps for cp in range(lo, hi + 1)):
                    if cp not in short:
                        _add(hex_map, cp, cp, t)
                cps = hex_map
            bmp = [(lo, min(hi, 0xFFFF), t) for lo, hi, t in cps if lo <= 0xFFFF]
            astral = [(max(lo, 0x10000), hi, t) for lo, hi, t in cps if hi >= 0x10000]
            digits = self.hex_node(4, tuple(sorted(bmp + self.high_surrogates(astral))))
            if digits >= 0:
                row[ord("u")] = digits
            self.escapes[key] = self.state(row)
        return self.escapes[key]

    def all_escapes(self) -> dict[int, int]:
        """Every spelling: the state after `\\` from each boundary state of the value DFA."""
        values = self.values
        boundary = {values.start: self.code_points(values.start)}
        order = [values.start]
        for s in order:
            for _, _, t in boundary[s]:
                if t not in boundary:
                    boundary[t] = self.code_points(t)
                    order.append(t)
        return {s: self.escape([(lo, hi, t + 2) for lo, hi, t in cps])
                for s, cps in boundary.items()}

    def needed_escapes(self) -> dict[int, int]:
        """Raw spellings: the state after `\\` from each state of the value DFA with a move
        on a character JSON never allows raw (only boundary states have one)."""
        targets = self.values.transitions[:, self.values.byte_class[_NEEDED]]
        rows, inverse = np.unique(targets, axis=0, return_inverse=True)
        after: list[int] = []
        for row in rows.tolist():
            cps: CodePointMap = []
            for cp, t in zip(_NEEDED.tolist(), row):
                if t >= 0:
                    _add(cps, cp, cp, t + 2)
            after.append(self.escape(cps) if cps else -1)
        return {s: after[i] for s, i in enumerate(inverse.reshape(-1).tolist())
                if after[i] >= 0}

    def build(self) -> DFATable:
        """The minimal literal DFA: state 0 awaits the opening quote, 1 is after the closing
        one, 2 + q is the value DFA's state q (unquoted: 2 + q starts and accepts as q)."""
        values = self.values
        escapes = self.all_escapes() if self.escape_raw else self.needed_escapes()
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
        inner = slice(2, self.first_new)
        table[inner, column[:0x20]] = -1
        table[inner, column[ord("\\")]] = -1
        table[inner, column[ord('"')]] = np.where(values.accepting, 1, -1)
        for s, esc in escapes.items():
            table[s + 2, column[ord("\\")]] = esc
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
        if not self.quoted:
            table[inner, column[ord('"')]] = -1
            accepting[inner] = values.accepting
            return minimize(trim(column.astype(np.int32), table, accepting, values.start + 2))
        accepting[1] = True
        return minimize(trim(column.astype(np.int32), table, accepting, 0))


def json_string_automaton(values: DFATable, limits: Limits = DEFAULT_LIMITS, *,
                          escape_raw: bool = True, quoted: bool = True) -> DFATable:
    """The DFA of the JSON string literals whose decoded value `values` accepts, every
    spelling (`escape_raw`) or raw spellings only (the `string-escapes` domain; see the module
    docstring); `quoted=False`: their insides, without the quotes (a piece of a literal whose
    other pieces a grammar gives). `values` must accept only UTF-8 text (as every DFA of IR
    built from code points does)."""
    return _Encoder(values, limits, escape_raw, quoted).build()
