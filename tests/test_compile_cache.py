"""`CompileCache`: equal requests share one compiled grammar, unequal ones never do, memory
stays within its byte bound, and a directory shared by several caches (processes) gives the
same grammars, whatever was written or broken there."""
from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from grammask.compiler import (
    CompileCache,
    GrammarError,
    Limits,
    compile_gbnf,
    compile_json_schema,
    compile_lark,
    compile_regex,
    compile_structural_tag,
    compile_tool_calls,
)
from grammask.runtime import Matcher, Vocabulary, allocate_token_bitmask

from .support.grammars import JSON_GBNF

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {
    "type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}}]


def _schema(i: int) -> dict:
    return {"type": "object", "properties": {f"k{i}": {"type": "integer", "maximum": i + 5}},
            "required": [f"k{i}"], "additionalProperties": False}


def _masks(compiled, text: str) -> bytes:
    m = Matcher(compiled)
    bm = allocate_token_bitmask(1, compiled.vocab.size)
    out = []
    for ch in text:
        m.fill_next_token_bitmask(bm)
        out.append(bm.tobytes())
        assert m.accept_string(ch)
    return b"".join(out)


def test_every_compile_function_shares_equal_requests(vocab: Vocabulary) -> None:
    cache = CompileCache()
    calls = [
        lambda: compile_regex("[a-z]+", vocab, cache=cache),
        lambda: compile_gbnf(JSON_GBNF, vocab, cache=cache),
        lambda: compile_lark('start: "a" start | "b"', vocab, cache=cache),
        lambda: compile_json_schema(_schema(1), vocab, cache=cache),
        lambda: compile_structural_tag({"type": "structural_tag", "format": {
            "type": "const_string", "value": "hi"}}, vocab, cache=cache),
        lambda: compile_tool_calls(TOOLS, vocab, format="qwen_3", cache=cache),
    ]
    firsts = [call() for call in calls]
    assert [call() for call in calls] == firsts and cache.hits == len(calls)
    assert cache.misses == len(calls) and len(cache) == len(calls)


def test_unequal_requests_never_share(vocab: Vocabulary) -> None:
    cache = CompileCache()
    base = compile_json_schema(_schema(1), vocab, cache=cache)
    swapped = {"type": "object", "properties": {"b": {"type": "integer"},
                                                "a": {"type": "string"}}}
    ordered = {"type": "object", "properties": {"a": {"type": "string"},
                                                "b": {"type": "integer"}}}
    others = [
        compile_json_schema(_schema(2), vocab, cache=cache),
        compile_json_schema(_schema(1), vocab, cache=cache, strict=True),
        compile_json_schema(_schema(1), vocab, cache=cache, whitespace="compact"),
        compile_json_schema(_schema(1), vocab, cache=cache, precompute=True),
        compile_json_schema(_schema(1), vocab, cache=cache, limits=Limits(max_dfa_states=9999)),
        compile_json_schema(_schema(1), vocab.with_eos_token_ids([151643, 151645]), cache=cache),
        compile_json_schema(swapped, vocab, cache=cache),
        compile_json_schema(ordered, vocab, cache=cache),  # declared order is the language's
    ]
    assert len({id(x) for x in [base, *others]}) == len(others) + 1
    assert compile_gbnf('root ::= "a"', vocab, cache=cache) is not \
        compile_gbnf('root ::= "a"', vocab, cache=cache, kind="pushdown")


def test_errors_are_not_cached_and_arguments_are_checked(vocab: Vocabulary) -> None:
    cache = CompileCache()
    for _ in range(2):
        with pytest.raises(GrammarError):
            compile_regex("(", vocab, cache=cache)
    assert len(cache) == 0 and cache.misses == 2
    with pytest.raises(TypeError):
        compile_regex("a", vocab, cache="dir")  # type: ignore[arg-type]
    for bad in (dict(max_bytes=-1), dict(max_bytes=1.5), dict(max_disk_bytes=True)):
        with pytest.raises(ValueError):
            CompileCache(**bad)  # type: ignore[arg-type]


def test_memory_stays_within_its_byte_bound(vocab: Vocabulary) -> None:
    bound = 3_000_000
    cache = CompileCache(max_bytes=bound)
    for i in range(150):
        compiled = compile_json_schema(_schema(i), vocab, cache=cache)
        if i % 10 == 0:
            _masks(compiled, '{"k%d": 1' % i)  # token sets grow; a hit measures them again
            compile_json_schema(_schema(i), vocab, cache=cache)
        assert cache.nbytes <= bound
    assert 0 < len(cache) < 150
    tiny = CompileCache(max_bytes=10)
    compile_regex("[a-z]+", vocab, cache=tiny)
    assert len(tiny) == 0 and tiny.nbytes == 0


def test_a_shared_directory_gives_the_same_grammars(vocab: Vocabulary, tmp_path: Path) -> None:
    first = CompileCache(tmp_path)
    schemas = [_schema(i) for i in range(6)]
    expected = [_masks(compile_json_schema(s, vocab, cache=first), '{"k%d": 1' % i)
                for i, s in enumerate(schemas)]
    assert len(list(tmp_path.glob("*.grammar"))) == 6

    results: list = [None] * 8
    def worker(w: int) -> None:  # each thread its own cache: processes sharing the folder
        cache = CompileCache(tmp_path)
        results[w] = [_masks(compile_json_schema(s, vocab, cache=cache), '{"k%d": 1' % i)
                      for i, s in enumerate(schemas)], cache.disk_hits
    threads = [threading.Thread(target=worker, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for masks, disk_hits in results:
        assert masks == expected and disk_hits == 6
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_broken_file_is_a_miss_and_is_written_again(vocab: Vocabulary, tmp_path: Path) -> None:
    compile_regex("[0-9]{2}", vocab, cache=CompileCache(tmp_path))
    (path,) = tmp_path.glob("*.grammar")
    good = path.read_bytes()
    for broken in (good[:-5], good[:40] + b"x" + good[41:], b""):
        path.write_bytes(broken)
        cache = CompileCache(tmp_path)
        compiled = compile_regex("[0-9]{2}", vocab, cache=cache)
        assert cache.disk_hits == 0 and cache.misses == 1
        assert path.read_bytes() == good
        assert _masks(compiled, "12") == _masks(compile_regex("[0-9]{2}", vocab), "12")


def test_the_directory_stays_within_its_bound(vocab: Vocabulary, tmp_path: Path) -> None:
    cache = CompileCache(tmp_path, max_disk_bytes=5_000)
    for i in range(12):
        compile_regex(f"[a-z]{{{i + 1}}}x", vocab, cache=cache)
        sizes = [p.stat().st_size for p in tmp_path.glob("*.grammar")]
        assert sum(sizes) <= 5_000 and sizes
    row = allocate_token_bitmask(1, vocab.size)
    Matcher(compile_regex("[a-z]{12}x", vocab, cache=CompileCache(tmp_path))
            ).fill_next_token_bitmask(row)
    assert np.count_nonzero(row)
