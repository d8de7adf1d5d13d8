"""Hypothesis strategies for regex pattern text that both grammask and Python's `regex` accept."""
from __future__ import annotations

from hypothesis import strategies as st

ATOMS = [
    "a", "b", "c", "1", "2", " ", "中", "é", "😀", r"\{", '"', r"\.", r"\n",
    "[ab]", "[^a]", "[a-c]", r"\d", r"\w", r"\s", r"\D", ".", "[中é]", r"[^\x00-\x7f]",
    r"[\u4e00-\u4e0f]", r"\x41",
]
QUANTIFIERS = ["", "", "", "*", "+", "?", "{2}", "{1,3}", "{0,2}", "{2,}", "*?", "+?"]


def patterns(max_leaves: int = 8) -> st.SearchStrategy[str]:
    """Random patterns over literals, classes, groups, alternation and quantifiers."""

    def extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.lists(children, min_size=2, max_size=3).map("".join),
            st.lists(children, min_size=2, max_size=3).map(lambda xs: "(?:" + "|".join(xs) + ")"),
            st.tuples(children, st.sampled_from(QUANTIFIERS[3:])).map(
                lambda t: "(?:" + t[0] + ")" + t[1]
            ),
        )

    leaves = st.tuples(st.sampled_from(ATOMS), st.sampled_from(QUANTIFIERS)).map("".join)
    return st.recursive(leaves, extend, max_leaves=max_leaves)
