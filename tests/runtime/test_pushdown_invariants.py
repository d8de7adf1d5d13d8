"""The two invariants on context-free grammars, against oracles: random grammars drawn by
Hypothesis (left and right recursion, ambiguity, nullable rules, nesting), the named grammars
and the recursive corpus grammars. Masks are compared with a plain-Python Earley recognizer
(tests/support/reference_earley.py) token by token; finished walks and sampled strings are also judged
by Lark's Earley parser."""
from __future__ import annotations

import functools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler import GrammarError, Limits, compile_grammar
from grammask.compiler.frontends.gbnf import parse_gbnf
from grammask.compiler.frontends.lark_grammar import parse_lark
from grammask.compiler.ir.nodes import Grammar
from grammask.runtime import Matcher, RuntimeLimits, Vocabulary

from ..support.budget import examples
from ..support.cfg_strategies import NAMED_GRAMMARS, generated_strings, grammars, sample_string
from ..support.lark_frontend import lark_accepts, load
from ..support.lark_oracle import lark_parser, parses
from ..support.masks import is_eos, mask_of, random_tokenization, walk
from ..support.paths import DATA
from ..support.reference_earley import ReferenceRecognizer
from ..support.vocabularies import small_vocabulary

GBNF = DATA / "gbnf"
CORPUS = ["arithmetic", "c", "json", "json_arr"]


KEPT = Limits(max_inline_states=1)
"""The least inlining budget: every rule that uses another stays a rule (small leaves are
inlined), so right recursion runs through chains of tail calls among kept rules, which the
recognizer shortcuts (`runtime/pushdown/leo.py`)."""


def compiled_small(grammar: Grammar, limits: Limits | None = None):  # type: ignore[no-untyped-def]
    try:
        return compile_grammar(grammar, small_vocabulary(), kind="pushdown",
                               limits=limits or Limits())
    except GrammarError as exc:
        assert exc.code == "empty-language", exc
        return None


def expected_mask(ref: ReferenceRecognizer, prefix: bytes) -> set[int]:
    """Brute force: every token whose bytes keep `prefix` viable, and EOS when it is complete."""
    vocab = small_vocabulary()
    out = {i for i in range(vocab.size)
           if (b := vocab.token_bytes(i)) and not is_eos(vocab, i) and i not in vocab.special_token_ids
           and ref.viable(prefix + b)}
    if ref.complete(prefix):
        out.update(int(e) for e in vocab.eos_token_ids)
    return out


def check_walk(grammar: Grammar, rng: random.Random, steps: int,
               limits: Limits | None = None) -> None:
    """Mask = brute force at every step of a random constrained walk; a finished walk parses."""
    compiled = compiled_small(grammar, limits)
    if compiled is None:
        return
    ref = ReferenceRecognizer(grammar)
    vocab = small_vocabulary()
    matcher = Matcher(compiled)
    prefix = b""
    for _ in range(steps):
        mask = mask_of(matcher)
        assert mask == expected_mask(ref, prefix), (prefix, sorted(mask ^ expected_mask(ref, prefix))[:5])
        choices = sorted(i for i in mask if not is_eos(vocab, i))
        if any(is_eos(vocab, i) for i in mask) and (not choices or rng.random() < 0.25):
            assert matcher.accept_token(vocab.eos_token_id)
            assert parses(lark_parser(grammar), prefix.decode("utf-8"))
            return
        tid = rng.choice(choices)
        assert matcher.accept_token(tid)
        prefix += vocab.token_bytes(tid)


def check_spelling(grammar: Grammar, text: str, rng: random.Random,
                   limits: Limits | None = None) -> None:
    """`text` of the language goes through token by token (random tokenization), every token
    in the mask, EOS allowed exactly at complete prefixes."""
    compiled = compiled_small(grammar, limits)
    assert compiled is not None
    ref = ReferenceRecognizer(grammar)
    vocab = small_vocabulary()
    matcher = Matcher(compiled)
    prefix = b""
    for tid in random_tokenization(vocab, text.encode("utf-8"), rng):
        mask = mask_of(matcher)
        assert tid in mask, (text, prefix)
        assert (vocab.eos_token_id in mask) == ref.complete(prefix), (text, prefix)
        assert matcher.accept_token(tid)
        prefix += vocab.token_bytes(tid)
    assert matcher.can_terminate() and vocab.eos_token_id in mask_of(matcher)


@given(grammars(), st.randoms(use_true_random=False))
@settings(max_examples=examples(60))
def test_random_grammars_mask_equals_brute_force(grammar: Grammar, rng: random.Random) -> None:
    check_walk(grammar, rng, 6)


@given(grammars(), st.randoms(use_true_random=False))
@settings(max_examples=examples(80))
def test_random_grammars_completeness(grammar: Grammar, rng: random.Random) -> None:
    text = sample_string(grammar, rng)
    assert parses(lark_parser(grammar), text), text
    check_spelling(grammar, text, rng)


@given(grammars(), st.randoms(use_true_random=False))
@settings(max_examples=examples(50))
def test_random_grammars_with_rules_kept(grammar: Grammar, rng: random.Random) -> None:
    check_walk(grammar, rng, 6, KEPT)
    check_spelling(grammar, sample_string(grammar, rng), rng, KEPT)


TAIL_CHAINS = {
    # Right recursion through two, three and four kept rules; a chain that reaches the start
    # rule (EOS at its top); one whose links nest inside brackets; one where a link has two
    # waiting items, and one where a caller may go on after its call (no shortcut there).
    "two": 'root ::= list\nlist ::= item rest\nrest ::= "," list | ""\n'
           'item ::= [a-b] | "(" list ")"',
    "three": 'root ::= a "."\na ::= "a" b | "a"\nb ::= "b" c\nc ::= "(" a ")" c | "b" a | "b"',
    "start": 'root ::= "a" other | "a"\nother ::= "b" root | "(" root ")" other',
    "four": 'root ::= p\np ::= "a" q\nq ::= "b" r | ""\nr ::= "a" s | "(" p ")"\n'
            's ::= "b" p | "b"',
    "shared": 'root ::= x | y\nx ::= "a" z\ny ::= "a" z "b"?\nz ::= "a" x | "a" y | "b"',
    "open": 'root ::= p\np ::= "a" q "c"?\nq ::= "b" p | "b" "(" p ")" p | "b"',
}


@pytest.mark.parametrize("name", sorted(TAIL_CHAINS))
def test_tail_chains_through_kept_rules(name: str) -> None:
    grammar = parse_gbnf(TAIL_CHAINS[name])
    compiled = compiled_small(grammar, KEPT)
    assert compiled is not None and len(compiled.pushdown.rule_names) >= 2, compiled.notes
    rng = random.Random(name)
    for _ in range(examples(6)):
        check_walk(grammar, rng, 24, KEPT)
        check_spelling(grammar, sample_string(grammar, rng, max_depth=12), rng, KEPT)


def test_right_recursion_through_kept_rules_is_linear() -> None:
    """20,000 list items through `list -> item rest -> "," list` in one step, with the Earley
    work bounded by 20 operations per byte (15 with it): without it each item would complete
    every level below it (about 2 * 10^8 operations)."""
    vocab = Vocabulary.default()
    grammar = parse_gbnf(TAIL_CHAINS["two"])
    compiled = compile_grammar(grammar, vocab, limits=KEPT)
    assert {"list", "rest"} <= set(compiled.pushdown.rule_names), compiled.notes
    text = ",".join(["a", "(b,a)"] * 10_000).encode()
    matcher = Matcher(compiled, limits=RuntimeLimits(max_step_work=20 * len(text)))
    assert matcher.accept_string(text) and matcher.can_terminate()
    assert matcher.accept_string(",") and not matcher.can_terminate()
    assert vocab.encode("b")[0] in mask_of(matcher)


@pytest.mark.parametrize("name", sorted(NAMED_GRAMMARS))
def test_named_grammars(name: str) -> None:
    grammar = NAMED_GRAMMARS[name]
    rng = random.Random(name)
    for _ in range(examples(4)):
        check_walk(grammar, rng, 10)
        check_spelling(grammar, sample_string(grammar, rng, max_depth=8), rng)


@functools.cache
def corpus(name: str) -> tuple[Grammar, object]:
    grammar = parse_gbnf((GBNF / f"{name}.gbnf").read_text(encoding="utf-8"), source=name)
    return grammar, compile_grammar(grammar, Vocabulary.default())


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_strings_under_usual_and_random_tokenizations(name: str) -> None:
    grammar, compiled = corpus(name)
    vocab = Vocabulary.default()
    parser = lark_parser(grammar)
    rng = random.Random(name)
    for _ in range(examples(6)):
        text = sample_string(grammar, rng, max_depth=5, max_length=60)
        assert parses(parser, text), text
        for ids in (vocab.encode(text), random_tokenization(vocab, text.encode("utf-8"), rng)):
            m = Matcher(compiled)  # type: ignore[arg-type]
            for tid in ids:
                assert tid in mask_of(m), (text, vocab.token_bytes(tid))
                assert m.accept_token(tid)
            assert m.can_terminate() and vocab.eos_token_id in mask_of(m), text


LARK_RECURSIVE = ["examples/composition/json.lark", "examples/relative-imports/multiple3.lark",
                  "examples/standalone/json.lark", "tests/grammars/ab.lark"]


@pytest.mark.parametrize("relpath", LARK_RECURSIVE)
def test_recursive_lark_corpus_against_lark(relpath: str) -> None:
    """Strings generated from the IR are accepted token by token, and constrained walks that
    end are parsed by Lark itself on the original grammar text."""
    text, start, path = load(relpath)
    grammar, _ = parse_lark(text, start=start, source=path)
    compiled = compile_grammar(grammar, Vocabulary.default())
    assert compiled.kind == "pushdown"
    vocab = Vocabulary.default()
    rng = random.Random(relpath)
    for s in generated_strings(grammar, rng, examples(6)):
        m = Matcher(compiled)
        assert all(m.accept_token(t) for t in vocab.encode(s)) and m.can_terminate(), s
    for _ in range(examples(6)):
        data, ended = walk(Matcher(compiled), vocab, rng, 30, pattern="(?s).*")
        if ended:
            assert lark_accepts(text, data.decode("utf-8"), start), data
