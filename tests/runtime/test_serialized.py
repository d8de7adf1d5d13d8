"""Serialized grammars: `to_bytes` / `from_bytes` give the same masks, and bytes that were
changed (by accident, or on purpose with a valid digest) give `SerializedGrammarError` and
nothing else: never a crash, another exception or a different grammar."""
from __future__ import annotations

import hashlib
import json
import pickle
import random
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from grammask.compiler import compile_gbnf, compile_json_schema, compile_regex
from grammask.runtime import CompiledGrammar, Matcher, Vocabulary, allocate_token_bitmask
from grammask.runtime.errors import SerializedGrammarError
from grammask.runtime.serialized import FORMAT_VERSION, pack, unpack

from ..support.cli import run
from ..support.grammars import RECORD_REGEX
from ..support.paths import DATA


def _bytes_vocab() -> Vocabulary:
    return Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"ab", b"{\"", None],
                                       [258])


def _grammars(vocab: Vocabulary) -> dict[str, Callable[[], CompiledGrammar]]:
    out: dict[str, Callable[[], CompiledGrammar]] = {
        "regex": lambda: compile_regex(RECORD_REGEX, vocab),
        "rules kept": lambda: compile_gbnf((DATA / "gbnf" / "json.gbnf").read_text(), vocab,
                                           kind="pushdown"),
    }
    for name in ("json", "arithmetic", "list", "c", "chess", "japanese"):
        out[f"{name}.gbnf"] = (lambda n: lambda: compile_gbnf(
            (DATA / "gbnf" / f"{n}.gbnf").read_text(encoding="utf-8"), vocab))(name)
    lines = (DATA / "json_schema_sample.jsonl").read_text(encoding="utf-8").split("\n")
    for i, line in enumerate(lines[:8]):
        out[f"schema {i}"] = (lambda s: lambda: compile_json_schema(s, vocab))(
            json.loads(line)["schema"])
    return out


def _same_masks(a: CompiledGrammar, b: CompiledGrammar, seed: int, steps: int = 25) -> None:
    """Walk both with the same allowed tokens; every mask equal."""
    rng = random.Random(seed)
    ma, mb = Matcher(a), Matcher(b)
    bm = allocate_token_bitmask(2, a.vocab.size)
    eos = set(a.vocab.eos_token_ids.tolist())
    for _ in range(steps):
        ma.fill_next_token_bitmask(bm, 0)
        mb.fill_next_token_bitmask(bm, 1)
        assert np.array_equal(bm[0], bm[1])
        allowed = np.flatnonzero(np.unpackbits(bm[0].view(np.uint8), bitorder="little"))
        allowed = [t for t in allowed.tolist() if t not in eos]
        if not allowed:
            break
        tok = rng.choice(allowed)
        assert ma.accept_token(tok) and mb.accept_token(tok)


@pytest.mark.parametrize("name", list(_grammars(Vocabulary.default())))
def test_a_loaded_grammar_gives_the_same_masks(vocab: Vocabulary, name: str) -> None:
    compiled = _grammars(vocab)[name]()
    data = compiled.to_bytes()
    loaded = CompiledGrammar.from_bytes(data, vocab)
    assert loaded.kind == compiled.kind and loaded.source == compiled.source
    assert loaded.notes == compiled.notes and loaded.runtime_limits == compiled.runtime_limits
    assert loaded.to_bytes() == data
    for seed in range(3):
        _same_masks(compiled, loaded, seed)
    _same_masks(compiled, pickle.loads(pickle.dumps(compiled)), 7)


def test_another_vocabulary_is_refused_one_equal_to_it_accepted() -> None:
    v = _bytes_vocab()
    data = compile_regex("a(b|c)*", v).to_bytes()
    assert CompiledGrammar.from_bytes(data, _bytes_vocab()).kind == "dfa"
    for other in (v.with_eos_token_ids([257]), Vocabulary.from_token_bytes(
            [bytes([b]) for b in range(256)] + [b"ba", b"{\"", None], [258])):
        with pytest.raises(SerializedGrammarError, match="another vocabulary"):
            CompiledGrammar.from_bytes(data, other)


def _mutations(data: bytes, rng: random.Random, n: int) -> list[bytes]:
    out = []
    for _ in range(n):
        i = rng.randrange(len(data))
        kind = rng.randrange(5)
        if kind == 0:
            out.append(data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:])
        elif kind == 1:
            out.append(data[:i] + data[i + 1:])
        elif kind == 2:
            j = min(len(data), i + rng.randint(1, 16))
            out.append(data[:j] + data[i:])
        elif kind == 3:
            out.append(data[:i])
        else:
            out.append(data + bytes([rng.randrange(256)]))
    return out


def test_changed_bytes_are_always_caught() -> None:
    v = _bytes_vocab()
    rng = random.Random(0)
    for compiled in (compile_regex(RECORD_REGEX, v), compile_gbnf(
            (DATA / "gbnf" / "arithmetic.gbnf").read_text(encoding="utf-8"), v)):
        data = compiled.to_bytes()
        for bad in _mutations(data, rng, 300):
            if bad == data:
                continue
            with pytest.raises(SerializedGrammarError):
                CompiledGrammar.from_bytes(bad, v)
    with pytest.raises(TypeError):
        CompiledGrammar.from_bytes("text", v)  # type: ignore[arg-type]
    with pytest.raises(SerializedGrammarError, match="too short"):
        CompiledGrammar.from_bytes(b"", v)


def _digest(data: bytes) -> bytes:
    """The container's trailing digest (`serialized.py`: BLAKE2b-256)."""
    return hashlib.blake2b(data, digest_size=32).digest()


def _repacked(data: bytes, change: Callable[[dict, dict], None]) -> bytes:
    header, arrays = unpack(data)
    arrays = {k: np.array(a) for k, a in arrays.items()}
    change(header, arrays)
    return pack(header, arrays)


HOSTILE: list[tuple[str, Callable[[dict, dict], None]]] = [
    ("kind", lambda h, a: h.update(kind="nfa")),
    ("other kind", lambda h, a: h.update(kind="pushdown" if h["kind"] == "dfa" else "dfa")),
    ("no table", lambda h, a: h.pop("table")),
    ("table list", lambda h, a: h.update(table=[])),
    ("extra field", lambda h, a: h["table"].update(extra=1)),
    ("missing array", lambda h, a: a.pop("transitions")),
    ("transition out of range", lambda h, a: a["transitions"].__setitem__((0, 0), 1 << 20)),
    ("negative transition", lambda h, a: a["transitions"].__setitem__((0, 0), -7)),
    ("wrong dtype", lambda h, a: a.update(transitions=a["transitions"].astype(np.int64))),
    ("wrong shape", lambda h, a: a.update(byte_class=a["byte_class"][:100])),
    ("byte class out of range", lambda h, a: a["byte_class"].__setitem__(3, 999)),
    ("start rule", lambda h, a: h["table"].update(start_rule=10**9)),
    ("start rule type", lambda h, a: h["table"].update(start_rule="0")),
    ("rule names", lambda h, a: h["table"].update(rule_names=[1, 2])),
    ("call offsets", lambda h, a: a["call_offsets"].__setitem__(-1, 10**6)),
    ("call rule", lambda h, a: a["call_rule"].__setitem__(slice(None), 10**6)),
    ("rule start", lambda h, a: a["rule_start"].__setitem__(0, 10**6)),
    ("limits", lambda h, a: h.update(runtime_limits={"max_step_work": -1})),
    ("limits name", lambda h, a: h.update(runtime_limits={"nope": 1})),
    ("limits type", lambda h, a: h.update(runtime_limits=5)),
    ("named tokens", lambda h, a: h.update(named_tokens=[10**9])),
    ("named tokens type", lambda h, a: h.update(named_tokens="ab")),
    ("notes", lambda h, a: h.update(notes=[1])),
    ("source", lambda h, a: h.update(source=None)),
    ("vocab", lambda h, a: h.update(vocab=None)),
]


@pytest.mark.parametrize("what", [name for name, _ in HOSTILE])
def test_hostile_tables_with_a_valid_digest_fail_their_checks(what: str) -> None:
    v = _bytes_vocab()
    change = dict(HOSTILE)[what]
    for compiled in (compile_regex(RECORD_REGEX, v), compile_gbnf(
            (DATA / "gbnf" / "arithmetic.gbnf").read_text(encoding="utf-8"), v)):
        header, arrays = unpack(compiled.to_bytes())
        try:
            bad = _repacked(compiled.to_bytes(), change)
        except (KeyError, IndexError):
            continue  # the change is for the other kind's table
        with pytest.raises(SerializedGrammarError):
            CompiledGrammar.from_bytes(bad, v)


def test_container_errors_name_what_and_where() -> None:
    v = _bytes_vocab()
    data = compile_regex("ab", v).to_bytes()
    body = bytearray(data[:-32])
    body[8] = FORMAT_VERSION + 1
    with pytest.raises(SerializedGrammarError, match=rf"format version {FORMAT_VERSION + 1}.*at byte 8"):
        CompiledGrammar.from_bytes(bytes(body) + _digest(bytes(body)), v)
    with pytest.raises(SerializedGrammarError, match="magic"):
        CompiledGrammar.from_bytes(b"x" + data[1:], v)
    header, arrays = unpack(data)
    for entry in ([["t", "<f8", [1], 0]], [["t", "<i4", [-1], 0]], [["t", "<i4", [1], 4]],
                  [["t", "<i4", [10**12], 0]], [["t", "<i4", [1], 0], ["t", "<i4", [1], 0]],
                  "x"):
        text = json.dumps({**header, "arrays": entry}).encode()
        raw = b"\x89GMASK\r\n" + FORMAT_VERSION.to_bytes(4, "little") + \
            len(text).to_bytes(4, "little") + text
        raw += b"\0" * (-len(raw) % 8) + b"\0" * 8
        with pytest.raises(SerializedGrammarError):
            CompiledGrammar.from_bytes(raw + _digest(raw), v)


def test_compile_out_writes_a_loadable_grammar(capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path, vocab: Vocabulary) -> None:
    out = tmp_path / "age.grammar"
    code, text, _ = run(capsys, "compile", "--regex", "[0-9]{1,3}", "--out", str(out))
    assert code == 0 and "written" in text
    loaded = CompiledGrammar.from_bytes(out.read_bytes(), vocab)
    _same_masks(compile_regex("[0-9]{1,3}", vocab), loaded, 0)
    code, _, err = run(capsys, "compile", "--regex", "a", "--out", str(tmp_path / "no" / "x"))
    assert code != 0 and "cannot write" in err
