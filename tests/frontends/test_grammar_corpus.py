"""Regular grammars from the corpus and from random rule splits, compiled on the default
vocabulary and checked against Lark's Earley parser on the same grammar."""
from __future__ import annotations

import functools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler import GrammarError, compile_grammar
from grammask.compiler.frontends.gbnf import parse_gbnf
from grammask.runtime import Matcher, Vocabulary

from ..support.budget import examples
from ..support.grammars import factor_into_rules
from ..support.lark_oracle import lark_parser, parses, sample, supported
from ..support.masks import random_tokenization, walk
from ..support.paths import DATA
from ..support.regex_strategies import any_pattern
from ..support.vocabularies import small_vocabulary

GBNF = DATA / "gbnf"
REGULAR = ["chess", "english", "japanese", "list"]
RECURSIVE = ["arithmetic", "c", "json", "json_arr"]
ANYTHING = "(?s).*"  # walks are judged by Lark at the end, not prefix by prefix


@functools.lru_cache(maxsize=None)
def corpus(name: str):  # type: ignore[no-untyped-def]
    grammar = parse_gbnf((GBNF / f"{name}.gbnf").read_text(encoding="utf-8"), source=name)
    return grammar, compile_grammar(grammar, Vocabulary.default()), lark_parser(grammar)


@pytest.mark.parametrize("name", RECURSIVE)
def test_recursive_corpus_grammar_walks_parse(name: str) -> None:
    grammar, compiled, parser = corpus(name)
    assert compiled.kind == "pushdown" and "recursive" in compiled.notes[0]
    with pytest.raises(GrammarError, match="recursive grammar") as err:
        compile_grammar(grammar, small_vocabulary(), kind="dfa")
    assert err.value.code == "recursive-grammar"
    rng = random.Random(name)
    for _ in range(examples(8)):
        text, ended = walk(Matcher(compiled), Vocabulary.default(), rng, 40, pattern=ANYTHING)
        if ended:
            assert parses(parser, text.decode("utf-8")), text


@pytest.mark.parametrize("name", REGULAR)
def test_regular_corpus_grammar_against_lark(name: str) -> None:
    grammar, compiled, parser = corpus(name)
    vocab = Vocabulary.default()
    rng = random.Random(name)
    for _ in range(examples(8)):
        text = sample(grammar, rng)
        assert parses(parser, text), text
        ids = vocab.encode(text)
        m = Matcher(compiled)
        assert all(m.accept_token(t) for t in ids) and m.can_terminate(), text
        m = Matcher(compiled)
        ids = random_tokenization(vocab, text.encode("utf-8"), rng)
        assert all(m.accept_token(t) for t in ids) and m.can_terminate(), text
    for _ in range(examples(8)):
        text, ended = walk(Matcher(compiled), vocab, rng, 40, pattern=ANYTHING)
        if ended:
            assert parses(parser, text.decode("utf-8")), text


@given(any_pattern, st.integers(0, 3), st.randoms(use_true_random=False))
@settings(max_examples=examples(60))
def test_random_grammars_agree_with_lark(pattern: str, seed: int, rng: random.Random) -> None:
    from grammask.compiler.frontends.regex import parse_regex

    grammar = factor_into_rules(parse_regex(pattern), seed)
    if not supported(grammar):
        return
    parser = lark_parser(grammar)
    compiled = compile_grammar(grammar, small_vocabulary())
    text, ended = walk(Matcher(compiled), small_vocabulary(), rng, 25, pattern=ANYTHING)
    if ended:
        assert parses(parser, text.decode("utf-8")), (pattern, text)
    sampled = sample(grammar, rng)
    assert parses(parser, sampled), (pattern, sampled)
    ids = random_tokenization(small_vocabulary(), sampled.encode("utf-8"), rng)
    m = Matcher(compiled)
    assert all(m.accept_token(t) for t in ids) and m.can_terminate(), (pattern, sampled)
