"""Small hand-made vocabularies for exhaustive checks, and the reference recognizers."""
from __future__ import annotations

import functools

import numpy as np
import regex

from grammask.compiler.automata.nfa import NFA, build_nfa
from grammask.compiler.frontends.regex import parse_regex
from grammask.runtime import Vocabulary

MULTI_BYTE = [
    b"ab", b"abc", b"ba", b"aa", b"bb", b"a1", b"42", b"12", b"123", b"007", b" ", b"  ",
    b'{"', b'"age', b'": ', b"age", b"}", b'"}', b"\n", b"-", b".5", b"ab",  # duplicate
    "中".encode(), "é".encode(), "中文".encode(), "é中".encode(), "a中".encode(),
    b"\xe4", b"\xe4\xb8", b"\xb8\xad", b"\xad\xe6", b"\xc3", b"\xa9a", b"\xf0\x9f", b"\x98\x80",
    "😀".encode(), b"xyz", b"zz",
]
EOS = 300
IM_START = 301


@functools.lru_cache(maxsize=None)
def small_vocabulary(padding: int = 0) -> Vocabulary:
    """Every single byte (ids 0-255), multi-byte and partial-UTF-8 tokens, two specials.

    EOS is id 300 and `<|im_start|>` id 301; with `padding`, that many ids without bytes follow.
    The last real id holds a normal token, so the largest id is exercised.
    """
    tokens: list[bytes | None] = [bytes([b]) for b in range(256)] + list(MULTI_BYTE)
    while len(tokens) < EOS:
        tokens.append(None)
    tokens += [b"<|endoftext|>", b"<|im_start|>", b"last-token"]
    return Vocabulary.from_token_bytes(
        tokens, EOS, special_token_ids=[EOS, IM_START], size=len(tokens) + padding
    )


@functools.lru_cache(maxsize=256)
def reference_nfa(pattern: str) -> tuple[NFA, frozenset[int]]:
    """The pattern's NFA and its states that can still reach acceptance."""
    nfa = build_nfa(parse_regex(pattern))
    pred: dict[int, set[int]] = {}
    for s in range(nfa.n_states):
        for t in nfa.eps[s]:
            pred.setdefault(t, set()).add(s)
        for _, _, t in nfa.edges[s]:
            pred.setdefault(t, set()).add(s)
    live = {nfa.accept}
    stack = [nfa.accept]
    while stack:
        for p in pred.get(stack.pop(), ()):
            if p not in live:
                live.add(p)
                stack.append(p)
    return nfa, frozenset(live)


def reference_viable(pattern: str, data: bytes) -> bool:
    """Whether `data` can still be extended to a match: direct NFA simulation, byte by byte."""
    nfa, live = reference_nfa(pattern)
    current = nfa.epsilon_closure({nfa.start})
    for byte in data:
        current = nfa.epsilon_closure(
            {t for s in current for lo, hi, t in nfa.edges[s] if lo <= byte <= hi}
        )
        if not current & live:
            return False
    return bool(current & live)


# `regex` backtracks: nested quantifiers such as (?:b*?){2,}[ab]{2,} on a long run of b take
# exponential time. Past this many seconds the direct NFA simulation answers instead, and for
# every later question about that pattern (a test asks about many prefixes of one pattern, and
# waiting out the timeout on each made single examples run for minutes).
REGEX_TIMEOUT_S = 2.0
_BACKTRACKING: set[str] = set()


def reference_complete(pattern: str, data: bytes) -> bool:
    """Whether `data` is a match, by the `regex` package (independent of grammask)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if pattern not in _BACKTRACKING:
        try:
            return regex.fullmatch(pattern, text, flags=regex.ASCII | regex.V0,
                                   timeout=REGEX_TIMEOUT_S) is not None
        except TimeoutError:
            _BACKTRACKING.add(pattern)
    return reference_nfa(pattern)[0].matches(data)


def oracle_viable_text(pattern: str, text: str) -> bool:
    """Whether `text` (whole characters) is a prefix of a match, by `regex` partial matching."""
    if pattern not in _BACKTRACKING:
        try:
            return regex.fullmatch(pattern, text, flags=regex.ASCII | regex.V0, partial=True,
                                   timeout=REGEX_TIMEOUT_S) is not None
        except TimeoutError:
            _BACKTRACKING.add(pattern)
    return reference_viable(pattern, text.encode("utf-8"))


def allowed_ids(bitmask_row: np.ndarray, size: int) -> set[int]:
    """The token ids whose bits are set in one int32 bitmask row."""
    bits = np.unpackbits(bitmask_row.astype("<i4").view(np.uint8), bitorder="little")
    return set(np.flatnonzero(bits[:size]).tolist())
