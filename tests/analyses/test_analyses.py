"""Each grammar analysis alone, on IR built by hand: what it reports, and what it must not."""
from __future__ import annotations

import math

import pytest
from grammask.compiler.analyses import (
    CODES,
    analyse_identical_alternatives,
    analyse_json_whitespace,
    analyse_left_recursion,
    analyse_nullable_loops,
    analyse_overlapping_literals,
    analyse_productivity,
    analyse_references,
    analyse_regularity,
    analyse_repeat_limits,
    analyse_size,
    analyse_start,
    analyse_stats,
    analyse_unbounded_whitespace,
    analyse_unused,
    estimate_size,
    lint_grammar,
)
from grammask.compiler.ir.summaries import productive_rules
from grammask.compiler.ir.summaries import nullable_rules
from grammask.compiler.analyses.common import show_bytes
from grammask.compiler.ir.summaries import FirstBytes, fold, nullable_among, rule_summaries
from grammask.compiler.analyses.recursion import left_refs
from grammask.compiler.support.diagnostics import Diagnostic
from grammask.compiler.ir.nodes import (
    EMPTY,
    NOTHING,
    CharClass,
    Choice,
    Grammar,
    Literal,
    Node,
    Repeat,
    Rule,
    RuleRef,
    Seq,
    walk,
)
from grammask.compiler.support.diagnostics import Span
from grammask.compiler.support.limits import DEFAULT_LIMITS, Limits
from grammask.compiler.ir.graph import reachable_rules
from grammask.compiler.lowering.rule_automata import productive_among
from hypothesis import given, settings

from ..support.budget import examples
from ..support.cfg_strategies import grammars, rule_heights

L = DEFAULT_LIMITS


def at(line: int, column: int = 1) -> Span:
    return Span(line, column, line, column)


def lit(text: str, span: Span | None = None) -> Literal:
    return Literal(text.encode(), span)


def cls(chars: str, span: Span | None = None) -> CharClass:
    return CharClass.of(((ord(c), ord(c)) for c in chars), span=span)


def ref(name: str, span: Span | None = None) -> RuleRef:
    return RuleRef(name, span)


def grammar(*rules: tuple[str, Node], start: str = "root") -> Grammar:
    return Grammar(tuple(Rule(n, b, at(i)) for i, (n, b) in enumerate(rules, 1)), start)


def codes(found: list[Diagnostic]) -> list[str]:
    return [d.code for d in found]


def test_every_code_is_registered_with_a_severity() -> None:
    for severity, text in CODES.values():
        assert severity in ("error", "warning", "info") and text.endswith(".")


# ---------------------------------------------------------------- references and start

def test_undefined_rule_at_each_reference_with_suggestion() -> None:
    g = grammar(("root", Seq((ref("nmber", at(1, 10)), ref("other", at(1, 20))))),
                ("number", cls("0123456789")))
    found = analyse_references(g, L)
    assert codes(found) == ["undefined-rule", "undefined-rule"]
    assert found[0].span == at(1, 10) and "did you mean 'number'?" in found[0].message
    assert found[1].span == at(1, 20) and "did you mean" not in found[1].message
    assert analyse_references(grammar(("root", ref("a")), ("a", lit("x"))), L) == []


def test_missing_start() -> None:
    found = analyse_start(grammar(("start", lit("x"))), L)
    assert codes(found) == ["missing-start"] and found[0].severity == "error"
    assert "'root'" in found[0].message and "'start'" in found[0].message
    assert "defines no rules" in analyse_start(Grammar((), "root"), L)[0].message
    assert analyse_start(grammar(("root", lit("x"))), L) == []


def test_unused_rules() -> None:
    g = grammar(("root", ref("a")), ("a", lit("x")), ("b", ref("a")), ("c", ref("c")))
    found = analyse_unused(g, L)
    assert [(d.code, d.span) for d in found] == [("unused-rule", at(3)), ("unused-rule", at(4))]
    assert analyse_unused(grammar(("start", lit("x"))), L) == []  # missing start: said once


# ---------------------------------------------------------------- productivity and nullability

def test_productive_fixpoint() -> None:
    g = grammar(("root", Choice((ref("loop"), ref("ok")))),
                ("loop", Seq((lit("a"), ref("loop")))),
                ("ok", Repeat(ref("loop"), 0, None)),
                ("dead", CharClass(())),
                ("nothing", NOTHING),
                ("chain", Seq((ref("dead"), lit("x")))))
    assert productive_rules(g) == {"root", "ok"}


@settings(max_examples=examples(200))
@given(grammars(max_rules=5))
def test_productive_rules_are_those_with_a_finite_derivation(g: Grammar) -> None:
    """Against the least derivation heights of the grammar strategies (their own fixpoint)."""
    finite = {name for name, h in rule_heights(g).items() if h != math.inf}
    assert productive_rules(g) == finite
    reachable = reachable_rules(g)
    assert productive_among(g, reachable) == finite & set(reachable)


@settings(max_examples=examples(200))
@given(grammars(max_rules=5))
def test_on_demand_summaries_equal_the_full_ones(g: Grammar) -> None:
    """`nullable_among` and `FirstBytes` (what the facts of a lazily built table ask,
    `lowering/rule_facts.py`) give `rule_summaries`' nullability and first bytes, for every
    rule and every productive node."""
    reachable = reachable_rules(g)
    summary, memos = rule_summaries(g, reachable)
    productive = {name for name, s in summary.items() if s[0]}
    nullable = nullable_among(g, reachable)
    assert nullable == {name for name, s in summary.items() if s[1]}
    first = FirstBytes(g, productive, nullable)
    for name in productive:
        assert first.rule_first(name) == summary[name][2]
        body = g.by_name[name].body
        for node in walk(body):
            s = memos[name][id(node)]
            assert first.productive(node) == s[0]
            if s[0]:
                assert (first.first(node), first.nullable(node)) == (s[2], s[1])


def test_productive_rules_examine_a_wide_rule_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule that uses 2,000 others is examined after them, not again as each turns out
    productive (which made an object of 5,000 member rules take minutes)."""
    import grammask.compiler.ir.summaries as summaries

    real, calls = summaries.productive_node, []
    monkeypatch.setattr(summaries, "productive_node",
                        lambda body, good, *rest: calls.append(body) or real(body, good, *rest))
    names = [f"r{i}" for i in range(2000)]
    g = grammar(("root", Seq(tuple(RuleRef(n) for n in names))), *((n, lit("x")) for n in names))
    assert productive_among(g, reachable_rules(g)) == {"root", *names}
    assert len(calls) <= len(names) + 2


def test_unproductive_rules_and_empty_language() -> None:
    g = grammar(("root", Seq((lit("["), ref("list"), lit("]")))),
                ("list", Seq((ref("item"), lit(","), ref("list")))),
                ("item", cls("0123456789")),
                ("never", NOTHING))
    found = analyse_productivity(g, L)
    assert [(d.code, d.span) for d in found] == [
        ("unproductive", at(1)), ("unproductive", at(2)), ("unproductive", at(4))]
    root, lst, never = (d.message for d in found)
    assert "'list'" in root and "the language is empty" in root
    assert "needs it again" in lst and "language is empty" not in lst
    assert "matches nothing" in never


def test_undefined_references_do_not_cascade_into_unproductive() -> None:
    assert analyse_productivity(grammar(("root", Seq((lit("a"), ref("missing"))))), L) == []


def test_productive_grammars_have_no_unproductive_rules() -> None:
    g = grammar(("root", Choice((lit("x"), Seq((lit("("), ref("root"), lit(")")))))))
    assert analyse_productivity(g, L) == []


def test_nullable_fixpoint() -> None:
    g = grammar(("root", Seq((ref("a"), ref("b")))), ("a", Choice((EMPTY, lit("x")))),
                ("b", Repeat(lit("y"), 0, 3)), ("c", Seq((ref("a"), lit("z")))),
                ("d", ref("d")), ("e", Repeat(NOTHING, 0, 0)))
    assert nullable_rules(g) == {"root", "a", "b", "e"}


def test_fold_has_no_recursion_limit() -> None:
    node: Node = lit("x")
    for _ in range(50_000):
        node = Seq((node,))
    assert fold(node, lambda n, kids: 1 + sum(kids)) == 50_001


# ---------------------------------------------------------------- loops and limits

def test_nullable_loop() -> None:
    loop = Repeat(Repeat(lit("a"), 0, 1), 0, None, at(1, 5))
    g = grammar(("root", Seq((loop, Repeat(ref("opt"), 2, 5, at(1, 9))))), ("opt", EMPTY))
    found = analyse_nullable_loops(g, L)
    assert [(d.code, d.span) for d in found] == [("nullable-loop", at(1, 5)),
                                                  ("nullable-loop", at(1, 9))]
    assert "empty string" in found[0].message and "(*)" in found[0].message


def test_nullable_item_repeated_at_most_once_is_fine() -> None:
    g = grammar(("root", Seq((Repeat(Repeat(lit("a"), 0, 1), 0, 1), Repeat(lit("b"), 0, None)))))
    assert analyse_nullable_loops(g, L) == []


def test_repeat_limit() -> None:
    g = grammar(("root", Seq((Repeat(lit("a"), 0, 50, at(1, 3)), Repeat(lit("b"), 9, 9)))))
    found = analyse_repeat_limits(g, Limits(max_repeat=10))
    assert [(d.code, d.severity, d.span) for d in found] == [("repeat-limit", "error", at(1, 3))]
    assert "max_repeat=10" in found[0].message and "50" in found[0].message
    assert analyse_repeat_limits(g, L) == []


# ---------------------------------------------------------------- whitespace

def test_unbounded_whitespace_direct_and_through_rules() -> None:
    g = grammar(("root", Seq((Repeat(cls(" \t\n"), 0, None, at(1, 4)), ref("ws"), lit("x"),
                              Repeat(ref("sp"), 1, None, at(1, 9))))),
                ("ws", Repeat(cls(" "), 0, 20)),
                ("sp", Choice((lit(" "), lit("\r\n")))))
    found = analyse_unbounded_whitespace(g, L)
    assert [(d.code, d.span) for d in found] == [("unbounded-whitespace", at(1, 4)),
                                                 ("unbounded-whitespace", at(1, 9))]
    assert "{0,20}" in found[0].message and "{1,20}" in found[1].message


def test_bounded_or_mixed_repetitions_are_not_whitespace_loops() -> None:
    g = grammar(("root", Seq((Repeat(cls(" \n"), 0, 20), Repeat(cls(" a"), 0, None),
                              Repeat(ref("word"), 0, None), Repeat(EMPTY, 0, None)))),
                ("word", Seq((lit(" "), lit("w")))))
    assert analyse_unbounded_whitespace(g, L) == []


def json_like(ws: Node | None) -> Grammar:
    pad = (ws,) if ws is not None else ()
    return grammar(("root", Seq((lit("{", at(1, 10)), *pad, ref("key"), lit(":"),
                                 Repeat(cls("0123456789"), 1, None), lit("}")))),
                   ("key", Seq((lit('"'), Repeat(CharClass.of([(ord('"'), ord('"'))], True),
                                                 0, None), lit('"')))))


def test_json_without_whitespace() -> None:
    found = analyse_json_whitespace(json_like(None), L)
    assert [(d.code, d.span) for d in found] == [("json-no-whitespace", at(1, 10))]
    assert analyse_json_whitespace(json_like(Repeat(cls(" \n"), 0, 4)), L) == []
    assert analyse_json_whitespace(json_like(lit(" ")), L) == []
    arrays = grammar(("root", Seq((lit("["), lit("1"), lit(","), lit("2"), lit("]")))))
    assert codes(analyse_json_whitespace(arrays, L)) == ["json-no-whitespace"]
    assert analyse_json_whitespace(grammar(("root", lit("{a}"))), L) == []


# ---------------------------------------------------------------- ambiguity

def test_identical_alternatives_ignore_spans() -> None:
    alt = Seq((lit("a"), Repeat(cls("b"), 0, None)))
    same = Seq((lit("a", at(9)), Repeat(cls("b"), 0, None, at(9))), at(1, 20))
    g = grammar(("root", Choice((alt, lit("c"), same, lit("c", at(1, 30))))))
    found = analyse_identical_alternatives(g, L)
    assert [(d.code, d.span) for d in found] == [("identical-alternatives", at(1, 20)),
                                                 ("identical-alternatives", at(1, 30))]
    assert "alternative 3" in found[0].message and "alternative 1" in found[0].message


def test_different_alternatives_are_not_identical() -> None:
    g = grammar(("root", Choice((Repeat(lit("a"), 0, 2), Repeat(lit("a"), 0, 3), ref("x"),
                                 ref("y")))), ("x", lit("a")), ("y", lit("a")))
    assert analyse_identical_alternatives(g, L) == []


def test_overlapping_literals() -> None:
    g = grammar(("root", Choice((lit("<", at(1, 3)), lit("<="), lit("<<"), lit("=", at(1, 7)),
                                 lit("!="), lit("=="), lit("!")))))
    found = analyse_overlapping_literals(g, L)
    assert [(d.code, d.span) for d in found] == [("overlapping-literals", at(1)),
                                                 ("overlapping-literals", at(1, 3)),
                                                 ("overlapping-literals", at(1, 7))]
    assert found[0].message.startswith('alternative "!" is a prefix of alternative "!=":')
    assert '"<" is a prefix of alternative "<=" (and 1 more)' in found[1].message
    no_literals = grammar(("root", Choice((lit("a"), Seq((lit("a"), lit("b")))))))
    assert analyse_overlapping_literals(no_literals, L) == []


# ---------------------------------------------------------------- recursion and regularity

def test_left_refs_skip_nullable_prefixes() -> None:
    node = Seq((Repeat(ref("a"), 0, None), ref("b"), ref("c"), lit("x"), ref("d")))
    assert left_refs(node, nullable={"b"}) == {"a", "b", "c"}
    assert left_refs(Seq((lit("x"), ref("a"))), set()) == frozenset()


def test_left_recursion_direct_indirect_and_hidden() -> None:
    g = grammar(("root", ref("expr")),
                ("expr", Choice((Seq((ref("expr"), lit("+"), ref("term"))), ref("term")))),
                ("term", lit("1")),
                ("a", Seq((ref("b"), lit("x")))),
                ("b", Seq((ref("opt"), ref("a")))),
                ("opt", Repeat(lit("o"), 0, 1)))
    found = analyse_left_recursion(g, L)
    assert [(d.code, d.severity, d.span) for d in found] == [
        ("left-recursion", "info", at(2)), ("left-recursion", "info", at(4))]
    assert "(expr -> expr)" in found[0].message and "(a -> b -> a)" in found[1].message


def test_right_recursion_is_not_left_recursion() -> None:
    g = grammar(("root", Choice((Seq((lit("a"), ref("root"))), lit("b")))))
    assert analyse_left_recursion(g, L) == []


def test_regular_grammar_reports_minimal_dfa_states() -> None:
    g = grammar(("root", Seq((lit("{"), ref("digits"), lit("}")))),
                ("digits", Repeat(cls("0123456789"), 1, None)))
    found = analyse_regularity(g, L)
    assert codes(found) == ["regular"] and "4 states" in found[0].message


def test_recursive_grammar_reports_its_cycle() -> None:
    g = grammar(("root", ref("value")),
                ("value", Choice((lit("1"), Seq((lit("["), ref("value"), lit("]")))))))
    found = analyse_regularity(g, L)
    assert [(d.code, d.span) for d in found] == [("recursive", at(2))]
    assert "value -> value" in found[0].message


def test_regular_grammar_over_the_dfa_budget_is_an_error() -> None:
    ab = cls("ab")
    g = grammar(("root", Seq((Repeat(ab, 0, None), lit("a"), Repeat(ab, 6, 6)))))
    found = analyse_regularity(g, Limits(max_dfa_states=50))
    assert [(d.code, d.severity) for d in found] == [("state-budget", "error"), ("regular", "info")]
    assert "max_dfa_states=50" in found[0].message
    assert codes(analyse_regularity(g, L)) == ["regular"]


def test_regularity_is_silent_without_a_start_rule() -> None:
    assert analyse_regularity(grammar(("start", lit("x"))), L) == []


# ---------------------------------------------------------------- size

def test_size_estimate_tracks_the_nfa_builder() -> None:
    from grammask.compiler.automata.nfa import build_nfa

    for node in (lit("abc"), Repeat(lit("ab"), 2, 5), Choice((lit("a"), cls("xyz"))),
                 Repeat(Seq((lit("a"), Repeat(cls("bc"), 0, None))), 1, 4)):
        estimate = estimate_size(grammar(("root", node))).nfa_states
        actual = build_nfa(node).n_states
        assert actual / 2 <= estimate <= actual * 2, (node, estimate, actual)


def test_state_budget_warnings() -> None:
    big = Repeat(Repeat(lit("abcdef"), 1000, 1000), 30, 30, at(1, 10))
    found = analyse_size(grammar(("root", big)), L)
    assert [(d.code, d.severity, d.span) for d in found] == [("state-budget", "warning", at(1, 10))]
    assert "max_dfa_states" in found[0].message
    found = analyse_size(grammar(("root", big)), Limits(max_nfa_states=1000))
    assert "max_nfa_states=1000" in found[0].message
    assert analyse_size(grammar(("root", Repeat(lit("ab"), 0, 100))), L) == []


def test_stats() -> None:
    found = analyse_stats(grammar(("root", ref("a")), ("a", lit("x")), ("b", lit("y"))), L)
    assert codes(found) == ["stats"] and found[0].span is None
    assert found[0].message.startswith("3 rules (2 reachable from 'root'), 3 IR nodes")


# ---------------------------------------------------------------- all together

def test_lint_grammar_sorts_by_position_and_keeps_spanless_last() -> None:
    g = grammar(("root", Seq((ref("missing", at(1, 9)), ref("b")))), ("a", lit("x")),
                ("b", Choice((lit("y"), lit("y", at(3, 12))))))
    found = lint_grammar(g, L)
    assert codes(found) == ["undefined-rule", "unused-rule", "identical-alternatives",
                            "regular", "stats"]
    located = [d.span for d in found if d.span is not None]
    assert located == sorted(located, key=lambda s: (s.line, s.column))


def test_clean_grammar_has_only_notes() -> None:
    g = grammar(("root", Seq((lit("{"), ref("ws"), lit('"a":'), ref("ws"), lit("1"), lit("}")))),
                ("ws", Repeat(cls(" \n"), 0, 8)))
    assert {d.severity for d in lint_grammar(g, L)} == {"info"}


@pytest.mark.parametrize("data, shown", [(b"a\"b", '"a\\"b"'), (b"\n\t\\", '"\\n\\t\\\\"'),
                                         (b"\x00\xff", '"\\x00\\xFF"'), ("中".encode(), '"中"')])
def test_show_bytes(data: bytes, shown: str) -> None:
    assert show_bytes(data) == shown


def test_regularity_of_shared_rules_used_before_their_users() -> None:
    g = grammar(("root", Seq((Repeat(ref("c"), 0, 1), ref("b")))), ("b", Seq((lit("a"), ref("c")))),
                ("c", lit("a")))
    assert codes(analyse_regularity(g, L)) == ["regular"]
