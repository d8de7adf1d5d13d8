"""Tests for the GBNF frontend and printer (grammask.compiler.frontends.gbnf)."""
from __future__ import annotations


import pytest
from grammask.compiler.support.errors import BudgetExceeded, GrammarError
from grammask.compiler.frontends.gbnf import is_gbnf_name, parse_gbnf, simplify, to_gbnf
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
    complement_ranges,
    walk,
)
from grammask.compiler.support.diagnostics import Span
from grammask.compiler.support.limits import Limits
from hypothesis import given, settings
from hypothesis import strategies as st

from ..support import paths
from ..support.budget import examples

DATA = paths.DATA / "gbnf"
CORPUS = {p.name: p.read_text(encoding="utf-8") for p in sorted(DATA.glob("*.gbnf"))}
ANY = CharClass(complement_ranges(()))
NEVER = CharClass(())


def lit(text: str) -> Literal:
    return Literal(text.encode("utf-8"))


def cls(*ranges: tuple[int, int] | str, negated: bool = False) -> CharClass:
    return CharClass.of([(ord(r), ord(r)) if isinstance(r, str) else r for r in ranges], negated)


def body(text: str) -> Node:
    """The body of the single rule in `root ::= text`."""
    grammar = parse_gbnf(f"root ::= {text}")
    assert [r.name for r in grammar.rules] == ["root"]
    return grammar.rules[0].body


def error(text: str, **kwargs) -> GrammarError:
    with pytest.raises(GrammarError) as info:
        parse_gbnf(text, **kwargs)
    return info.value


# ------------------------------------------------------------------------------------ corpus


def test_corpus_is_vendored_with_its_licence() -> None:
    assert len(CORPUS) == 8
    assert "MIT License" in (DATA / "LICENSE").read_text(encoding="utf-8")
    assert "llama.cpp" in (DATA / "SOURCE.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_parses_and_round_trips(name: str) -> None:
    grammar = parse_gbnf(CORPUS[name], source=name)
    assert grammar.start == "root" and grammar.rule("root") is not None
    assert grammar.source == name
    for r in grammar.rules:
        assert r.span is not None and r.span.source == name
        for node in walk(r.body):
            assert node.span is not None and node.span.source == name, (r.name, node)
    printed = to_gbnf(grammar)
    again = parse_gbnf(printed)
    assert again == grammar
    assert to_gbnf(again) == printed


def test_corpus_rule_counts_and_shapes() -> None:
    counts = {name: len(parse_gbnf(text).rules) for name, text in CORPUS.items()}
    assert counts == {"arithmetic.gbnf": 6, "c.gbnf": 21, "chess.gbnf": 5, "english.gbnf": 5,
                      "japanese.gbnf": 6, "json.gbnf": 7, "json_arr.gbnf": 8, "list.gbnf": 2}
    json = parse_gbnf(CORPUS["json.gbnf"])
    assert json.rule("ws").body == Choice((EMPTY, lit(" "), Seq((lit("\n"), Repeat(cls(" ", "\t"), 0, 20)))))
    english = parse_gbnf(CORPUS["english.gbnf"])
    assert english.rule("punctuation").body == cls(*"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
    japanese = parse_gbnf(CORPUS["japanese.gbnf"])
    assert japanese.rule("hiragana").body == cls((0x3041, 0x309F))
    items = parse_gbnf(CORPUS["list.gbnf"]).rule("item").body
    assert items == Seq((lit("- "), Repeat(cls("\r", "\n", "\x0b", "\x0c", "\x85", "\u2028", "\u2029",
                                               negated=True), 1, None), lit("\n")))


# ------------------------------------------------------------------------------------ syntax


@pytest.mark.parametrize("text, expected", [
    ('"abc"', lit("abc")),
    ('""', EMPTY),
    ('"a" "b" "c"', lit("abc")),
    ('"a" "" "b"', lit("ab")),
    ('"中文😀"', lit("中文😀")),
    ("x", RuleRef("x")),
    ("rule-1", RuleRef("rule-1")),
    ("0-x", RuleRef("0-x")),
    ("-", RuleRef("-")),
    ('factor("*")', Seq((RuleRef("factor"), lit("*")))),
    (".", ANY),
    ("[a]", cls("a")),
    ("[abc]", cls("a", "b", "c")),
    ("[a-z0-9_]", cls((0x61, 0x7A), (0x30, 0x39), "_")),
    ("[^a]", cls("a", negated=True)),
    ("[^^]", cls("^", negated=True)),
    ("[a^]", cls("a", "^")),
    ("[-a]", cls("-", "a")),
    ("[a-]", cls("a", "-")),
    ("[a-c-e]", cls((0x61, 0x63), "-", "e")),
    ("[--/]", cls((0x2D, 0x2F))),
    ('[["#(]', cls("[", '"', "#", "(")),
    ("[ぁ-ゟ]", cls((0x3041, 0x309F))),
    ("[\\uD800-\\uDFFF]", NEVER),
    ("[\\x00-\\U0010FFFF]", ANY),
    ("[^\\x00-\\U0010FFFF]", NEVER),
    ("[^\\n]", cls("\n", negated=True)),
    ('"a" | "b"', Choice((lit("a"), lit("b")))),
    ('| "a"', Choice((EMPTY, lit("a")))),
    ('"a" |', Choice((lit("a"), EMPTY))),
    ('"a" | ("b" | "c")', Choice((lit("a"), lit("b"), lit("c")))),
    ('("a" | "b") "c"', Seq((Choice((lit("a"), lit("b"))), lit("c")))),
    ('"a" ("b" c)', Seq((lit("ab"), RuleRef("c")))),
    ("(x)", RuleRef("x")),
    ("()", EMPTY),
    ("", EMPTY),
    ("x*", Repeat(RuleRef("x"), 0, None)),
    ("x+", Repeat(RuleRef("x"), 1, None)),
    ("x?", Repeat(RuleRef("x"), 0, 1)),
    ("x {3}", Repeat(RuleRef("x"), 3, 3)),
    ("x{ 2 , }", Repeat(RuleRef("x"), 2, None)),
    ("x{2,5}", Repeat(RuleRef("x"), 2, 5)),
    ("x{0,0}", Repeat(RuleRef("x"), 0, 0)),
    ("x{1}", RuleRef("x")),
    ('"a" "b"{1,1} "c"', lit("abc")),
    ('"ab"*', Repeat(lit("ab"), 0, None)),
    ('"a" "b"*', Seq((lit("a"), Repeat(lit("b"), 0, None)))),
    ("x**", Repeat(Repeat(RuleRef("x"), 0, None), 0, None)),
    ("x{2}?", Repeat(Repeat(RuleRef("x"), 2, 2), 0, 1)),
    ("()*", Repeat(EMPTY, 0, None)),
    ("(x y)+", Repeat(Seq((RuleRef("x"), RuleRef("y"))), 1, None)),
    ("x # a comment", RuleRef("x")),
])
def test_syntax(text: str, expected: Node) -> None:
    assert body(text) == expected


@pytest.mark.parametrize("escape, char", [
    ("\\n", "\n"), ("\\t", "\t"), ("\\r", "\r"), ("\\\\", "\\"), ('\\"', '"'), ("\\[", "["),
    ("\\]", "]"), ("\\x41", "A"), ("\\xe9", "é"), ("\\xFF", "ÿ"), ("\\x00", "\0"),
    ("\\u00e9", "é"), ("\\u4E2D", "中"), ("\\U0001F600", "😀"), ("\\U0010FFFF", "\U0010FFFF"),
])
def test_escapes_in_strings_and_classes(escape: str, char: str) -> None:
    assert body(f'"{escape}"') == lit(char)
    assert body(f"[{escape}]") == cls(char)
    assert body(f"[{escape}-{escape}]") == cls(char)


def test_dot_matches_every_scalar_value_including_newline() -> None:
    assert body(".") == CharClass(((0, 0xD7FF), (0xE000, 0x10FFFF)))
    assert to_gbnf(body(".")) == "root ::= .\n"


def test_raw_characters_need_no_escape() -> None:
    assert body('"a\nb\tc]["') == lit("a\nb\tc][")
    assert body("[\n\t\"]") == cls("\n", "\t", '"')
    assert body('"#"') == lit("#")
    assert body('"\\x414"') == lit("A4")


def test_multi_line_rules_and_comments() -> None:
    text = ("# leading comment\n\n"
            "root ::=\n"
            "  ( \"a\"   # first\n"
            "    b\n"
            "  )* |\n"
            "  # between alternatives\n"
            "  c\n"
            "\n"
            "b ::= \"b\" # trailing\r\n"
            "c ::= \"c\"\r"
            "d ::=\n")
    grammar = parse_gbnf(text)
    assert [r.name for r in grammar.rules] == ["root", "b", "c", "d"]
    assert grammar.rule("root").body == Choice((Repeat(Seq((lit("a"), RuleRef("b"))), 0, None), RuleRef("c")))
    assert grammar.rule("d").body == EMPTY


def test_grammar_fields_and_spans() -> None:
    grammar = parse_gbnf('root ::= "ab" [x]* | y\nnext ::= (z)\n', source="g.gbnf", start="next")
    assert grammar.start == "next" and grammar.source == "g.gbnf"
    root, nxt = grammar.rules
    assert root.span == Span(1, 1, 1, 22, "g.gbnf")
    choice = root.body
    assert isinstance(choice, Choice) and choice.span == Span(1, 10, 1, 22, "g.gbnf")
    seq, ref = choice.alternatives
    assert seq.span == Span(1, 10, 1, 18, "g.gbnf")
    assert seq.items[0].span == Span(1, 10, 1, 13, "g.gbnf")
    assert seq.items[1].span == Span(1, 15, 1, 18, "g.gbnf")
    assert seq.items[1].item.span == Span(1, 15, 1, 17, "g.gbnf")
    assert ref.span == Span(1, 22, 1, 22, "g.gbnf")
    assert nxt.body.span == Span(2, 10, 2, 12, "g.gbnf")
    multi = parse_gbnf('r ::= (\n  "a"\n  | b)\n').rules[0]
    assert multi.body.span == Span(1, 7, 3, 6, None)
    empty = parse_gbnf("r ::= | x\ns ::=\n").rules
    assert empty[0].body.alternatives[0].span == Span(1, 7, 1, 7, None)
    assert empty[1].body.span == Span(2, 3, 2, 5, None)


def test_empty_and_partial_grammars_are_not_errors() -> None:
    assert parse_gbnf("") == Grammar(())
    assert parse_gbnf("  # nothing\n\n") == Grammar(())
    grammar = parse_gbnf("a ::= undefined-rule\n")
    assert grammar.rule("root") is None and grammar.rule("a").body == RuleRef("undefined-rule")


# ------------------------------------------------------------------------------------ errors


@pytest.mark.parametrize("text, line, column, fragments", [
    ('root ::= "a" @', 1, 14, ["unexpected character '@'", "expected one of:", "'|'"]),
    ("root ::= \"a\"\n  \\ b", 2, 3, ["unexpected character '\\'"]),
    ('root ::= "abc', 1, 10, ["unterminated string"]),
    ('root ::= "ab\\"', 1, 10, ["unterminated string"]),
    ("root ::= [abc", 1, 10, ["unterminated character class"]),
    ('root "a"', 1, 6, ["expected '::='"]),
    ("root", 1, 5, ["unexpected end of the grammar", "expected '::='"]),
    ('root ::= "\\q"', 1, 11, ["unknown escape '\\q'", "\\xNN"]),
    ('root ::= "x\\-"', 1, 12, ["unknown escape '\\-'"]),
    ("root ::= [a\\^]", 1, 12, ["unknown escape '\\^'"]),
    ('root ::= "\\x4"', 1, 11, ["'\\x' needs exactly 2 hex digits"]),
    ('root ::= "\\u12G4"', 1, 11, ["'\\u' needs exactly 4 hex digits"]),
    ('root ::= "\\U0001F60"', 1, 11, ["'\\U' needs exactly 8 hex digits"]),
    ('root ::= "\\U00110000"', 1, 11, ["above U+10FFFF"]),
    ('root ::= "\\uD83D"', 1, 11, ["lone surrogate U+D83D"]),
    ("root ::= [a-cz-a]", 1, 14, ["reversed character range 'z-a'"]),
    ("root ::=\n  [\n z-a]", 3, 2, ["reversed character range"]),
    ("root ::= []", 1, 10, ["empty character class '[]'"]),
    ("root ::= [^]", 1, 10, ["empty character class '[^]'"]),
    ("root ::= x <[12a]>", 1, 12, ["malformed token id list '<[12a]>'"]),
    ("root ::= <|im_end x", 1, 10, ["malformed or misplaced token reference '<|im_end x'"]),
    ("root ::= !<think x", 1, 10, ["malformed or misplaced token reference '!<think x'"]),
    ("root ::= ( <think )", 1, 12, ["malformed or misplaced token reference '<think )'"]),
    ("root ::= x ! y", 1, 12, ["malformed or misplaced token reference '!'"]),
    ("<think> ::= x", 1, 1, ["malformed or misplaced token reference '<think>'"]),
    ('a ::= "x"\nb ::= "y"\na ::= "z"', 3, 1, ["rule 'a' is defined twice; first at 1:1"]),
    ('root ::= "a"\n  "b"', 2, 3, ["expected a rule definition", "end of its line"]),
    ('root ::= "a"\n| "b"', 2, 1, ["expected a rule definition"]),
    ('root ::= "a" b ::= "c"', 1, 16, ["unexpected '::='", "new line"]),
    ('root ::=\nb ::= "c"', 2, 3, ["unexpected '::='"]),
    ("root ::= x{2\n}", 1, 13, ["unexpected line break", "expected one of: ',', '}'"]),
    ("root ::= (x", 1, 10, ["unbalanced parenthesis: '(' is never closed"]),
    ("root ::= (x))", 1, 13, ["')' has no matching '('"]),
    ("root ::= *", 1, 10, ["nothing to repeat: '*'"]),
    ("root ::= x | {2}", 1, 14, ["nothing to repeat: '{'"]),
    ('root ::= ""*', 1, 10, ["nothing to repeat", 'empty string ""']),
    ("root ::= x{,3}", 1, 11, ["write {0,n}"]),
    ("root ::= x{3,2}", 1, 11, ["minimum 3 is greater than maximum 2"]),
    ("root ::= x{}", 1, 12, ["unexpected '}'"]),
    ('root ::= "a\0"', 1, 12, ["NUL character"]),
    ("\0", 1, 1, ["NUL character"]),
    ("root ::= x\x0c", 1, 11, ["unexpected character"]),
    ("\ufeffroot ::= x", 1, 1, ["unexpected character"]),
])
def test_errors(text: str, line: int, column: int, fragments: list[str]) -> None:
    e = error(text)
    assert (e.line, e.column) == (line, column), str(e)
    for fragment in fragments:
        assert fragment in e.message, e.message
    assert str(e).startswith(f"{line}:{column}: ")


def test_error_carries_source() -> None:
    e = error('root ::= "', source="my.gbnf")
    assert e.source == "my.gbnf" and str(e).startswith("my.gbnf:1:10: ")


def test_budgets() -> None:
    with pytest.raises(BudgetExceeded) as info:
        parse_gbnf('root ::= "a"\nb ::= x{10001}')
    assert (info.value.line, info.value.column) == (2, 9)
    assert "Limits.max_repeat=10000" in info.value.message
    with pytest.raises(BudgetExceeded) as info:
        parse_gbnf("root ::= x{1," + "9" * 5000 + "}")
    assert (info.value.line, info.value.column) == (1, 14) and "5000 digits" in info.value.message
    assert body("x{10000}") == Repeat(RuleRef("x"), 10000, 10000)
    assert parse_gbnf("root ::= x{50}", limits=Limits(max_repeat=50)).rules[0].body.max == 50
    with pytest.raises(BudgetExceeded, match="max_repeat=5"):
        parse_gbnf("root ::= x{2,6}", limits=Limits(max_repeat=5))
    with pytest.raises(BudgetExceeded, match="max_pattern_length=10"):
        parse_gbnf("root ::= xyz", limits=Limits(max_pattern_length=10))


def test_argument_types() -> None:
    with pytest.raises(TypeError):
        parse_gbnf(b"root ::= x")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        parse_gbnf(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        parse_gbnf("root ::= x", limits={"max_repeat": 3})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        parse_gbnf("root ::= x", start=None)  # type: ignore[arg-type]


def test_deep_nesting_does_not_recurse() -> None:
    n = 100_000
    e = error("root ::= " + "(" * n)
    assert "never closed" in e.message
    assert body("(" * 20_000 + '"x"' + ")" * 20_000) == lit("x")
    deep = body("x" + "*" * 20_000)
    printed = to_gbnf(deep)
    assert printed == "root ::= x" + "*" * 20_000 + "\n"
    assert to_gbnf(parse_gbnf(printed)) == printed
    nested = parse_gbnf("root ::= " + '("a" ' * 10_000 + ")*" * 10_000).rules[0].body
    assert to_gbnf(nested).startswith('root ::= ("a" ("a" ')
    assert simplify(nested) is not None


# ------------------------------------------------------------------------------------ printer


@pytest.mark.parametrize("node, text", [
    (lit('a"b\\c\n\t\r'), '"a\\"b\\\\c\\n\\t\\r"'),
    (lit("\x00\x1f\x7f\x85\u2028\ufeff"), '"\\x00\\x1F\\x7F\\x85\\u2028\\uFEFF"'),
    (lit("中[]#😀 "), '"中[]#😀 "'),
    (lit("\U000E0001"), '"\\U000E0001"'),
    (EMPTY, '""'),
    (NOTHING, "[^\\x00-\\U0010FFFF]"),
    (NEVER, "[^\\x00-\\U0010FFFF]"),
    (ANY, "."),
    (cls("a", "b"), "[ab]"),
    (cls((0x61, 0x7A)), "[a-z]"),
    (cls("a", negated=True), "[^a]"),
    (cls("]", "\\", "-", "a"), "[\\x2D\\\\\\]a]"),
    (cls("[", "]"), "[[\\]]"),
    (cls("]", "\\", "[", "-", "^"), "[\\x2D[-^]"),
    (cls("^", "a"), "[\\x5Ea]"),
    (cls("^", negated=True), "[^^]"),
    (cls("\n", "\x00", "\u0085"), "[\\x00\\n\\x85]"),
    (cls((0x41, 0xD7FF), (0xE000, 0xE005)), "[A-\\uE005]"),
    (CharClass(((0, 0xD7FF),)), "[\\x00-\\uD7FF]"),
    (Seq((lit("a"), RuleRef("b"))), '"a" b'),
    (Seq((lit("a"), lit("b"))), '"ab"'),
    (Choice((lit("a"), EMPTY)), '"a" | ""'),
    (Seq((Choice((lit("a"), lit("b"))), RuleRef("c"))), '("a" | "b") c'),
    (Repeat(Seq((lit("a"), RuleRef("b"))), 0, None), '("a" b)*'),
    (Repeat(Choice((lit("a"), RuleRef("b"))), 1, None), '("a" | b)+'),
    (Repeat(lit("ab"), 0, 1), '"ab"?'),
    (Repeat(EMPTY, 2, 3), "(){2,3}"),
    (Repeat(RuleRef("x"), 2, None), "x{2,}"),
    (Repeat(RuleRef("x"), 4, 4), "x{4}"),
    (Repeat(RuleRef("x"), 1, 1), "x"),
    (Repeat(Repeat(RuleRef("x"), 0, 1), 0, None), "x?*"),
])
def test_printer(node: Node, text: str) -> None:
    assert to_gbnf(node) == f"root ::= {text}\n"
    assert body(text) == simplify(node)


def test_print_grammar_and_start() -> None:
    g = Grammar((Rule("root", Seq((lit("a"), RuleRef("rule-1")))), Rule("rule-1", NOTHING)), start="rule-1")
    text = to_gbnf(g)
    assert text == 'root ::= "a" rule-1\nrule-1 ::= [^\\x00-\\U0010FFFF]\n'
    again = parse_gbnf(text, start="rule-1")
    assert again.start == "rule-1" and again.rules[1].body == NEVER
    assert to_gbnf(Grammar(())) == ""


def test_printer_rejects_what_gbnf_cannot_say() -> None:
    with pytest.raises(ValueError, match="not valid UTF-8"):
        to_gbnf(Literal(b"\xff"))
    with pytest.raises(ValueError, match="rule name 'a.b'"):
        to_gbnf(Grammar((Rule("a.b", EMPTY),)))
    with pytest.raises(ValueError, match="rule name 'x y'"):
        to_gbnf(Seq((RuleRef("x y"), EMPTY)))
    assert is_gbnf_name("rule-1") and is_gbnf_name("0") and not is_gbnf_name("é") and not is_gbnf_name("")


# ------------------------------------------------------------------------------------ properties

NAMES = ["root", "r0", "r1", "rule-1", "a-b-c", "X9", "0", "-"]
SPECIAL = '"\\\n\t\r]-^[#|() é中😀\x00\x7f\u2028'
code_points = st.one_of(st.sampled_from([ord(c) for c in SPECIAL]), st.integers(0x20, 0x7E),
                        st.integers(0, 0x10FFFF))
texts = st.lists(code_points.filter(lambda c: not 0xD800 <= c <= 0xDFFF), min_size=1, max_size=4).map(
    lambda cs: "".join(map(chr, cs)))
leaves = st.one_of(
    texts.map(lit),
    st.tuples(st.lists(st.tuples(code_points, code_points).map(sorted), max_size=4), st.booleans()).map(
        lambda t: CharClass.of([tuple(r) for r in t[0]], t[1])),
    st.sampled_from([ANY, NEVER, EMPTY, NOTHING]),
    st.sampled_from(NAMES + ["undefined"]).map(RuleRef),
)
bounds = st.one_of(
    st.sampled_from([(0, None), (1, None), (0, 1), (1, 1)]),
    st.tuples(st.integers(0, 5), st.one_of(st.none(), st.integers(0, 4))).map(
        lambda t: (t[0], None if t[1] is None else t[0] + t[1])),
)


def _extend(kids: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
    return st.one_of(
        st.lists(kids, max_size=4).map(lambda xs: Seq(tuple(xs))),
        st.lists(kids, max_size=3).map(lambda xs: Choice(tuple(xs))),
        st.tuples(kids, bounds).map(lambda t: Repeat(t[0], *t[1])),
    )


trees = st.recursive(leaves, _extend, max_leaves=14)
grammars = st.tuples(
    st.lists(st.sampled_from(NAMES), unique=True, max_size=5), st.data()
)


@settings(max_examples=examples(300))
@given(tree=trees)
def test_print_parse_round_trip(tree: Node) -> None:
    printed = to_gbnf(tree)
    parsed = parse_gbnf(printed).rules[0].body
    assert all(n.span is not None for n in walk(parsed))
    assert parsed == simplify(tree)
    assert to_gbnf(parsed) == printed
    assert simplify(parsed) == parsed


@settings(max_examples=examples(100))
@given(names=st.lists(st.sampled_from(NAMES), unique=True, max_size=5), data=st.data())
def test_grammar_round_trip(names: list[str], data: st.DataObject) -> None:
    rules = tuple(Rule(n, data.draw(trees)) for n in names)
    start = data.draw(st.sampled_from(NAMES))
    grammar = Grammar(rules, start=start)
    printed = to_gbnf(grammar)
    again = parse_gbnf(printed, start=start)
    assert again == Grammar(tuple(Rule(r.name, simplify(r.body)) for r in rules), start=start)
    assert to_gbnf(again) == printed


PIECES = ["root", " ::= ", "::=", "x", "ab", "-", '"', "\\", "[", "]", "^", "(", ")", "|", "*", "+", "?",
          "{", "}", ",", "2", "10", "\n", "\r", " ", "\t", "#", ".", "<", ">", "!", "\\x", "\\u", "\\n",
          "é", "\0", "\ud800", "a-z", "<[", "]>"]
gbnf_like = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


def _parses_cleanly(text: str) -> Grammar | None:
    try:
        grammar = parse_gbnf(text)
    except GrammarError:
        return None
    assert isinstance(grammar, Grammar)
    return grammar


@settings(max_examples=examples(500))
@given(text=st.one_of(st.text(max_size=60), gbnf_like))
def test_arbitrary_text_parses_or_raises_grammar_error(text: str) -> None:
    grammar = _parses_cleanly(text)
    if grammar is not None:
        printed = to_gbnf(grammar)
        assert parse_gbnf(printed) == grammar


@settings(max_examples=examples(300))
@given(name=st.sampled_from(sorted(CORPUS)), data=st.data())
def test_mutated_corpus_parses_or_raises_grammar_error(name: str, data: st.DataObject) -> None:
    text = CORPUS[name]
    for _ in range(data.draw(st.integers(1, 3))):
        pos = data.draw(st.integers(0, len(text)))
        op = data.draw(st.sampled_from(["delete", "insert", "replace"]))
        char = data.draw(st.one_of(st.sampled_from(PIECES), st.characters()))
        if op == "delete":
            text = text[:pos] + text[pos + 1:]
        elif op == "insert":
            text = text[:pos] + char + text[pos:]
        else:
            text = text[:pos] + char + text[pos + 1:]
    grammar = _parses_cleanly(text)
    if grammar is not None:
        assert parse_gbnf(to_gbnf(grammar)) == grammar
