"""Properties of the regex frontend: redundant groups change nothing, and parsed patterns
fullmatch what Python's `re` does; arbitrary text parses or raises GrammarError."""
from __future__ import annotations

import re
import warnings

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grammask.compiler.support.errors import GrammarError
from grammask.compiler.ir.nodes import CharClass, Choice, Literal, Node, Repeat, Seq
from grammask.compiler.frontends.regex import parse_regex

from ..support.budget import examples
from ..support.regex_ir import member


# ---------------------------------------------------------------------------- properties

def _ends(node: Node, s: str, starts: set[int]) -> set[int]:
    """Positions in `s` where `node` can finish, having started at one of `starts`."""
    if not starts:
        return set()
    if isinstance(node, Literal):
        t = node.data.decode("utf-8")
        return {i + len(t) for i in starts if s.startswith(t, i)}
    if isinstance(node, CharClass):
        return {i + 1 for i in starts if i < len(s) and member(node, ord(s[i]))}
    if isinstance(node, Seq):
        for item in node.items:
            starts = _ends(item, s, starts)
        return starts
    if isinstance(node, Choice):
        return set().union(*(_ends(a, s, starts) for a in node.alternatives))
    assert isinstance(node, Repeat)
    current = set(starts)
    for _ in range(node.min):
        current = _ends(node.item, s, current)
    seen, frontier, count = set(current), current, node.min
    while frontier and (node.max is None or count < node.max):
        frontier = _ends(node.item, s, frontier) - seen
        seen |= frontier
        count += 1
    return seen


def fullmatch(node: Node, s: str) -> bool:
    return len(s) in _ends(node, s, {0})


ATOMS = st.sampled_from(
    ["a", "b", "c", ".", r"\d", r"\w", r"\s", r"\W", r"\.", r"\n", r"\-", "[abc]", "[a-c]", "[^a]",
     r"[\d_-]", r"[^\sb]", "[]a]", "[-c]", r"\x61", r"\u0062", r"\u{63}"]
)
QUANTIFIERS = st.sampled_from(["*", "+", "?", "{2}", "{1,}", "{0,2}", "{,2}", "{1,3}"])


def _asts() -> st.SearchStrategy[tuple]:
    def extend(children: st.SearchStrategy[tuple]) -> st.SearchStrategy[tuple]:
        return st.one_of(
            st.tuples(st.just("seq"), st.lists(children, max_size=4).map(tuple)),
            st.tuples(st.just("alt"), st.lists(children, min_size=2, max_size=3).map(tuple)),
            st.tuples(st.just("rep"), children, QUANTIFIERS, st.booleans()),
            st.tuples(st.just("group"), children, st.sampled_from(["(", "(?:", "(?P<g>"])),
        )

    return st.recursive(st.tuples(st.just("atom"), ATOMS), extend, max_leaves=12)


def render(ast: tuple, wrap: bool = False, counter: list[int] | None = None) -> str:
    """Regex text for `ast`; with `wrap`, every subexpression gets a redundant (?:...)."""
    counter = counter if counter is not None else [0]
    text, _ = _render(ast, wrap, counter)
    return text


def _render(ast: tuple, wrap: bool, counter: list[int]) -> tuple[str, str]:
    kind = ast[0]
    if kind == "atom":
        text, prec = ast[1], "atom"
    elif kind == "group":
        inner, _ = _render(ast[1], wrap, counter)
        opener = ast[2]
        if opener == "(?P<g>":
            counter[0] += 1
            opener = f"(?P<g{counter[0]}>"
        text, prec = f"{opener}{inner})", "atom"
    elif kind == "rep":
        inner, p = _render(ast[1], wrap, counter)
        if p != "atom":
            inner = f"(?:{inner})"
        text, prec = inner + ast[2] + ("?" if ast[3] else ""), "rep"
    elif kind == "seq":
        parts = []
        for child in ast[1]:
            t, p = _render(child, wrap, counter)
            parts.append(f"(?:{t})" if p == "alt" else t)
        text, prec = "".join(parts), "seq"
    else:
        text, prec = "|".join(_render(c, wrap, counter)[0] for c in ast[1]), "alt"
    if wrap:
        return f"(?:{text})", "atom"
    return text, prec


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_asts())
def test_redundant_groups_do_not_change_the_ir(ast: tuple) -> None:
    plain = parse_regex(render(ast))
    assert parse_regex(render(ast, wrap=True)) == plain
    assert parse_regex(f"(?:{render(ast)})") == plain
    assert parse_regex(f"^{render(ast)}$") == plain


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_asts(), st.lists(st.text(alphabet="abc0_ \n-.é", max_size=6), min_size=1, max_size=8))
def test_fullmatch_semantics_agree_with_python_re(ast: tuple, samples: list[str]) -> None:
    pattern = render(ast)
    node = parse_regex(pattern)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle = re.compile(pattern.replace(r"\u{63}", r"\x63"), re.ASCII)  # re lacks \u{...}
    for s in samples:
        assert fullmatch(node, s) == bool(oracle.fullmatch(s)), (pattern, s)


META_TEXT = st.text(alphabet=list("ab()[]{}|*+?^$\\.-,:=!<>P019xuUdDwsbkNpAZ&#") + ["\x00", "é", "😀", "\ud800", "\n"],
                    max_size=20)


@settings(max_examples=examples(1000), deadline=None)
@given(st.one_of(st.text(max_size=30), META_TEXT))
def test_arbitrary_text_parses_or_raises_grammar_error(pattern: str) -> None:
    try:
        parse_regex(pattern)
    except GrammarError as err:
        assert err.line == 1
        assert err.column is not None and 1 <= err.column <= len(pattern) + 1
        assert str(err).startswith(f"1:{err.column}: ")


DIFF_TEXT = st.text(alphabet=list("abc()[]{}|*+?^$\\.-,:0129xdDwWsSbn_ ") + ["é", "\n"], min_size=1,
                    max_size=9)


@settings(max_examples=examples(500), deadline=None)
@given(DIFF_TEXT, st.lists(st.text(alphabet="abc-]^[\\.,{}09_ \né|x:", max_size=5), max_size=10))
def test_accepted_patterns_agree_with_python_re(pattern: str, samples: list[str]) -> None:
    try:
        node = parse_regex(pattern)
    except GrammarError:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle = re.compile(pattern, re.ASCII)  # everything accepted here is valid for re
    for s in samples:
        assert fullmatch(node, s) == bool(oracle.fullmatch(s)), (pattern, s)
