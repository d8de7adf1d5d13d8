"""llguidance's and XGrammar's Lark additions: `{m,n}` repetitions, rule options (`lazy`,
`suffix`, `stop`, `max_chars`), `&` and `~` of terminals, `%regex` substrings, named grammars
(`@name`) and `%grammar_options`. Each language is compared with a plain-Python oracle (Python's `re` and
the definition of the option) on every short string over a small alphabet."""
from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable

import pytest

from grammask.compiler import GrammarError, compile_lark
from grammask.compiler.frontends.registry import read
from grammask.runtime import Matcher, Vocabulary

VOCAB = Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"<end>"], 256)
# (token 256, `<end>`, is its EOS)


def _accepts(compiled, text: str) -> bool:  # type: ignore[no-untyped-def]
    m = Matcher(compiled)
    return m.accept_string(text) and m.can_terminate()


def _strings(alphabet: str, most: int) -> list[str]:
    return ["".join(p) for n in range(most + 1) for p in itertools.product(alphabet, repeat=n)]


def _shortest(matches: Callable[[str], bool]) -> Callable[[str], bool]:
    """The committed-shortest reading: in the language, and no proper prefix is."""
    return lambda s: matches(s) and not any(matches(s[:i]) for i in range(len(s)))


def _budget(matches: Callable[[str], bool], most: int) -> Callable[[str], bool]:
    """max_chars: in the language, and no proper prefix of at least `most` characters is."""
    return lambda s: matches(s) and not any(matches(s[:i]) for i in range(most, len(s)))


def _runs(chunks: list[str]) -> set[str]:
    """Every run of whole consecutive chunks."""
    return {"".join(chunks[n:m]) for n in range(len(chunks) + 1)
            for m in range(n, len(chunks) + 1)}


def _full(pattern: str) -> Callable[[str], bool]:
    return lambda s: re.fullmatch(pattern, s, re.S) is not None


CASES: list[tuple[str, str, Callable[[str], bool], str, int]] = [
    ("repeats", 'start: "a"{2,3} "b"{2} "c"{,1} "d"{2,} ("a" | "b"){0,} "c"{1,}\n',
     _full(r"a{2,3}b{2}c?d{2,}[ab]*c+"), "abcd", 9),
    ("repeat-in-terminal", "start: T\nT: /[ab]/{1,2} \"c\"{2,}\n", _full(r"[ab]{1,2}c{2,}"),
     "abc", 5),
    ("and-not", 'start: WORD\nWORD: /[a-z]+/ & ~("if" | "else" | "e")\n',
     lambda s: re.fullmatch("[a-z]+", s) is not None and s not in ("if", "else", "e"),
     "eifls", 4),
    ("not-repeated", 'start: T\nT: (~"a"){2} & /[ab]*/\n',
     lambda s: re.fullmatch("[ab]*", s) is not None and s != "a", "ab", 4),
    ("not-binds-tight", 'start: T\nT: ~"a"+ & /[ab]*/\n',
     lambda s: re.fullmatch("[ab]*", s) is not None and s != "a", "ab", 4),  # (~"a")+
    ("no-double", "start: LINES\nLINES: /[a\\n]*/ & ~/(?s:.*)\\n\\n(?s:.*)/\n",
     lambda s: re.fullmatch("[a\n]*", s) is not None and "\n\n" not in s, "a\n", 6),
    ("lazy", 'start: head "=x>"\nhead[lazy]: TEXT "<f"\nTEXT: /(.|\\n)*/\n',
     lambda s: s.endswith("=x>") and _shortest(_full(r".*<f"))(s[:-3]), "<f=x>", 8),
    ("lazy-inside-lazy", 'start: outer "!"\nouter[lazy]: inner "b"\ninner[lazy]: /a+/\n',
     lambda s: s == "ab!", "ab!", 5),
    ("suffix", 'start: f "!"\nf[suffix="ab"]: /[ab]*/\n',
     lambda s: s.endswith("!") and _shortest(_full(r"[ab]*ab"))(s[:-1]), "ab!", 7),
    ("stop-terminal", 'start: f\nf[stop=END, capture]: /[ab]*/\nEND: "b" | "ba"\n',
     _shortest(_full(r"[ab]*(b|ba)")), "ab", 6),
    ("substring", 'start: "<" %regex {"substring_chunks": ["ab", "a", "", "ba", "b"]} ">"\n',
     lambda s: len(s) >= 2 and s[0] == "<" and s[-1] == ">" and s[1:-1] in _runs(
         ["ab", "a", "", "ba", "b"]), "<>ab", 8),
    ("substring-words", 'start: %regex {"substring_words": "a b  ab."}\n',
     lambda s: s in _runs(["a", " ", "b", "  ", "ab", "."]), "ab .", 5),
    ("max-chars", 'start: r "!"\nr[max_chars=3]: /[ab]*c?/\n',
     lambda s: s.endswith("!") and _budget(_full(r"[ab]*c?"), 3)(s[:-1]), "abc!", 7),
]


@pytest.mark.parametrize("name,grammar,oracle,alphabet,most", CASES, ids=[c[0] for c in CASES])
def test_language_equals_oracle(name: str, grammar: str, oracle: Callable[[str], bool],
                                alphabet: str, most: int) -> None:
    compiled = compile_lark(grammar, VOCAB)
    for s in _strings(alphabet, most):
        assert _accepts(compiled, s) == oracle(s), repr(s)


def test_lazy_lexemes_take_ignore_after_them() -> None:
    compiled = compile_lark('%ignore " "\nstart: x "!"\nx[lazy]: "a" /[ab]*/\n', VOCAB)
    assert _accepts(compiled, "a !") and _accepts(compiled, " a!")
    assert not _accepts(compiled, "a b!") and not _accepts(compiled, "ab!")


def test_named_grammars() -> None:
    grammars = {"args": {"type": "object", "properties": {"a": {"type": "integer"}},
                         "required": ["a"]},
                "status": 'start: "ok" | @other', "other": 'start: "no"{1,2}'}
    compiled = compile_lark('start: "<t>" @args "</t>" @status\n', VOCAB, grammars=grammars)
    assert _accepts(compiled, '<t>{"a": 1}</t>ok') and _accepts(compiled, '<t>{"a":2}</t>nono')
    assert not _accepts(compiled, '<t>{"a": "x"}</t>ok')
    assert not _accepts(compiled, '<t>{"a": 1}</t>nonono')
    with pytest.raises(GrammarError, match="cycle: @status -> @other -> @status"):
        compile_lark('start: @status\n', VOCAB, grammars={
            "status": "start: @other", "other": "start: @status"})
    with pytest.raises(GrammarError, match="^1:8: in @other, 1:8: syntax error"):
        compile_lark('start: @other\n', VOCAB, grammars={"other": "start: )"})


def test_grammar_options_initial_skip() -> None:
    """Lark lets %ignore'd text open the output; with %grammar_options, XGrammar's
    `allow_initial_skip` (default false) decides."""
    plain = '%ignore " "\nstart: "a" "b"\n'
    assert _accepts(compile_lark(plain, VOCAB), " a b")
    off = compile_lark('%grammar_options {}\n' + plain, VOCAB)
    assert _accepts(off, "a b ") and not _accepts(off, " a b")
    on = compile_lark('%grammar_options {"allow_initial_skip": true}\n' + plain, VOCAB)
    assert _accepts(on, " a b")


def test_plain_lark_keeps_its_meaning() -> None:
    """A grammar with no addition is Lark's: `x ~ 2` is a repetition, and an empty terminal
    is refused as Lark refuses it."""
    assert _accepts(compile_lark('start: "a" ~ 2\n', VOCAB), "aa")
    with pytest.raises(GrammarError, match="matches the empty string"):
        compile_lark("start: A\nA: /a*/\n", VOCAB)
    assert _accepts(compile_lark('start: A "{2}"\nA: /a*/ & /a?/\n', VOCAB), "{2}")


TOOLS = r"""
start: (call_a | call_b)* tail
tail: TEXT
head_a[lazy]: TEXT "<call"
call_a: head_a "=a>" %json {"type": "integer"} "</call>"
head_b[suffix="<call"]: TEXT
call_b: head_b "=b>" /[a-z]+/ "</call>"
TEXT: /(.|\n)*/
"""


@pytest.mark.parametrize("text,ok", [
    ("", True), ("plain text", True), ("partial <cal", True), ("<call=a>12</call>", True),
    ("x <call=b>ab</call> y <call=a>-3</call>z", True), ("<call=a>1</call><call=b>q</call>", True),
    ("<call", False), ("<call=c>1</call>", False), ("<call=a>x</call>", False),
    ("<call=a>1", False), ("x <call=a>1</call> <call", False),
])
def test_dispatch_pattern_commits_at_the_trigger(text: str, ok: bool) -> None:
    """The peers' tool-call shape: a complete trigger opens a call (free text cannot hold
    it), as XGrammar and llguidance read it."""
    assert _accepts(compile_lark(TOOLS, VOCAB), text) == ok


def test_standalone_lazy_head_and_token_triggers() -> None:
    standalone = compile_lark('start: head\nhead[lazy]: TEXT "<end>"\nTEXT: /(.|\\n)*/\n', VOCAB)
    assert _accepts(standalone, "no trigger") and _accepts(standalone, "ab<end>")
    assert not _accepts(standalone, "ab<end>c") and not _accepts(standalone, "a<end><end>")
    vocab = Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"<|t|>", b"</s>"],
                                        257, special_token_ids=[256, 257])
    tokens = compile_lark('start: call* tail\ntail: TEXT\ncall: TEXT <|t|> /[0-9]/\n'
                          'TEXT: /(.|\\n)*/\n', vocab)
    m = Matcher(tokens)
    assert m.accept_string("hi") and m.accept_token(256) and not m.accept_string("x")
    assert m.accept_string("7") and m.can_terminate()


def test_other_shapes_keep_the_committed_shortest_reading() -> None:
    """With %ignore the shape is not the peers' dispatch: the tail may hold a trigger."""
    grammar = '%ignore " "\n' + TOOLS
    assert _accepts(compile_lark(grammar, VOCAB), "<call")


def test_random_terminal_expressions_never_crash() -> None:
    """Terminal bodies mixing `&`, `~`, groups, ranges, repetitions and `%regex` in random
    order compile or give a GrammarError, never an internal error."""
    pieces = ['"a"', '"b"', "/[a-c]+/", "~", "&", "|", "(", ")", "[", "]", "*", "+", "?",
              "~ 2", "~ 1..3", "..", "{2}", "{1,}", '%regex {"substring_chars": "ab"}',
              "%regex", "B", '"x".."z"', ":", "{"]
    rng = random.Random(5)
    for _ in range(400):
        body = " ".join(rng.choice(pieces) for _ in range(rng.randint(0, 7)))
        try:
            compile_lark(f'start: T\nT: {body}\nB: "q"\n', VOCAB)
        except GrammarError:
            pass


def test_names_with_hyphens() -> None:
    """llguidance allows `-` in names; rules keep their names as written, beside a name
    that spells the same with `_`."""
    grammar = ('start: my-rule "!" MY-TERM | my_rule\nmy-rule: "a"{2}\n'
               'MY-TERM: /[0-9]/ & ~"0"\nmy_rule: "z"\n')
    compiled = compile_lark(grammar, VOCAB)
    assert _accepts(compiled, "aa!1") and _accepts(compiled, "z")
    assert not _accepts(compiled, "aa!0")
    names = {rule.name for rule in read("lark", grammar).grammar.rules}
    assert {"my-rule", "MY-TERM", "my_rule"} <= names
    with pytest.raises(GrammarError, match="'my-other' used but not defined"):
        compile_lark("start: my-other\n", VOCAB)
    assert _accepts(compile_lark('start: "a-b" -> alias\n', VOCAB), "a-b")
