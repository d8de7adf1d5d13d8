"""JSON string literals minus every spelling of a finite set of names, in one Numba pass.

An open object's additional keys are the key literals of a region's names (any string, or the
strings of some patterns) whose value is none of the listed names. `without_names(literals,
names)` builds that automaton directly from the region's minimal literal DFA K and the names,
without determinizing the names' spellings and taking a product (`language_ops.difference`
computes the same language that way, and the tests compare the two):

- The names form a trie over code points; each trie node u (the value so far is u's path) is a
  boundary state B(u), and the spellings of each child character c (raw UTF-8, short escape,
  `\\uXXXX` in either case, surrogate pair; `literals.character`) form a byte trie from B(u) to
  B(child), whose hex positions lead to one state for both cases of a digit.
- Every state q of that construction remembers K's state a(q) after the same bytes (well
  defined: in a minimal literal DFA, all spellings of one value prefix reach one state). A byte
  that continues no child spelling leads to K's own successor δ(a(q), byte): the value has left
  the trie, so it is no listed name, and K alone decides the rest. K's states are copied once
  for that.
- The closing quote at B(u) is refused when u is a listed name, else it is K's move.

So a literal is accepted iff K accepts it and its value is not a listed name. The result is
minimized; past `Limits.max_dfa_states` states before that, it is `BudgetExceeded`.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
from numba.types import boolean, int32, int64

from ....runtime.dfa.table import DFATable
from ....runtime.jit import A, R, kernel
from ...automata.language_ops import interned
from ...automata.minimize import minimize_table
from ...support.caches import memo
from ...support.limits import Limits

_QUOTE = 0x22
_SURROGATE = re.compile("[\ud800-\udfff]")
_SHORT = np.full(0x80, -1, dtype=np.int64)
for _cp, _letter in ((0x22, '"'), (0x5C, "\\"), (0x2F, "/"), (0x08, "b"), (0x0C, "f"),
                     (0x0A, "n"), (0x0D, "r"), (0x09, "t")):
    _SHORT[_cp] = ord(_letter)
_ESCAPE_BYTES = np.frombuffer(b'\\u"/bfnrt0123456789abcdefABCDEF', dtype=np.uint8)
"""Bytes of escapes: each is a column of its own, as are the bytes of the names."""


@kernel(int64, int64, R(int64), A(int64), A(boolean), tiered=True)
def _spelling(c, form, short, sym, hexp):  # type: ignore[no-untyped-def]
    """Write spelling `form` (0 raw, 1 short escape, 2 `\\u`) of code point c into sym/hexp
    (hexp: a hex digit position, sym its value); return its length, 0 if c has no such form."""
    if form == 0:
        if c < 0x20 or c == 0x22 or c == 0x5C:
            return 0
        if c < 0x80:
            sym[0] = c
            n = 1
        elif c < 0x800:
            sym[0], sym[1] = 0xC0 | (c >> 6), 0x80 | (c & 0x3F)
            n = 2
        elif c < 0x10000:
            sym[0], sym[1], sym[2] = 0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)
            n = 3
        else:
            sym[0], sym[1] = 0xF0 | (c >> 18), 0x80 | ((c >> 12) & 0x3F)
            sym[2], sym[3] = 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)
            n = 4
        for i in range(n):
            hexp[i] = False
        return n
    if form == 1:
        if c >= 0x80 or short[c] < 0:
            return 0
        sym[0], sym[1] = 0x5C, short[c]
        hexp[0] = hexp[1] = False
        return 2
    units = 1 if c < 0x10000 else 2
    for u in range(units):
        v = c if units == 1 else (0xD800 | ((c - 0x10000) >> 10) if u == 0
                                  else 0xDC00 | ((c - 0x10000) & 0x3FF))
        base = 6 * u
        sym[base], sym[base + 1] = 0x5C, 0x75
        hexp[base] = hexp[base + 1] = False
        for i in range(4):
            sym[base + 2 + i] = (v >> (12 - 4 * i)) & 15
            hexp[base + 2 + i] = True
    return 6 * units


@kernel(int64, boolean, boolean, tiered=True)
def _byte(symbol, is_hex, upper):  # type: ignore[no-untyped-def]
    """The byte of a spelling symbol: itself, or the hex digit `symbol` in lower or upper case."""
    if not is_hex:
        return symbol
    if symbol < 10:
        return 0x30 + symbol
    return (0x41 if upper else 0x61) + symbol - 10


@kernel(A(int32, 2), A(int64), int64, int64, R(int32, 2), R(int64), tiered=True)
def _state(out, of_k, m, a, k_table, k_column):  # type: ignore[no-untyped-def]
    """Grow the tables if full and add state m whose other bytes follow K from state a."""
    if m == out.shape[0]:
        grown = np.empty((2 * m, out.shape[1]), dtype=np.int32)
        grown[:m] = out
        out = grown
        grown_k = np.empty(2 * m, dtype=np.int64)
        grown_k[:m] = of_k
        of_k = grown_k
    for c in range(out.shape[1]):
        out[m, c] = k_table[a, k_column[c]]
    of_k[m] = a
    return out, of_k


@kernel(R(int32, 2), R(int32), int64, R(int32), R(int64), R(int32), R(int64), R(int64), int64,
        tiered=True)
def _without_names(k_table, k_class, k_start, column, k_column, cps, offsets, short,  # type: ignore[no-untyped-def]
                   max_states):
    """(table int32[m, columns], number of K's copied states, start) of the construction in
    the module docstring, over `column` (a byte partition refining K's, `k_column` K's class of
    each column); start -1 past `max_states`. K's states keep their numbers."""
    n_k = k_table.shape[0]
    cap = n_k + 2 + 4 * len(cps)
    out = np.empty((cap, len(k_column)), dtype=np.int32)
    of_k = np.full(cap, -1, dtype=np.int64)
    for s in range(n_k):
        for c in range(len(k_column)):
            out[s, c] = k_table[s, k_column[c]]
    start = n_k
    out[start, :] = -1
    a0 = k_table[k_start, k_class[_QUOTE]]
    if a0 < 0:
        return out[:start + 1], n_k, start
    m = n_k + 1
    root = m
    out, of_k = _state(out, of_k, m, a0, k_table, k_column)
    m += 1
    out[start, column[_QUOTE]] = root
    children = dict()
    children[np.int64(-1)] = np.int64(-1)
    is_name = np.zeros(len(offsets), dtype=np.int64)
    n_names = 0
    sym = np.empty(12, dtype=np.int64)
    hexp = np.empty(12, dtype=np.bool_)
    for w in range(len(offsets) - 1):
        cur = root
        alive = True
        for i in range(offsets[w], offsets[w + 1]):
            c = np.int64(cps[i])
            key = np.int64(cur) * 0x110000 + c
            nxt = children[key] if key in children else np.int64(-1)
            if nxt < 0:
                n = _spelling(c, 0 if c >= 0x20 and c != 0x22 and c != 0x5C else 2, short,
                              sym, hexp)
                a = of_k[cur]
                for j in range(n):
                    a = k_table[a, k_class[_byte(sym[j], hexp[j], False)]]
                    if a < 0:
                        break
                if a < 0:
                    alive = False
                    break
                nxt = m
                out, of_k = _state(out, of_k, m, a, k_table, k_column)
                m += 1
                children[key] = nxt
                for form in range(3):
                    n = _spelling(c, form, short, sym, hexp)
                    q = cur
                    for j in range(n):
                        lo = _byte(sym[j], hexp[j], False)
                        hi = _byte(sym[j], hexp[j], True)
                        if j == n - 1:
                            out[q, column[lo]] = out[q, column[hi]] = nxt
                            break
                        t = out[q, column[lo]]
                        if t <= start:
                            t_k = k_table[of_k[q], k_class[lo]]
                            if t_k < 0:
                                break
                            t = m
                            out, of_k = _state(out, of_k, m, t_k, k_table, k_column)
                            m += 1
                            out[q, column[lo]] = out[q, column[hi]] = t
                        q = t
                if m > max_states:
                    return out[:0], n_k, -1
            cur = nxt
        if alive:
            is_name[n_names] = cur
            n_names += 1
    for i in range(n_names):
        out[is_name[i], column[_QUOTE]] = -1
    return out[:m], n_k, start


def without_names(literals: DFATable, names: Iterable[str], limits: Limits) -> DFATable:
    """The literals `literals` accepts (a minimal DFA of JSON string literals, quotes
    included) whose decoded value is none of `names` (a name with a lone surrogate is no
    literal's value); one interned DFA per (literals, names), so a schema compiled again finds
    its rule automata cached."""
    return _without(literals, tuple(n for n in dict.fromkeys(names) if not _SURROGATE.search(n)),
                    limits)


@memo(maxsize=256)
def _without(literals: DFATable, unique: tuple[str, ...], limits: Limits) -> DFATable:
    words = [[ord(ch) for ch in name] for name in unique]
    cps = np.array([c for w in words for c in w], dtype=np.int32)
    offsets = np.cumsum([0] + [len(w) for w in words]).astype(np.int64)
    own = np.zeros(256, dtype=bool)
    own[_ESCAPE_BYTES] = True
    own[np.frombuffer("".join(unique).encode("utf-8"), dtype=np.uint8)] = True
    keys = literals.byte_class.astype(np.int64) * 257 + np.where(own, np.arange(256), 256)
    _, first, column = np.unique(keys, return_index=True, return_inverse=True)
    column = column.reshape(256).astype(np.int32)
    table, n_k, start = _without_names(literals.transitions, literals.byte_class,
                                       literals.start, column,
                                       literals.byte_class[first].astype(np.int64), cps,
                                       offsets, _SHORT, limits.max_dfa_states)
    if start < 0:
        raise limits.exceeded("max_dfa_states", f"more than {limits.max_dfa_states}",
                              "states of the literals without the listed names")
    accepting = np.zeros(len(table), dtype=bool)
    accepting[:n_k] = literals.accepting
    return interned(minimize_table(column, table, accepting, start))
