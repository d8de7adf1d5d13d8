"""The fuzz target of the command line: `lint`, `check`, `extract` and `diff` run in-process on
mutated grammar and schema files.

An input is a header line, the JSON list `[extension, argument...]` with `{file}` where the
file goes (`{text}`: a short text; `{textfile}`: a file holding one; `{other}`: a small fixed
file of the same language, for `diff`), followed by the file's content.
"""
from __future__ import annotations

import contextlib
import io
import json
import random
import tempfile
from pathlib import Path

from grammask.compiler.cli.main import main

from .common import LIMITS, FindingError, Target
from .corpus import PATTERNS, grammar_seeds, schema_seeds
from .mutators import mutate_text, schema_mutator

LIMIT_ARGS = [arg for name in ("max_nfa_states", "max_dfa_states", "max_repeat",
                               "max_schema_depth", "max_schema_rules", "max_compile_seconds")
              for arg in ("--limit", f"{name}={getattr(LIMITS, name)}")]
TEXTS = ["", "{}", '{"a": 1}', "[1, 2]", '"x"', "1+2*3", "abc", "null", "é中\x00", " "]
COMMANDS: dict[str, list[list[str]]] = {
    "any": [["lint", "{file}"], ["lint", "{file}", "--format", "json"],
            ["lint", "{file}", "--format", "sarif", "--strict"], ["lint", "{file}", "--stats"],
            ["check", "{file}", "--text", "{text}"],
            ["check", "{file}", "--text", "{text}", "--text", "{text}"],
            ["extract", "{file}", "{textfile}"], ["extract", "{file}", "{textfile}", "--all"],
            ["diff", "{file}", "{file}"], ["diff", "{file}", "{other}", "--format", "json"],
            ["diff", "{other}", "{file}", "--depth", "1"]],
    ".json": [["lint", "{file}", "--lenient"], ["lint", "{file}", "--strict", "--stats"],
              ["check", "{file}", "--whitespace", "compact", "--text", "{text}"],
              ["check", "{file}", "--strict", "--lenient", "--text", "{text}"]],
    ".lark": [["lint", "{file}", "--start", "value"]],
}
FOREIGN = ("Traceback (most recent call last)", "internal-error")
OTHER = {".gbnf": 'root ::= "(" root ")" | [a-z]', ".lark": 'start: "x" | "(" start ")"',
         ".regex": "[a-z]+", ".json": '{"type": "object", "properties": {"a": {}}}',
         ".txt": "x"}
"""The second file of `diff`, per extension."""


def _header(ext: str, rng: random.Random) -> list[str]:
    template = rng.choice(COMMANDS["any"] + COMMANDS.get(ext, []))
    return [ext] + [rng.choice(TEXTS) if a == "{text}" else
                    "{textfile}:" + rng.choice(TEXTS) if a == "{textfile}" else a
                    for a in template]


def _split(text: str) -> tuple[list[str], str]:
    head, _, body = text.partition("\n")
    try:
        header = json.loads(head)
    except ValueError:
        header = None
    if not (isinstance(header, list) and header and all(isinstance(a, str) for a in header)):
        return [".gbnf", "lint", "{file}"], text
    return header, body


def cli_target(rng: random.Random) -> Target:
    """A target running `grammask lint` or `check` on a mutated file: the exit status must be
    0, 1 or 2, with no traceback and no internal error in what it prints."""
    schemas = schema_seeds(rng)
    bodies = {".gbnf": grammar_seeds("gbnf"), ".lark": grammar_seeds("lark"),
              ".regex": PATTERNS, ".json": [json.dumps(s) for s in schemas[:200]]}
    seeds = [json.dumps(_header(ext, rng)) + "\n" + body
             for ext, texts in bodies.items() for body in texts]
    mutate_schema = schema_mutator(schemas)
    workdir = Path(tempfile.mkdtemp(prefix="grammask-fuzz-"))

    def run(text: str) -> bool:
        header, body = _split(text)
        ext = header[0] if header[0] in (".gbnf", ".lark", ".regex", ".json") else ".txt"
        path = workdir / f"input{ext}"
        path.write_bytes(body.encode("utf-8", "surrogatepass"))
        other = workdir / f"other{ext}"
        other.write_text(OTHER[ext], encoding="utf-8")
        argv = []
        for a in header[1:]:
            if a.startswith("{textfile}:"):
                text_path = workdir / "text.txt"
                text_path.write_bytes(a.removeprefix("{textfile}:").encode("utf-8",
                                                                           "surrogatepass"))
                a = str(text_path)
            argv.append(str(path) if a == "{file}" else str(other) if a == "{other}" else a)
        argv += LIMIT_ARGS
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(argv)
        printed = out.getvalue() + err.getvalue()
        if status not in (0, 1, 2) or any(marker in printed for marker in FOREIGN):
            raise FindingError(f"grammask {' '.join(argv)} exited {status}:\n{printed[-3000:]}")
        return status != 2

    def mutate(text: str, rng: random.Random) -> str:
        header, body = _split(text)
        ext = header[0]
        if rng.random() < 0.2:
            header = _header(ext, rng)
        elif ext == ".json":
            body = mutate_schema(body, rng)
        else:
            body = mutate_text(body, rng)
        return json.dumps(header) + "\n" + body

    return Target("cli", seeds, run, mutate)

