"""`grammask check` on grammar files (regular and recursive grammars, budgets), and
`grammask lint --stats`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..support.cli import BROKEN, feed_stdin, run, write
from ..support.paths import DATA


# ---------------------------------------------------------------- check with grammar files

def test_check_gbnf_file(gbnf: object, capsys: pytest.CaptureFixture[str],
                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "age.gbnf", 'root ::= "{\\"age\\": " [0-9]+ "}"\n')
    code, out, _ = run(capsys, "check", path, "--text", '{"age": 42}')
    assert code == 0 and out.splitlines() == ["<text>: match", "1 of 1 text matches"]
    code, out, _ = run(capsys, "check", path, "--text", '{"age": 4x}')
    assert code == 1
    assert out.splitlines()[0] == (
        "<text>:1:10: error: no match: at byte offset 9, 'x' cannot continue any match (after"
        " a viable prefix of 9 bytes); expected one of '0'-'9', '}' [no-match]")
    code, out, _ = run(capsys, "check", path, "--text", '{"age": ')
    assert code == 1 and "incomplete: all 8 bytes are a viable prefix" in out
    assert "expected next '0'-'9' [incomplete]" in out
    feed_stdin(monkeypatch, b'{"age": 7}')
    code, out, _ = run(capsys, "check", path)
    assert code == 0 and out.startswith("<stdin>: match")


NEST = 'root ::= "x" | "[" root "]"\n'


def test_check_recursive_grammar(gbnf: object, capsys: pytest.CaptureFixture[str],
                                 tmp_path: Path) -> None:
    path = write(tmp_path, "nest.gbnf", NEST)
    code, out, err = run(capsys, "check", path, "--text", "[[x]]", "--text", "x")
    assert code == 0 and err == ""
    assert out.splitlines() == ["<text 1>: match", "<text 2>: match", "2 of 2 texts match"]
    code, out, _ = run(capsys, "check", path, "--text", "[[x)")
    assert code == 1
    assert out.splitlines() == [
        ("<text>:1:4: error: no match: at byte offset 3, ')' cannot continue any match (after a"
         " viable prefix of 3 bytes); expected ']' [no-match]"),
        " 1 | [[x)", "   |    ^", "0 of 1 text matches"]
    code, out, _ = run(capsys, "check", path, "--text", "[[x]")
    assert code == 1 and out.splitlines()[0] == (
        "<text>:1:5: error: incomplete: all 4 bytes are a viable prefix, but the text ends"
        " before a complete match; expected next ']' [incomplete]")
    code, out, _ = run(capsys, "check", path, "--text", "[x]]", "--text", "")
    assert code == 1
    assert ("<text 1>:1:4: error: no match: at byte offset 3, ']' cannot continue any match"
            " (after a viable prefix of 3 bytes); expected the end of the text [no-match]") in out
    assert ("<text 2>:1:1: error: incomplete: all 0 bytes are a viable prefix, but the text"
            " ends before a complete match; expected next one of '[', 'x' [incomplete]") in out


def test_check_recursive_grammar_past_one_chunk(gbnf: object, capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path) -> None:
    path = write(tmp_path, "nest.gbnf", NEST)
    deep = "[" * 5000 + "x" + "]" * 5000
    code, out, _ = run(capsys, "check", path, "--text", deep)
    assert code == 0 and out.startswith("<text>: match")
    code, out, _ = run(capsys, "check", path, "--text", deep[:9000] + "x" + deep[9000:])
    assert code == 1 and out.startswith("<text>:1:9001: error: no match: at byte offset 9000,"
                                        " 'x' cannot continue any match")
    assert "expected ']' [no-match]" in out


def test_check_recursive_lark_grammar(capsys: pytest.CaptureFixture[str],
                                      tmp_path: Path) -> None:
    path = write(tmp_path, "list.lark", 'start: "(" [start ("," "\\n"? start)*] ")"\n')
    code, out, _ = run(capsys, "check", path, "--text", "((),(()))")
    assert code == 0
    code, out, _ = run(capsys, "check", path, "--text", "((),\n(()x")
    assert code == 1 and out.startswith("<text>:2:4: error: no match: at byte offset 8, 'x'")
    assert "expected one of ')', ',' [no-match]" in out


def test_check_recursive_grammar_over_budget(gbnf: object, capsys: pytest.CaptureFixture[str],
                                             tmp_path: Path) -> None:
    path = write(tmp_path, "nest.gbnf", NEST)
    code, out, err = run(capsys, "check", path, "--limit", "max_dfa_states=2", "--text", "x")
    assert code == 2 and out == ""
    assert err.startswith(f"{path}: error: ") and "max_dfa_states=2" in err


def test_check_expected_bytes_at_an_accepting_state(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--regex", "a+", "--text", "aab")
    assert code == 1
    assert "expected one of 'a', the end of the text [no-match]" in out


# ---------------------------------------------------------------- lint --stats

def test_stats_off_by_default(gbnf: object, capsys: pytest.CaptureFixture[str],
                              tmp_path: Path) -> None:
    path = write(tmp_path, "nest.gbnf", NEST)
    code, out, _ = run(capsys, "lint", path)
    assert code == 0 and "backend" not in out
    assert out.splitlines()[-1] == "0 errors, 0 warnings, 2 notes"


def test_stats_regular_grammar(gbnf: object, capsys: pytest.CaptureFixture[str],
                               tmp_path: Path) -> None:
    path = write(tmp_path, "age.gbnf", 'root ::= "{\\"age\\": " [0-9]+ "}"\n')
    code, out, _ = run(capsys, "lint", "--stats", path)
    assert code == 0
    assert out.splitlines()[-2:] == [
        (f"{path}: info: backend dfa: no rule reachable from the start is recursive; 11 states,"
         " 10 byte classes [stats]"), "0 errors, 0 warnings, 3 notes"]


def test_stats_recursive_grammar(gbnf: object, capsys: pytest.CaptureFixture[str],
                                 tmp_path: Path) -> None:
    nest = write(tmp_path, "nest.gbnf", NEST)
    code, out, _ = run(capsys, "lint", "--stats", nest)
    assert code == 0
    assert (f"{nest}: info: backend pushdown: the grammar is recursive (root -> root); 1 rule"
            " kept as a rule (root), 4 states, 4 byte classes, 1 call edge [stats]") in out
    json_grammar = (DATA / "gbnf" / "json.gbnf")
    code, out, _ = run(capsys, "lint", "--stats", "--format", "json", str(json_grammar))
    assert code in (0, 1)
    (backend,) = [json.loads(line) for line in out.splitlines() if "backend" in line]
    assert backend["code"] == "stats" and backend["severity"] == "info"
    assert backend["message"].startswith("backend pushdown: the grammar is recursive (")
    assert "rules kept as rules (" in backend["message"]
    assert backend["message"].endswith(" call edges")


def test_stats_budget_error_is_a_diagnostic(gbnf: object, capsys: pytest.CaptureFixture[str],
                                            tmp_path: Path) -> None:
    nest = write(tmp_path, "nest.gbnf", NEST)
    code, out, err = run(capsys, "lint", "--stats", "--limit", "max_dfa_states=2", nest)
    assert code == 1 and err == ""
    assert out.startswith(f"{nest}:1:1: error: compiling to rule automata for the pushdown"
                          " runtime failed: ")
    assert "Limits.max_dfa_states=2" in out.splitlines()[0]
    assert out.splitlines()[0].endswith("[state-budget]")
    assert "backend" not in out
    regular = write(tmp_path, "ab.gbnf", 'root ::= [ab]* "a" [ab]{6}\n')
    code, out, _ = run(capsys, "lint", "--stats", "--limit", "max_dfa_states=10", regular)
    assert code == 1
    assert "compiling to rule automata for the pushdown runtime (the fallback for a DFA over" \
           " budget) failed: rule 'root': DFA states: more than 10" in out


def test_stats_when_the_grammar_does_not_compile(gbnf: object, capsys: pytest.CaptureFixture[str],
                                                 tmp_path: Path) -> None:
    broken = write(tmp_path, "broken.gbnf", BROKEN)
    code, out, _ = run(capsys, "lint", "--stats", broken)
    assert code == 1
    assert (f"{broken}: info: no backend: the grammar does not compile (rule 'item' is not"
            " defined (referenced in 'root')) [stats]") in out
