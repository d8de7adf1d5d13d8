"""The catalog of pathological inputs (specs/limits.md): each either compiles within the
limits or raises its specific error, in bounded time. Limits are shrunk where the point of a
case is its error, so that the error comes fast."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from grammask.compiler import compile_json_schema, compile_regex
from grammask.compiler.cli.main import main
from grammask.compiler.support.errors import BudgetExceeded, GrammarError
from grammask.compiler.frontends.gbnf import parse_gbnf
from grammask.compiler.frontends.json_schema import schema_to_grammar
from grammask.compiler.support.limits import Limits
from grammask.compiler.pipeline import compile_gbnf, compile_lark
from grammask.runtime import Matcher, Vocabulary, allocate_token_bitmask
from grammask.runtime.compiled import CompiledGrammar


def _vocab() -> Vocabulary:
    tokens: list[bytes | None] = [bytes([b]) for b in range(256)]
    tokens += [b"ab", b"null", b"[", b"]", b'{"a":', None]
    return Vocabulary.from_token_bytes(tokens, eos_token_ids=len(tokens) - 1)


VOCAB = _vocab()


def accepts(compiled: CompiledGrammar, text: bytes) -> bool:
    matcher = Matcher(compiled)
    return all(matcher.accept_token(b) for b in text) and matcher.can_terminate()


def budget(limit: str | tuple[str, ...], run: object) -> BudgetExceeded:
    """The BudgetExceeded that `run()` raises, checked to name `limit` (or one of several,
    where which is met first depends on the machine's speed) and how to raise it, in its
    text and in its fields."""
    with pytest.raises(BudgetExceeded) as info:
        run()  # type: ignore[operator]
    name = info.value.limit
    assert name in ((limit,) if isinstance(limit, str) else limit)
    assert f"Limits.{name}=" in str(info.value) and f"--limit {name}=" in str(info.value)
    assert f"Limits.{name}={info.value.value}" in str(info.value)
    assert info.value.measured is not None
    return info.value


# Regexes --------------------------------------------------------------------------------

@pytest.mark.parametrize("pattern, good, bad", [
    ("(a|a)*b", b"aaab", b"aaa"),          # exponential backtracking elsewhere: a 2-state DFA
    ("(a*)*", b"aaaa", b"b"),              # nested nullable star: works
    ("(a*)*b", b"aab", b"aa"),
    ("(.*){50}", "héllo".encode(), b"\xff"),  # 50 nested stars: one UTF-8 loop
])
def test_backtracking_regexes_work(pattern: str, good: bytes, bad: bytes) -> None:
    compiled = compile_regex(pattern, VOCAB)
    assert compiled.kind == "dfa" and compiled.dfa is not None and compiled.dfa.n_states <= 8
    assert accepts(compiled, good) and not accepts(compiled, bad)


def test_huge_repeat_is_over_max_repeat() -> None:
    error = budget("max_repeat", lambda: compile_regex("a{1000000}", VOCAB))
    assert "1000000" in str(error)


def test_huge_repeat_raised_is_over_max_nfa_states() -> None:
    budget("max_nfa_states", lambda: compile_regex(
        "a{1000000}", VOCAB, limits=Limits(max_repeat=1_000_000, max_nfa_states=100_000)))


def test_class_of_every_code_point_works() -> None:
    compiled = compile_regex("[\u0000-\U0010FFFF]", VOCAB)
    for ch in ("\x00", "é", "\u20ac", "\U0010FFFF"):
        assert accepts(compiled, ch.encode())
    assert not accepts(compiled, b"\xed\xa0\x80")  # an encoded surrogate is not UTF-8


def test_class_listing_every_code_point_is_over_max_pattern_length() -> None:
    listed = "".join(chr(c) for c in range(0x20, 0x110000)
                     if not 0xD800 <= c < 0xE000 and chr(c) not in "\\]^-[")
    budget("max_pattern_length", lambda: compile_regex(f"[{listed}]", VOCAB))


@pytest.mark.parametrize("parse", [
    lambda limits: compile_regex("(a|b)" * 150_000, VOCAB, limits=limits),
    lambda limits: compile_gbnf("root ::= " + '("a" | "b") ' * 70_000, VOCAB, limits=limits),
], ids=["regex", "gbnf"])
def test_parsing_a_huge_input_stops_at_the_compile_deadline(parse: object) -> None:
    # Found by fuzzing: Lark takes seconds over inputs this long; its token stream checks the
    # deadline.
    budget("max_compile_seconds", lambda: parse(Limits(max_compile_seconds=0.2)))  # type: ignore[operator]


@pytest.mark.parametrize("gap", [" " * 200_000, "\t" * 200_000 + "# note"])
def test_a_long_gap_before_a_bad_character_is_read_in_linear_time(gap: str) -> None:
    # The GBNF reader once searched for its next token from every later position: quadratic in
    # the run of spaces (minutes for this one), where Lark's lexer is linear.
    with pytest.raises(GrammarError) as info:
        parse_gbnf("root ::= " + gap + ("\n" if "#" in gap else "") + "@")
    assert "'@'" in info.value.message


def test_100000_alternatives_work() -> None:
    compiled = compile_regex("|".join(f"w{i}" for i in range(100_000)), VOCAB)
    assert accepts(compiled, b"w99999") and not accepts(compiled, b"w100000")


# Grammars -------------------------------------------------------------------------------

TEN_MB_GBNF = "root ::= " + " | ".join(f'"w{i}"' for i in range(900_000))


@pytest.mark.parametrize("compile_", [
    lambda: compile_gbnf(TEN_MB_GBNF, VOCAB),
    lambda: compile_lark(TEN_MB_GBNF.replace("root ::=", "start:"), VOCAB),
    lambda: compile_regex("|".join(f"w{i}" for i in range(1_200_000)), VOCAB),
    lambda: compile_json_schema(json.dumps({"enum": [f"w{i}" for i in range(1_000_000)]}), VOCAB),
], ids=["gbnf", "lark", "regex", "schema"])
def test_10_mb_input_is_over_max_pattern_length(compile_: object) -> None:
    assert len(TEN_MB_GBNF) > 10_000_000
    budget("max_pattern_length", compile_)


def _left_chain(n: int, define: str, start: str) -> str:
    """Rules r0 .. rn, each left-recursive through the next, the last back to r0."""
    lines = [f"{start} {define} r0"]
    lines += [f'r{i} {define} r{i + 1} "a" | "b"' for i in range(n)]
    lines.append(f'r{n} {define} r0 "c" | "d"')
    return "\n".join(lines) + "\n"


def _chain_words(n: int) -> tuple[list[bytes], list[bytes]]:
    """Texts in and out of the language of `_left_chain(n, ...)`."""
    good = [b"b", b"b" + b"a" * (n - 1), b"d" + b"a" * n, b"bc" + b"a" * n]
    bad = [b"b" + b"a" * n, b"bc" + b"a" * (n - 1), b"c"]
    return good, bad


@pytest.mark.parametrize("compile_, define, start", [
    (compile_gbnf, "::=", "root"), (compile_lark, ":", "start")], ids=["gbnf", "lark"])
def test_left_recursive_chain_10000_rules_deep_is_over_max_rules(compile_: object, define: str,
                                                                 start: str) -> None:
    text = _left_chain(10_000, define, start)
    budget("max_rules", lambda: compile_(text, VOCAB, limits=Limits(max_rules=5_000)))  # type: ignore[operator]


def test_left_recursive_chain_10000_rules_deep_over_the_state_budgets() -> None:
    # Inlined into one rule the chain needs more than 2,000 states; with every rule kept,
    # more than 5,000 states of rule automata (built as matchers reach them: here all at once).
    budget("max_pushdown_states", lambda: compile_gbnf(
        _left_chain(10_000, "::=", "root"), VOCAB,
        limits=Limits(max_dfa_states=2_000, max_pushdown_states=5_000)).automaton)


def test_left_recursive_chain_5000_rules_deep_works() -> None:
    # Inlined into two rule automata (more states than a first attempt may build by default).
    compiled = compile_gbnf(_left_chain(5_000, "::=", "root"), VOCAB,
                            limits=Limits(max_inline_states=20_000))
    assert compiled.pushdown is not None and compiled.pushdown.n_rules == 2
    good, bad = _chain_words(5_000)
    assert all(accepts(compiled, t) for t in good) and not any(accepts(compiled, t) for t in bad)


# JSON Schema ----------------------------------------------------------------------------

def test_ref_cycle_with_a_base_case_works() -> None:
    schema = {"$defs": {"a": {"anyOf": [{"type": "null"},
                                        {"type": "array", "items": {"$ref": "#/$defs/b"}}]},
                        "b": {"$ref": "#/$defs/a"}},
              "$ref": "#/$defs/a"}
    compiled = compile_json_schema(schema, VOCAB)
    assert compiled.kind == "pushdown"
    assert accepts(compiled, b"[[null],[]]") and not accepts(compiled, b"[[1]]")


def test_ref_cycles_without_a_base_case() -> None:
    # A cycle of bare references constrains nothing: every JSON value is accepted.
    loop = {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
            "$ref": "#/$defs/a"}
    for schema in (loop, {"$ref": "#"}):
        assert accepts(compile_json_schema(schema, VOCAB), b'{"a":[1,"x",null]}')
    # An object that must contain itself has no finite instance: an empty language.
    endless = {"$defs": {"a": {"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}},
                               "required": ["x"]}},
               "$ref": "#/$defs/a"}
    with pytest.raises(GrammarError) as info:
        compile_json_schema(endless, VOCAB)
    assert info.value.code == "empty-language"


def _nested(depth: int) -> str:
    return '{"type":"object","properties":{"a":' * depth + '{"type":"null"}' + "}}" * depth


def test_schema_1000_levels_deep() -> None:
    grammar, _ = schema_to_grammar(_nested(1000))  # as text: json.loads recursion is avoided
    assert len(grammar.rules) >= 1000
    budget("max_schema_depth", lambda: schema_to_grammar(_nested(1000),
                                                         limits=Limits(max_schema_depth=500)))
    budget("max_pushdown_states", lambda: compile_json_schema(
        _nested(1000), VOCAB, limits=Limits(max_pushdown_states=2_000)).automaton)


def test_schema_10000_levels_deep_is_over_max_schema_depth() -> None:
    budget("max_schema_depth", lambda: schema_to_grammar(_nested(10_000)))


def test_object_with_5000_properties() -> None:
    """The member chain is built without recursion: one level per member."""
    names = [f"p{i}" for i in range(5000)]
    schema = {"type": "object", "properties": {n: {"type": "integer"} for n in names},
              "required": names[::7]}
    grammar, _ = schema_to_grammar(schema)
    assert len(grammar.rules) > 5000
    budget("max_nfa_states", lambda: compile_json_schema(
        schema, VOCAB, limits=Limits(max_nfa_states=20_000)))


def test_enum_with_100000_members() -> None:
    """A second of translating, or the members' NFA past its states, whichever comes first
    (on an unloaded machine the translation takes less than the second)."""
    schema = {"enum": [f"m{i}" for i in range(100_000)]}
    budget(("max_compile_seconds", "max_nfa_states"), lambda: compile_json_schema(
        schema, VOCAB, limits=Limits(max_compile_seconds=1.0)))


# Invalid UTF-8 and NUL ------------------------------------------------------------------

def test_nul_and_lone_surrogates_in_regexes() -> None:
    assert accepts(compile_regex("a\x00b", VOCAB), b"a\x00b")  # NUL is a character like any
    with pytest.raises(GrammarError, match="lone surrogate"):
        compile_regex("a\udcff", VOCAB)  # what invalid UTF-8 becomes under surrogateescape
    with pytest.raises(TypeError):
        compile_regex(b"a\xff", VOCAB)  # type: ignore[arg-type]


@pytest.mark.parametrize("compile_, text", [
    (compile_gbnf, 'root ::= "a\x00"'),
    (compile_gbnf, 'root ::= "a\udcff"'),
    (compile_lark, 'start: "a\x00"'),
    (compile_lark, 'start: "a\udcff"'),
    (compile_lark, 'start: /a\x00/'),
], ids=["gbnf-nul", "gbnf-surrogate", "lark-nul", "lark-surrogate", "lark-regex-nul"])
def test_nul_and_lone_surrogates_in_grammars(compile_: object, text: str) -> None:
    with pytest.raises(GrammarError) as info:
        compile_(text, VOCAB)  # type: ignore[operator]
    assert type(info.value) is GrammarError


def test_nul_and_invalid_utf8_in_schemas() -> None:
    assert accepts(compile_json_schema('{"const": "a\\u0000"}', VOCAB), b'"a\\u0000"')
    cases = {'{"const": "a\x00"}': "invalid-schema",            # raw NUL: not JSON
             '{"const": "a\\udcff"}': "invalid-schema",          # lone surrogate escape
             '{"const": "a\udcff"}': "invalid-schema",
             b'{"const": "a\xff"}': "invalid-utf8"}
    for text, code in cases.items():
        with pytest.raises(GrammarError) as info:
            compile_json_schema(text, VOCAB)
        assert info.value.code == code, text
    with pytest.raises(GrammarError) as info:
        compile_json_schema({"properties": {"\udcff": {}}}, VOCAB)
    assert info.value.pointer == "/properties"


def test_member_names_that_are_not_strings() -> None:
    """A schema given as a dict may have keys JSON text cannot: a clear error at the object."""
    for schema, pointer in (({"properties": {1: {"type": "string"}}}, "/properties"),
                            ({"enum": [{"a": {2: "x"}}]}, "/enum/0/a"),
                            ({("t",): "object"}, "/")):
        with pytest.raises(GrammarError) as info:
            compile_json_schema(schema, VOCAB)
        assert info.value.code == "invalid-schema" and info.value.pointer == pointer, schema


@pytest.mark.parametrize("name, data", [
    ("p.regex", b"a\xffb"), ("p.regex", b"a\x00b"),
    ("g.gbnf", b'root ::= "a\xff"'), ("g.gbnf", b'root ::= "a\x00"'),
    ("g.lark", b'start: "a\xff"'), ("g.lark", b'start: "a\x00"'),
    ("s.json", b'{"const": "a\xff"}'), ("s.json", b'{"const": "a\x00"}'),
])
@pytest.mark.parametrize("command", ["compile", "check", "lint"])
def test_invalid_utf8_and_nul_in_cli_files(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                           name: str, data: bytes, command: str) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    argv = [command, str(path)] + (["ab"] if command == "check" else [])
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    # Every command reads a file as lint does: not text, so unusable input, located.
    assert code == 2, out + err
    assert ("invalid-utf8" if b"\xff" in data else "nul-byte") in out + err
    assert f"{name}:1:" in out + err


# Vocabularies ---------------------------------------------------------------------------

def test_vocabulary_with_empty_and_duplicate_tokens() -> None:
    vocab = Vocabulary.from_token_bytes([b"", b"a", b"a", b"b", b"", b"ab", None],
                                        eos_token_ids=6)
    matcher = Matcher(compile_regex("ab|a", vocab))
    bitmask = allocate_token_bitmask(1, vocab.size)
    matcher.fill_next_token_bitmask(bitmask, 0)
    allowed = {i for i in range(vocab.size) if bitmask[0, i >> 5] >> (i & 31) & 1}
    assert allowed == {1, 2, 5}  # both spellings of "a"; never an empty token


def test_vocabulary_with_1000000_entries() -> None:
    tokens = [b"%d" % i for i in range(999_999)] + [b"", b"x"]
    vocab = Vocabulary.from_token_bytes(tokens, eos_token_ids=[999_999])
    compiled = compile_regex("[0-9]{1,3}x", vocab, precompute=True)
    row = compiled.token_sets.get(compiled.dfa.start)  # type: ignore[union-attr]
    assert row.n_allowed == 1000  # "0" .. "999"
    assert np.asarray(row.default).dtype == np.int32
