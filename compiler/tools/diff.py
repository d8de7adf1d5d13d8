"""Language difference: whether every string one grammar accepts, another accepts too, and if not
a shortest string that parts them, with where it parts.

`difference(a, b)` is None when L(a) ⊆ L(b), else a `Witness`: a string of L(a) not in L(b).
For two JSON Schemas (`grammask diff OLD NEW`): a JSON instance valid under `a` and invalid
under `b` (an answer `b` breaks), with the JSON pointer of the first place it leaves `b`.

Regular languages (a non-recursive schema or grammar): exact. Both become minimal DFAs (the
compiled grammar's IR inlined, `ir_to_dfa`), `language_ops.difference` builds L(a) \\ L(b) by
product, and a breadth-first search finds a shortest string in it, each byte class written as
its most readable byte (letters, digits, then other printable ASCII). Recursive languages:
exact up to a nesting depth D (`lowering.unroll`: recursion followed at most D deep). Then
L(a)'s strings of depth at most D are compared with L(b) unrolled as deep; a string found is
checked against the whole of `b` (the Earley recognizer of its rule automata), and where `b`
accepts it deeper, `b` is unrolled twice as deep and the search is redone (`MAX_DEEPENINGS`).
`Witness.depth` is D when either language was cut, None when the answer is exact.

For JSON, a witness that repeats a member name (the shortest string often writes "" twice
where a member count parts the languages; the data model reads one member) gets the repeats
renamed apart, when `a` still accepts it and `b` still does not.

Where it parts: the longest prefix of the witness that `b` can still continue (`Recognizer.prefix`):
the offset of the first byte `b` refuses, or the witness's length when `b` accepts all its
bytes but not as a whole; for JSON, the pointer of the innermost member or value written there.
Bounded by `Limits` (the products by `max_dfa_states`, the deadline by `max_compile_seconds`).
"""
from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, replace
from typing import Any

from ...runtime.dfa.table import DFATable
from ..analyses.size import compile_structure
from ..automata.build import ir_to_dfa
from ..automata.language_ops import difference as language_difference
from ..frontends.json_schema import schema_to_grammar
from ..frontends.json_schema.locate import JsonPositions
from ..frontends.json_schema.options import JsonSchemaOptions
from ..ir.graph import find_cycle
from ..ir.nodes import Grammar
from ..lowering.regular import inline_regular
from ..lowering.unroll import unrolled
from ..support import deadline
from ..support.deadline import compile_deadline
from ..support.errors import GrammarError
from ..support.limits import DEFAULT_LIMITS, Limits
from .recognizer import Recognizer

__all__ = ["DEFAULT_DEPTH", "Witness", "difference"]

DEFAULT_DEPTH = 3
"""Recursion followed this deep where a language is recursive."""
MAX_DEEPENINGS = 3
"""Times `b` is unrolled twice as deep when a string found is in `b` after all."""
_READABLE = [*range(0x61, 0x7B), *range(0x30, 0x3A), *range(0x41, 0x5B), 0x20,
             *range(0x21, 0x30), *range(0x3A, 0x41), *range(0x5B, 0x61), *range(0x7B, 0x7F),
             *range(0x80, 0x100), *range(0x00, 0x20), 0x7F]
"""Bytes in the order a witness prefers them."""


@dataclass(frozen=True)
class Witness:
    """A string of one language that the other rejects: `text`, the byte `offset` where the
    other stops accepting it (its length when only the end is refused), the JSON `pointer` of
    what is written there (JSON Schemas), and the nesting `depth` the search was exact to
    (None: exact)."""

    text: str
    offset: int
    pointer: str | None = None
    depth: int | None = None

    @property
    def value(self) -> Any:
        """The witness as a JSON value (JSON Schemas)."""
        return json.loads(self.text)


def _dfa(grammar: Grammar, depth: int, limits: Limits) -> DFATable:
    if find_cycle(grammar) is not None:
        grammar = unrolled(grammar, depth)
    root, rules = inline_regular(grammar)
    return ir_to_dfa(root, limits, inline=rules)


def _shortest(dfa: DFATable) -> bytes | None:
    """A shortest string of the trimmed DFA's language (readable bytes first), or None."""
    if dfa.n_states == 0 or dfa.is_empty_language:
        return None
    classes = dfa.byte_class
    choice: dict[int, int] = {}
    for b in _READABLE:
        choice.setdefault(int(classes[b]), b)
    steps = sorted(choice.items(), key=lambda kv: _READABLE.index(kv[1]))
    start = int(dfa.start)
    back: dict[int, tuple[int, int]] = {start: (-1, -1)}
    queue = deque([start])
    while queue:
        s = queue.popleft()
        if dfa.accepting[s]:
            out = bytearray()
            while back[s][0] >= 0:
                s, b = back[s]
                out.append(b)
            return bytes(reversed(out))
        row = dfa.transitions[s]
        for cls, b in steps:
            t = int(row[cls])
            if t >= 0 and t not in back:
                back[t] = (s, b)
                queue.append(t)
    return None


def _pointer(text: str, offset: int) -> str | None:
    """The innermost member or value of the JSON `text` at byte `offset` (its end: the last
    character); None when `text` is not JSON."""
    try:
        positions = JsonPositions(text)
    except ValueError:
        return None
    at = len(text.encode("utf-8")[:offset].decode("utf-8", "replace"))
    at = min(at, len(text) - 1)
    best, size = "", len(text) + 1
    for pointer, where in positions.located.items():
        spans = [(where.value_start, where.value_end)]
        if where.key is not None:
            spans.append((where.key[0], where.value_end))
        for lo, hi in spans:
            if lo <= at < hi and hi - lo < size:
                best, size = pointer, hi - lo
    return best


def _distinct_keys(found: bytes, read: int, a: Grammar, b: Recognizer | None,
                   limits: Limits) -> tuple[bytes, int]:
    """The witness with repeated member names renamed apart (a, b, ..., as the shortest string
    often repeats "" where a count is what parts the languages, which the data model reads as
    one member), when `a` accepts that and `b` does not; else the witness as found."""
    repeated = False

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal repeated
        names = {k for k, _ in items}
        out: dict[str, Any] = {}
        fresh = (f"{c}{n or ''}" for n in range(10**6) for c in "abcdefghijklmnopqrstuvwxyz")
        for k, v in items:
            if k in out:
                repeated = True
                k = next(f for f in fresh if f not in names and f not in out)
            out[k] = v
        return out

    try:
        value = json.loads(found, object_pairs_hook=pairs)
    except ValueError:
        return found, read
    if not repeated:
        return found, read
    renamed = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    if not Recognizer(compile_structure(a, limits), limits.runtime()).prefix(renamed)[1]:
        return found, read
    now, accepted = b.prefix(renamed) if b is not None else (0, False)
    return (found, read) if accepted else (renamed, now)


def _grammar(language: Any, options: JsonSchemaOptions, limits: Limits) -> Grammar:
    if isinstance(language, Grammar):
        return language
    if isinstance(language, (dict, bool)):
        return schema_to_grammar(language, options, limits).grammar
    raise TypeError(f"difference takes IR grammars or JSON Schemas (dict or bool), got "
                    f"{type(language).__name__}")


def difference(a: Any, b: Any, *, depth: int = DEFAULT_DEPTH,
               options: JsonSchemaOptions | None = None, json_texts: bool | None = None,
               limits: Limits = DEFAULT_LIMITS) -> Witness | None:
    """None when every string of `a` is in `b` (up to nesting `depth` where a language is
    recursive), else a shortest `Witness` in `a` and not in `b` (module docstring). `a` and `b`
    are IR grammars (`schema_to_grammar(...).grammar`, a frontend's `read`) or JSON Schemas,
    compiled with `options` (default `JsonSchemaOptions()`). `json_texts`: whether the strings
    are JSON, so that the witness gets its pointer (default: when `a` is a schema)."""
    if depth < 0:
        raise ValueError(f"depth must be non-negative, got {depth}")
    options = options or JsonSchemaOptions()
    schemas = not isinstance(a, Grammar) if json_texts is None else json_texts
    with compile_deadline(limits):
        ga, gb = _grammar(a, options, limits), _grammar(b, options, limits)
        cut = find_cycle(ga) is not None or find_cycle(gb) is not None
        try:
            whole_b: Recognizer | None = Recognizer(compile_structure(gb, limits),
                                                    limits.runtime())
        except GrammarError as exc:
            if exc.code != "empty-language":
                raise
            whole_b = None  # accepts nothing
        dfa_a = _dfa(ga, depth, limits)
        depth_b = depth
        for _ in range(MAX_DEEPENINGS + 1):
            deadline.check()
            apart = language_difference(dfa_a, _dfa(gb, depth_b, limits), limits=limits)
            found = _shortest(apart.dfa)
            if found is None:
                return None
            read, accepted = whole_b.prefix(found) if whole_b is not None else (0, False)
            if not accepted:
                if schemas:
                    found, read = _distinct_keys(found, read, ga, whole_b, limits)
                text = found.decode("utf-8", "replace")
                witness = Witness(text, read, depth=depth if cut else None)
                return replace(witness, pointer=_pointer(text, read)) if schemas else witness
            depth_b *= 2
    raise GrammarError(f"no string of the first language outside the second found: the second "
                       f"accepts them nested deeper than {depth_b // 2} (raise depth)",
                       code="diff-undecided")

