"""Exact language equivalence of automata by product construction, with a shortest witness.

Both sides are explored in lockstep over the joint byte partition; the first reachable pair on
which acceptance differs gives a shortest byte string that one accepts and the other does not.
Used to verify determinization and minimization, and to compare grammars.
"""
from __future__ import annotations

from collections import deque
from typing import Callable, Hashable

import numpy as np

from grammask.runtime.dfa.table import DFATable
from grammask.compiler.automata.dfa import byte_classes
from grammask.compiler.automata.nfa import NFA


def _joint_representatives(*partitions: np.ndarray) -> list[int]:
    """One byte per class of the common refinement of the given byte partitions."""
    keys = np.stack(partitions, axis=1)
    _, first = np.unique(keys, axis=0, return_index=True)
    return sorted(int(b) for b in first)


def _explore(
    start: tuple[Hashable, Hashable],
    step: Callable[[Hashable, Hashable, int], tuple[Hashable, Hashable]],
    accepts: Callable[[Hashable, Hashable], tuple[bool, bool]],
    dead: Callable[[Hashable, Hashable], bool],
    reps: list[int],
) -> bytes | None:
    parent: dict[tuple[Hashable, Hashable], tuple[tuple[Hashable, Hashable], int] | None] = {
        start: None
    }
    queue = deque([start])
    while queue:
        pair = queue.popleft()
        a, b = accepts(*pair)
        if a != b:
            path = []
            node = pair
            while parent[node] is not None:
                prev, byte = parent[node]  # type: ignore[misc]
                path.append(byte)
                node = prev
            return bytes(reversed(path))
        if dead(*pair):
            continue
        for byte in reps:
            nxt = step(pair[0], pair[1], byte)
            if nxt not in parent:
                parent[nxt] = (pair, byte)
                queue.append(nxt)
    return None


def nfa_dfa_difference(nfa: NFA, dfa: DFATable) -> bytes | None:
    """A shortest byte string accepted by exactly one of `nfa` and `dfa`, or None if equal."""
    reps = _joint_representatives(byte_classes(nfa), dfa.byte_class)

    def step(states: Hashable, d: Hashable, byte: int) -> tuple[Hashable, Hashable]:
        moved = {t for s in states for lo, hi, t in nfa.edges[s] if lo <= byte <= hi}  # type: ignore[attr-defined]
        nd = dfa.step(d, byte) if d >= 0 else -1  # type: ignore[operator]
        return nfa.epsilon_closure(moved), nd

    return _explore(
        (nfa.epsilon_closure({nfa.start}), dfa.start),
        step,
        lambda s, d: (nfa.accept in s, d >= 0 and bool(dfa.accepting[d])),  # type: ignore[operator]
        lambda s, d: not s and d < 0,  # type: ignore[operator]
        reps,
    )


def dfa_difference(x: DFATable, y: DFATable) -> bytes | None:
    """A shortest byte string accepted by exactly one of two DFAs, or None if equal."""
    reps = _joint_representatives(x.byte_class, y.byte_class)

    def step(a: Hashable, b: Hashable, byte: int) -> tuple[Hashable, Hashable]:
        return (x.step(a, byte) if a >= 0 else -1,  # type: ignore[operator]
                y.step(b, byte) if b >= 0 else -1)  # type: ignore[operator]

    return _explore(
        (x.start, y.start),
        step,
        lambda a, b: (a >= 0 and bool(x.accepting[a]), b >= 0 and bool(y.accepting[b])),  # type: ignore[operator]
        lambda a, b: a < 0 and b < 0,  # type: ignore[operator]
        reps,
    )
