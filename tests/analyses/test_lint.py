"""`grammask lint` on grammar files: golden text output for broken grammars
(tests/data/lint/NAME.gbnf -> NAME.expected; regenerate with GRAMMASK_UPDATE_GOLDEN=1), JSON and
SARIF structure, exit codes, unusable input, and corpora (`grammask check` and `lint --stats`:
`test_lint_check.py`; the examples of specs/diagnostics.md: `test_lint_docs.py`)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import grammask.compiler.frontends.gbnf as gbnf_module
from grammask.compiler.ir.nodes import (
    CharClass,
    Choice,
    Grammar,
    Literal,
    Node,
    Repeat,
    Rule,
    RuleRef,
    Seq,
)
from grammask.compiler.support.limits import DEFAULT_LIMITS
from grammask.compiler.analyses.lint import lint_source
from hypothesis import given, settings
from hypothesis import strategies as st

from ..support.budget import examples
from ..support.cli import BROKEN, CLEAN, WARNS, feed_stdin, run, write
from ..support.paths import DATA, ROOT

GOLDEN = DATA / "lint"
UPDATE = os.environ.get("GRAMMASK_UPDATE_GOLDEN") == "1"
JSON_KEYS = {"path", "line", "column", "end_line", "end_column", "severity", "code", "message"}


# ---------------------------------------------------------------- golden text output

@pytest.mark.parametrize("name", sorted(p.stem for p in GOLDEN.glob("*.gbnf")))
def test_golden_text(name: str, gbnf: object, capsys: pytest.CaptureFixture[str],
                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(GOLDEN)
    code, out, err = run(capsys, "lint", f"{name}.gbnf")
    expected = GOLDEN / f"{name}.expected"
    if UPDATE:
        expected.write_text(out, encoding="utf-8")
    assert err == ""
    assert out == expected.read_text(encoding="utf-8")
    errors = int(out.splitlines()[-1].split()[0])
    assert code == (1 if errors else 0)


def test_golden_set_covers_the_analyses() -> None:
    text = "".join(p.read_text(encoding="utf-8") for p in GOLDEN.glob("*.expected"))
    for code in ("undefined-rule", "missing-start", "unproductive", "unused-rule",
                 "nullable-loop", "unbounded-whitespace", "state-budget",
                 "identical-alternatives", "overlapping-literals", "json-no-whitespace",
                 "left-recursion", "regular", "recursive", "stats", "budget"):
        assert f"[{code}]" in text, code


# ---------------------------------------------------------------- formats

def test_text_summary_and_exit_codes(gbnf: object, capsys: pytest.CaptureFixture[str],
                                     tmp_path: Path) -> None:
    clean, warns = write(tmp_path, "clean.gbnf", CLEAN), write(tmp_path, "warns.gbnf", WARNS)
    broken = write(tmp_path, "broken.gbnf", BROKEN)
    code, out, _ = run(capsys, "lint", clean)
    assert code == 0 and out.splitlines()[-1] == "0 errors, 0 warnings, 2 notes"
    assert run(capsys, "lint", warns)[0] == 0
    assert run(capsys, "lint", "--strict", warns)[0] == 1
    assert run(capsys, "lint", "--strict", clean)[0] == 0
    code, out, _ = run(capsys, "lint", clean, broken)
    assert code == 1 and f"{broken}:1:10: error: rule 'item' is not defined" in out
    assert out.splitlines()[-1].startswith("1 error, 0 warnings, ")


def test_json_lines(gbnf: object, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    broken = write(tmp_path, "broken.gbnf", BROKEN)
    code, out, _ = run(capsys, "lint", "--format", "json", broken)
    assert code == 1
    objs = [json.loads(line) for line in out.splitlines()]
    assert objs and all(set(o) == JSON_KEYS for o in objs)
    first = objs[0]
    assert first == {"path": broken, "line": 1, "column": 10, "end_line": 1,
                     "end_column": first["end_column"], "severity": "error",
                     "code": "undefined-rule", "message": first["message"]}
    assert isinstance(first["end_column"], int) and "'item'" in first["message"]
    spanless = [o for o in objs if o["code"] == "stats"]
    assert spanless and spanless[0]["line"] is None and spanless[0]["severity"] == "info"


def check_sarif(log: dict) -> None:
    """The parts of the SARIF 2.1.0 schema this log uses, checked by hand."""
    assert log["version"] == "2.1.0" and isinstance(log["$schema"], str)
    (run_,) = log["runs"]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "grammask"
    ids = [r["id"] for r in driver["rules"]]
    assert len(ids) == len(set(ids))
    for rule in driver["rules"]:
        assert isinstance(rule["id"], str) and isinstance(rule["shortDescription"]["text"], str)
    for result in run_["results"]:
        assert result["ruleId"] in ids and ids[result["ruleIndex"]] == result["ruleId"]
        assert result["level"] in ("error", "warning", "note")
        assert isinstance(result["message"]["text"], str) and result["message"]["text"]
        (loc,) = result["locations"]
        physical = loc["physicalLocation"]
        assert isinstance(physical["artifactLocation"]["uri"], str)
        region = physical.get("region")
        if region is not None:
            assert set(region) <= {"startLine", "startColumn", "endLine", "endColumn"}
            assert all(isinstance(v, int) and v >= 1 for v in region.values())
            assert region["endLine"] >= region["startLine"]
            if "endColumn" in region and region["endLine"] == region["startLine"]:
                assert region["endColumn"] > region["startColumn"]


def test_sarif_log(gbnf: object, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "broken file.gbnf", BROKEN)
    write(tmp_path, "warns.gbnf", WARNS)
    code, out, _ = run(capsys, "lint", "--format", "sarif", "broken file.gbnf", "warns.gbnf",
                       str(tmp_path / "missing.gbnf"))
    assert code == 2
    log = json.loads(out)
    check_sarif(log)
    results = log["runs"][0]["results"]
    first = results[0]
    assert first["ruleId"] == "undefined-rule" and first["level"] == "error"
    physical = first["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "broken%20file.gbnf"
    assert physical["region"]["startLine"] == 1 and physical["region"]["startColumn"] == 10
    levels = {r["ruleId"]: r["level"] for r in results}
    assert levels["overlapping-literals"] == "warning" and levels["stats"] == "note"
    missing = [r for r in results if r["ruleId"] == "unreadable"]
    assert missing[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith(
        "file://")


# ---------------------------------------------------------------- input handling

def test_stdin_needs_a_language(gbnf: object, capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    feed_stdin(monkeypatch, BROKEN.encode())
    code, _, err = run(capsys, "lint", "-")
    assert code == 2 and "--language" in err
    feed_stdin(monkeypatch, BROKEN.encode())
    code, out, _ = run(capsys, "lint", "--language", "gbnf", "-")
    assert code == 1 and out.startswith("<stdin>:1:10: error: rule 'item' is not defined")


def test_regex_files_with_lines(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, "two.regex", "[0-9]+\n(a|a)*\n")
    code, out, _ = run(capsys, "lint", path)
    assert code == 0
    assert out.startswith(f"{path}:2:4: warning: alternative 2 (\"a\") is identical")
    assert out.splitlines()[1:3] == [" 2 | (a|a)*", "   |    ^"]
    code, out, _ = run(capsys, "lint", write(tmp_path, "bad.regex", "ab\nc(?=d)\n"))
    assert code == 1 and ":2:2: error: lookahead" in out and "[regex-unsupported]" in out


def test_missing_file_and_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "missing.gbnf"
    code, out, _ = run(capsys, "lint", str(missing))
    assert code == 2
    assert out.startswith(f"{missing}: error: cannot read: No such file") and "[unreadable]" in out
    code, out, _ = run(capsys, "lint", str(tmp_path))
    assert code == 2 and f"{tmp_path}: error: cannot read: it is a directory" in out


def test_invalid_utf8_reports_the_byte_offset(capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    bad = tmp_path / "bad.gbnf"
    bad.write_bytes(b'root ::= "a"\nx ::= "\xff"\n')
    code, out, _ = run(capsys, "lint", str(bad))
    assert code == 2
    assert out.splitlines()[0] == (f"{bad}:2:8: error: not valid UTF-8: byte 0xFF at byte offset"
                                   " 20 (invalid start byte) [invalid-utf8]")


def test_nul_byte(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "nul.gbnf"
    bad.write_bytes(b'root ::= "a\x00"\n')
    code, out, _ = run(capsys, "lint", "--format", "json", str(bad))
    assert code == 2
    (obj,) = [json.loads(line) for line in out.splitlines()]
    assert (obj["code"], obj["line"], obj["column"]) == ("nul-byte", 1, 12)
    assert "byte offset 11" in obj["message"]


def test_big_file_is_a_budget_diagnostic(capsys: pytest.CaptureFixture[str],
                                         tmp_path: Path) -> None:
    big = tmp_path / "big.gbnf"
    big.write_text('root ::= "' + "a" * (10 * 1024 * 1024) + '"\n', encoding="utf-8")
    code, out, _ = run(capsys, "lint", str(big))
    assert code == 2
    assert out.startswith(f"{big}: error: input size in characters: 10485772 exceeds the budget"
                          " Limits.max_pattern_length=1000000")
    assert "[budget]" in out


def test_usage_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    other = write(tmp_path, "grammar.txt", "root ::= \"a\"\n")
    code, _, err = run(capsys, "lint", other)
    assert code == 2 and "cannot tell the grammar language" in err
    assert run(capsys, "lint", "--limit", "max_states=1", other)[0] == 2
    assert run(capsys, "lint")[0] == 2
    assert run(capsys, "lint", "-", "-", "--language", "gbnf")[0] == 2
    assert run(capsys, "lint", "--format", "xml", other)[0] == 2


def test_start_and_limit_options(gbnf: object, capsys: pytest.CaptureFixture[str],
                                 tmp_path: Path) -> None:
    path = write(tmp_path, "s.gbnf", 'start ::= "x"{50}\n')
    code, out, _ = run(capsys, "lint", path)
    assert code == 1 and "[missing-start]" in out
    code, out, _ = run(capsys, "lint", "--start", "start", path)
    assert code == 0 and "minimal DFA has 51 states" in out
    code, out, _ = run(capsys, "lint", "--limit", "max_repeat=10", path)
    assert code == 1 and "max_repeat=10" in out


def test_lint_source_api() -> None:
    found = lint_source("x.regex", "a{3,2}", None, DEFAULT_LIMITS)
    assert [(d.code, d.span.column if d.span else None) for d in found] == [("regex-syntax", 2)]
    found = lint_source("-", "ab|ab", "regex", DEFAULT_LIMITS)
    assert [d.code for d in found] == ["identical-alternatives", "regular", "stats"]
    with pytest.raises(ValueError):
        lint_source("grammar.txt", "a", None, DEFAULT_LIMITS)


def test_pre_commit_hook_definition() -> None:
    yaml = pytest.importorskip("yaml")
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    (hook,) = [h for h in hooks if h["id"] == "grammask-lint"]
    assert hook["entry"] == "grammask lint" and hook["language"] == "python"
    import re

    files = re.compile(hook["files"])
    assert files.search("a/b.gbnf") and files.search("x.lark") and files.search("y.regex")
    assert not files.search("z.json")


# ---------------------------------------------------------------- corpora and properties

@pytest.mark.parametrize("kind", ["gbnf", "lark"])
def test_corpus_lints_without_crashing(kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted((DATA / kind).rglob(f"*.{kind}"))
    assert len(files) >= 8
    for path in files:
        code, out, _ = run(capsys, "lint", "--format", "json", str(path))
        objs = [json.loads(line) for line in out.splitlines()]
        assert code in (0, 1), (path, objs)
        assert not [o for o in objs if o["code"] == "internal-error"], path


ALPHABET = b"abc"


def leaves(n_rules: int, index: int) -> st.SearchStrategy[Node]:
    """Literals, non-empty classes, references to later rules, optional references to any."""
    options: list[st.SearchStrategy[Node]] = [
        st.binary(min_size=1, max_size=3).map(
            lambda b: Literal(bytes(ALPHABET[x % 3] for x in b))),
        st.sets(st.sampled_from(list(ALPHABET)), min_size=1, max_size=3).map(
            lambda s: CharClass.of((c, c) for c in s)),
        st.integers(0, n_rules - 1).map(lambda i: Repeat(RuleRef(f"r{i}"), 0, 1)),
    ]
    if index + 1 < n_rules:
        options.append(st.integers(index + 1, n_rules - 1).map(lambda i: RuleRef(f"r{i}")))
    return st.one_of(options)


def bodies(n_rules: int, index: int) -> st.SearchStrategy[Node]:
    def extend(kids: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
        bounds = st.tuples(st.integers(0, 2), st.one_of(st.none(), st.integers(0, 2))).map(
            lambda t: (t[0], None if t[1] is None else t[0] + t[1]))
        return st.one_of(
            st.lists(kids, min_size=1, max_size=3).map(lambda xs: Seq(tuple(xs))),
            st.lists(kids, min_size=1, max_size=3).map(lambda xs: Choice(tuple(xs))),
            st.tuples(kids, bounds).map(lambda t: Repeat(t[0], t[1][0], t[1][1])))

    return st.recursive(leaves(n_rules, index), extend, max_leaves=6)


@st.composite
def valid_grammars(draw: st.DrawFn) -> Grammar:
    """Every rule defined, reachable (rule i uses rule i+1) and productive (required
    references only go to later rules)."""
    n = draw(st.integers(1, 4))
    rules = []
    for i in range(n):
        body = draw(bodies(n, i))
        if i + 1 < n:
            body = Seq((body, RuleRef(f"r{i + 1}")))
        rules.append(Rule(f"r{i}", body))
    return Grammar(tuple(rules), "r0")


@settings(max_examples=examples(60))
@given(valid_grammars())
def test_valid_random_grammars_lint_without_errors(grammar: Grammar) -> None:
    text = gbnf_module.to_gbnf(grammar)
    found = lint_source("random.gbnf", text, None, DEFAULT_LIMITS, start="r0")
    assert [d for d in found if d.severity == "error"] == [], text
