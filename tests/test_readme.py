"""The README's engine-builder example runs as written."""
from __future__ import annotations

import re
from .support.paths import ROOT


def test_readme_example_runs() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(r"## For engine builders\s+```python\n(.*?)```", text, re.S)
    assert code is not None
    namespace: dict[str, object] = {}
    exec(compile(code[1], "README.md", "exec"), namespace)
    matcher = namespace["matcher"]
    assert matcher.is_terminated()  # type: ignore[attr-defined]
