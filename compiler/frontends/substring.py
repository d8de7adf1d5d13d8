"""Substrings of a text cut into chunks: llguidance's `%regex {"substring_chunks": ...}` (and
its `substring_words` / `substring_chars`), XGrammar's `Substring("...", ...)`.

The language of chunks c0 … c(k-1) is { c(n) … c(m-1) : 0 ≤ n ≤ m ≤ k }: every run of whole
consecutive chunks, the empty one included. As IR, P(n) = "" | c(n) P(n+1) is the runs that
start at chunk n, each P(n+1) one shared object, and the language is the choice of all P(n); the
NFA builds a shared object once (`automata/nfa.py`), so its size is linear in the text, and its
subset construction is the text's suffix automaton, linear too.
"""
from __future__ import annotations

from ..ir.nodes import EMPTY, Choice, Literal, Node, Seq
from ..support.limits import Limits

__all__ = ["chunk_words", "substring"]


def _kind(c: str) -> int:
    return 0 if c.isspace() else 1 if c.isalnum() or c == "_" else 2


def chunk_words(text: str) -> list[str]:
    """`text` cut into runs of whitespace, of word characters (letters, digits, `_`) and of
    other characters (llguidance's `substring_words`)."""
    chunks: list[str] = []
    for c in text:
        if chunks and _kind(chunks[-1][-1]) == _kind(c):
            chunks[-1] += c
        else:
            chunks.append(c)
    return chunks


def substring(chunks: list[str], limits: Limits) -> Node:
    """Every run of whole consecutive chunks (module docstring)."""
    if sum(len(c) for c in chunks) > limits.max_pattern_length:
        raise limits.exceeded("max_pattern_length", sum(len(c) for c in chunks),
                              "substring text")
    runs: Node = EMPTY
    starts: list[Node] = [EMPTY]
    for chunk in reversed([c for c in chunks if c]):
        runs = Choice((EMPTY, Seq((Literal(chunk.encode("utf-8")), runs))))
        starts.append(runs)
    return Choice(tuple(starts)) if len(starts) > 1 else EMPTY
