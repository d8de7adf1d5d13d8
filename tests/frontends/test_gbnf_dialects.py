"""GBNF as XGrammar's EBNF writes it: `Regex("...")` and a start rule other than root."""
from __future__ import annotations

import pytest

from grammask.compiler import GrammarError, compile_gbnf
from grammask.compiler.frontends.gbnf import parse_gbnf_with
from grammask.compiler.support.limits import DEFAULT_LIMITS
from grammask.runtime import Matcher
from tests.support.vocabularies import small_vocabulary

VOCAB = small_vocabulary()


def _accepts(gbnf: str, text: str, start: str = "root") -> bool:
    m = Matcher(compile_gbnf(gbnf, VOCAB, start=start))
    return m.accept_string(text) and m.can_terminate()


@pytest.mark.parametrize("gbnf,good,bad", [
    (r'root ::= "id-" Regex("[a-z]+\\d{2}")', ["id-ab12", "id-z00"], ["id-12", "id-ab1"]),
    (r'root ::= "id-" Regex("[a-z]+\d{2}")', ["id-ab12"], ["id-ab"]),
    (r'root ::= Regex("[a-z]+\\.(com|org)") | "x"', ["a.com", "x"], ["a.net", "a,com"]),
    (r'root ::= Regex("\"[^\"]*\"")', ['"hi"', '""'], ['"a"b"']),
    (r'root ::= Regex("\\d+") ("," Regex("\\d+"))*', ["1,22,333"], ["1,", ",1"]),
])
def test_regex_calls(gbnf: str, good: list[str], bad: list[str]) -> None:
    # the direct reader and Lark's parser read it alike
    assert parse_gbnf_with(gbnf, None, "root", DEFAULT_LIMITS, True) == \
        parse_gbnf_with(gbnf, None, "root", DEFAULT_LIMITS, False)
    assert all(_accepts(gbnf, t) for t in good)
    assert not any(_accepts(gbnf, t) for t in bad)


def test_regex_errors_point_at_the_call() -> None:
    with pytest.raises(GrammarError, match=r"""^1:14: in 'Regex\("\("\)': unbalanced"""):
        compile_gbnf('root ::= "a" Regex("(")', VOCAB)


def test_a_space_makes_it_a_rule_reference() -> None:
    assert _accepts('root ::= Regex ("a")\nRegex ::= "b"', "ba")


def test_start_rule_other_than_root() -> None:
    assert _accepts('main ::= "x" item\nitem ::= [0-9]', "x7", start="main")
