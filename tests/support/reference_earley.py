"""A plain Earley recognizer over grammar IR, used as a test oracle: character-level (Unicode
code points), with prefix viability.

The IR is flattened into BNF productions whose symbols are nonterminals (ints) or terminals
(tuples of inclusive code-point ranges). Unproductive symbols are removed first, so every item
in a live Earley set can still be completed: a prefix is viable exactly when its set is
non-empty. Nullable nonterminals are handled as in Aycock and Horspool (2002): predicting a
nullable nonterminal also steps over it.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

from grammask.compiler.ir.nodes import (
    CharClass,
    Choice,
    Grammar,
    Literal,
    Node,
    Repeat,
    RuleRef,
    Seq,
)

Ranges = tuple[tuple[int, int], ...]
Symbol = int | Ranges  # int: a nonterminal; tuple: a terminal matching one code point
Item = tuple[int, int, int]  # production index, dot position, origin set

MAX_CODE_POINT = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)
# (lead byte low, lead byte high, encoded length, smallest code point of that length)
_UTF8_LEADS = ((0xC0, 0xDF, 2, 0x80), (0xE0, 0xEF, 3, 0x800), (0xF0, 0xF7, 4, 0x10000))


def merge_ranges(ranges: list[tuple[int, int]]) -> Ranges:
    """Sorted, merged, non-adjacent inclusive ranges covering the same code points."""
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(r for r in ranges if r[0] <= r[1]):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return tuple(merged)


def intersect_ranges(a: Ranges, b: Ranges) -> Ranges:
    """Code points in both `a` and `b`."""
    return merge_ranges([(max(lo, lo2), min(hi, hi2)) for lo, hi in a for lo2, hi2 in b])


def partial_utf8_ranges(tail: bytes) -> Ranges | None:
    """The scalar values whose UTF-8 encoding starts with `tail`, when `tail` is a proper
    prefix of one encoding (a lead byte and continuation bytes); None otherwise."""
    if not tail:
        return None
    for lead_lo, lead_hi, length, smallest in _UTF8_LEADS:
        if lead_lo <= tail[0] <= lead_hi:
            break
    else:
        return None
    rest = tail[1:]
    if len(tail) >= length or any(not 0x80 <= b <= 0xBF for b in rest):
        return None
    value = tail[0] & (0xFF >> (length + 1))
    for b in rest:
        value = value << 6 | (b & 0x3F)
    missing = 6 * (length - len(tail))
    lo, hi = value << missing, (value << missing) | ((1 << missing) - 1)
    scalars = ((0, SURROGATES[0] - 1), (SURROGATES[1] + 1, MAX_CODE_POINT))
    ranges = intersect_ranges(((max(lo, smallest), hi),), scalars)
    return ranges or None


def split_utf8(data: bytes) -> tuple[str, Ranges | None] | None:
    """`data` as text plus, when it ends inside a character, the code points that character
    may be; None when `data` is not a prefix of valid UTF-8."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        pass
    for cut in range(1, min(3, len(data)) + 1):
        partial = partial_utf8_ranges(data[-cut:])
        if partial is not None:
            try:
                return data[:-cut].decode("utf-8"), partial
            except UnicodeDecodeError:
                return None
    return None


class _Flattener:
    """Builds BNF productions for a grammar's rules."""

    def __init__(self, grammar: Grammar) -> None:
        self.ids = {rule.name: i for i, rule in enumerate(grammar.rules)}
        self.count = len(grammar.rules)
        self.productions: list[tuple[int, tuple[Symbol, ...]]] = []

    def fresh(self, *bodies: tuple[Symbol, ...]) -> int:
        nt = self.count
        self.count += 1
        self.productions.extend((nt, body) for body in bodies)
        return nt

    def single(self, node: Node) -> Symbol:
        body = self.symbols(node)
        return body[0] if len(body) == 1 else self.fresh(body)

    def symbols(self, node: Node) -> tuple[Symbol, ...]:
        if isinstance(node, Literal):
            try:
                text = node.data.decode("utf-8")
            except UnicodeDecodeError as err:
                raise ValueError(f"literal {node.data!r} is not valid UTF-8") from err
            return tuple(((ord(c), ord(c)),) for c in text)
        if isinstance(node, CharClass):
            return (tuple(node.ranges),)
        if isinstance(node, RuleRef):
            if node.name not in self.ids:
                raise ValueError(f"undefined rule {node.name!r}")
            return (self.ids[node.name],)
        if isinstance(node, Seq):
            return tuple(s for item in node.items for s in self.symbols(item))
        if isinstance(node, Choice):
            return (self.fresh(*(self.symbols(alt) for alt in node.alternatives)),)
        assert isinstance(node, Repeat)
        item = self.single(node.item)
        if node.max is None:
            tail = self.count  # the nonterminal made next: tail -> ε | item tail
            self.fresh((), (item, tail))
        else:
            tail = self.fresh(())
            for _ in range(node.max - node.min):
                tail = self.fresh((), (item, tail))
        return (item,) * node.min + (tail,)


def _productive(productions: list[tuple[int, tuple[Symbol, ...]]]) -> set[int]:
    productive: set[int] = set()
    changed = True
    while changed:
        changed = False
        for lhs, body in productions:
            if lhs not in productive and all(
                s in productive if isinstance(s, int) else bool(s) for s in body
            ):
                productive.add(lhs)
                changed = True
    return productive


def _nullable(productions: list[tuple[int, tuple[Symbol, ...]]]) -> set[int]:
    nullable: set[int] = set()
    changed = True
    while changed:
        changed = False
        for lhs, body in productions:
            if lhs not in nullable and all(isinstance(s, int) and s in nullable for s in body):
                nullable.add(lhs)
                changed = True
    return nullable


@dataclass
class _EarleySet:
    items: set[Item] = field(default_factory=set)
    waiting: dict[int, list[Item]] = field(default_factory=dict)
    scans: list[tuple[Item, Ranges]] = field(default_factory=list)


class ReferenceRecognizer:
    """Recognizes the language of a grammar and its prefixes, one code point at a time.

    Raises ValueError for an undefined start rule or reference, or a literal that is not UTF-8.
    """

    def __init__(self, grammar: Grammar) -> None:
        flat = _Flattener(grammar)
        if grammar.start not in flat.ids:
            raise ValueError(f"undefined start rule {grammar.start!r}")
        for rule in grammar.rules:
            flat.productions.append((flat.ids[rule.name], flat.symbols(rule.body)))
        self._accept = flat.fresh((flat.ids[grammar.start],))
        productive = _productive(flat.productions)
        self._productions = [
            (lhs, body) for lhs, body in flat.productions
            if lhs in productive
            and all(s in productive if isinstance(s, int) else bool(s) for s in body)
        ]
        self._nullables = _nullable(self._productions)
        self._by_lhs: dict[int, list[int]] = {}
        for index, (lhs, _) in enumerate(self._productions):
            self._by_lhs.setdefault(lhs, []).append(index)

    def _close(self, sets: list[_EarleySet], seeds: list[Item]) -> _EarleySet:
        """Appends to `sets` the Earley set closed from `seeds`."""
        k = len(sets)
        current = _EarleySet()
        sets.append(current)
        agenda: list[Item] = []

        def add(item: Item) -> None:
            if item not in current.items:
                current.items.add(item)
                agenda.append(item)

        for seed in seeds:
            add(seed)
        while agenda:
            item = agenda.pop()
            prod, dot, origin = item
            lhs, body = self._productions[prod]
            if dot == len(body):
                # origin == k means lhs is nullable: the prediction step already stepped over
                # it for items added to this set later, so a snapshot suffices.
                for p, d, o in tuple(sets[origin].waiting.get(lhs, ())):
                    add((p, d + 1, o))
                continue
            symbol = body[dot]
            if isinstance(symbol, int):
                current.waiting.setdefault(symbol, []).append(item)
                for p in self._by_lhs.get(symbol, ()):
                    add((p, 0, k))
                if symbol in self._nullables:
                    add((prod, dot + 1, origin))
            else:
                current.scans.append((item, symbol))
        return current

    def _chart(self, text: str) -> list[_EarleySet]:
        """Earley sets for each prefix of `text`, stopping after the first empty one."""
        sets: list[_EarleySet] = []
        self._close(sets, [(p, 0, 0) for p in self._by_lhs.get(self._accept, ())])
        for ch in text:
            if not sets[-1].items:
                break
            cp = ord(ch)
            seeds = [
                (p, d + 1, o)
                for (p, d, o), ranges in sets[-1].scans
                if any(lo <= cp <= hi for lo, hi in ranges)
            ]
            self._close(sets, seeds)
        return sets

    def _live(self, sets: list[_EarleySet], text: str, partial: Ranges | None) -> bool:
        if len(sets) <= len(text) or not sets[len(text)].items:
            return False
        return partial is None or bool(intersect_ranges(self._next(sets[len(text)]), partial))

    @staticmethod
    def _next(earley_set: _EarleySet) -> Ranges:
        return merge_ranges([r for _, ranges in earley_set.scans for r in ranges])

    def viable(self, data: bytes) -> bool:
        """Whether `data` (UTF-8, possibly ending inside a character) can be extended to a
        string of the language."""
        split = split_utf8(data)
        if split is None:
            return False
        text, partial = split
        return self._live(self._chart(text), text, partial)

    def complete(self, data: bytes) -> bool:
        """Whether `data` is exactly a string of the language."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return False
        sets = self._chart(text)
        accepted = [(p, 1, 0) for p in self._by_lhs.get(self._accept, ())]
        return len(sets) > len(text) and any(item in sets[-1].items for item in accepted)

    def allowed_next_chars(self, data: bytes) -> Ranges:
        """The code points that can follow `data` with the result still viable; when `data`
        ends inside a character, only those whose encoding continues it."""
        split = split_utf8(data)
        if split is None:
            return ()
        text, partial = split
        sets = self._chart(text)
        if len(sets) <= len(text):
            return ()
        allowed = self._next(sets[len(text)])
        return allowed if partial is None else intersect_ranges(allowed, partial)

    def viable_prefixes(self, data: bytes) -> list[bool]:
        """`viable(data[:i])` for every i from 0 to len(data), from one chart."""
        longest = len(data)
        while split_utf8(data[:longest]) is None:
            longest -= 1
        split = split_utf8(data[:longest])
        assert split is not None
        sets = self._chart(split[0])
        out = []
        for i in range(len(data) + 1):
            prefix = split_utf8(data[:i]) if i <= longest else None
            out.append(prefix is not None and self._live(sets, *prefix))
        return out

    @functools.cached_property
    def _min_bytes(self) -> dict[int, float]:
        """The fewest UTF-8 bytes each nonterminal derives (least fixpoint)."""
        least: dict[int, float] = {}
        changed = True
        while changed:
            changed = False
            for lhs, body in self._productions:
                v = self._body_bytes(body, least)
                if v < least.get(lhs, math.inf):
                    least[lhs] = v
                    changed = True
        return least

    @staticmethod
    def _body_bytes(body: tuple[Symbol, ...], least: dict[int, float]) -> float:
        return sum(least.get(s, math.inf) if isinstance(s, int)
                   else min(len(chr(lo).encode("utf-8", "surrogatepass")) for lo, _ in s)
                   for s in body)

    def _chart_cost(self, sets: list[_EarleySet]) -> float:
        """The fewest bytes that finish the text of the chart `sets`: per set, ret[X] = the
        fewest bytes from the end of an X begun there to the end of the text, the best over
        the set's items waiting for X (a fixpoint: items begun in the set wait in it too)."""
        least = self._min_bytes
        rets: list[dict[int, float]] = []

        def tail(item: Item) -> float:
            p, _, o = item
            return 0.0 if self._productions[p][0] == self._accept else \
                rets[o].get(self._productions[p][0], math.inf)

        for es in sets:
            own: dict[int, float] = {}
            rets.append(own)
            changed = True
            while changed:
                changed = False
                for item in es.items:
                    p, d, _ = item
                    body = self._productions[p][1]
                    if d < len(body) and isinstance(body[d], int):
                        v = self._body_bytes(body[d + 1:], least) + tail(item)
                        if v < own.get(body[d], math.inf):
                            own[body[d]] = v
                            changed = True
        return min((self._body_bytes(self._productions[p][1][d:], least) + tail((p, d, o))
                    for p, d, o in sets[-1].items), default=math.inf)

    def completion_bytes(self, data: bytes, max_tries: int = 64) -> int | None:
        """The fewest bytes that extend `data` (UTF-8, possibly ending inside a character) to
        a string of the language, a character counting its UTF-8 length; None when none does.
        A partial last character is finished by each code point that continues it (at most
        `max_tries`, else ValueError)."""
        split = split_utf8(data)
        if split is None:
            return None
        text, partial = split
        if partial is None:
            sets = self._chart(text)
            if len(sets) <= len(text) or not sets[-1].items:
                return None
            cost = self._chart_cost(sets)
            return None if cost == math.inf else int(cost)
        best: int | None = None
        had = len(data) - len(text.encode("utf-8", "surrogatepass"))
        points = [cp for lo, hi in self.allowed_next_chars(data) for cp in range(lo, hi + 1)]
        if len(points) > max_tries:
            raise ValueError(f"{len(points)} code points continue the last character")
        for cp in points:
            rest = self.completion_bytes((text + chr(cp)).encode("utf-8", "surrogatepass"))
            if rest is not None:
                more = len(chr(cp).encode("utf-8", "surrogatepass")) - had + rest
                best = more if best is None else min(best, more)
        return best
