"""ECMA-262 lookahead and lookbehind in a `pattern`, compiled exactly with marker bytes.

Regular languages are closed under the boolean operations, so a lookaround is regular: the
pattern's search language is built with a marker byte where each lookaround stands (`0xF5 + k`
for the k-th, never part of UTF-8, like the `^`/`$` markers 0xFE/0xFF of `ecma_regex.py`), then
intersected with one constraint per lookaround, then every marker is erased:

- `(?=X)` at a marker m: what follows m (markers aside) starts with a match of X, so no string
  has m followed by a rest outside E(X Σ*); `(?!X)`: none has m followed by a rest inside it.
- `(?<=X)`, `(?<!X)`: the same with what precedes m and E(Σ* X).

E(L) is L with markers allowed anywhere (`with_markers`: a self-loop on every marker byte), so
the other lookarounds and anchors do not disturb the check. A `$` closing an alternative of a
lookahead drops its Σ* (it must reach the end of the string), a `^` opening an alternative of a
lookbehind drops its Σ*; other anchors and lookarounds inside a lookaround are unsupported (the
parser says so), and so are more than `MAX_LOOKAROUNDS` in one pattern.

Invariant: a string is in the result iff some marked string in the search language, all of
whose markers satisfy their constraints, erases to it, which is ECMA-262's reading of a
successful match (lookarounds are atomic and capture nothing the pattern could refer to, since
backreferences are unsupported).
"""
from __future__ import annotations

import numpy as np

from ....runtime.dfa.table import DFATable
from ...automata.build import minimal_dfa
from ...automata.language_ops import as_dfa, difference
from ...automata.nfa import NFA
from ...ir.nodes import Automaton, Choice, Literal, Node, Repeat
from ...ir.normalize import alternation, concat
from ...support.limits import Limits

__all__ = ["FIRST_MARKER", "MAX_LOOKAROUNDS", "constraint", "erase_markers", "marker",
           "with_markers"]

FIRST_MARKER = 0xF5
"""The first marker byte: lookaround k is `FIRST_MARKER + k`, `^` is 0xFE and `$` 0xFF."""
MAX_LOOKAROUNDS = 0xFE - FIRST_MARKER
"""Lookarounds one pattern may hold (one marker byte each)."""


def marker(k: int) -> Literal:
    """The marker byte of the k-th lookaround."""
    return Literal(bytes([FIRST_MARKER + k]))


def _any_marked(any_char: Node) -> Node:
    """Any string of scalar values and markers."""
    return Repeat(Choice((any_char, *(Literal(bytes([b])) for b in range(FIRST_MARKER, 0x100)))),
                  0, None)


def with_markers(dfa: DFATable, first: int = FIRST_MARKER, last: int = 0xFF) -> DFATable:
    """`dfa` with every marker byte first..last allowed anywhere (a self-loop at each state)."""
    if dfa.is_empty_language:
        return dfa
    byte_class = dfa.byte_class.copy()
    column = dfa.transitions.shape[1]
    byte_class[first:last + 1] = column
    loops = np.arange(dfa.n_states, dtype=np.int32)[:, None]
    return DFATable(byte_class, np.hstack((dfa.transitions, loops)), dfa.accepting, dfa.start)


def constraint(k: int, opener: str, branches: list[tuple[bool, Node, bool]], any_char: Node,
               limits: Limits) -> Automaton:
    """The strings (markers included) in which every marker of lookaround k, `opener` with
    the alternatives `branches` (anchored at start, body, anchored at end), holds."""
    any_string = Repeat(any_char, 0, None)
    ahead = opener in ("(?=", "(?!")
    matched = alternation([concat(([] if ahead or start else [any_string]) + [body]
                                  + ([] if not ahead or end else [any_string]))
                           for start, body, end in branches], None)
    inside = Automaton(with_markers(as_dfa(matched, limits)), "lookaround")
    anything = _any_marked(any_char)
    broken = inside if opener in ("(?!", "(?<!") else difference(anything, inside, limits=limits)
    bad = concat([anything, marker(k), broken] if ahead else [broken, marker(k), anything])
    return difference(anything, bad, limits=limits)


def erase_markers(dfa: DFATable, limits: Limits) -> DFATable:
    """The minimal DFA of `dfa`'s language with every marker byte (0xF5-0xFF) deleted."""
    bc = dfa.byte_class[:FIRST_MARKER]
    lo = np.flatnonzero(np.concatenate(([True], bc[1:] != bc[:-1])))
    hi = np.append(lo[1:], FIRST_MARKER) - 1
    n = dfa.n_states
    moves = dfa.transitions[:, bc[lo]]
    q, r = np.nonzero(moves >= 0)
    markers = dfa.transitions[:, dfa.byte_class[FIRST_MARKER:]]
    p, m = np.nonzero(markers >= 0)
    done = np.flatnonzero(dfa.accepting)
    nfa = NFA.from_arrays(n + 1, q, lo[r], hi[r], moves[q, r],
                          np.concatenate((p, done)),
                          np.concatenate((markers[p, m], [n] * len(done))), dfa.start, n)
    return minimal_dfa(nfa, limits)
