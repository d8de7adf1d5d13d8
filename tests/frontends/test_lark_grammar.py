"""The Lark frontend: Lark's corpus, the supported dialect, and Lark's own parser as the oracle."""
from __future__ import annotations

import functools
import math
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from grammask.compiler.support.errors import BudgetExceeded, GrammarError
from grammask.compiler.ir.nodes import CharClass, Choice, Grammar, Literal, Node, Repeat, RuleRef, Seq, references
from grammask.compiler.frontends.lark_grammar import IGNORE_RULE, parse_lark
from grammask.compiler.frontends.lark_terminals import _cased, _fold_char, shorthand_ranges
from grammask.compiler.support.limits import Limits
from grammask.compiler.automata.build import ir_to_dfa
from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Lark
from lark.exceptions import LarkError
from lark.lexer import Lexer, Token

from .support.budget import examples
from .support.cfg_strategies import node_height, rule_heights

CORPUS = Path(__file__).parent / "data" / "lark"
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


def first_rule(text: str) -> str:
    names = re.findall(r"^[?!]*(_?[a-z][_a-z0-9]*)[ \t]*(?:\{[^}]*\})?[ \t]*(?:\.-?\d+)?[ \t]*:", text, re.MULTILINE)
    return "start" if "start" in names or not names else names[0]


def load(relpath: str) -> tuple[str, str, str]:
    path = CORPUS / relpath
    text = path.read_text(encoding="utf-8")
    return text, first_rule(text), str(path)


def check_grammar(grammar: Grammar) -> None:
    """Every reference resolves, the start rule exists, names are unique."""
    names = {r.name for r in grammar.rules}
    assert grammar.start in names
    for rule in grammar.rules:
        for ref in references(rule.body):
            assert ref.name in names, (rule.name, ref.name)


def code_of(text: str, **kwargs: object) -> str:
    try:
        parse_lark(text, **kwargs)  # type: ignore[arg-type]
    except GrammarError as e:
        assert e.message and e.code, e
        return e.code
    return "ok"


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


COMMON = ["DIGIT", "HEXDIGIT", "INT", "SIGNED_INT", "DECIMAL", "FLOAT", "SIGNED_FLOAT", "NUMBER",
          "SIGNED_NUMBER", "ESCAPED_STRING", "LCASE_LETTER", "UCASE_LETTER", "LETTER", "WORD", "CNAME",
          "WS_INLINE", "WS", "CR", "LF", "NEWLINE", "SH_COMMENT", "CPP_COMMENT", "C_COMMENT", "SQL_COMMENT"]


@functools.cache
def oracle(text: str, start: str = "start") -> Lark:
    return Lark(text, parser="earley", lexer="dynamic_complete", start=start)


def lark_accepts(text: str, s: str, start: str = "start") -> bool:
    try:
        oracle(text, start).parse(s)
    except LarkError:
        return False
    return True


def inline(grammar: Grammar) -> Node:
    """The start rule of a non-recursive grammar with every reference substituted (rules are
    resolved depth-first, each once, so shared rules stay shared)."""
    done: dict[str, Node] = {}

    def sub(node: Node) -> Node:
        if isinstance(node, RuleRef):
            if node.name not in done:
                done[node.name] = sub(grammar.rule(node.name).body)
            return done[node.name]
        if isinstance(node, Seq):
            return Seq(tuple(map(sub, node.items)))
        if isinstance(node, Choice):
            return Choice(tuple(map(sub, node.alternatives)))
        if isinstance(node, Repeat):
            return Repeat(sub(node.item), node.min, node.max)
        return node

    return sub(RuleRef(grammar.start))


@functools.cache
def dfa_of(text: str):  # type: ignore[no-untyped-def]
    grammar, _ = parse_lark(text)
    return ir_to_dfa(inline(grammar))


def single(terminal: str) -> str:
    return f"%import common.{terminal}\nstart: {terminal}\n"


@pytest.mark.parametrize("terminal", COMMON)
def test_common_terminal_matches_what_lark_lexes(terminal: str) -> None:
    text = single(terminal)
    grammar, notes = parse_lark(text)
    assert notes == ()
    assert grammar.rule(terminal) is not None
    dfa = dfa_of(text)
    rng = random.Random(terminal)
    alphabet = "0a_Z.e+-\"\\ \t\n\r/*#x"
    samples = generated_strings(grammar, rng, 40) + ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
                                                     for _ in range(300)]
    for s in samples:
        assert dfa.fullmatch(s.encode()) == lark_accepts(text, s), (terminal, s)


def test_common_inner_string_terminals() -> None:
    assert code_of(single("_STRING_ESC_INNER")) == "lark-terminal"
    assert code_of(single("_STRING_INNER")) == "lark-terminal"


@pytest.mark.parametrize("s, ok", [
    ('""', True), ('"a"', True), ('"\\""', True), ('"\\\\"', True), ('"a\\\\"b"', False),
    ('"\\"', False), ('"a"b"', False), ('"a\nb"', False), ('"\\\n"', False), ('"é\\é"', True),
])
def test_escaped_string_rewrite_is_the_lexed_language(s: str, ok: bool) -> None:
    text = single("ESCAPED_STRING")
    assert lark_accepts(text, s) == ok
    assert dfa_of(text).fullmatch(s.encode()) == ok


@pytest.mark.parametrize("s, ok", [
    ("/**/", True), ("/***/", True), ("/* a */", True), ("/* a */ b */", False), ("/*/", False),
    ("/* \n * */", True), ("/**/*/", False), ("/*", False),
])
def test_c_comment_rewrite_stops_at_the_first_close(s: str, ok: bool) -> None:
    text = single("C_COMMENT")
    assert lark_accepts(text, s) == ok
    assert dfa_of(text).fullmatch(s.encode()) == ok


@given(st.text(alphabet='"\\a\n', max_size=7))
@settings(max_examples=examples(200))
def test_escaped_string_agrees_with_lark_everywhere(s: str) -> None:
    text = single("ESCAPED_STRING")
    assert dfa_of(text).fullmatch(s.encode()) == lark_accepts(text, s)


@given(st.text(alphabet="/* \n", max_size=8))
@settings(max_examples=examples(200))
def test_c_comment_agrees_with_lark_everywhere(s: str) -> None:
    text = single("C_COMMENT")
    assert dfa_of(text).fullmatch(s.encode()) == lark_accepts(text, s)


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


def test_case_insensitive_string() -> None:
    grammar, _ = parse_lark('start: "ab1"i\n')
    (name,) = [r.name for r in grammar.rules if r.name != "start"]
    assert grammar.rule(name).body == Seq((CharClass(((65, 65), (97, 97))), CharClass(((66, 66), (98, 98))),
                                           Literal(b"1")))
    dfa = ir_to_dfa(inline(grammar))
    assert all(dfa.fullmatch(s.encode()) for s in ("ab1", "AB1", "aB1"))
    assert not dfa.fullmatch(b"ab2")


def test_case_insensitive_uses_pythons_folding() -> None:
    text = 'start: "k"i "s"i /ß/i\n'
    dfa = dfa_of(text)
    for s in ("ksß", "KSẞ", "\u212a\u017fß"):
        assert lark_accepts(text, s)
        assert dfa.fullmatch(s.encode())


@pytest.mark.parametrize("ch", list("aZkKsSßẞİıµΣσςǅ") + ["\u212a", "\u017f", "\u0345", "\u1e9e", "\U00010400"])
def test_folding_one_character_matches_re(ch: str) -> None:
    universe = "".join(map(chr, range(0x110000)))
    expected = {m.group() for m in re.finditer("(?i:" + re.escape(ch) + ")", universe)}
    got = {chr(c) for lo, hi in _fold_char(ch) for c in range(lo, hi + 1)}
    assert got == expected
    assert max(map(ord, _cased())) < 0x20000


@pytest.mark.parametrize("pattern, flags", [
    (r"[a-z]+", "i"), (r"[^k]x", "i"), (r"[^\W\d]\w*", ""), (r"\d+\s\D", ""), (r"[\w-]+", "i"),
    (r"a . b  [ ]c", "x"), (r"a.b", "s"), (r"a.b", ""), (r"[^\s]+", ""), (r"x{2}|\{", ""),
])
def test_regex_flags_and_unicode_classes_match_re(pattern: str, flags: str) -> None:
    text = f"start: A\nA: /{pattern}/{flags}\n"
    dfa = dfa_of(text)
    compiled = re.compile(f"(?{flags}:{pattern})" if flags else pattern)
    rng = random.Random(pattern)
    pool = "aAkK\u212ax٣7_é ß\n-{}\u00a0b.Ü"
    for _ in range(400):
        s = "".join(rng.choice(pool) for _ in range(rng.randint(0, 5)))
        assert dfa.fullmatch(s.encode()) == bool(compiled.fullmatch(s)), (pattern, flags, s)


@pytest.mark.parametrize("definition", [
    'A: ("k"i | /x./s) "y"+',
    'A: /a b # c\n/x "é"i /[^a-c]/i',
    'A: ("ab"i | /[α-γ]+/i) ~ 1..2 /\\d?/',
    'A: /(?i:k)x/ /(?s:.)/',
])
def test_flags_stay_in_their_part_of_a_terminal(definition: str) -> None:
    text = f"start: A\n{definition}\n"
    dfa = dfa_of(text)
    rng = random.Random(definition)
    pool = "aAbBkK\u212axXyY\néÉ7γΓ _#"
    samples = ["".join(rng.choice(pool) for _ in range(rng.randint(1, 6))) for _ in range(1500)]
    samples += generated_strings(parse_lark(text)[0], rng, 100)
    for s in samples:
        assert dfa.fullmatch(s.encode()) == lark_accepts(text, s), (definition, s)


def test_terminals_follow_the_regex_lark_joins() -> None:
    text = 'start: A\nA: /x|yz/ "k"\n'
    assert re.compile(Lark(text).get_terminal("A").pattern.to_regexp()).pattern == "x|yzk"
    dfa = dfa_of(text)
    assert dfa.fullmatch(b"x") and dfa.fullmatch(b"yzk") and not dfa.fullmatch(b"xk")
    assert lark_accepts(text, "x") and not lark_accepts(text, "xk")


def test_unicode_shorthands_are_pythons() -> None:
    def has(letter: str, ch: str) -> bool:
        return any(lo <= ord(ch) <= hi for lo, hi in shorthand_ranges(letter))

    assert has("d", "\u0663") and has("w", "é") and has("s", "\u00a0") and not has("W", "é")
    assert not has("d", "a") and has("D", "a")


def test_imports_of_common() -> None:
    text = ("%import common (NUMBER, WS, CNAME, ESCAPED_STRING, SIGNED_NUMBER, INT, WORD, LETTER, DIGIT, NEWLINE)\n"
            "start: NUMBER CNAME ESCAPED_STRING SIGNED_NUMBER INT WORD LETTER DIGIT NEWLINE WS\n")
    grammar, notes = parse_lark(text)
    assert notes == ()
    names = [r.name for r in grammar.rules]
    assert names[0] == "start" and set(names[1:]) == set(re.findall(r"[A-Z_]+", text.split("\n")[1]))
    assert grammar.rule("NUMBER").span.line == 1


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


# ---------------------------------------------------------------- strings generated from the IR


def generate_tokens(grammar: Grammar, rng: random.Random, terminals: set[str] = frozenset(),  # type: ignore[assignment]
                    depth: int = 8) -> tuple[str, list[tuple[str, str]]] | None:
    """One random string of the grammar's language (bounded: shallowest choices past `depth`)
    and the tokens it was built from (rules named in `terminals`, in order); None when the
    language is empty."""
    h = rule_heights(grammar)
    if h[grammar.start] == math.inf:
        return None
    out: list[str] = []
    tokens: list[tuple[str, str]] = []

    def go(node: Node, d: int) -> None:
        if isinstance(node, Literal):
            out.append(node.data.decode())
        elif isinstance(node, CharClass):
            ascii_ = [(max(lo, 32), min(hi, 126)) for lo, hi in node.ranges if lo <= 126 and hi >= 32]
            lo, hi = rng.choice(ascii_ if ascii_ and rng.random() < 0.8 else node.ranges)
            out.append(chr(rng.randint(lo, min(hi, lo + 2000))))
        elif isinstance(node, Seq):
            for item in node.items:
                go(item, d)
        elif isinstance(node, Choice):
            options = [a for a in node.alternatives if node_height(a, h) < math.inf]
            if d > depth:
                best = min(node_height(a, h) for a in options)
                options = [a for a in options if node_height(a, h) == best]
            go(rng.choice(options), d)
        elif isinstance(node, Repeat):
            top = node.min if d > depth or node_height(node.item, h) == math.inf else node.min + rng.randint(0, 2)
            count = top if node.max is None else min(top, node.max)
            for _ in range(count):
                go(node.item, d)
        elif node.name in terminals:
            mark = len(out)
            go(grammar.rule(node.name).body, d + 1)
            tokens.append((node.name, "".join(out[mark:])))
        else:
            go(grammar.rule(node.name).body, d + 1)

    go(grammar.rule(grammar.start).body, 0)
    return "".join(out), tokens


def generate(grammar: Grammar, rng: random.Random, depth: int = 8) -> str | None:
    """One random string of the grammar's language, None when it is empty."""
    result = generate_tokens(grammar, rng, depth=depth)
    return None if result is None else result[0]


def generated_strings(grammar: Grammar, rng: random.Random, n: int) -> list[str]:
    out = [generate(grammar, rng) for _ in range(n)]
    return [s for s in out if s is not None]


SOUND = {
    "json": r"""
?start: value
?value: object | array | string | SIGNED_NUMBER -> number | "true" -> true | "null"
array: "[" [value ("," value)*] "]"
object: "{" [pair ("," pair)*] "}"
pair: string ":" value
string: ESCAPED_STRING
%import common (ESCAPED_STRING, SIGNED_NUMBER, WS)
%ignore WS
""",
    "arith": r"""
?start: sum
?sum: product | sum "+" product -> add | sum "-" product
?product: atom | product "*" atom
?atom: NUMBER | "-" atom | "(" sum ")" | NAME "(" _args? ")"
_args: sum ("," sum)*
NAME: /[^\W\d]\w*/
%import common.NUMBER
%ignore " "
""",
    "csv": r"""
start: row (_NL row)* _NL?
row: field ("," field)*
field: WORD | ESCAPED_STRING | SIGNED_NUMBER
_NL: /\r?\n/
%import common (WORD, ESCAPED_STRING, SIGNED_NUMBER)
""",
    "templates": r"""
start: _list{item, ";"} C_COMMENT?
_list{x, sep}: "[" [x (sep x)*] "]"
item: "kw"i ~ 1..2 | /[0-9a-f]{2}/i | INT
%import common (INT, C_COMMENT)
""",
    "unicode": r"""
start: word (" " word)* "."?
word: WORD2 | GREEK
WORD2: /\w+/
GREEK: /[α-ω]+/i
""",
}


@pytest.mark.parametrize("name", sorted(SOUND))
def test_generated_strings_are_accepted_by_lark(name: str) -> None:
    text = SOUND[name]
    grammar, _ = parse_lark(text)
    check_grammar(grammar)
    rng = random.Random(name)
    for s in generated_strings(grammar, rng, examples(60)):
        assert lark_accepts(text, s), (name, s)


REGULAR = {
    "list": '%import common (INT, WS)\nstart: "(" [INT ("," INT)*] ")"\n%ignore " "\n',
    "words": 'start: (WORD | NUM)+\nWORD: "ab"i | "c"\nNUM: /[0-9]+(\\.[0-9]+)?/\n%ignore " "\n',
    "keywords": 'start: "let" NAME "=" NAME ";"\nNAME: /[a-z]+/\n%ignore " "\n',
}


@pytest.mark.parametrize("name", sorted(REGULAR))
@settings(max_examples=examples(200))
@given(data=st.data())
def test_regular_grammars_agree_with_lark(name: str, data: st.DataObject) -> None:
    text = REGULAR[name]
    alphabet = "".join(sorted(set(re.sub(r"[^\w ;=(),.]", "", text)))) + " AB1"
    s = data.draw(st.text(alphabet=alphabet, max_size=10))
    assert dfa_of(text).fullmatch(s.encode()) == lark_accepts(text, s), s


def test_terminals_are_read_as_full_match_languages() -> None:
    text = "start: AB\nAB: /a|ab/\n"
    assert dfa_of(text).fullmatch(b"ab")
    assert not lark_accepts(text, "ab")


def test_scannerless_reading_differs_from_maximal_munch() -> None:
    text = "start: NAME NAME\nNAME: /[a-z]+/\n"
    assert dfa_of(text).fullmatch(b"ab")
    assert lark_accepts(text, "ab")
    for parser in (Lark(text, parser="lalr"), Lark(text, parser="earley", lexer="dynamic")):
        with pytest.raises(LarkError):
            parser.parse("ab")


_LITERALS = ['"a"', '"b"', '"ab"', '"k"i', '"Ab"i', '","', '"("', '"é"', '"x".."z"', '"ß"i']
_REGEXES = ["/[0-9]+/", "/[a-c]/", r"/\w/", r"/[^\W\d]/", r"/\d{2}/", "/x|yz/", "/q/i", "/[^k]/i",
            "/a . b/x", "/./s", "/[α-γ]/i", r"/\D/"]


def random_grammar(rng: random.Random) -> str:
    """A small random Lark grammar: rules over rules, terminals, strings and regexes, with
    every operator, priorities, aliases, `?`/`!` rules and sometimes `%ignore`."""
    rules = ["start"] + [f"r{i}" for i in range(1, rng.randint(1, 3))]
    terms = [f"T{i}" for i in range(rng.randint(0, 2))]

    def atom(depth: int, owner: int | None) -> str:
        k = rng.random()
        later = terms if owner is None else terms[owner + 1:]
        if k < 0.3:
            return rng.choice(_LITERALS)
        if k < 0.45:
            return rng.choice(_REGEXES)
        if k < 0.6 and later:
            return rng.choice(later)
        if k < 0.75 and owner is None:
            return rng.choice(rules)
        return "(" + alternatives(depth + 1, owner) + ")" if depth < 1 else rng.choice(_LITERALS)

    def item(depth: int, owner: int | None) -> str:
        text = atom(depth, owner)
        if rng.random() < 0.1:
            return f"[{text}]"
        return text + rng.choice(["", "", "", "", "?", "*", "+", " ~ 2", " ~ 1..2"])

    def alternatives(depth: int, owner: int | None) -> str:
        return " | ".join(" ".join(item(depth, owner) for _ in range(rng.randint(1, 3)))
                          for _ in range(rng.randint(1, 2)))

    lines = [f"{rng.choice(['', '?', '!']) if r != 'start' else ''}{r}{rng.choice(['', '', '.2'])}: "
             f"{alternatives(0, None)}{rng.choice(['', '', '', ' -> al'])}" for r in rules]
    lines += [f"{t}: {alternatives(0, i)}" for i, t in enumerate(terms)]
    if rng.random() < 0.5:
        lines.append("%ignore " + rng.choice(['" "', '"_"', "/-+/"]))
    return "\n".join(lines) + "\n"


class _Replay(Lexer):
    """A Lark lexer that yields the tokens it is given: Lark parses a token sequence."""

    def __init__(self, conf: object) -> None:
        pass

    def lex(self, data: list[tuple[str, str]]) -> Iterator[Token]:  # type: ignore[override]
        for name, text in data:
            yield Token(name, text)


@given(st.integers(0, 2**32))
@settings(max_examples=examples(100))
def test_random_grammars_generate_what_lark_parses(seed: int) -> None:
    """Soundness without lexing: every token grammask generates fully matches its terminal's
    regex as Python's re reads it, and Lark's parser accepts the token sequence."""
    rng = random.Random(seed)
    text = random_grammar(rng)
    try:
        grammar, _ = parse_lark(text)
    except GrammarError:
        return
    check_grammar(grammar)
    try:
        parser = Lark(text, parser="earley", lexer=_Replay)
    except LarkError as e:
        assert "defined twice" in str(e)
        return
    regexes = {t.name: re.compile(t.pattern.to_regexp()) for t in parser.terminals}
    terminals = {r.name for r in grammar.rules if r.name in regexes}
    for _ in range(3):
        result = generate_tokens(grammar, rng, terminals, depth=3)
        if result is None:
            return
        tokens = result[1]
        for name, token in tokens:
            assert regexes[name].fullmatch(token), (name, token, text)
        sentence = [t for t in tokens if t[0] not in parser.ignore_tokens]
        if len(sentence) <= 12:
            parser.parse(sentence)


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
