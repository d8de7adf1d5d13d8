"""The fuzz entry point runs every target and finds nothing in a short, seeded run; saved
inputs replay; a foreign exception is a finding."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from .support.paths import ROOT

RUN = ROOT / "fuzz" / "run.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("grammask_fuzz_run", RUN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fuzz_run_finds_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    module = _load()
    assert module.main(["--seconds", "1", "--seed", "1", "--findings", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "0 findings" in out and "seed 1" in out
    for name in module.TARGETS:
        assert f"{name}: " in out


def test_replay_and_foreign_exceptions(capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    module = _load()
    good = tmp_path / "good.txt"
    good.write_text('{"type": "string"}', encoding="utf-8")
    assert module.main(["--target", "jsonschema", "--replay", str(good)]) == 0
    assert f"{good}: ok" in capsys.readouterr().out
    target = module.build_target("regex", 0)
    target.run = lambda text: [][1]
    _accepted, exc = module.run_one(target, "a", 5.0)
    assert isinstance(exc, IndexError) and module.signature(exc).startswith("IndexError at")
