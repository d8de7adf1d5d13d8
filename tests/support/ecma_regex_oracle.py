"""ECMA-262 itself as the oracle of `format: "regex"`: `new RegExp(text, "u")` in Node.js, one
process answering a line per text (`valid`), where `node` is on the PATH (`available`)."""
from __future__ import annotations

import functools
import json
import shutil
import subprocess

_SCRIPT = """
const rl = require('readline').createInterface({input: process.stdin});
rl.on('line', (line) => {
  let ok = true;
  try { new RegExp(JSON.parse(line), "u"); } catch (e) { ok = false; }
  process.stdout.write((ok ? "1" : "0") + "\\n");
});
"""


def available() -> bool:
    """Whether Node.js can be run."""
    return shutil.which("node") is not None


@functools.lru_cache(maxsize=1)
def _process() -> subprocess.Popen[str]:
    return subprocess.Popen(["node", "-e", _SCRIPT], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1)


def valid(text: str) -> bool:
    """Whether `text` is an ECMA-262 pattern in unicode mode."""
    process = _process()
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(text) + "\n")
    process.stdin.flush()
    return process.stdout.readline().strip() == "1"
