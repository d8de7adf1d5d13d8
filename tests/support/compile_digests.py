"""A digest of every table that compiling a fixed set of inputs produces, for comparing the
compiler's kernels run as Python with the same kernels compiled (`tests/runtime/test_jit.py`).

`python -m tests.support.compile_digests` (from the repository root) prints one JSON object:
`digests` (input name -> sha256 of the compiled tables, or the error it gave) and `compiled`
(the tiered kernels that were compiled rather than run as Python in that process).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json

import numpy as np

from grammask.compiler import (
    GrammarError,
    clear_caches,
    compile_gbnf,
    compile_json_schema,
    compile_regex,
)
from grammask.runtime import Vocabulary
from grammask.runtime.jit import declared

from .paths import DATA

REGEXES = (r'\{"age": [0-9]+\}', r"[a-z]{1,8}@[a-z]{2,10}\.(com|org|net)", r"(a|b)*a(a|b){6}",
           r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
           r"(\d{1,3}\.){3}\d{1,3}", r"[^\x00-\x1f\"\\]{0,40}", r"(\+|-)?[0-9]{1,5}(\.[0-9]+)?",
           r"é+|日本|[α-ω]{2,3}", r"((ab|cd)*ef)?g{2,9}")
GRAMMARS = ("arithmetic.gbnf", "json.gbnf", "list.gbnf", "chess.gbnf")


def _digest(value: object, h: "hashlib._Hash") -> None:
    if isinstance(value, np.ndarray):
        h.update(str((value.dtype, value.shape)).encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            if f.name not in ("vocab", "token_sets", "runtime_limits", "source"):
                _digest(getattr(value, f.name), h)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _digest(v, h)
    else:
        h.update(repr(value).encode())


def digests() -> dict[str, str]:
    """Input name -> digest of its compiled tables (or the error it gave)."""
    vocab = Vocabulary.default()
    work = [(f"regex {p}", lambda p=p: compile_regex(p, vocab)) for p in REGEXES]
    work += [(g, lambda g=g: compile_gbnf((DATA / "gbnf" / g).read_text(), vocab))
             for g in GRAMMARS]
    with open(DATA / "json_schema_sample.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            work.append((row["id"], lambda s=row["schema"]: compile_json_schema(s, vocab)))
    out = {}
    for name, build in work:
        clear_caches()
        try:
            compiled = build()
        except GrammarError as exc:
            out[name] = f"error: {exc}"
            continue
        h = hashlib.sha256()
        _digest(compiled, h)
        out[name] = h.hexdigest()
    return out


if __name__ == "__main__":
    result = digests()
    compiled = sorted(k.py_func.__qualname__ for k in declared() if k.tiered and k.signatures)
    print(json.dumps({"digests": result, "compiled": compiled}))
