"""Running the `grammask` command in-process: `run` returns its exit code, stdout and stderr
(and fails on a traceback); files and stdin for it; three small GBNF grammars that lint clean,
with a warning and with an error."""
from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from grammask.compiler.cli.main import main

CLEAN = 'root ::= "{" ws "\\"n\\":" ws [0-9]{1,3} ws "}"\nws ::= [ \\n]{0,4}\n'
WARNS = 'root ::= "a" | "ab"\n'
BROKEN = "root ::= item\n"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`grammask ARGV...`: (exit code, stdout, stderr)."""
    code = main(list(argv))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return code, captured.out, captured.err


def feed_stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    """Make `data` the command's standard input."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def write(tmp_path: Path, name: str, text: str) -> str:
    """Write `text` to `tmp_path / name`; its path."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)
