"""The fuzz entry point runs and finds nothing in a short, seeded run."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


def test_fuzz_run_finds_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    path = Path(__file__).resolve().parent.parent / "fuzz" / "run.py"
    spec = importlib.util.spec_from_file_location("grammask_fuzz_run", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--seconds", "8", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "0 findings" in out and "executions" in out
