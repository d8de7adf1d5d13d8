"""Token references (`<[id]>`, `<text>`, `!<...>*`): masks equal brute force over token symbols.

The oracle reads a token sequence as a string of symbols: a text token is its text, a control
token or a text token the grammar names is one private-use character of its own, and each
grammar is written by hand as a regex over those symbols. Every mask along random constrained
walks is compared with the oracle's: a token is allowed iff the symbols so far plus its own can
still be completed, EOS iff they are complete.
"""
from __future__ import annotations

import pickle
import random

import pytest
import regex

from grammask.compiler import GrammarError, compile_gbnf
from grammask.runtime import Matcher, Vocabulary
from tests.support.masks import mask_of

TEXT = [bytes([b]) for b in range(32, 127)] + [b"\n", b"<th", b"ink>", b"</", b"think>", b"ab",
                                               b"ok", "é".encode(), "中文".encode()]
THINK, END_THINK = len(TEXT), len(TEXT) + 1          # added tokens that spell their text
EOS, IM_START, TOOL = len(TEXT) + 2, len(TEXT) + 3, len(TEXT) + 4  # control tokens


def _vocabulary() -> Vocabulary:
    tokens: list[bytes | None] = [*TEXT, b"<think>", b"</think>", b"<|end|>", b"<|im_start|>",
                                  b"<|tool|>"]
    return Vocabulary.from_token_bytes(tokens, EOS, special_token_ids=[EOS, IM_START, TOOL])


VOCAB = _vocabulary()


def sym(i: int) -> str:
    """The oracle's symbol of a token read as a reference."""
    return chr(0xF0000 + i)


ANY_TEXT = r"[^\U000F0000-\U000FFFFF]"
CASES = [
    ("think", 'root ::= <think> t </think> "ok"\nt ::= !</think>*',
     f"{sym(THINK)}(?:{ANY_TEXT}|[{sym(THINK)}{sym(IM_START)}{sym(TOOL)}])*{sym(END_THINK)}ok",
     (THINK, END_THINK)),
    ("ids", f'root ::= "x" <[{IM_START},{TOOL}]> "y"',
     f"x[{sym(IM_START)}{sym(TOOL)}]y", ()),
    ("range-plus", f'root ::= (<|tool|> [a-z]+)+ <[{IM_START}-{TOOL}]>',
     f"(?:{sym(TOOL)}[a-z]+)+[{sym(IM_START)}{sym(TOOL)}]", ()),
    ("negated-plus", 'root ::= "a" !<|tool|>+ <|tool|>',
     f"a(?:{ANY_TEXT}|{sym(IM_START)})+{sym(TOOL)}", ()),
    ("recursive", 'root ::= <|tool|> e\ne ::= "(" e ")" | <think>',
     f"{sym(TOOL)}(?P<e>\\((?&e)\\)|{sym(THINK)})", (THINK,)),
    ("mixed", 'root ::= [a-z]* (<|im_start|> | "<think>")',
     f"[a-z]*(?:{sym(IM_START)}|<think>)", ()),
]


def _symbols(ids: list[int], named: tuple[int, ...]) -> str:
    out = []
    for i in ids:
        if i in (IM_START, TOOL) or i in named:
            out.append(sym(i))
        else:
            out.append(VOCAB.token_bytes(i).decode())
    return "".join(out)


def _viable(pattern: str, s: str) -> bool:
    return regex.fullmatch(pattern, s, flags=regex.V1, partial=True) is not None


@pytest.mark.parametrize("name,gbnf,pattern,named", CASES, ids=[c[0] for c in CASES])
def test_masks_equal_brute_force(name: str, gbnf: str, pattern: str,
                                 named: tuple[int, ...]) -> None:
    compiled = compile_gbnf(gbnf, VOCAB)
    assert compiled.named_tokens == named
    rng = random.Random(name)
    for _ in range(25):
        m, ids = Matcher(compiled), []
        for _ in range(30):
            prefix = _symbols(ids, named)
            expected = {t for t in range(VOCAB.size) if t != EOS
                        and _viable(pattern, prefix + _symbols([t], named))}
            if regex.fullmatch(pattern, prefix, flags=regex.V1):
                expected.add(EOS)
            mask = mask_of(m)
            assert mask == expected, (name, prefix, sorted(mask ^ expected)[:10])
            if not mask or (EOS in mask and rng.random() < 0.2):
                break
            tid = rng.choice(sorted(mask - {EOS}) or [EOS])
            if tid == EOS:
                break
            assert m.accept_token(tid)
            ids.append(tid)


def test_text_tokens_named_are_read_as_references() -> None:
    compiled = compile_gbnf('root ::= <think> "<think>"', VOCAB)
    m = Matcher(compiled)
    assert mask_of(m) == {THINK}
    assert m.accept_token(THINK)
    assert THINK not in mask_of(m)  # in text, <think> is spelled by other tokens
    assert not m.accept_token(THINK)
    assert all(m.accept_token(TEXT.index(piece)) for piece in (b"<th", b"ink>"))
    assert m.can_terminate()


def test_accept_string_never_takes_a_marker() -> None:
    m = Matcher(compile_gbnf('root ::= "a" <|tool|>', VOCAB))
    assert m.accept_string("a")
    with pytest.raises(ValueError, match="byte 0xFF at offset 0 is not text"):
        m.accept_string(b"\xff\x00\x00\x01")
    assert m.find_jump_forward_bytes() == b""
    assert m.accept_token(TOOL) and m.can_terminate()


@pytest.mark.parametrize("gbnf,message", [
    ("root ::= <[12", "1:10: malformed or misplaced token reference"),
    ("root ::= <[1-a]>", "1:10: malformed token id list '<[1-a]>'"),
    ("root ::= <[5-2]>", "reversed token id range '5-2'"),
    ("root ::= <nope>", "'<nope>' is not the text of any token"),
    (f"root ::= <[{EOS}]>", f"id {EOS} is a stop (EOS) token"),
    ("root ::= <[100000]>", "id 100000 is outside the vocabulary"),
])
def test_errors(gbnf: str, message: str) -> None:
    with pytest.raises(GrammarError) as info:
        compile_gbnf(gbnf, VOCAB)
    assert message in str(info.value)


def test_single_negated_references_are_one_token_steps() -> None:
    """`!<x>` alone or counted is exactly one token but x (`tests/runtime/test_one_token.py`
    checks the steps exhaustively on a small vocabulary)."""
    compiled = compile_gbnf('root ::= "a" !<|tool|>{1,2} "."', VOCAB)
    assert compiled.one_token == ((TOOL,),) and compiled.kind == "pushdown"
    word = VOCAB.encode("ok")
    assert len(word) == 1
    m = Matcher(compiled)
    assert m.accept_string("a") and not m.fork().accept_token(TOOL)
    assert m.accept_token(IM_START) and m.accept_token(word[0]) and m.accept_string(".")
    assert m.can_terminate()
    m = Matcher(compiled)
    assert m.accept_string("a") and m.accept_token(word[0])
    assert not all(m.accept_token(t) for t in [*VOCAB.encode("x"), *VOCAB.encode("y")])


def test_pickled_grammars_keep_their_named_tokens() -> None:
    compiled = compile_gbnf('root ::= <think> t </think>\nt ::= !</think>*', VOCAB)
    loaded = pickle.loads(pickle.dumps(compiled))
    assert loaded.named_tokens == compiled.named_tokens == (THINK, END_THINK)
    a, b = Matcher(compiled), Matcher(loaded)
    for tid in (THINK, IM_START, *VOCAB.encode("x")):
        assert mask_of(a) == mask_of(b)
        assert a.accept_token(tid) and b.accept_token(tid)
