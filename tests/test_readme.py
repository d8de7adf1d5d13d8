"""The README's engine-builder examples run as written, one after the other."""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from grammask.runtime import Matcher

from .support.cli import feed_stdin, run
from .support.paths import ROOT


def test_readme_examples_run() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## For engine builders", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 2
    namespace: dict[str, object] = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)
    assert namespace["matcher"].is_terminated()  # type: ignore[attr-defined]
    exec(compile(blocks[1], "README.md", "exec"), namespace)
    matcher = Matcher(namespace["compiled"])  # type: ignore[arg-type]
    vocab = namespace["vocab"]
    call = 'Sure. <tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
    assert all(matcher.accept_token(t) for t in vocab.encode(call))  # type: ignore[attr-defined]
    assert matcher.can_terminate()


PERSON = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
          "required": ["name", "age"], "additionalProperties": False}
PERSON_V2 = {**PERSON, "properties": {**PERSON["properties"],
                                      "age": {"type": "integer", "minimum": 0},
                                      "email": {"type": "string"}},
             "required": ["name", "age", "email"]}


def test_readme_extract_and_diff_examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The console examples of "Extracting answers and comparing schemas" print what they show,
    on the schemas the text describes."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Extracting answers and comparing schemas", 1)[1].split("\n## ", 1)[0]
    (tmp_path / "person.json").write_text(json.dumps(PERSON))
    (tmp_path / "person-v2.json").write_text(json.dumps(PERSON_V2))
    monkeypatch.chdir(tmp_path)
    commands = re.findall(r"^\$ (.*?)\n((?:(?!\$ ).*\n)*?)(?=\$ |```)", section, re.M)
    assert len(commands) == 3
    for command, shown in commands:
        command = command.replace("\\\n", "")
        piped = re.match(r"echo '(.*)' \\$", command)
        if piped:  # the first example's pipe, continued on the next line
            command = shown.splitlines()[0].strip().removeprefix("| ")
            shown = "\n".join(shown.splitlines()[1:]) + "\n"
            feed_stdin(monkeypatch, (piped[1] + "\n").encode())
        argv = shlex.split(command.split("#")[0])
        assert argv[0] == "grammask"
        _, out, _ = run(capsys, *argv[1:])
        assert out == shown, (command, out, shown)
