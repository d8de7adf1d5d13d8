"""The Lark frontend: Lark's corpus and the supported dialect, by hand (terminals:
`test_lark_terminals.py`; Lark's own parser as the oracle: `test_lark_generated.py`)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler.frontends.lark_grammar import IGNORE_RULE, parse_lark
from grammask.compiler.ir.nodes import CharClass, Choice, Literal, Node, Repeat, RuleRef, Seq
from grammask.compiler.support.errors import BudgetExceeded, GrammarError
from grammask.compiler.support.limits import Limits

from ..support.budget import examples
from ..support.lark_frontend import CORPUS, check_grammar, code_of, dfa_of, lark_accepts, load

CORPUS_FILES = sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*.lark"))

# What each corpus grammar gives, with its first rule (or `start`) as the start rule.
CORPUS_EXPECTED = {
    "examples/advanced/python2.lark": "lark-declare",            # _INDENT/_DEDENT come from a postlexer
    "examples/advanced/template_lark.lark": "regex-unsupported",  # OP: lookahead (?![a-z])
    "examples/grammars/verilog.lark": "regex-unsupported",       # MULTILINE_COMMENT: lookahead (?!\/)
    "lark/grammars/lark.lark": "regex-unsupported",              # OP: lookahead (?![a-z])
    "lark/grammars/python.lark": "lark-declare",                 # _INDENT/_DEDENT
    "lark/grammars/common.lark": "missing-start",                # terminals only
    "lark/grammars/unicode.lark": "missing-start",
    "tests/grammars/templates.lark": "missing-start",
    "tests/grammars/test.lark": "missing-start",
    "tests/grammars/test_relative_import_of_nested_grammar__nested_grammar.lark": "missing-start",
    "tests/grammars/test_unicode.lark": "missing-start",
}


# ---------------------------------------------------------------- the corpus


def test_corpus_is_vendored_whole() -> None:
    assert len(CORPUS_FILES) == 37
    assert (CORPUS / "SOURCE.md").exists() and (CORPUS / "LICENSE").exists()


@pytest.mark.parametrize("relpath", CORPUS_FILES)
def test_corpus_grammar_parses_or_fails_cleanly(relpath: str) -> None:
    text, start, source = load(relpath)
    expected = CORPUS_EXPECTED.get(relpath, "ok")
    try:
        grammar, notes = parse_lark(text, start=start, source=source)
    except GrammarError as e:
        assert e.code == expected, str(e)
        assert e.source == source
        return
    assert expected == "ok"
    check_grammar(grammar)
    assert grammar.start == start and grammar.source == source
    assert all(n.severity in ("info", "warning") for n in notes)


# ---------------------------------------------------------------- the dialect, by hand


def test_strings_and_regexes() -> None:
    grammar, notes = parse_lark('start: "ab" NAME /[0-9]+/\nNAME: /[a-z]+/\n')
    assert notes == ()
    assert grammar.rule("start").body == Seq((RuleRef("AB"), RuleRef("NAME"), RuleRef("__ANON_0")))
    assert grammar.rule("AB").body == Literal(b"ab")
    assert grammar.rule("NAME").body == Repeat(CharClass(((97, 122),)), 1, None)
    assert grammar.rule("__ANON_0").body == Repeat(CharClass(((48, 57),)), 1, None)
    assert grammar.rule("start").span.line == 1 and grammar.rule("NAME").span.line == 2


def test_rule_operators_stay_regular() -> None:
    grammar, _ = parse_lark('start: A? B* C+ D~2 E~1..3 [F] (A | B)\nA: "a"\nB: "b"\nC: "c"\nD: "d"\nE: "e"\nF: "f"\n')
    a, b, c, d, e, f = (RuleRef(x) for x in "ABCDEF")
    assert grammar.rule("start").body == Seq((
        Repeat(a, 0, 1), Repeat(b, 0, None), Repeat(c, 1, None), Repeat(d, 2, 2), Repeat(e, 1, 3),
        Repeat(f, 0, 1), Choice((a, b))))


def test_ignore_follows_every_token_and_opens_the_start() -> None:
    text = '%import common.WS\n%import common.INT\nstart: "(" list ")"\nlist: INT ("," INT)*\n%ignore WS\n'
    grammar, _ = parse_lark(text)

    def tok(name: str) -> tuple[Node, ...]:
        return (RuleRef(name), RuleRef(IGNORE_RULE))

    assert grammar.rule("start").body == Seq((RuleRef(IGNORE_RULE), RuleRef("LPAR"), RuleRef(IGNORE_RULE),
                                              RuleRef("list"), RuleRef("RPAR"), RuleRef(IGNORE_RULE)))
    assert grammar.rule("list").body == Seq(tok("INT") + (Repeat(Seq(tok("COMMA") + tok("INT")), 0, None),))
    assert grammar.rule(IGNORE_RULE).body == Repeat(RuleRef("WS"), 0, None)
    assert grammar.rule("WS").body == Repeat(CharClass(((9, 10), (12, 13), (32, 32))), 1, None)
    dfa = dfa_of(text)
    for s in ["(1,2)", " ( 1 , 2 ) ", "\n(1\t,2)\n", "(1)"]:
        assert dfa.fullmatch(s.encode()) and lark_accepts(text, s)
    for s in ["(1 2)", "( 1,)", "(1 , 2", "( 1 2 )"]:
        assert not dfa.fullmatch(s.encode()) and not lark_accepts(text, s)
    assert not dfa.fullmatch(b"(1 0)")


def test_ignore_several_terminals_and_expressions() -> None:
    text = 'start: "a"+\n%ignore " "\n%ignore /#[^\\n]*\\n/\n'
    grammar, _ = parse_lark(text)
    assert grammar.rule(IGNORE_RULE).body == Repeat(Choice((RuleRef("__IGNORE_0"), RuleRef("__IGNORE_1"))), 0, None)
    for s in ["a a", "a#x\na", " aa # c\n"]:
        assert dfa_of(text).fullmatch(s.encode()) and lark_accepts(text, s)


def test_tree_shaping_is_accepted_silently() -> None:
    text = '?start: _pair | kw\n_pair: item item\n!kw: "k"\nitem: "i"\n'
    grammar, notes = parse_lark(text)
    assert notes == ()
    assert [r.name for r in grammar.rules][:4] == ["start", "_pair", "kw", "item"]


def test_templates_are_instantiated_as_lark_names_them() -> None:
    text = 'start: _sep{item, ","} sep2{"x"}\n_sep{x, s}: x (s x)*\nsep2{y}: _sep{y, ";"}\nitem: "i"\n'
    grammar, _ = parse_lark(text)
    names = [r.name for r in grammar.rules]
    assert "_sep{item,COMMA}" in names and "sep2{X}" in names and "_sep{X,SEMICOLON}" in names
    item, comma = RuleRef("item"), RuleRef("COMMA")
    assert grammar.rule("_sep{item,COMMA}").body == Seq((item, Repeat(Seq((comma, item)), 0, None)))
    assert lark_accepts(text, "i,ix;x") and dfa_of(text).fullmatch(b"i,ix;x")


def test_runaway_template_is_an_error() -> None:
    text = 'start: t{A}\nt{x}: x | t{w{x}}\nw{x}: x x\nA: "a"\n'
    with pytest.raises(GrammarError) as e:
        parse_lark(text)
    assert e.value.code == "lark-template" and e.value.line == 2


def test_priorities_aliases_and_declare_give_notes() -> None:
    text = 'start: a -> first\n  | b\na.2: A\nb: "b"\nA.3: "a"\n%declare UNUSED\n'
    _, notes = parse_lark(text)
    messages = [n.message for n in notes]
    assert all(n.code == "lark-ignored" and n.severity == "info" for n in notes)
    assert any("priority .2 of rule 'a'" in m for m in messages)
    assert any("priority .3 of terminal A" in m for m in messages)
    assert any("alias '-> first'" in m for m in messages)
    assert any("%declare UNUSED" in m for m in messages)
    assert [n.span.line for n in notes if "rule 'a'" in n.message] == [3]


def test_lazy_and_anchor_warnings() -> None:
    _, notes = parse_lark("start: A B\nA: /a+?/\nB: /^b$/\n")
    assert sorted(n.code for n in notes) == ["lark-anchor", "lark-lazy"]
    assert all(n.severity == "warning" for n in notes)


def test_missing_start_lists_the_rules() -> None:
    with pytest.raises(GrammarError) as e:
        parse_lark('value: "v"\nother: value\nt{x}: x\n')
    assert e.value.code == "missing-start"
    assert "'start'" in e.value.message and "other, value" in e.value.message
    grammar, _ = parse_lark('value: "v"\nother: value\n', start="other")
    assert grammar.start == "other" and grammar.rules[0].name == "other"


@pytest.mark.parametrize("text, line, column, needle", [
    ('start: "a"\nfoo bar\n', 2, 5, "unexpected 'bar'"),
    ('start: ("a"\n', 1, 12, "expected one of: ')'"),
    ('start: "a" ->\n', 1, 14, "Alias expects lowercase name"),
    ('start: "a\nb"\n', 1, 8, "unexpected character"),
    ("start: a b\na: \"x\"\n", 1, 10, "'b' used but not defined"),
    ('start: "a"\nstart: "b"\n', 1, 1, "defined more than once"),
])
def test_errors_have_positions(text: str, line: int, column: int, needle: str) -> None:
    with pytest.raises(GrammarError) as e:
        parse_lark(text, source="g.lark")
    assert (e.value.line, e.value.column) == (line, column), str(e.value)
    assert needle in e.value.message and str(e.value).startswith(f"g.lark:{line}:{column}: ")


@pytest.mark.parametrize("text, code", [
    ("start: A\nA: /(?<=a)b/\n", "regex-unsupported"),
    ("start: A\nA: /a\\1/\n", "lark-terminal"),
    ("start: A\nA: /(/\n", "lark-terminal"),
    ("start: A\nA: /^a/m\n", "lark-flag"),
    ("start: A\nA: /a/l\n", "lark-flag"),
    ("%declare X\nstart: X\n", "lark-declare"),
    ("%declare X\nA: X\nstart: A\n", "lark-declare"),
    ("%declare foo\nstart: \"a\"\n", "lark-declare"),
    ("%import nothere.X\nstart: X\n", "lark-import"),
    ("start: A\nA: \"a\" A\n", "lark-grammar"),
    ("start: A\nA: \n", "lark-grammar"),
    ("start: t{A, A}\nt{x}: x\nA: \"a\"\n", "lark-grammar"),
    ("start: \"a\"\n%ignore WS\n", "lark-grammar"),
    ("start: \"a\"~3..1\n", "lark-grammar"),
    ("start: \"\\ud800\"\n", "lark-terminal"),
    ("", "missing-start"),
    ("start: A\nA: \"a\"?\n", "lark-terminal"),
    ("start: \"a\"\n%ignore /x*/\n", "lark-terminal"),
])
def test_rejections(text: str, code: str) -> None:
    assert code_of(text) == code


def test_regex_error_names_the_terminal() -> None:
    with pytest.raises(GrammarError) as e:
        parse_lark("start: STRING\nSTRING: /\"(?!\")x/\n")
    assert "terminal STRING" in e.value.message and "lookahead" in e.value.message
    assert e.value.line == 2


def test_budgets() -> None:
    chain = "\n".join(["start: T0", 'T40: "a"'] + [f"T{i}: T{i + 1} T{i + 1}" for i in range(40)]) + "\n"
    with pytest.raises(BudgetExceeded):
        parse_lark(chain)
    with pytest.raises(BudgetExceeded):
        parse_lark('start: "a"~100000\n')
    with pytest.raises(BudgetExceeded):
        parse_lark('start: A\nA: "a"~5..20\n', limits=Limits(max_repeat=10))
    with pytest.raises(BudgetExceeded):
        parse_lark('start: "a"\n', limits=Limits(max_pattern_length=5))


def test_bad_arguments() -> None:
    with pytest.raises(TypeError):
        parse_lark(b"start: A")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        parse_lark('start: "a"', import_paths="dir")
    with pytest.raises(TypeError):
        parse_lark('start: "a"', limits=None)  # type: ignore[arg-type]


def test_import_paths_and_relative_imports() -> None:
    grammars = str(CORPUS / "tests" / "grammars")
    grammar, _ = parse_lark("%import ab (startab, A, B)\nstart: startab\n", import_paths=[grammars])
    check_grammar(grammar)
    assert {"startab", "ab__expr", "A", "B"} <= {r.name for r in grammar.rules}
    text, _, source = load("tests/test_relative_import.lark")
    grammar, _ = parse_lark(text, source=source)
    check_grammar(grammar)
    with pytest.raises(GrammarError) as e:
        parse_lark(text, source="/nonexistent/g.lark")
    assert e.value.code == "lark-import" and e.value.line is not None


# ---------------------------------------------------------------- robustness


_SNIPPETS = ['"', "/", "(", ")", "[", "]", "{", "}", "|", "*", "+", "?", "~ 3..1", "~ 2", "->", ":", ".",
             ".5", "\n", " ", "%ignore X", "%declare Y", "%import common.WS", "%override", "%extend",
             '"a"i', "/(?<=a)/", "/a/x", "_x", "X", "start", "//", "#", "\\", "\"\\\"", "..", ","]


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, str, str]:
    relpath = draw(st.sampled_from(CORPUS_FILES))
    text, start, source = load(relpath)
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["insert", "delete", "duplicate"]))
        if op == "insert":
            text = text[:i] + draw(st.sampled_from(_SNIPPETS)) + text[i:]
        elif op == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 12)):]
        else:
            j = draw(st.integers(0, len(text)))
            text = text[:i] + text[min(i, j):max(i, j)][:200] + text[i:]
    return text, start, source


@given(mutated())
@settings(max_examples=examples(200))
def test_mutated_corpus_grammars_parse_or_raise_grammar_error(case: tuple[str, str, str]) -> None:
    text, start, source = case
    try:
        grammar, _ = parse_lark(text, start=start, source=source)
    except GrammarError as e:
        assert e.message
        return
    check_grammar(grammar)
