"""The README's engine-builder examples run as written, one after the other."""
from __future__ import annotations

import re

from grammask.runtime import Matcher

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
