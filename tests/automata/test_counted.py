"""Counted repetitions (`compiler/automata/counted.py`): where the counts can be told apart, the
expanded automaton accepts exactly what the copy-by-copy construction accepts (equal minimal
tables, call columns included); where they cannot, `counted_dfa` declines."""
from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from grammask.compiler.automata.counted import COUNTED_FROM, counted_dfa
from grammask.compiler.automata.dfa import byte_classes, subset_table
from grammask.compiler.support.errors import BudgetExceeded
from grammask.compiler.automata.flat_ir import flatten
from grammask.compiler.ir.nodes import CharClass, Choice, Literal, Node, Repeat, RuleRef, Seq
from grammask.compiler.support.limits import DEFAULT_LIMITS
from grammask.compiler.automata.minimize import minimize_table
from grammask.compiler.automata.nfa import build_counted_nfa, build_rule_nfa
from grammask.runtime.dfa.table import DFATable

from ..support.ir_strategies import literals

WS = CharClass.of([(0x20, 0x20), (0x0A, 0x0A)])
A = CharClass.of([(ord("a"), ord("a"))])
AB = CharClass.of([(ord("a"), ord("b"))])


def _tables(node: Node) -> tuple[DFATable | None, DFATable, int]:
    """(counted automaton or None, minimal automaton built copy by copy, call columns)."""
    flat = flatten(node, DEFAULT_LIMITS, None)
    n_calls = len(flat.called)
    nfa, counted = build_counted_nfa(flat, DEFAULT_LIMITS, COUNTED_FROM)
    table = (counted_dfa(nfa, counted, byte_classes(nfa), n_calls, DEFAULT_LIMITS)
             if len(counted) else None)
    got = None if table is None else table.dfa()  # checked: in range and trimmed
    plain = build_rule_nfa(flat, DEFAULT_LIMITS)
    classes = byte_classes(plain)
    want = minimize_table(classes, *subset_table(plain, classes, n_calls, DEFAULT_LIMITS), 0,
                          n_calls=n_calls)
    return got, want, n_calls


def _same_language(got: DFATable, want: DFATable, n_calls: int) -> bool:
    mini = minimize_table(got.byte_class, got.transitions, got.accepting, got.start,
                          n_calls=n_calls)
    return (mini.transitions.shape == want.transitions.shape
            and (mini.transitions == want.transitions).all()
            and (mini.byte_class == want.byte_class).all()
            and (mini.accepting == want.accepting).all())


def _object(gap: Node, members_optional: bool = False) -> Node:
    """`{` gap `}` | `{` gap key gap `:` gap value (gap `,` gap key ...)* gap `}` with a call
    for values, the shape of a JSON Schema object rule: after a value, the gaps before `,`
    and before `}` run side by side. With `members_optional`, `{` gap (members)? gap `}`,
    where an empty object has two gaps in a row."""
    key = Seq((Literal(b'"k"'), gap, Literal(b":"), gap, RuleRef("value")))
    members = Seq((key, Repeat(Seq((gap, Literal(b","), gap, key)), 0, None)))
    if members_optional:
        return Seq((Literal(b"{"), gap, Repeat(members, 0, 1), gap, Literal(b"}")))
    return Choice((Seq((Literal(b"{"), gap, Literal(b"}"))),
                   Seq((Literal(b"{"), gap, members, gap, Literal(b"}")))))


def test_object_gaps_are_counted_exactly() -> None:
    got, want, n_calls = _tables(_object(Repeat(WS, 0, 24)))
    assert got is not None and n_calls == 1
    assert _same_language(got, want, n_calls)
    assert got.n_states <= want.n_states + 8


def test_bounds_with_a_minimum_and_at_the_start() -> None:
    for node in (Repeat(A, 2, 10), Seq((Repeat(WS, 0, 6), Literal(b"x"), Repeat(WS, 1, 9))),
                 Choice((Repeat(A, 0, 5), Literal(b"b")))):
        got, want, n_calls = _tables(node)
        assert got is not None
        assert _same_language(got, want, n_calls)


def test_declines_where_counts_overlap() -> None:
    adjacent = Seq((Repeat(A, 0, 6), Repeat(A, 0, 6), Literal(b"b")))
    optional_first = Seq((Repeat(A, 0, 1), Repeat(A, 0, 8)))
    inside_a_loop = Repeat(Seq((Repeat(A, 0, 5), Literal(b"b"))), 0, None)
    content_reads_it = Seq((Repeat(AB, 0, 6), Repeat(CharClass.of([(98, 99)]), 0, None)))
    for node in (adjacent, optional_first, content_reads_it,
                 _object(Repeat(WS, 0, 24), members_optional=True)):
        got, _, _ = _tables(node)
        assert got is None
    got, want, n_calls = _tables(inside_a_loop)
    assert got is not None and _same_language(got, want, n_calls)


def _trees() -> st.SearchStrategy[Node]:
    """Expressions over a, b, c with counted repetitions (some shared, as the JSON Schema
    frontend shares its gap) next to literals, classes, calls and other repetitions that may
    read the same bytes."""
    shared = Repeat(A, 0, COUNTED_FROM + 1)
    counted = st.one_of(
        st.just(shared),
        st.tuples(st.sampled_from([A, AB]), st.integers(0, 2),
                  st.integers(COUNTED_FROM, COUNTED_FROM + 3)).map(
            lambda t: Repeat(t[0], t[1], t[1] + t[2])))
    leaves = st.one_of(literals(), counted, st.just(RuleRef("r")), st.just(AB))

    def extend(children: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
        return st.one_of(
            st.lists(children, min_size=1, max_size=4).map(lambda xs: Seq(tuple(xs))),
            st.lists(children, min_size=1, max_size=3).map(lambda xs: Choice(tuple(xs))),
            st.tuples(children, st.sampled_from([(0, 1), (0, None), (1, None), (1, 2)])).map(
                lambda t: Repeat(t[0], *t[1])),
        )

    return st.recursive(leaves, extend, max_leaves=10)


COUNTED_CASES: list[bool] = []


@settings(max_examples=400, deadline=None)
@given(_trees())
def test_counted_equals_copied(node: Node) -> None:
    try:
        got, want, n_calls = _tables(node)
    except BudgetExceeded:
        # Nested repetitions can blow up the subset construction either way.
        assume(False)
    COUNTED_CASES.append(got is not None)
    if got is not None:
        assert _same_language(got, want, n_calls)


def test_random_cases_were_counted() -> None:
    """The property above is not vacuous: a good share of its cases took the counted path
    (run after it; alone, it draws its own examples). Random draws give 10-20%."""
    if len(COUNTED_CASES) < 100:
        test_counted_equals_copied()
    assert sum(COUNTED_CASES) >= len(COUNTED_CASES) // 20
