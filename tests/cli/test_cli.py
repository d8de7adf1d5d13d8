"""Tests for the `grammask` command line (grammask.compiler.cli.main) and diagnostics rendering."""
from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from grammask.compiler import GrammarError, compile_grammar
from grammask.compiler.support.diagnostics import render_diagnostic
from grammask.compiler.frontends.gbnf import parse_gbnf
from grammask.compiler.cli.check import check_text
from grammask.runtime import Vocabulary
from grammask.runtime.dfa.table import DFATable
from grammask.runtime.pushdown.table import PushdownTable
from hypothesis import given, settings
from hypothesis import strategies as st

from ..support.budget import examples
from ..support.cli import run
from ..support.paths import DATA

AGE = r'\{"age": [0-9]+\}'
TOKENIZERS = DATA / "tokenizers"


# ------------------------------------------------------------------ compile

def test_compile_regex_prints_stats(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "compile", "--regex", AGE)
    assert code == 0
    assert out.startswith("<regex>: compiled in ")
    assert "11 states" in out and "151,851 ids" in out
    assert "computed on first use" in out


def test_compile_precompute_reports_token_sets(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "compile", "--regex", AGE, "--precompute")
    assert code == 0
    line = next(l for l in out.splitlines() if "token sets" in l)
    assert "11 states" in line and "bytes" in line and "allowed tokens per state" in line


def test_compile_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "age.regex"
    f.write_text(AGE + "\n", encoding="utf-8")
    code, out, _ = run(capsys, "compile", str(f))
    assert code == 0
    assert out.startswith(f"{f}: compiled") and "11 states" in out


def test_compile_other_vocabulary(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "compile", "--regex", "[a-z]+",
                       "--vocab", str(TOKENIZERS / "byte_level_bpe.json"))
    assert code == 0 and "byte_level_bpe.json" in out


def test_compile_missing_vocabulary(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "compile", "--regex", "a", "--vocab", str(tmp_path / "nope.json"))
    assert code == 2 and "nope.json" in err
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]", encoding="utf-8")
    code, _, err = run(capsys, "compile", "--regex", "a", "--vocab", str(bad))
    assert code == 2 and "bad.json: cannot read a vocabulary" in err


NEST = 'root ::= "x" | "[" root "]"\n'
JSON_GBNF = DATA / "gbnf" / "json.gbnf"


def test_compile_recursive_grammar(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "nest.gbnf"
    f.write_text(NEST, encoding="utf-8")
    code, out, err = run(capsys, "compile", str(f))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith(f"{f}: compiled in ")
    assert lines[1] == "  backend       pushdown: the grammar is recursive (root -> root)"
    assert lines[3].startswith("  automata      1 rule kept as a rule (root), 4 states, 4 byte"
                               " classes, 1 call edge, ") and lines[3].endswith(" bytes")
    assert "computed on first use" in lines[4] and lines[5].startswith("  memory ")


def test_compile_regular_grammar_reports_its_backend(capsys: pytest.CaptureFixture[str],
                                                     tmp_path: Path) -> None:
    f = tmp_path / "age.lark"
    f.write_text('start: "{\\"age\\": " /[0-9]+/ "}"\n', encoding="utf-8")
    code, out, _ = run(capsys, "compile", str(f))
    assert code == 0
    assert "  backend       dfa: no rule reachable from the start is recursive" in out
    assert "  DFA           11 states" in out
    code, out, _ = run(capsys, "compile", "--regex", AGE)
    assert out.splitlines()[1] == "  backend       dfa"


def test_compile_grammar_errors_point_into_the_file(capsys: pytest.CaptureFixture[str],
                                                    tmp_path: Path) -> None:
    f = tmp_path / "broken.gbnf"
    f.write_text('root ::= "a"\nother ::= "b"\nroot2 ::= root nope\n', encoding="utf-8")
    code, out, err = run(capsys, "compile", "--start", "root2", str(f))
    assert code == 2 and out == ""
    assert err.startswith(f"{f}:3:16: error: rule 'nope' is not defined")
    code, _, err = run(capsys, "compile", str(f), "--limit", "max_dfa_states=1")
    assert code == 2 and "max_dfa_states=1" in err


def test_compile_precompute_pushdown(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "compile", str(JSON_GBNF), "--precompute")
    assert code == 0
    states = int(out.split(" states, ")[0].rsplit(" ", 1)[-1].replace(",", ""))
    line = next(l for l in out.splitlines() if l.startswith("  token sets"))
    assert line.startswith(f"  token sets    {states:,} states in ") and "accepted" in line
    assert err.splitlines() == [err.splitlines()[0]]
    assert err.startswith(f"token sets: {states:,} states computed in ") and "\r" not in err


def test_compile_precompute_progress_bar_on_a_terminal(capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    f = tmp_path / "nest.gbnf"
    f.write_text(NEST, encoding="utf-8")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, out, err = run(capsys, "compile", str(f), "--precompute")
    assert code == 0 and "  token sets    4 states in " in out
    assert err.startswith("\rtoken sets [") and "] 4/4 states" in err
    assert err.rsplit("\r", 1)[1].startswith("token sets: 4 states computed in ")
    assert err.endswith("\n") and err.count("\n") == 1


# ------------------------------------------------------------------ diagnostics

def test_bad_regex_diagnostic_with_caret(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "compile", "--regex", "a(?=b)")
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert lines[0].startswith("<regex>:1:2: error: lookahead")
    assert lines[0].endswith("[regex-unsupported]")
    assert lines[1] == " 1 | a(?=b)"
    assert lines[2] == "   |  ^"


def test_diagnostic_in_a_multi_line_file(capsys: pytest.CaptureFixture[str],
                                         tmp_path: Path) -> None:
    f = tmp_path / "two.regex"
    f.write_text("abc\nd[e\n", encoding="utf-8")
    code, _, err = run(capsys, "compile", str(f))
    assert code == 2
    lines = err.splitlines()
    assert lines[0].startswith(f"{f}:2:2: error: ")
    assert lines[1:] == [" 2 | d[e", "   |  ^"]


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "missing.regex"
    code, _, err = run(capsys, "compile", str(missing))
    assert code == 2
    assert err.startswith("grammask: error: ") and str(missing) in err
    assert "No such file" in err


def test_directory_and_invalid_utf8(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "compile", str(tmp_path))
    assert code == 2 and str(tmp_path) in err
    bad = tmp_path / "bad.regex"
    bad.write_bytes(b"ab\xffc")
    code, _, err = run(capsys, "compile", str(bad))
    assert code == 2 and f"{bad}:1:3: error: not valid UTF-8" in err and "byte offset 2" in err
    code, _, err = run(capsys, "check", "--regex", "a", "--text-file", str(bad))
    assert code == 2 and str(bad) in err


def test_budget_limit(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "compile", "--regex", "(a|b)*a(a|b){6}",
                       "--limit", "max_dfa_states=10")
    assert code == 2
    assert err.startswith("<regex>: error: ")
    assert "max_dfa_states=10" in err and "[budget]" in err
    code, _, _ = run(capsys, "compile", "--regex", "(a|b)*a(a|b){6}",
                     "--limit", "max_dfa_states=1000")
    assert code == 0


def test_repeat_limit_points_at_the_pattern(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "check", "--regex", "xa{50}", "--limit", "max_repeat=10", "x")
    assert code == 2 and "max_repeat" in err and err.startswith("<regex>:1:")


@pytest.mark.parametrize("limit, needle", [
    ("max_states=10", "unknown limit"),
    ("max_dfa_states", "NAME=VALUE"),
    ("max_dfa_states=lots", "integer"),
    ("max_dfa_states=0", "positive"),
])
def test_bad_limits(capsys: pytest.CaptureFixture[str], limit: str, needle: str) -> None:
    code, _, err = run(capsys, "compile", "--regex", "a", "--limit", limit)
    assert code == 2 and needle in err
    if needle == "unknown limit":
        assert "max_states" in err and "max_dfa_states" in err


def test_pattern_source_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert run(capsys, "compile")[0] == 2
    assert run(capsys, "compile", "--regex", "a", str(tmp_path / "x.regex"))[0] == 2
    assert run(capsys, "check", "--regex", "a")[0] == 2
    assert run(capsys, "frobnicate")[0] == 2


def test_render_diagnostic_shapes() -> None:
    no_line = GrammarError("too big", code="budget")
    assert render_diagnostic("<regex>", "abc", no_line) == "<regex>: error: too big [budget]"
    tabbed = GrammarError("here", line=1, column=3)
    assert render_diagnostic("f", "\tab", tabbed, "warning").splitlines() == [
        "f:1:3: warning: here", " 1 | \tab", "   | \t ^"]
    wide = GrammarError("here", line=1, column=3)
    assert render_diagnostic("f", "中文x", wide).splitlines()[2] == "   |     ^"
    pointer = GrammarError("bad type", pointer="/properties/age")
    assert render_diagnostic("s.json", "{}", pointer) == "s.json: error: at /properties/age: bad type"
    long = render_diagnostic("f", "y" * 500 + "q", GrammarError("q", line=1, column=501))
    shown, caret = long.splitlines()[1:]
    assert len(shown) < 120 and shown[caret.index("^")] == "q"


# ------------------------------------------------------------------ check

def test_check_match(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--regex", AGE, '{"age": 42}')
    assert code == 0
    assert out.splitlines() == ["<text>: match", "1 of 1 text matches"]


def test_check_mismatch_offset_and_column(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--regex", AGE, '{"age": 42}', '{"age": x}')
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "<text 1>: match"
    assert lines[1].startswith("<text 2>:1:9: error: no match: at byte offset 8, 'x' ")
    assert lines[1].endswith("[no-match]")
    assert lines[2:4] == [" 1 | {\"age\": x}", "   |         ^"]
    assert lines[-1] == "1 of 2 texts match"


def test_check_line_and_column_after_newlines(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--regex", "(é+\n)+", "éé\néx")
    assert code == 1
    assert out.startswith("<text>:2:2: error: no match: at byte offset 7, 'x'")


def test_check_incomplete_prefix(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--regex", AGE, '{"age": ')
    assert code == 1
    first = out.splitlines()[0]
    assert first.startswith("<text>:1:9: error: incomplete: all 8 bytes are a viable prefix")
    assert first.endswith("[incomplete]")


def test_check_file_and_text_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pattern = tmp_path / "age.regex"
    pattern.write_text(AGE + "\n", encoding="utf-8")
    good, newline = tmp_path / "good.txt", tmp_path / "newline.txt"
    good.write_text('{"age": 7}', encoding="utf-8")
    newline.write_text('{"age": 7}\n', encoding="utf-8")
    code, out, _ = run(capsys, "check", str(pattern), "--text-file", str(good))
    assert code == 0 and f"{good}: match" in out
    code, out, _ = run(capsys, "check", str(pattern), "--text-file", str(newline))
    assert code == 1 and f"{newline}:1:11: error: no match: at byte offset 10, '\\n'" in out
    code, _, err = run(capsys, "check", str(pattern), "--text-file", str(tmp_path / "none"))
    assert code == 2 and "none: cannot read" in err


def test_check_bad_regex(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check", "--regex", "a{3,2}", "aaa")
    assert code == 2 and out == ""
    assert err.startswith("<regex>:1:2: error: bad repetition")


@functools.cache
def both_backends() -> tuple[DFATable, PushdownTable]:
    """One regular grammar compiled to a DFA and, forced, to rule automata."""
    grammar = parse_gbnf('root ::= "{" ws ("\\"" [a-z]{1,3} "\\"" ws)? "}"\nws ::= [ ]{0,2}\n')
    vocab = Vocabulary.from_token_bytes([None], 0)
    dfa = compile_grammar(grammar, vocab).dfa
    pushdown = compile_grammar(grammar, vocab, kind="pushdown").pushdown
    assert dfa is not None and pushdown is not None
    return dfa, pushdown


@settings(max_examples=examples(200), deadline=None)
@given(st.text(alphabet='{} "abé', max_size=12))
def test_check_text_agrees_between_dfa_and_pushdown(text: str) -> None:
    dfa, pushdown = both_backends()
    a, b = check_text(dfa, text), check_text(pushdown, text)
    assert (a is None) == (b is None)
    if a is not None and b is not None:
        assert (a.code, a.message, a.line, a.column) == (b.code, b.message, b.line, b.column)


# ------------------------------------------------------------------ JSON Schemas

PERSON = """{
  "type": "object",
  "properties": {
    "name": {"type": "string", "maxLength": 20},
    "age": {"type": "integer"},
    "pets": {"type": "array", "items": {"enum": ["cat", "dog"]}, "maxItems": 3}
  },
  "required": ["name", "age"],
  "additionalProperties": false
}
"""


@pytest.fixture
def person(tmp_path: Path) -> Path:
    path = tmp_path / "person.schema.json"
    path.write_text(PERSON, encoding="utf-8")
    return path


def test_compile_schema_file(capsys: pytest.CaptureFixture[str], person: Path) -> None:
    code, out, err = run(capsys, "compile", str(person))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith(f"{person}: compiled in ") and lines[0].endswith(" ms")
    assert lines[1] == "  backend       dfa: no rule reachable from the start is recursive"
    assert lines[3].startswith("  DFA           ") and " states (1 accepting)" in lines[3]
    code, out, _ = run(capsys, "compile", str(person), "--whitespace", "compact")
    compact = int(out.splitlines()[3].split()[1].replace(",", ""))
    flexible = int(lines[3].split()[1].replace(",", ""))
    assert code == 0 and compact < flexible


def test_compile_recursive_schema_and_lenient_warnings(capsys: pytest.CaptureFixture[str],
                                                       tmp_path: Path) -> None:
    path = tmp_path / "tree.json"
    path.write_text('{\n  "type": "array",\n  "uniqueItems": true\n}\n', encoding="utf-8")
    code, out, err = run(capsys, "compile", str(path))
    assert code == 2 and out == ""
    assert err.splitlines() == [
        (f"{path}:3:3: error: at /uniqueItems: uniqueItems is supported where the items take a"
         " finite set of values (enum, const, boolean, null) and the array has no prefix items"
         " and no contains (to keep it, list the items' values in an enum of at most"
         " Limits.max_unique_values); compile with lenient=True (CLI: --lenient) to ignore it (the output"
         " may then violate it) [unsupported-keyword]"), ' 3 |   "uniqueItems": true', "   |   ^"]
    code, out, err = run(capsys, "compile", str(path), "--lenient")
    assert code == 0
    assert out.splitlines()[1].startswith("  backend       pushdown: the grammar is recursive")
    assert err.startswith(f"{path}:3:3: warning: at /uniqueItems: ")
    assert err.splitlines()[0].endswith("[schema-lenient-ignored]")


def test_check_schema_file(capsys: pytest.CaptureFixture[str], person: Path) -> None:
    code, out, _ = run(capsys, "check", str(person), '{"name": "Ada", "age": 36}',
                       '{"name": "Ada"}', '{"name": "Ada", "age": 36, "pets": ["cow"]}')
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "<text 1>: match"
    assert lines[1].startswith("<text 2>:1:15: error: no match: at byte offset 14, '}'")
    assert lines[4].startswith("<text 3>:1:39: error: no match: at byte offset 38, 'o'")
    assert lines[-1] == "1 of 3 texts match"


def test_check_schema_layouts(capsys: pytest.CaptureFixture[str], person: Path,
                              tmp_path: Path) -> None:
    value = {"name": "Ada", "age": 36, "pets": ["cat"]}
    indented = tmp_path / "indented.txt"
    indented.write_text(json.dumps(value, indent=3), encoding="utf-8")
    for options, matches in ((["--indent", "3"], True), (["--whitespace", "compact"], False),
                             (["--indent", "2"], False), ([], True)):
        code, out, _ = run(capsys, "check", str(person), "--text-file", str(indented), *options)
        assert (code == 0) == matches, (options, out)
    compact = json.dumps(value, separators=(",", ":"))
    for options in (["--whitespace", "compact"], []):
        assert run(capsys, "check", str(person), "--text", compact, *options)[0] == 0
    assert run(capsys, "check", str(person), "--text", compact, "--indent", "2")[0] == 1


def test_check_schema_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text('{"type": "integer", "minimum": 5, "maximum": 1}', encoding="utf-8")
    code, out, err = run(capsys, "check", str(empty), "1")
    assert code == 2 and out == ""
    assert err.startswith(f"{empty}:1:1: error: no JSON value satisfies this schema")
    assert "[empty-language]" in err
    broken = tmp_path / "broken.json"
    broken.write_text('{"type": "object",\n "properties": {"a": {"type": "strin"}}}',
                      encoding="utf-8")
    code, _, err = run(capsys, "check", str(broken), "{}")
    assert code == 2 and err.startswith(f"{broken}:2:23: error: at /properties/a/type: ")


def test_schema_options_only_for_schemas(capsys: pytest.CaptureFixture[str],
                                         tmp_path: Path, person: Path) -> None:
    grammar = tmp_path / "a.gbnf"
    grammar.write_text('root ::= "a"\n', encoding="utf-8")
    code, _, err = run(capsys, "compile", str(grammar), "--strict", "--lenient")
    assert code == 2 and "--strict, --lenient: only for JSON Schemas" in err
    code, _, err = run(capsys, "check", "--regex", "a", "--whitespace", "compact", "a")
    assert code == 2 and "--whitespace: only for JSON Schemas" in err
    code, _, err = run(capsys, "check", str(person), "{}", "--whitespace", "compact",
                       "--indent", "2")
    assert code == 2 and "--indent applies to --whitespace indent" in err
    schema_txt = tmp_path / "person.txt"
    schema_txt.write_text(PERSON, encoding="utf-8")
    code, out, _ = run(capsys, "check", "--language", "jsonschema", str(schema_txt),
                       '{"name": "x", "age": 1}')
    assert code == 0 and out.endswith("1 of 1 text matches\n")


# ------------------------------------------------------------------ demo and script

def test_demo_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "demo", "--n", "8", "--seed", "2", "--schema-n", "3", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["n"] == 8 and result["constrained_rate"] == 1.0
    schema = result["schema"]
    assert schema["n"] == 3 and schema["strict"]["valid"] == schema["strict"]["finished"]
    tools = result["tools"]
    constrained = tools["constrained"]
    assert tools["n"] == 60 and constrained["valid"] == constrained["finished"] > 0
    assert constrained["calls"] > 0 and constrained["texts"] > 0
    code, out, _ = run(capsys, "demo", "--n", "2", "--schema-n", "0", "--tools-n", "0",
                       "--json")
    assert code == 0 and json.loads(out)["schema"] is None and json.loads(out)["tools"] is None


def test_demo_bad_patterns(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "demo", "--n", "2", "--pattern", "a(?=b)")
    assert code == 2 and err.startswith("<regex>:1:2: error: lookahead")
    code, _, err = run(capsys, "demo", "--n", "0")
    assert code == 2 and "--n" in err
    code, _, err = run(capsys, "demo", "--schema-n", "-1")
    assert code == 2 and "--schema-n" in err


def test_console_script_runs() -> None:
    script = shutil.which("grammask")
    assert script is not None, "the grammask console script is not installed"
    proc = subprocess.run([script, "--help"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0
    assert "demo" in proc.stdout and "compile" in proc.stdout and "check" in proc.stdout
