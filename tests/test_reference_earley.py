"""The reference Earley recognizer: known answers, partial UTF-8, and agreement with Lark's
Earley parser on named and random context-free grammars."""
from __future__ import annotations

import functools
import random
import time

import pytest
from grammask.compiler.ir.nodes import EMPTY, CharClass, Grammar, Literal, Node, Repeat, Rule
from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Lark

from .support.budget import examples
from .support.cfg_strategies import (
    ALPHABET,
    NAMED_GRAMMARS,
    alt,
    grammars,
    lit,
    prefix_grammar,
    ref,
    sample_string,
    seq,
)
from .support.lark_oracle import lark_parser, parses, supported
from .support.reference_earley import ReferenceRecognizer, partial_utf8_ranges

NON_ASCII = "éê中"  # every non-ASCII character a random grammar can scan


def rules(start: str, **bodies: Node) -> Grammar:
    return Grammar(tuple(Rule(name, body) for name, body in bodies.items()), start)


@functools.cache
def named(name: str) -> tuple[ReferenceRecognizer, Lark]:
    grammar = NAMED_GRAMMARS[name]
    return ReferenceRecognizer(grammar), lark_parser(grammar)


def check(grammar: Grammar, cases: dict[str, tuple[bool, bool]]) -> None:
    """Each text's (viable, complete) per the reference and per Lark on the grammar and on its
    prefix grammar."""
    ref_ = ReferenceRecognizer(grammar)
    for text, (viable, complete) in cases.items():
        data = text.encode("utf-8")
        assert (ref_.viable(data), ref_.complete(data)) == (viable, complete), text
    if not supported(grammar):
        return
    parser = lark_parser(grammar)
    prefixes = lark_parser(prefix_grammar(grammar)) if ref_.viable(b"") else None
    for text, (viable, complete) in cases.items():
        assert parses(parser, text) == complete, text
        assert prefixes is None or parses(prefixes, text) == viable, text


def test_anbn_known_answers() -> None:
    check(NAMED_GRAMMARS["anbn"], {
        "": (True, True), "ab": (True, True), "aabb": (True, True), "aab": (True, False),
        "aaa": (True, False), "aba": (False, False), "b": (False, False), "abb": (False, False),
    })


def test_recursion_and_ambiguity_known_answers() -> None:
    check(rules("l", l=alt(seq(ref("l"), lit("x")), lit("y"))),
          {"y": (True, True), "yxxx": (True, True), "": (True, False), "xy": (False, False)})
    check(rules("r", r=alt(seq(lit("x"), ref("r")), lit("y"))),
          {"xxxy": (True, True), "xxx": (True, False), "yx": (False, False)})
    check(rules("m", m=alt(seq(lit("("), ref("n")), lit("a")), n=seq(ref("m"), lit(")"))),
          {"((a))": (True, True), "((a)": (True, False), "(a))": (False, False)})
    check(rules("a", a=alt(seq(ref("a"), ref("a")), lit("a"))),
          {"a" * 40: (True, True), "": (True, False), "ab": (False, False)})
    check(NAMED_GRAMMARS["arithmetic"], {
        "1+2*(3": (True, False), "(1+2)*30": (True, True), "1+*": (False, False), "": (True, False),
    })
    check(NAMED_GRAMMARS["json"], {
        '{"a": [1, 2.5, "é"]}': (True, True), '{"a" 1': (False, False), '[01': (False, False),
        ' [true, nul': (True, False), '"\\q"': (False, False),
    })


def test_nullable_rules() -> None:
    # The grammar that defeats Earley's original completer: A is nullable, predicted and
    # completed in the same set.
    check(rules("s", s=seq(ref("a"), ref("a"), ref("a"), ref("a")), a=alt(lit("a"), ref("e")), e=EMPTY),
          {"": (True, True), "a": (True, True), "aaaa": (True, True), "aaaaa": (False, False)})
    star_of_nullable = rules("s", s=seq(ref("n"), ref("n"), lit("x")), n=Repeat(ref("m"), 0, None),
                             m=alt(lit("y"), EMPTY))
    check(star_of_nullable,
          {"x": (True, True), "yyyx": (True, True), "yy": (True, False), "xy": (False, False)})
    check(NAMED_GRAMMARS["nullable_chain"], {
        "x": (True, True), "zzyzx": (True, True), "yyyyx": (True, True), "yyyyyx": (False, False),
        "x" + "y" * 6: (True, True), "x" + "y" * 7: (False, False),
    })


def test_unproductive_symbols_are_dead() -> None:
    check(NAMED_GRAMMARS["unproductive_branch"],
          {"bbc": (True, True), "b": (True, False), "a": (False, False), "bad": (False, False)})
    empty = rules("s", s=seq(lit("a"), ref("s")))
    check(empty, {"": (False, False), "a": (False, False)})
    check(rules("s", s=alt(CharClass(()), lit("b"))), {"b": (True, True), "a": (False, False)})
    # An empty class after other symbols, in an alternative of a productive choice: the prefix
    # before it is not viable (found by the regex fuzzer: `\w#.+[^\s\S]m|`).
    check(rules("s", s=alt(seq(lit("a"), CharClass(()), lit("m")), seq())),
          {"": (True, True), "a": (False, False), "am": (False, False)})
    assert ReferenceRecognizer(empty).viable_prefixes(b"aa") == [False, False, False]


def test_repeat_bounds() -> None:
    check(rules("s", s=Repeat(lit("a"), 0, 20)), {"a" * 20: (True, True), "a" * 21: (False, False)})
    check(rules("s", s=Repeat(lit("ab"), 2, 3)),
          {"ab": (True, False), "abab": (True, True), "ababab": (True, True), "abababa": (False, False)})
    check(rules("s", s=seq(Repeat(lit("a"), 0, 0), lit("b"))), {"b": (True, True), "ab": (False, False)})
    ref_ = ReferenceRecognizer(rules("s", s=Repeat(lit("a"), 0, 500)))
    assert ref_.complete(b"a" * 500) and not ref_.viable(b"a" * 501)


def test_partial_utf8() -> None:
    ref_ = ReferenceRecognizer(rules("s", s=alt(lit("é"), seq(lit("中"), lit("x")), lit("😀"))))
    for data, viable in [
        (b"\xc3", True), (b"\xc3\xa9", True), (b"\xc3\xa8", False), (b"\xe4", True),
        (b"\xe4\xb8", True), (b"\xe4\xb9", False), (b"\xf0\x9f\x98", True), (b"\xf0\x9f\x99", False),
        (b"\xe4\xb8\xadx", True), (b"\xff", False), (b"\x80", False), (b"\xc3\xa9\x80", False),
    ]:
        assert ref_.viable(data) == viable, data
    assert not ref_.complete(b"\xc3") and ref_.complete(b"\xc3\xa9")
    assert ref_.allowed_next_chars(b"") == ((0xE9, 0xE9), (0x4E2D, 0x4E2D), (0x1F600, 0x1F600))
    assert ref_.allowed_next_chars(b"\xe4") == ((0x4E2D, 0x4E2D),)
    assert ref_.viable_prefixes("中x".encode()) == [True, True, True, True, True]
    assert ref_.viable_prefixes(b"\xe4\xb8\xae") == [True, True, True, False]


@functools.cache
def utf8_prefix_spans() -> dict[bytes, list[int]]:
    """For each proper prefix of a UTF-8 encoding: the least and greatest code point with it
    and how many there are."""
    spans: dict[bytes, list[int]] = {}
    for cp in range(0x80, 0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        encoded = chr(cp).encode("utf-8")
        for k in range(1, len(encoded)):
            span = spans.setdefault(encoded[:k], [cp, cp, 0])
            span[1], span[2] = cp, span[2] + 1
    return spans


def test_partial_utf8_ranges_match_brute_force() -> None:
    spans = utf8_prefix_spans()
    rng = random.Random(0)
    tails = [bytes([a]) for a in range(256)] + [bytes([a, b]) for a in range(0xC0, 0x100) for b in range(256)]
    tails += [bytes([rng.randint(0xE0, 0xF7), rng.randint(0x70, 0xC0), rng.randint(0x70, 0xC0)])
              for _ in range(20000)]
    tails += [t for t in spans if len(t) == 3]
    for tail in tails:
        ranges = partial_utf8_ranges(tail)
        span = spans.get(tail)
        if span is None:
            assert ranges is None, tail
        else:
            assert ranges is not None, tail
            assert [ranges[0][0], ranges[-1][1], sum(hi - lo + 1 for lo, hi in ranges)] == span, tail


def test_errors() -> None:
    with pytest.raises(ValueError, match="start"):
        ReferenceRecognizer(rules("missing", s=lit("a")))
    with pytest.raises(ValueError, match="undefined"):
        ReferenceRecognizer(rules("s", s=seq(lit("a"), ref("t"))))
    with pytest.raises(ValueError, match="UTF-8"):
        ReferenceRecognizer(rules("s", s=Literal(b"\xff")))
    with pytest.raises(ValueError, match="empty"):
        sample_string(rules("s", s=seq(lit("a"), ref("s"))), random.Random(0))


def test_long_inputs_are_fast() -> None:
    json, arithmetic = NAMED_GRAMMARS["json"], NAMED_GRAMMARS["arithmetic"]
    doc = Rule("doc", alt(ref(json.start), ref(arithmetic.start)))
    ten_rules = Grammar((doc, *json.rules, *arithmetic.rules), "doc")
    assert len(ten_rules.rules) == 10
    ref_ = ReferenceRecognizer(ten_rules)
    for text in ["(1+2*3)*" * 37 + "4", "[" + ", ".join(['{"k": [1, "x"]}'] * 20) + "]"]:
        assert len(text) >= 290
        began = time.perf_counter()
        assert ref_.complete(text.encode()) and all(ref_.viable_prefixes(text.encode()))
        assert time.perf_counter() - began < 1.0


def short_sample(grammar: Grammar, rng: random.Random) -> str:
    """A sample short enough for Lark, whose ambiguity resolution is slow on long strings of
    highly ambiguous grammars."""
    return sample_string(grammar, rng, max_depth=4, max_length=12)


def mutate(text: str, rng: random.Random) -> str:
    """`text` with one character (from ALPHABET or `text`) inserted, deleted or replaced."""
    i = rng.randint(0, len(text))
    op = rng.choice(["insert", "delete", "replace"]) if i < len(text) else "insert"
    c = rng.choice(ALPHABET + text)
    if op == "insert":
        return text[:i] + c + text[i:]
    return text[:i] + (c if op == "replace" else "") + text[i + 1:]


def check_samples(ref_: ReferenceRecognizer, parser: Lark, grammar: Grammar, rng: random.Random) -> None:
    """A sample is complete per both, all its prefixes are viable, and mutants are judged alike."""
    text = short_sample(grammar, rng)
    data = text.encode("utf-8")
    assert ref_.complete(data) and parses(parser, text), text
    assert all(ref_.viable_prefixes(data)), text
    for _ in range(4):
        text = mutate(text, rng)
        assert ref_.complete(text.encode("utf-8")) == parses(parser, text), text


@pytest.mark.parametrize("name", sorted(NAMED_GRAMMARS))
def test_named_grammars_against_lark(name: str) -> None:
    ref_, parser = named(name)
    rng = random.Random(name)
    for _ in range(examples(10)):
        check_samples(ref_, parser, NAMED_GRAMMARS[name], rng)


@given(grammars(), st.randoms(use_true_random=False))
@settings(max_examples=examples(100))
def test_random_grammars_against_lark(grammar: Grammar, rng: random.Random) -> None:
    check_samples(ReferenceRecognizer(grammar), lark_parser(grammar), grammar, rng)


def check_prefixes(ref_: ReferenceRecognizer, prefixes: Lark, grammar: Grammar, rng: random.Random) -> None:
    """Viability agrees with Lark on the prefix grammar where a mutated sample dies, just before,
    and at a random cut."""
    text = short_sample(grammar, rng)
    for _ in range(rng.randint(0, 3)):
        text = mutate(text, rng)
    # Character-level prefixes: the prefix grammar is character-level too.
    flags = [ref_.viable(text[:i].encode("utf-8")) for i in range(len(text) + 1)]
    dead = flags.index(False) if False in flags else len(text)
    for i in {max(dead - 1, 0), dead, rng.randint(0, len(text))}:
        assert parses(prefixes, text[:i]) == flags[i], text[:i]


@pytest.mark.parametrize("name", sorted(NAMED_GRAMMARS))
def test_named_grammar_viability_against_lark(name: str) -> None:
    ref_, _ = named(name)
    prefixes = lark_parser(prefix_grammar(NAMED_GRAMMARS[name]))
    rng = random.Random(name)
    for _ in range(examples(10)):
        check_prefixes(ref_, prefixes, NAMED_GRAMMARS[name], rng)


@given(grammars(), st.randoms(use_true_random=False))
@settings(max_examples=examples(100))
def test_random_grammar_viability_against_lark(grammar: Grammar, rng: random.Random) -> None:
    check_prefixes(ReferenceRecognizer(grammar), lark_parser(prefix_grammar(grammar)), grammar, rng)


def check_consistency(ref_: ReferenceRecognizer, text: str) -> None:
    """Viability is prefix-closed, contains the language, and agrees with the allowed set."""

    def viable(s: str) -> bool:
        return ref_.viable(s.encode("utf-8"))

    data = text.encode("utf-8")
    flags = ref_.viable_prefixes(data)
    assert flags == sorted(flags, reverse=True), text  # once dead, always dead
    assert flags[-1] == viable(text)
    complete = ref_.complete(data)
    assert flags[-1] or not complete, text
    allowed = ref_.allowed_next_chars(data)
    for c in ALPHABET + "x":
        assert viable(text + c) == any(lo <= ord(c) <= hi for lo, hi in allowed), (text, c)
    for c in NON_ASCII:
        lead = c.encode("utf-8")[:1]
        expected = any(viable(text + d) for d in NON_ASCII if d.encode("utf-8")[:1] == lead)
        assert ref_.viable(data + lead) == expected, (text, lead)
    if flags[-1] and not complete:
        assert allowed, text
        assert all(viable(text + chr(lo)) and viable(text + chr(hi)) for lo, hi in allowed), text


@given(grammars(), st.randoms(use_true_random=False), st.text(ALPHABET, max_size=4))
@settings(max_examples=examples(100))
def test_viability_is_consistent(grammar: Grammar, rng: random.Random, noise: str) -> None:
    ref_ = ReferenceRecognizer(grammar)
    text = sample_string(grammar, rng)
    cut = rng.randint(0, len(text))
    check_consistency(ref_, text[:cut])
    check_consistency(ref_, text[:cut] + noise)
    check_consistency(ref_, noise)
