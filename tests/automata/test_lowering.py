"""Grammar → one expression: inlining of non-recursive rules, and what it refuses."""
from __future__ import annotations

import pytest

from grammask.compiler import BudgetExceeded, GrammarError, Limits
from tests.support.equivalence import dfa_difference
from grammask.compiler.ir.nodes import Choice, Grammar, Literal, Repeat, Rule, RuleRef, Seq
from grammask.compiler.support.diagnostics import Span
from grammask.compiler.ir.graph import find_cycle, reachable_rules
from grammask.compiler.lowering.regular import inline_regular
from grammask.compiler.automata.build import ir_to_dfa

A, B = Literal(b"a"), Literal(b"b")


def grammar(*rules: tuple[str, object], start: str = "root") -> Grammar:
    return Grammar(tuple(Rule(n, b) for n, b in rules), start)  # type: ignore[arg-type]


def regular_dfa(g: Grammar, limits: Limits = Limits()):  # type: ignore[no-untyped-def]
    root, rules = inline_regular(g)
    return ir_to_dfa(root, limits, rules)


def test_inlining_gives_the_same_language() -> None:
    g = grammar(
        ("root", Seq((RuleRef("pair"), Repeat(Seq((Literal(b","), RuleRef("pair"))), 0, None)))),
        ("pair", Seq((RuleRef("x"), Literal(b"="), RuleRef("x")))),
        ("x", Choice((A, B))),
    )
    x = Choice((A, B))
    pair = Seq((x, Literal(b"="), x))
    direct = Seq((pair, Repeat(Seq((Literal(b","), pair)), 0, None)))
    assert dfa_difference(regular_dfa(g), ir_to_dfa(direct)) is None


def test_reachable_rules_and_unreachable_ones_are_ignored() -> None:
    g = grammar(("root", RuleRef("a")), ("a", A), ("unused", RuleRef("missing")))
    assert reachable_rules(g) == ["root", "a"]
    assert regular_dfa(g).fullmatch(b"a")


def test_recursion_is_reported_with_its_cycle() -> None:
    g = grammar(
        ("root", RuleRef("value")),
        ("value", Choice((A, RuleRef("list")))),
        ("list", Seq((Literal(b"["), RuleRef("value"), Literal(b"]")))),
    )
    assert find_cycle(g) == ["value", "list", "value"]
    with pytest.raises(GrammarError, match="recursive grammar: value -> list -> value") as err:
        inline_regular(g)
    assert err.value.code == "recursive-grammar"
    assert find_cycle(grammar(("root", Seq((A, RuleRef("root")))))) == ["root", "root"]


def test_undefined_rule_and_missing_start() -> None:
    span = Span(3, 7, 3, 9, "g.gbnf")
    g = Grammar((Rule("root", Seq((A, RuleRef("nope", span)))),), "root")
    with pytest.raises(GrammarError) as err:
        inline_regular(g)
    assert err.value.code == "undefined-rule" and (err.value.line, err.value.column) == (3, 7)
    with pytest.raises(GrammarError) as err:
        inline_regular(grammar(("main", A)))
    assert err.value.code == "missing-start"


def test_shared_rules_stay_shared_and_expansion_is_bounded() -> None:
    rules = [("r0", A)]
    for i in range(1, 60):
        rules.append((f"r{i}", Seq((RuleRef(f"r{i - 1}"), RuleRef(f"r{i - 1}")))))
    rules.append(("root", RuleRef("r59")))
    from grammask.compiler.automata.flat_ir import flatten

    g = grammar(*rules)
    root, bodies = inline_regular(g)
    assert bodies["r1"] is g.by_name["r1"].body  # shared, not copied
    # The flattened DAG is the grammar's size (2**59 copies of `a` once expanded).
    assert len(flatten(root, Limits(), {}, bodies).kind) < 200
    with pytest.raises(BudgetExceeded, match="max_nfa_states"):
        regular_dfa(g, Limits(max_nfa_states=10_000))


def test_rules_are_substituted_after_the_rules_they_use() -> None:
    g = grammar(
        ("r0", Seq((Repeat(RuleRef("r2"), 0, 1), RuleRef("r1")))),
        ("r1", Seq((A, RuleRef("r2")))),
        ("r2", A),
        start="r0",
    )
    dfa = regular_dfa(g)
    assert dfa.fullmatch(b"aa") and dfa.fullmatch(b"aaa") and not dfa.fullmatch(b"a")


def test_flattening_with_inlined_rules_is_inlining() -> None:
    """References to inlined rules stand for their bodies (shared, not copied): a bare
    reference to another inlined rule, a rule used twice, a separated list of references."""
    from grammask.compiler.automata.dfa import determinize
    from grammask.compiler.automata.flat_ir import flatten
    from grammask.compiler.support.limits import DEFAULT_LIMITS
    from grammask.compiler.automata.nfa import build_rule_nfa

    g = grammar(
        ("root", Seq((RuleRef("item"), Repeat(Seq((Literal(b","), RuleRef("item"))), 0, None),
                      Literal(b";"), RuleRef("alias")))),
        ("item", RuleRef("alias")),
        ("alias", Choice((A, Seq((Literal(b"["), RuleRef("pair"), Literal(b"]")))))),
        ("pair", Seq((RuleRef("leaf"), Literal(b"="), RuleRef("leaf")))),
        ("leaf", Choice((A, B))),
    )
    inline = {r.name: r.body for r in g.rules if r.name != "root"}
    flat = flatten(g.by_name["root"].body, DEFAULT_LIMITS, None, inline)
    assert flat.called == ()
    nfa = build_rule_nfa(flat, DEFAULT_LIMITS)
    leaf = Choice((A, B))
    alias = Choice((A, Seq((Literal(b"["), leaf, Literal(b"="), leaf, Literal(b"]")))))
    direct = Seq((alias, Repeat(Seq((Literal(b","), alias)), 0, None), Literal(b";"), alias))
    assert dfa_difference(determinize(nfa), ir_to_dfa(direct)) is None
    assert dfa_difference(regular_dfa(g), ir_to_dfa(direct)) is None
    with pytest.raises(GrammarError, match="cycle"):
        flatten(RuleRef("a"), DEFAULT_LIMITS, None, {"a": RuleRef("b"), "b": RuleRef("a")})
