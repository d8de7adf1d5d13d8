"""The Lark frontend against Lark's own parser: strings generated from the IR are parsed by
Lark, regular grammars agree with it on random text, and random grammars generate token
sequences Lark's parser accepts."""
from __future__ import annotations

import random
import re
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Lark
from lark.exceptions import LarkError
from lark.lexer import Lexer, Token

from grammask.compiler.frontends.lark_grammar import parse_lark
from grammask.compiler.support.errors import GrammarError

from ..support.budget import examples
from ..support.cfg_strategies import generate_tokens, generated_strings
from ..support.lark_frontend import check_grammar, dfa_of, lark_accepts

# ---------------------------------------------------------------- strings generated from the IR


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
