"""Hopcroft's partition refinement: the minimal DFA of a trimmed DFA.

The partial DFA is completed with an explicit dead state before refinement, then the dead
state's block is dropped again, so the result is the unique minimal trimmed DFA (up to the
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
    accepting = np.append(dfa.accepting, False)

    preds: list[list[list[int]]] = []
    for c in range(k):
        col = total[:, c]
        order = np.argsort(col, kind="stable")
        bounds = np.searchsorted(col[order], np.arange(n + 2)).tolist()
        order_list = order.tolist()
        preds.append([order_list[bounds[q]:bounds[q + 1]] for q in range(n + 1)])

    acc_states = [int(s) for s in np.flatnonzero(accepting)]
    rej_states = [int(s) for s in np.flatnonzero(~accepting)]
    blocks: list[list[int]] = [b for b in (acc_states, rej_states) if b]
    block_of = [0] * (n + 1)
    for b, members in enumerate(blocks):
        for s in members:
            block_of[s] = b
    in_work = [True] * len(blocks)
    work = list(range(len(blocks)))

    while work:
        a = work.pop()
        in_work[a] = False
        splitter = list(blocks[a])
        for c in range(k):
            pc = preds[c]
            touched: dict[int, list[int]] = {}
            for q in splitter:
                for p in pc[q]:
                    touched.setdefault(block_of[p], []).append(p)
            for b, marked in touched.items():
                if len(marked) == len(blocks[b]):
                    continue
                marked_set = set(marked)
                rest = [s for s in blocks[b] if s not in marked_set]
                new = len(blocks)
                blocks[b] = marked
                blocks.append(rest)
                in_work.append(False)
                for s in rest:
                    block_of[s] = new
                if in_work[b]:
                    work.append(new)
                    in_work[new] = True
                else:
                    smaller = b if len(marked) <= len(rest) else new
                    work.append(smaller)
                    in_work[smaller] = True

    n_blocks = len(blocks)
    reps = [members[0] for members in blocks]
    quotient = np.array([[block_of[int(t)] for t in total[r]] for r in reps], dtype=np.int32)
    dead_block = block_of[dead]
    quotient[quotient == dead_block] = n_blocks
    quotient = np.where(quotient == n_blocks, -1, quotient).astype(np.int32)
    acc = np.array([bool(accepting[r]) for r in reps], dtype=bool)
    quotient[dead_block, :] = -1
    return trim(dfa.byte_class, quotient, acc, block_of[dfa.start], compact=compact)
