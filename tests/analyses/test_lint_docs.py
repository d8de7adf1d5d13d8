"""specs/diagnostics.md: every example grammar gives the diagnostic shown, every console
example prints what is shown, and every diagnostic code is documented."""
from __future__ import annotations

from pathlib import Path

import pytest
from grammask.compiler.ir.nodes import Grammar, Literal, Repeat, Rule
from grammask.compiler.support.limits import DEFAULT_LIMITS
from grammask.compiler.analyses.lint import lint_source

from ..support.cli import run, write
from ..support.paths import SPECS


# ---------------------------------------------------------------- specs/diagnostics.md

def doc_examples() -> list[tuple[str, str, str]]:
    """(language, grammar, expected text) for every grammar block followed by a text block."""
    import re

    text = (SPECS / "diagnostics.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```(\w+)\n(.*?)^```$", text, re.DOTALL | re.MULTILINE)
    return [(lang, body, blocks[i + 1][1].rstrip("\n"))
            for i, (lang, body) in enumerate(blocks[:-1])
            if lang in ("gbnf", "lark", "regex") and blocks[i + 1][0] == "text"]


def doc_id(example: tuple[str, str, str]) -> str:
    return example[2].rsplit("[", 1)[-1].split("]")[0]


@pytest.mark.parametrize("example", doc_examples(), ids=doc_id)
def test_diagnostics_doc_examples(example: tuple[str, str, str]) -> None:
    from grammask.compiler.support.diagnostics import render

    language, grammar, expected = example
    pytest.importorskip({"gbnf": "grammask.compiler.frontends.gbnf", "lark": "grammask.compiler.frontends.lark_grammar",
                         "regex": "grammask.compiler.frontends.regex"}[language])
    path = f"example.{language}"
    found = lint_source(path, grammar, None, DEFAULT_LIMITS)
    assert expected in "\n".join(render(path, grammar, d) for d in found)


def doc_console_examples() -> list[tuple[str, str]]:
    """(command, expected output) for every `$ grammask ...` line of a console block."""
    import re

    text = (SPECS / "diagnostics.md").read_text(encoding="utf-8")
    examples = []
    for block in re.findall(r"^```console\n(.*?)^```$", text, re.DOTALL | re.MULTILINE):
        for chunk in re.split(r"^\$ ", block, flags=re.MULTILINE)[1:]:
            command, _, output = chunk.partition("\n")
            examples.append((command, output.rstrip("\n")))
    return examples


@pytest.mark.parametrize("example", doc_console_examples(), ids=lambda e: e[0])
def test_diagnostics_doc_console_examples(example: tuple[str, str], gbnf: object,
                                          capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import re
    import shlex

    text = (SPECS / "diagnostics.md").read_text(encoding="utf-8")
    for name, grammar in re.findall(r"`(\w+\.gbnf)` holding\s+`([^`]+)`", text):
        write(tmp_path, name, grammar + "\n")
    monkeypatch.chdir(tmp_path)
    command, expected = example
    argv = shlex.split(command)
    assert argv[0] == "grammask"
    _, out, err = run(capsys, *argv[1:])
    assert (out + err).rstrip("\n") == expected


def test_diagnostics_doc_covers_every_code() -> None:
    from grammask.compiler.analyses import CODES

    text = (SPECS / "diagnostics.md").read_text(encoding="utf-8")
    for code in CODES:
        assert f"`{code}`" in text, code
    assert len(doc_examples()) >= 25


def test_diagnostics_doc_repeat_limit_line() -> None:
    from grammask.compiler.analyses import analyse_repeat_limits
    from grammask.compiler.support.diagnostics import render
    from grammask.compiler.support.diagnostics import Span

    node = Repeat(Literal(b"x"), 0, 20000, Span(1, 14, 1, 20))
    (diag,) = analyse_repeat_limits(Grammar((Rule("root", node),)), DEFAULT_LIMITS)
    text = (SPECS / "diagnostics.md").read_text(encoding="utf-8")
    assert render("example.gbnf", "", diag).splitlines()[0] in text
