"""IR → minimal DFA: the one way an expression becomes a `DFATable`.

Thompson's NFA (`nfa.py`) for an IR expression, determinized over its byte classes
(`dfa.py`), the subset table within `Limits.max_table_bytes`, then Hopcroft minimization
(`minimize.py`), which also trims: every state of the result reaches acceptance. A compiled
grammar's DFA may instead count bounded repetitions of one-byte classes (`counted.py`); then
it is trimmed but not always minimal. Every step checks the compile deadline.
"""
from __future__ import annotations

from collections.abc import Mapping

from ...runtime.dfa.table import DFATable
from ..ir.nodes import Node
from ..support import deadline
from ..support.deadline import compile_deadline
from ..support.limits import DEFAULT_LIMITS, Limits
from .counted import counted_or_nfa
from .dfa import byte_classes, subset_table
from .flat_ir import NO_INLINE, flatten
from .minimize import minimize_table
from .nfa import NFA, build_nfa


def ir_to_dfa(node: Node, limits: Limits = DEFAULT_LIMITS,
              inline: Mapping[str, Node] = NO_INLINE) -> DFATable:
    """The minimal trimmed DFA of an IR expression (its references standing for the bodies
    `inline` gives them, `lowering.regular.inline_regular`)."""
    with compile_deadline(limits):
        return minimal_dfa(build_nfa(node, limits, inline=inline), limits)


def grammar_dfa(node: Node, limits: Limits = DEFAULT_LIMITS,
                inline: Mapping[str, Node] = NO_INLINE) -> DFATable:
    """The trimmed DFA of an IR expression for a compiled grammar: bounded repetitions of
    one-byte classes counted where their counts can be told apart (`counted.py`; then not
    always minimal), else `ir_to_dfa`'s minimal DFA."""
    with compile_deadline(limits):
        built = counted_or_nfa(flatten(node, limits, {}, inline), limits)
        if isinstance(built, NFA):
            return minimal_dfa(built, limits)
        check_table_bytes(built.transitions.nbytes, limits, "DFA transition table")
        return built.dfa()


def minimal_dfa(nfa: NFA, limits: Limits = DEFAULT_LIMITS) -> DFATable:
    """The minimal trimmed DFA of `nfa`, its subset table within `max_table_bytes`."""
    deadline.check()
    classes = byte_classes(nfa)
    transitions, accepting = subset_table(nfa, classes, 0, limits)
    check_table_bytes(transitions.nbytes, limits, "DFA transition table")
    deadline.check()
    # Hopcroft's blocks trim as they minimize: no trimmed table in between.
    return minimize_table(classes, transitions, accepting, 0)


def check_table_bytes(nbytes: int, limits: Limits, what: str) -> None:
    """`BudgetExceeded` for `max_table_bytes` when a table of `nbytes` is over it."""
    if nbytes > limits.max_table_bytes:
        raise limits.exceeded("max_table_bytes", nbytes, f"{what} in bytes")
