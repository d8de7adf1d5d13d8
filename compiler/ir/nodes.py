"""The grammar IR: rules of expressions over bytes and Unicode code points, shared by every
frontend (regex, GBNF, Lark).

A `Grammar` is an ordered tuple of named `Rule`s and a start rule name; a rule's body is an
expression that may refer to rules by name (`RuleRef`). A regex is a single expression.

Invariants (checked at construction):
- `Literal.data` is non-empty bytes (the empty string is `Seq(())`).
- `CharClass.ranges` are sorted, disjoint, non-adjacent, inclusive code-point ranges inside
  [0, 0x10FFFF] with the surrogates D800-DFFF removed; an empty class matches nothing.
- `Repeat` has 0 <= min and max is None (unbounded) or max >= min.
- `Automaton.dfa` is a trimmed byte-level `DFATable` (validated by its own constructor); it is a
  leaf like `CharClass`, compared by identity.
- `Grammar` rule names are unique and non-empty. References to undefined rules and a missing
  start rule are allowed here (frontends and analyses report them), so a broken grammar can
  still be linted.
Nodes are immutable and hashable; `span` is kept for diagnostics and ignored by equality.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Iterable, Union

from ...runtime.dfa.table import DFATable
from ..support.diagnostics import Span

Ranges = tuple[tuple[int, int], ...]
"""Inclusive code-point (or byte) ranges, sorted and disjoint once normalized."""

MAX_CODE_POINT = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)


@dataclass(frozen=True)
class Literal:
    """A fixed byte string."""

    data: bytes
    span: Span | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.data, bytes) or not self.data:
            raise ValueError("Literal.data must be non-empty bytes")


def normalize_ranges(ranges: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """Sort and merge code-point ranges, drop surrogates, clip to the Unicode range."""
    cleaned: list[tuple[int, int]] = []
    for lo, hi in ranges:
        lo, hi = max(lo, 0), min(hi, MAX_CODE_POINT)
        if lo > hi:
            continue
        s_lo, s_hi = SURROGATES
        if lo <= s_hi and hi >= s_lo:
            if lo < s_lo:
                cleaned.append((lo, s_lo - 1))
            if hi > s_hi:
                cleaned.append((s_hi + 1, hi))
        else:
            cleaned.append((lo, hi))
    cleaned.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in cleaned:
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return tuple(merged)


def complement_ranges(ranges: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """Every scalar value (no surrogates) outside `ranges`."""
    out: list[tuple[int, int]] = []
    nxt = 0
    for lo, hi in normalize_ranges(ranges):
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CODE_POINT:
        out.append((nxt, MAX_CODE_POINT))
    return normalize_ranges(out)


@dataclass(frozen=True)
class CharClass:
    """One Unicode scalar value from a set of code-point ranges, matched as its UTF-8 bytes."""

    ranges: tuple[tuple[int, int], ...]
    span: Span | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if normalize_ranges(self.ranges) != tuple(self.ranges):
            raise ValueError(f"CharClass.ranges not normalized: {self.ranges!r}")

    @classmethod
    def of(
        cls, ranges: Iterable[tuple[int, int]], negated: bool = False, span: Span | None = None
    ) -> "CharClass":
        """A class from arbitrary ranges, complemented when `negated`."""
        rs = complement_ranges(ranges) if negated else normalize_ranges(ranges)
        return cls(rs, span)


@dataclass(frozen=True)
class Seq:
    """Concatenation; `Seq(())` is the empty string."""

    items: tuple["Node", ...]
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Choice:
    """Alternation; `Choice(())` matches nothing."""

    alternatives: tuple["Node", ...]
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Repeat:
    """`item` repeated between `min` and `max` times (`max=None`: unbounded)."""

    item: "Node"
    min: int
    max: int | None
    span: Span | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.min < 0 or (self.max is not None and self.max < self.min):
            raise ValueError(f"bad repetition bounds {{{self.min},{self.max}}}")


@dataclass(frozen=True)
class RuleRef:
    """A reference to the rule called `name`."""

    name: str
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, eq=False)
class Automaton:
    """A regular language given by a byte-level DFA: the result of language operations
    (intersection, complement) that expressions cannot state compactly. `label` names it in
    diagnostics and printed grammars."""

    dfa: DFATable
    label: str = "automaton"
    span: Span | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.dfa, DFATable):
            raise TypeError(f"Automaton.dfa must be a DFATable, got {type(self.dfa).__name__}")


@dataclass(frozen=True)
class TokenRef:
    """One token as one step, never text: a token whose id lies in `ids` (inclusive ranges) or
    whose text is one of `texts` (a control token's surface text, or the text of exactly one
    token); with `negated`, any token but those (naming none: any token). A leaf that names tokens of a vocabulary not
    yet known: the pipeline resolves it against the vocabulary (`lowering/tokens.py`) into the
    spellings of `runtime.vocab.spelling` before any automaton is built."""

    ids: Ranges = ()
    texts: tuple[str, ...] = ()
    negated: bool = False
    span: Span | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.ids and not self.texts and not self.negated:
            raise ValueError("TokenRef names no token")
        if any(lo < 0 or hi < lo for lo, hi in self.ids):
            raise ValueError(f"TokenRef.ids must be non-negative ranges, got {self.ids!r}")


Node = Union[Literal, CharClass, Seq, Choice, Repeat, RuleRef, Automaton, TokenRef]


@dataclass(frozen=True)
class Rule:
    """A named rule: `name ::= body`. A `kept` rule stays a rule of its own in the pushdown
    lowering, never inlined (for a sub-language used at many places whose automaton would be
    too large to copy into each). With `max_tokens` N, at most N tokens may begin inside an
    occurrence of the rule, which then ends where it first can (`runtime/pushdown/earley.py`);
    such a rule is kept, and its body refers to no rule (it is called, never calls)."""

    name: str
    body: Node
    span: Span | None = field(default=None, compare=False, repr=False)
    kept: bool = False
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("Rule.name must be a non-empty str")
        if self.max_tokens is not None:
            if type(self.max_tokens) is not int or self.max_tokens < 0:
                raise ValueError(f"Rule.max_tokens must be an int >= 0, got {self.max_tokens!r}")
            if any(isinstance(n, RuleRef) for n in walk(self.body)):
                raise ValueError(f"rule {self.name!r} has max_tokens and refers to a rule")
            object.__setattr__(self, "kept", True)


@dataclass(frozen=True)
class Grammar:
    """Rules in source order and the name of the start rule."""

    rules: tuple[Rule, ...]
    start: str = "root"
    source: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for r in self.rules:
            if r.name in seen:
                raise ValueError(f"rule {r.name!r} defined twice")
            seen.add(r.name)

    def rule(self, name: str) -> Rule | None:
        """The rule called `name`, or None."""
        return self.by_name.get(name)

    @functools.cached_property
    def by_name(self) -> dict[str, Rule]:
        """Rules keyed by name."""
        return {r.name: r for r in self.rules}


def children(node: Node) -> tuple[Node, ...]:
    """The direct sub-expressions of `node` (the node classes are final: compared by type)."""
    kind = type(node)
    if kind is Seq:
        return node.items  # type: ignore[union-attr]
    if kind is Choice:
        return node.alternatives  # type: ignore[union-attr]
    if kind is Repeat:
        return (node.item,)  # type: ignore[union-attr]
    return ()


def walk(node: Node):  # type: ignore[no-untyped-def]
    """Every node of an expression, parents before children, without recursion."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(children(n)))


def references(node: Node) -> list[RuleRef]:
    """Every rule reference in `node`, in source order."""
    return [n for n in walk(node) if isinstance(n, RuleRef)]

EMPTY = Seq(())
NOTHING = Choice(())


def char(c: str, span: Span | None = None) -> Literal:
    """A literal for one character, as UTF-8."""
    return Literal(c.encode("utf-8"), span)
