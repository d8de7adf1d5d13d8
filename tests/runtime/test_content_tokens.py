"""The content-token shortcut: token sets found with it equal those of a walk of every token.

`ContentSplit.plan` accepts content tokens unwalked from states that lead into enough content
characters in a row (a loop, or a string of bounded length); these tests compare every state's set with the set of the plain walk
(`entry_bytes` patched to find no loop), on real automata over the default vocabulary and on
random ones over small vocabularies.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import grammask.runtime.content_tokens as content
from grammask.compiler import compile_gbnf, compile_lark, compile_regex
from grammask.compiler import compile_json_schema
from grammask.runtime import Vocabulary
from grammask.runtime.content_tokens import MULTIBYTE, content_split, content_tokens
from grammask.runtime.pushdown.token_sets import PushdownTokenSets
from grammask.runtime.dfa.token_sets import DFATokenSets
from grammask.runtime.vocab.trie import token_trie


def _is_content(b: bytes) -> bool:
    try:
        text = b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return bool(text) and all(0x20 <= ord(c) <= 0x7E and c not in '"\\' or ord(c) >= 0x80
                              for c in text)


def _no_loop(*_args: object) -> int:
    return 0


def _sets(compiled: object, states: list[int], plain: bool, monkeypatch: pytest.MonkeyPatch
          ) -> list[tuple]:
    """Each state's set, from fresh token sets, with or without the shortcut."""
    with monkeypatch.context() as m:
        if plain:
            m.setattr(content, "entry_bytes", _no_loop)
        if compiled.pushdown is not None:
            sets = PushdownTokenSets(compiled.pushdown, compiled.vocab)
            return [tuple(np.asarray(x).tolist() if isinstance(x, np.ndarray) else x
                          for x in sets.classify(s)) for s in states]
        dfa_sets = DFATokenSets(compiled.dfa, compiled.vocab)
        out = []
        for s in states:
            row = dfa_sets.compute(s)
            full = np.array(row.default, copy=True)
            full[row.patch_index] = row.patch_value
            out.append((full.tolist(), row.n_allowed))
        return out


def _n_states(compiled: object) -> int:
    return (compiled.pushdown or compiled.dfa).n_states


def _loop_states(compiled: object) -> int:
    table = compiled.pushdown or compiled.dfa
    good = np.zeros(256, dtype=np.bool_)
    return sum(content.entry_bytes(table.transitions, table.byte_class, np.int32(s), MULTIBYTE,
                                    good) >= content.LEVELS[0] for s in range(table.n_states))


def test_content_tokens_of_the_default_vocabulary() -> None:
    trie = token_trie(Vocabulary.default())
    raw, off = trie.data.tobytes(), trie.offsets.tolist()
    expected = np.array([_is_content(raw[off[i]:off[i + 1]]) for i in range(trie.n_tokens)])
    chars = [len(raw[off[i]:off[i + 1]].decode()) if expected[i] else 0
             for i in range(trie.n_tokens)]
    assert content_tokens(trie.data, trie.offsets, MULTIBYTE).tolist() == chars
    split = content_split(trie, (Vocabulary.default().size + 31) // 32)
    for level in split.levels:
        assert level.n_known + level.rest.n_tokens == trie.n_tokens
        assert level.n_known == sum(0 < c <= level.chars for c in chars)
    assert split.levels[-1].n_known > 0.9 * trie.n_tokens


SCHEMA = {"type": "object", "properties": {
    "name": {"type": "string"}, "nick": {"type": "string", "maxLength": 3},
    "tags": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}},
    "required": ["name"]}

REAL = {
    "json.gbnf": lambda v: compile_gbnf(
        'root ::= value\nvalue ::= object | array | string | "1"\n'
        'object ::= "{" ws (string ":" ws value ("," ws string ":" ws value)*)? "}"\n'
        'array ::= "[" ws (value ("," ws value)*)? "]"\n'
        'string ::= "\\"" ([^"\\\\\\x7F\\x00-\\x1F] | "\\\\" ["\\\\/bfnrt])* "\\"" ws\n'
        'ws ::= [ \\t\\n]*', v),
    "schema, pushdown": lambda v: compile_json_schema(SCHEMA, v),
    "schema, strict DFA": lambda v: compile_json_schema(
        {k: v2 for k, v2 in SCHEMA.items()}, v, strict=True, whitespace="compact"),
    "string regex": lambda v: compile_regex(r'"(?:[^"\\]|\\.)*"', v),
    "excluded character": lambda v: compile_regex(r'"[^"\\é]*"', v),
    "letters only": lambda v: compile_regex(r'"[a-z ]*"', v),
    "bounded string": lambda v: compile_regex(r'"[^"\\]{2,40}"', v),
    "bounded schema strings": lambda v: compile_json_schema(
        {"type": "array", "items": {"type": "string", "minLength": 3, "maxLength": 50}}, v),
    "multibyte detour": lambda v: compile_regex(r'"(?:[\u00c0-\u00ff][a-z]|中?[a-z])[^"\\]*"', v),
}


@pytest.mark.parametrize("name", list(REAL))
def test_shortcut_equals_the_full_walk_on_the_default_vocabulary(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = REAL[name](Vocabulary.default())
    n = _n_states(compiled)
    states = list(range(n)) if n <= 150 else \
        sorted(np.random.default_rng(7).choice(n, 150, replace=False).tolist())
    assert _sets(compiled, states, False, monkeypatch) == _sets(compiled, states, True,
                                                                monkeypatch)
    loops = _loop_states(compiled)
    if name in ("excluded character", "letters only"):
        assert loops == 0
    else:
        assert loops > 0


ALPHABET = ["a", "b", " ", '"', "\\", "é", "中", "😀", "\x7f", "\x01"]
PIECES = ['[^"\\\\]', '[^"]', "[a-b ]", "[^a]", "é", "a", "\\\\.", '"', "[^\\x7f]", "."]


@st.composite
def _patterns(draw: st.DrawFn) -> str:
    def piece() -> str:
        p = draw(st.sampled_from(PIECES))
        return p + draw(st.sampled_from(["", "*", "?", "{0,2}"]))
    alternatives = [''.join(piece() for _ in range(draw(st.integers(1, 3))))
                    for _ in range(draw(st.integers(1, 3)))]
    return '"(?:' + "|".join(alternatives) + ')*"'


@st.composite
def _vocabularies(draw: st.DrawFn) -> Vocabulary:
    texts = draw(st.lists(st.text(st.sampled_from(ALPHABET), min_size=1, max_size=4),
                          min_size=1, max_size=40))
    tokens = [t.encode() for t in texts]
    tokens += draw(st.lists(st.binary(min_size=1, max_size=3), max_size=10))
    return Vocabulary.from_token_bytes([*tokens, b"<eos>"], len(tokens))


@settings(max_examples=60, deadline=None)
@given(_patterns(), _vocabularies())
def test_shortcut_equals_the_full_walk_on_random_automata(pattern: str, vocab: Vocabulary
                                                         ) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        for kind in ("dfa", "pushdown"):
            compiled = compile_regex(pattern, vocab) if kind == "dfa" else compile_lark(
                f'start: item\nitem: STR | "[" item "]"\nSTR: /{pattern}/', vocab)
            states = list(range(_n_states(compiled)))
            assert _sets(compiled, states, False, monkeypatch) == _sets(compiled, states, True,
                                                                        monkeypatch)

