"""The automata layer alone: IR → NFA → DFA → minimal DFA, with no vocabulary involved."""
from __future__ import annotations

import itertools

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ..support.budget import examples

from grammask.compiler import BudgetExceeded, Limits
from tests.support.counting import count_by_length, generating_function
from grammask.compiler.automata.dfa import determinize
from tests.support.equivalence import dfa_difference, nfa_dfa_difference
from grammask.compiler.ir.nodes import EMPTY, NOTHING, CharClass, Choice, Literal, Repeat, Seq
from grammask.compiler.automata.minimize import minimize
from grammask.compiler.automata.nfa import build_nfa
from grammask.compiler.automata.build import ir_to_dfa
from grammask.compiler.ir.utf8 import utf8_sequences

from ..support.ir_strategies import ALPHABET, ir_trees

ANY_CHAR = CharClass.of([(0, 0x10FFFF)])


def brute_force_counts(nfa, max_len: int) -> list[int]:
    return [
        sum(nfa.matches(bytes(w)) for w in itertools.product(ALPHABET, repeat=n))
        for n in range(max_len + 1)
    ]


def test_any_scalar_value_is_exactly_valid_utf8() -> None:
    dfa = ir_to_dfa(ANY_CHAR)
    # 1-, 2-, 3- (minus 2,048 surrogates) and 4-byte scalar values; no other byte string.
    assert count_by_length(dfa, 5) == [0, 128, 1920, 61440, 1048576, 0]
    for bad in (b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80", b"\xff", b"\xe4\xb8"):
        assert not dfa.fullmatch(bad)
    for ch in ("\x00", "\x7f", "\x80", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffff", "\U00010000", "\U0010ffff"):
        assert dfa.fullmatch(ch.encode("utf-8"))


@given(st.integers(0, 0x10FFFF), st.integers(0, 0x10FFFF), st.lists(st.integers(0, 0x10FFFF), max_size=20))
@settings(max_examples=examples(300), deadline=None)
def test_utf8_sequences_cover_exactly_the_range(a: int, b: int, probes: list[int]) -> None:
    lo, hi = min(a, b), max(a, b)
    seqs = list(utf8_sequences(lo, hi))
    for cp in probes + [lo, hi, lo - 1, hi + 1]:
        if not 0 <= cp <= 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
            continue
        enc = chr(cp).encode("utf-8")
        hit = any(
            len(s) == len(enc) and all(r[0] <= x <= r[1] for r, x in zip(s, enc)) for s in seqs
        )
        assert hit == (lo <= cp <= hi), hex(cp)


@given(ir_trees())
@settings(max_examples=examples(400), deadline=None)
def test_determinize_and_minimize_preserve_the_language(node) -> None:
    nfa = build_nfa(node)
    dfa = determinize(nfa)
    assert nfa_dfa_difference(nfa, dfa) is None
    small = minimize(dfa)
    assert dfa_difference(dfa, small) is None
    assert nfa_dfa_difference(nfa, small) is None
    assert small.n_states <= dfa.n_states
    again = minimize(small)
    assert again.n_states == small.n_states
    assert (again.transitions == small.transitions).all()
    counts = count_by_length(small, 5)
    assert counts == count_by_length(dfa, 5) == brute_force_counts(nfa, 5)


@given(ir_trees(max_leaves=6))
@settings(max_examples=examples(60), deadline=None)
def test_generating_function_is_invariant_and_counts_strings(node) -> None:
    import sympy

    dfa = determinize(build_nfa(node))
    if dfa.n_states > 25:
        return
    small = minimize(dfa)
    g_big, g_small = generating_function(dfa), generating_function(small)
    assert sympy.cancel(g_big - g_small) == 0
    z = sympy.Symbol("z")
    series = sympy.series(g_small, z, 0, 6).removeO()
    coeffs = [int(series.coeff(z, n)) for n in range(6)]
    assert coeffs == brute_force_counts(build_nfa(node), 5)


def moore_block_count(dfa) -> int:  # type: ignore[no-untyped-def]
    """Number of Myhill-Nerode classes of the completed DFA, by Moore's refinement in plain
    Python (signatures of blocks reached), an independent count for Hopcroft's kernel."""
    n = dfa.n_states
    rows = [[t if t >= 0 else n for t in row] for row in dfa.transitions.tolist()] + [[n] * dfa.n_classes]
    block = [int(a) for a in dfa.accepting.tolist()] + [0]
    while True:
        signatures = {}
        new = [signatures.setdefault((block[s], *(block[t] for t in rows[s])), len(signatures))
               for s in range(n + 1)]
        if len(signatures) == len(set(block)):
            return len(signatures)
        block = new


@given(ir_trees())
@settings(max_examples=examples(150), deadline=None)
def test_minimal_state_count_agrees_with_moore(node) -> None:
    dfa = determinize(build_nfa(node))
    small = minimize(dfa)
    dead_class = 0 if small.is_empty_language else 1
    assert small.n_states + dead_class == moore_block_count(dfa)


def test_difference_finds_a_shortest_witness() -> None:
    a = ir_to_dfa(Repeat(Literal(b"a"), 0, None))
    b = ir_to_dfa(Repeat(Literal(b"a"), 0, 3))
    assert dfa_difference(a, b) == b"aaaa"
    assert dfa_difference(a, a) is None


def test_empty_language_and_empty_string() -> None:
    nothing = ir_to_dfa(NOTHING)
    assert nothing.is_empty_language and nothing.n_states == 1
    assert ir_to_dfa(CharClass(())).is_empty_language
    assert ir_to_dfa(Seq((Literal(b"a"), CharClass(())))).is_empty_language
    empty = ir_to_dfa(EMPTY)
    assert empty.fullmatch(b"") and not empty.fullmatch(b"a") and empty.n_states == 1


def test_the_lessons_running_example_has_eleven_states() -> None:
    digits = Repeat(CharClass.of([(48, 57)]), 1, None)
    dfa = ir_to_dfa(Seq((Literal(b'{"age": '), digits, Literal(b"}"))))
    assert dfa.n_states == 11
    assert dfa.fullmatch(b'{"age": 42}') and not dfa.fullmatch(b'{"age": }')


def test_exponential_blowup_is_bounded_and_reported() -> None:
    ab = Choice((Literal(b"a"), Literal(b"b")))
    node = Seq((Repeat(ab, 0, None), Literal(b"a"), Repeat(ab, 20, 20)))
    with pytest.raises(BudgetExceeded) as err:
        ir_to_dfa(node, Limits(max_dfa_states=5000))
    assert "max_dfa_states=5000" in str(err.value)
    with pytest.raises(BudgetExceeded, match="max_repeat"):
        ir_to_dfa(Repeat(Literal(b"a"), 0, 50_000))
    with pytest.raises(BudgetExceeded, match="max_nfa_states"):
        ir_to_dfa(Repeat(Literal(b"abc"), 1000, 1000), Limits(max_nfa_states=500))


def test_deep_nesting_does_not_recurse() -> None:
    node = Literal(b"x")
    for _ in range(20_000):
        node = Seq((node,))
    assert ir_to_dfa(node).fullmatch(b"x")


def _apart(node, loop):
    """`node` with every use of `loop` wrapped, so that no X (S X)* is built as one loop."""
    if node is loop:
        return Seq((loop,))
    if type(node) is Seq:
        return Seq(tuple(_apart(n, loop) for n in node.items))
    if type(node) is Choice:
        return Choice(tuple(_apart(n, loop) for n in node.alternatives))
    return node


@given(ir_trees(max_leaves=3), ir_trees(max_leaves=2), ir_trees(max_leaves=2))
@settings(max_examples=examples(200), deadline=None)
def test_separated_lists_keep_their_language(x, sep, other) -> None:
    """X (S X)* is built with one copy of X that S leads back to, also where (S X)* is used
    alone or X is several items; the language is that of the plain construction."""
    loop = Repeat(Seq((sep, x)), 0, None)
    pair_loop = Repeat(Seq((sep, x, other)), 0, None)
    node = Choice((Seq((x, loop)), loop, Seq((other, x, loop, x)),
                   Seq((x, other, pair_loop)), Seq((pair_loop, other))))
    plain = _apart(_apart(node, loop), pair_loop)
    try:
        shared, apart = (determinize(build_nfa(n), Limits(max_dfa_states=2000))
                         for n in (node, plain))
    except BudgetExceeded:
        assume(False)
    assert dfa_difference(shared, apart) is None
    assert nfa_dfa_difference(build_nfa(node), apart) is None


def test_a_separated_list_has_one_copy_of_its_element() -> None:
    element = Seq((Literal(b'"'), Repeat(CharClass.of([(0x61, 0x7A)]), 1, 8), Literal(b'"')))
    loop = Repeat(Seq((Literal(b", "), element)), 0, None)
    shared = determinize(build_nfa(Seq((element, loop))))
    apart = determinize(build_nfa(Seq((element, Seq((loop,))))))
    assert dfa_difference(shared, apart) is None
    assert shared.n_states == minimize(shared).n_states < apart.n_states


_BOUNDS_SCRIPT = r"""
import random
from grammask.compiler.ir.nodes import EMPTY, CharClass, Choice, Literal, Repeat, Seq
from grammask.compiler.automata.nfa import build_nfa
rng = random.Random(7)
ws = Repeat(CharClass(((9, 10), (13, 13), (32, 32))), 0, 4)
def tree(depth):
    if depth == 0 or rng.random() < 0.3:
        return rng.choice([Literal(b"ab"), CharClass(((0x61, 0x7A), (0x4E00, 0x4E10))), EMPTY, ws])
    kind = rng.randrange(4)
    kids = tuple(tree(depth - 1) for _ in range(rng.choice([1, 2, 15, 16, 17, 31, 40])))
    if kind == 0:
        return Seq(kids)
    if kind == 1:
        return Choice(kids)
    x = kids[0]
    return Seq((x, Repeat(Seq((Literal(b","), ws, x)), 0, None), Repeat(x, 0, 3)))
for _ in range(60):
    node = tree(3)
    a, b = build_nfa(node), build_nfa(node)
    assert (a.edge_to == b.edge_to).all() and (a.eps_to == b.eps_to).all()
print("ok")
"""


def test_the_nfa_kernel_stays_in_bounds(tmp_path) -> None:
    """Numba checks no bounds: the NFA kernel runs here once with bounds checking on (fresh
    cache), over long, shared and separated sequences."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path))
    run = subprocess.run([sys.executable, "-c", _BOUNDS_SCRIPT], env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]
