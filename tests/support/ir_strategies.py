"""Hypothesis strategies for random IR expressions over a small alphabet."""
from __future__ import annotations

from hypothesis import strategies as st

from grammask.compiler.ir.nodes import CharClass, Choice, Literal, Node, Repeat, Seq

ALPHABET = b"abc"


def literals() -> st.SearchStrategy[Node]:
    return st.binary(min_size=1, max_size=3).map(
        lambda b: Literal(bytes(ALPHABET[x % len(ALPHABET)] for x in b))
    )


def classes() -> st.SearchStrategy[Node]:
    return st.sets(st.sampled_from(list(ALPHABET)), min_size=0, max_size=3).map(
        lambda s: CharClass.of((c, c) for c in s)
    )


def ir_trees(max_leaves: int = 12) -> st.SearchStrategy[Node]:
    """Random expressions over ALPHABET: literals, classes, sequences, choices, repetitions."""

    def extend(children: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
        bounds = st.tuples(st.integers(0, 3), st.one_of(st.none(), st.integers(0, 3))).map(
            lambda t: (t[0], None if t[1] is None else t[0] + t[1])
        )
        return st.one_of(
            st.lists(children, min_size=0, max_size=3).map(lambda xs: Seq(tuple(xs))),
            st.lists(children, min_size=1, max_size=3).map(lambda xs: Choice(tuple(xs))),
            st.tuples(children, bounds).map(lambda t: Repeat(t[0], t[1][0], t[1][1])),
        )

    return st.recursive(st.one_of(literals(), classes()), extend, max_leaves=max_leaves)
