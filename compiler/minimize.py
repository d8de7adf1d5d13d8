"""Partition refinement: the minimal DFA of a trimmed DFA.

Moore's refinement, vectorized: states start split by acceptance, and each round splits every
block by the blocks its transitions lead to (one lexicographic sort of the (n, k + 1) signature matrix),
until a round splits nothing. Rounds are at most the length of the longest shortest string
that tells two states apart, so chains of counted repetition are the slow case, still at numpy
speed. The partial DFA is completed with an explicit dead state before refinement, then the
dead state's block is dropped again, so the result is the unique minimal trimmed DFA (up to the
breadth-first numbering that `trim` fixes): two DFAs accept the same language iff their
minimal tables are equal.
"""
from __future__ import annotations

import numpy as np

from ..runtime.dfa_table import DFATable
from .dfa import trim


def minimize(dfa: DFATable, compact: bool = True) -> DFATable:
    """The minimal DFA accepting the same language as `dfa` (byte classes merged when
    `compact`; rule automata with call columns keep their columns)."""
    if dfa.is_empty_language:
        return dfa
    n, k = dfa.n_states, dfa.n_classes
    dead = n
    total = np.vstack([np.where(dfa.transitions >= 0, dfa.transitions, dead),
                       np.full((1, k), dead)]).astype(np.int64)
    block = np.append(dfa.accepting, False).astype(np.int64)
    n_blocks = len(np.unique(block))
    while True:
        signature = np.column_stack([block, block[total]])
        order = np.lexsort(signature.T)
        ordered = signature[order]
        starts = np.concatenate([[0], np.cumsum((ordered[1:] != ordered[:-1]).any(axis=1))])
        block = np.empty(n + 1, dtype=np.int64)
        block[order] = starts
        count = int(starts[-1]) + 1
        if count == n_blocks:
            break
        n_blocks = count
    reps = np.zeros(n_blocks, dtype=np.int64)
    reps[block[::-1]] = np.arange(n, -1, -1)
    quotient = block[total[reps]]
    dead_block = block[dead]
    quotient = np.where(quotient == dead_block, -1, quotient).astype(np.int32)
    quotient[dead_block, :] = -1
    acc = np.append(dfa.accepting, False)[reps]
    return trim(dfa.byte_class, quotient, acc, int(block[dfa.start]), compact=compact)
