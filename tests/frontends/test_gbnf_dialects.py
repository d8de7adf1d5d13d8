"""GBNF as XGrammar's EBNF writes it: its macros (`Regex`, `TagDispatch`, `Token`,
`ExcludeToken`), rule names with underscores and a start rule other than root."""
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
    (r'root ::= Regex("a.c") Regex("[.]", flags="u")', ["abc.", "a\nc."], ["abcx"]),
    (r'root ::= Regex("a.c", flags="u")', ["abc"], ["a\nc"]),
    (r'root ::= Regex("\\w+", json_string=true)', ["ab_1"], ['a"', ""]),
    (r'root ::= Regex("[a-z]+\\.(com|org)") | "x"', ["a.com", "x"], ["a.net", "a,com"]),
    (r'root ::= Regex("\"[^\"]*\"")', ['"hi"', '""'], ['"a"b"']),
    (r'root ::= Regex("\\d+") ("," Regex("\\d+"))*', ["1,22,333"], ["1,", ",1"]),
])
def test_regex_calls(gbnf: str, good: list[str], bad: list[str]) -> None:
    # the direct reader leaves macros to Lark's parser: both read it alike (an automaton
    # leaf, from json_string, compares by identity)
    if "json_string" not in gbnf:
        assert parse_gbnf_with(gbnf, None, "root", DEFAULT_LIMITS, True) == \
            parse_gbnf_with(gbnf, None, "root", DEFAULT_LIMITS, False)
    assert all(_accepts(gbnf, t) for t in good)
    assert not any(_accepts(gbnf, t) for t in bad)


def test_regex_errors_point_at_the_call() -> None:
    with pytest.raises(GrammarError, match=r"^1:14: Regex\(\.\.\.\): unbalanced"):
        compile_gbnf('root ::= "a" Regex("(")', VOCAB)


def test_a_space_makes_it_a_rule_reference() -> None:
    assert _accepts('root ::= Regex ("a")\nRegex ::= "b"', "ba")


def test_start_rule_other_than_root() -> None:
    assert _accepts('main ::= "x" item\nitem ::= [0-9]', "x7", start="main")


TOOLS = """root ::= TagDispatch(
    ("<tool_call>", call),
    ("<code>", code),
    loop_after_dispatch=true,
    excludes=()
)
call ::= "{" [^}]* "}" "</tool_call>"
code ::= "```" [^`]* "```"
"""


@pytest.mark.parametrize("text,ok", [
    ("I will call a tool. <tool_call>{}</tool_call> Done.", True),
    ("no tool call at all", True),
    ("<code>```print(1)```<tool_call>{}</tool_call>", True),
    ("a <tool_ca", True),
    ("<tool_call>{", False),
    ("x <tool_call> y", False),
])
def test_tag_dispatch(text: str, ok: bool) -> None:
    assert _accepts(TOOLS, text) == ok


def test_tag_dispatch_once_with_excludes() -> None:
    grammar = ('root ::= body "</answer>"\n'
               'body ::= TagDispatch(("<t>", t), loop_after_dispatch=false, excludes=("</answer>",))\n'
               't ::= [0-9]+ "</t>"')
    assert _accepts(grammar, "hi <t>42</t></answer>")
    assert _accepts(grammar, "hi</answer>")
    assert not _accepts(grammar, "<t>1</t><t>2</t></answer>")
    assert not _accepts(grammar, "a</answer>b</answer>")


def test_tag_dispatch_stop_strings() -> None:
    """XGrammar's earlier options: `stop_str` strings end the text (and are not free text),
    `stop_eos=false` makes one of them required."""
    grammar = ('root ::= TagDispatch(("<t>", t), stop_eos=false, stop_str=("END", "STOP"))\n'
               't ::= [0-9]+ "</t>"')
    for text in ("hi END", "hi <t>1</t> yo STOP", "END", "EN<t>1</t>END"):
        assert _accepts(grammar, text), text
    for text in ("hi", "a END b", "<t>x</t>END", "hi ENDSTOP"):
        assert not _accepts(grammar, text), text
    either = 'root ::= TagDispatch(("<t>", t), stop_str=("END",))\nt ::= "1</t>"'
    assert _accepts(either, "hi") and _accepts(either, "hi END") and not _accepts(either, "hi ENDx")
    with pytest.raises(GrammarError, match="stop_eos=false needs a stop_str"):
        compile_gbnf('root ::= TagDispatch(("<t>", t), stop_eos=false)\nt ::= "1"', VOCAB)


def test_token_macros() -> None:
    compiled = compile_gbnf('root ::= "a" Token(301) ExcludeToken(301)*', VOCAB)
    m = Matcher(compiled)
    assert m.accept_string("a") and m.accept_token(301)
    assert not m.accept_token(301)
    assert m.accept_string("xyz") and m.can_terminate()
    one = Matcher(compile_gbnf('root ::= "a" ExcludeToken(301) "b"', VOCAB))  # exactly one
    assert one.accept_string("a") and not one.fork().accept_token(301)
    two = one.fork()
    assert two.accept_token(ord("x")) and not two.accept_token(ord("y"))
    assert one.accept_token(VOCAB.size - 1) and one.accept_string("b") and one.can_terminate()


@pytest.mark.parametrize("gbnf,message", [
    ('root ::= Regex("a", flags="i")', "only 's' and 'u' are supported"),
    ('root ::= Regex("a", dotall=true)', "unknown option 'dotall'"),
    ('root ::= TagDispatch(("<t>", t), excludes=("<",))\nt ::= "x"', "begins a tag"),
    ('root ::= Substring("ab", x=1)', "unknown option 'x'"),
    ('root ::= Token(x)', "expected a token id"),
    ("root ::= x\nx[max_tokens=-3] ::= [a-z]+", "2:3: malformed rule options"),
    ("root ::= x\nx[max_tokens=3] ::= [a-z]+ <[5]>", "2:2: rule x's options need a body of text"),
    ('root ::= x\nx[lazy] ::= "a" x | "b"', "2:2: rule x's options need a regular body"),
    ("root ::= x\nx[la zy] ::= [a-z]+", "2:3: malformed rule options"),
])
def test_macro_errors(gbnf: str, message: str) -> None:
    with pytest.raises(GrammarError, match=message):
        compile_gbnf(gbnf, VOCAB)


@pytest.mark.parametrize("gbnf,good,bad", [
    ('root ::= name ">" [a-z]+\nname[lazy] ::= [a-z]+', ["a>b"], ["ab>c", ">b"]),
    ('root ::= head "=x>"\nhead[lazy] ::= [^\\x00]* "<f"', ["hi <f=x>", "<f=x>"],
     ["hi <f <f=x>", "hi=x>"]),
    ('root ::= "<" n ">"\nn[max_chars=2, capture="n", temperature=0.5] ::= [a-z]*',
     ["<>", "<ab>"], ["<abc>"]),
])
def test_rule_options(gbnf: str, good: list[str], bad: list[str]) -> None:
    """XGrammar's `name[lazy]` (committed-shortest) and `max_chars` on EBNF rules; `capture`
    and `temperature` do not change the language."""
    for text in good:
        assert _accepts(gbnf, text), text
    for text in bad:
        assert not _accepts(gbnf, text), text


def test_substring() -> None:
    chunks = ["abc", "de", "fg", "de"]
    runs = {"".join(chunks[n:m]) for n in range(5) for m in range(n, 5)}
    grammar = 'root ::= Substring("abc", "de", "fg", "de")'
    for text in ["", "ab", "abc", "cde", "defg", "fgde", "abcdefgde", "dede", "abcfg"]:
        assert _accepts(grammar, text) == (text in runs), text
