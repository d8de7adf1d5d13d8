"""Adapters that drive peer constrained-decoding libraries over grammask's vocabulary.

Each peer is built from the same token bytes as a `grammask.runtime.Vocabulary`, so masks are
comparable bit for bit: regular tokens spell their bytes, special tokens spell nothing for the
grammar (never allowed by a regex), and the vocabulary's EOS id ends a complete match.

A peer exposes `compile(pattern)` for a regex, `compile_grammar(text)` for a context-free
grammar in its own dialect (`grammar_text(gbnf, lark)` gives that text, outside any timing) and
`compile_json_schema(schema, lenient)` for a JSON Schema (a dict): what that library does per
grammar before the first mask. A compile that fails raises (the library's exception, or
RuntimeError with its message). `session(compiled)` is a matcher bound to its own one-row
bitmask with `fill()` (write the allowed next tokens), `row()` (that bitmask as an int32 numpy
row), `accept(token_id)` and `reset()`. Fills use each library's public fast path into a
preallocated buffer. `nbytes(compiled)` is the compiled grammar's memory where the library
reports it.

`load_peers(vocab)` returns the peers that import and build, plus a note for each that does not.
"""
from __future__ import annotations

import importlib.metadata
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from grammask.runtime import Vocabulary


class PeerSession(Protocol):
    """One decoding sequence of a peer, with its own one-row bitmask buffer."""

    def fill(self) -> None: ...
    def row(self) -> np.ndarray: ...
    def accept(self, token_id: int) -> bool: ...
    def reset(self) -> None: ...


class Peer(Protocol):
    """A peer library set up over one vocabulary."""

    name: str
    version: str
    setup_s: float
    compile_means: str
    grammar_means: str
    json_means: str

    def compile(self, pattern: str) -> Any: ...
    def grammar_text(self, gbnf: str, lark: str | None) -> str: ...
    def compile_grammar(self, text: str) -> Any: ...
    def compile_json_schema(self, schema: Any, lenient: bool) -> Any: ...
    def session(self, compiled: Any) -> PeerSession: ...
    def nbytes(self, compiled: Any) -> int | None: ...


@dataclass
class VocabParts:
    """The token bytes of a vocabulary as the peers need them."""

    size: int
    n_words: int
    eos: int
    special: frozenset[int]
    tokens: list[bytes]  # b"" for special and empty ids

    @classmethod
    def of(cls, vocab: Vocabulary) -> VocabParts:
        special = frozenset(int(i) for i in vocab.special_token_ids)
        offs, data = vocab.token_offsets, vocab.token_data.tobytes()
        tokens = [b"" if i in special else data[offs[i]:offs[i + 1]] for i in range(vocab.size)]
        return cls(vocab.size, (vocab.size + 31) // 32, vocab.eos_token_id, special, tokens)


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


# --------------------------------------------------------------------------- outlines-core


class _OutlinesSession:
    def __init__(self, oc: Any, index: Any, n_words: int) -> None:
        self._guide = oc.Guide(index)
        self._buf = np.zeros((1, n_words), dtype=np.int32)
        self._ptr = self._buf.ctypes.data
        self._n = n_words

    def fill(self) -> None:
        self._guide.write_mask_into(self._ptr, self._n, 4)

    def row(self) -> np.ndarray:
        return self._buf[0]

    def accept(self, token_id: int) -> bool:
        try:
            self._guide.advance(token_id, return_tokens=False)
        except (ValueError, RuntimeError):
            return False
        return True

    def reset(self) -> None:
        self._guide.reset()


class OutlinesCorePeer:
    """outlines-core: `Index(regex, Vocabulary)` builds every state's token set up front."""

    name = "outlines_core"
    compile_means = "Index(regex, vocabulary): full token index"
    grammar_means = "no context-free grammars (regex and JSON Schema only)"
    json_means = ("Index(build_regex_from_schema(schema, whitespace_pattern=[ \\t\\n\\r]*), "
                  "vocabulary): full token index; properties in declared order, recursion "
                  "unrolled 3 levels; no lenient option")

    def __init__(self, parts: VocabParts) -> None:
        import outlines_core as oc

        self._oc = oc
        self.version = _version("outlines_core")
        self._n_words = parts.n_words
        t0 = time.perf_counter()
        mapping: dict[bytes, list[int]] = {}
        for i, tok in enumerate(parts.tokens):
            if tok and i != parts.eos:
                mapping.setdefault(tok, []).append(i)
        self._vocab = oc.Vocabulary(parts.eos, mapping)
        self.setup_s = time.perf_counter() - t0

    def compile(self, pattern: str) -> Any:
        return self._oc.Index(pattern, self._vocab)

    def grammar_text(self, gbnf: str, lark: str | None) -> str:
        raise NotImplementedError(self.grammar_means)

    def compile_grammar(self, text: str) -> Any:
        raise NotImplementedError(self.grammar_means)

    def compile_json_schema(self, schema: Any, lenient: bool) -> Any:
        from outlines_core.json_schema import build_regex_from_schema

        regex = build_regex_from_schema(json.dumps(schema), whitespace_pattern=r"[ \t\n\r]*")
        return self._oc.Index(regex, self._vocab)

    def session(self, compiled: Any) -> PeerSession:
        return _OutlinesSession(self._oc, compiled, self._n_words)

    def nbytes(self, compiled: Any) -> int | None:
        return None


# --------------------------------------------------------------------------- llguidance


class _LLGuidanceSession:
    def __init__(self, llg: Any, fill_fn: Callable[..., None], tokenizer: Any, grammar: str,
                 n_words: int) -> None:
        self._new = lambda: llg.LLMatcher(tokenizer, grammar, log_level=0)
        self._m = self._new()
        if self._m.is_error():
            raise RuntimeError(f"llguidance: {self._m.get_error()}")
        self._fill = fill_fn
        self._buf = np.zeros((1, n_words), dtype=np.int32)

    def fill(self) -> None:
        self._fill(self._m, self._buf, 0)

    def row(self) -> np.ndarray:
        return self._buf[0]

    def accept(self, token_id: int) -> bool:
        return bool(self._m.consume_token(token_id))

    def reset(self) -> None:
        # A rejected token leaves the matcher in its error state, which reset() keeps.
        if self._m.is_error():
            self._m = self._new()
        else:
            self._m.reset()


class _TokenSource:
    """What `llguidance.TokenizerWrapper` reads: token bytes, EOS, specials, and an encoder."""

    def __init__(self, vocab: Vocabulary, parts: VocabParts) -> None:
        self._vocab = vocab
        self.eos_token_id = parts.eos
        self.bos_token_id = None
        # llguidance marks special tokens with a leading 0xFF byte.
        self.tokens = [b"\xff" + vocab.token_bytes(i) if i in parts.special else tok
                       for i, tok in enumerate(parts.tokens)]
        self.special_token_ids = sorted(parts.special)

    def __call__(self, text: str | bytes) -> list[int]:
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        return self._vocab.encode(text)


class LLGuidancePeer:
    """llguidance: an `LLMatcher` per sequence; the lexer automaton is built lazily."""

    name = "llguidance"
    compile_means = "LLMatcher(tokenizer, grammar_from_regex(regex)) (lazy lexer)"
    grammar_means = ("LLMatcher(tokenizer, grammar_from_lark(lark)) (lazy lexer; the Lark text "
                     "is gbnf_to_lark(gbnf) or a hand translation, made outside the timing)")
    json_means = ("LLMatcher(tokenizer, grammar_from_json_schema(schema)) (lazy lexer; flexible "
                  "whitespace; properties in declared order; --lenient: overrides lenient=true)")

    def __init__(self, vocab: Vocabulary, parts: VocabParts) -> None:
        import llguidance as llg
        import llguidance.numpy as lln

        self._llg, self._fill = llg, lln.fill_next_token_bitmask
        self.version = _version("llguidance")
        self._n_words = parts.n_words
        t0 = time.perf_counter()
        self._tok = llg.LLTokenizer(llg.TokenizerWrapper(_TokenSource(vocab, parts)),
                                    n_vocab=parts.size, eos_token=parts.eos)
        self.setup_s = time.perf_counter() - t0

    def compile(self, pattern: str) -> Any:
        grammar = self._llg.LLMatcher.grammar_from_regex(pattern)
        return _LLCompiled(grammar, self._new(grammar))

    def grammar_text(self, gbnf: str, lark: str | None) -> str:
        from llguidance.gbnf_to_lark import gbnf_to_lark

        return lark if lark is not None else gbnf_to_lark(gbnf)

    def compile_grammar(self, text: str) -> Any:
        grammar = self._llg.LLMatcher.grammar_from_lark(text)
        return _LLCompiled(grammar, self._new(grammar))

    def compile_json_schema(self, schema: Any, lenient: bool) -> Any:
        grammar = self._llg.LLMatcher.grammar_from_json_schema(
            schema, overrides={"lenient": True} if lenient else None)
        return _LLCompiled(grammar, self._new(grammar))

    def nbytes(self, compiled: Any) -> int | None:
        return None

    def bare_matcher(self, grammar: str) -> Any:
        """A plain `LLMatcher` of `grammar` (from `grammar_text`), for batch fills."""
        return self._llg.LLMatcher(self._tok, grammar, log_level=0)

    def _new(self, grammar: str) -> _LLGuidanceSession:
        return _LLGuidanceSession(self._llg, self._fill, self._tok, grammar, self._n_words)

    def session(self, compiled: Any) -> PeerSession:
        first, compiled.first = compiled.first, None
        return first if first is not None else self._new(compiled.grammar)


@dataclass
class _LLCompiled:
    """llguidance has no compiled-grammar object: the matcher built at compile time is handed
    out by the first `session()` call, later calls build new matchers from the grammar text."""

    grammar: str
    first: _LLGuidanceSession | None


# --------------------------------------------------------------------------- xgrammar


class _XGrammarSession:
    def __init__(self, xgr: Any, compiled: Any, size: int) -> None:
        self._m = xgr.GrammarMatcher(compiled)
        self._buf = xgr.allocate_token_bitmask(1, size)
        self._view = self._buf.numpy()

    def fill(self) -> None:
        self._m.fill_next_token_bitmask(self._buf, 0)

    def row(self) -> np.ndarray:
        return self._view[0]

    def accept(self, token_id: int) -> bool:
        return bool(self._m.accept_token(token_id))

    def reset(self) -> None:
        self._m.reset()


class XGrammarPeer:
    """xgrammar: `GrammarCompiler.compile_regex` precomputes the adaptive token-mask cache."""

    name = "xgrammar"
    compile_means = "GrammarCompiler(max_threads=1, no cache).compile_regex(regex)"
    grammar_means = ("GrammarCompiler(max_threads=1, no cache).compile_grammar("
                     "Grammar.from_ebnf(gbnf)); an empty first alternative `::= |` is written "
                     "`::= \"\" |`, which its parser requires")
    json_means = ("GrammarCompiler(max_threads=1, no cache).compile_json_schema(schema, "
                  "any_whitespace=True, strict_mode=False) (properties in declared order; no "
                  "lenient option)")

    def __init__(self, parts: VocabParts) -> None:
        import torch
        import xgrammar as xgr

        torch.set_num_threads(1)
        self._xgr = xgr
        self.version = _version("xgrammar")
        self._size = parts.size
        t0 = time.perf_counter()
        info = xgr.TokenizerInfo(encoded_vocab=parts.tokens, vocab_type=xgr.VocabType.RAW,
                                 vocab_size=parts.size, stop_token_ids=[parts.eos])
        self._compiler = xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False)
        self.setup_s = time.perf_counter() - t0

    def compile(self, pattern: str) -> Any:
        return self._compiler.compile_regex(pattern)

    def grammar_text(self, gbnf: str, lark: str | None) -> str:
        return re.sub(r"::=([ \t]*)\|", r'::=\1"" |', gbnf)

    def compile_grammar(self, text: str) -> Any:
        return self._compiler.compile_grammar(self._xgr.Grammar.from_ebnf(text))

    def compile_json_schema(self, schema: Any, lenient: bool) -> Any:
        return self._compiler.compile_json_schema(json.dumps(schema), any_whitespace=True,
                                                  strict_mode=False)

    def compile_structural_tag(self, spec: dict[str, Any]) -> Any:
        return self._compiler.compile_structural_tag(json.dumps(spec))

    def session(self, compiled: Any) -> PeerSession:
        return _XGrammarSession(self._xgr, compiled, self._size)

    def nbytes(self, compiled: Any) -> int | None:
        return int(compiled.memory_size_bytes)


# --------------------------------------------------------------------------- loading


def load_peers(vocab: Vocabulary, only: set[str] | None = None) -> tuple[list[Peer], list[str]]:
    """The peers that import and set up over `vocab`, and a note for each one that did not."""
    parts = VocabParts.of(vocab)
    makers: list[tuple[str, Callable[[], Peer]]] = [
        ("outlines_core", lambda: OutlinesCorePeer(parts)),
        ("llguidance", lambda: LLGuidancePeer(vocab, parts)),
        ("xgrammar", lambda: XGrammarPeer(parts)),
    ]
    peers: list[Peer] = []
    notes: list[str] = []
    for name, make in makers:
        if only is not None and name not in only:
            continue
        try:
            peers.append(make())
        except ImportError as exc:
            notes.append(f"{name}: skipped, not importable ({exc})")
        except Exception as exc:  # a peer that imports but cannot be set up is skipped too
            notes.append(f"{name}: skipped, setup failed ({type(exc).__name__}: {exc})")
    return peers, notes
