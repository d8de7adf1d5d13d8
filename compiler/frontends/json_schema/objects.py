"""Objects: listed properties in schema order, then any additional properties.

- Listed keys are the `properties` of every merged subschema in order of appearance, then the
  `required` keys none of them lists. A listed key's value is the conjunction, over the
  subschemas, of its `properties` schema and the `patternProperties` schemas its name
  matches, or, when there are none of those, `additionalProperties` (absent: anything; `strict`: nothing). A key whose
  conjunction holds `false`, that `not: {required: [k]}` forbids, or whose name `propertyNames`
  rejects (its subschema read as a string language with every combinator,
  `string_sets.strings_of`), cannot appear; if it is required, there is no such object.
- Additional keys come after the listed ones. Their names are split into regions by which
  patterns they match (at most `MAX_PATTERN_REGIONS`); each region's names are the strings in
  the matched patterns, in no other pattern, not listed, and allowed by `propertyNames`, and
  its value is the conjunction of the matched patterns' schemas (or `additionalProperties`
  for a subschema none of whose patterns match). The listed names are taken out of a region's
  key literals (`excluded_names.without_names`), not out of its decoded names, so the literal
  automaton of a region (any string, when there are no patterns) is shared. Additional
  keys are not checked against each other for repetition, which no finite automaton can do
  for an open set of names.
- `minProperties`/`maxProperties` count members exactly (listed and additional);
  `Constraints.some_additional` (a negated `additionalProperties: false`) asks, per name set
  N, for a member whose name is not in N (N is listed, so any additional member is one): bits
  beside the presence rules' record which sets a present member was outside of.
- Presence rules (`dependentRequired`, the array form of `dependencies`, `not` of `required`)
  track which of the properties they mention are present, at most `MAX_PRESENCE_BITS`; those
  properties are listed (after the others) so that their presence is known.
- Objects with more than `MEMBER_RULES_FROM` listed members give each member (key, separator,
  value) a rule of its own, so their rule automaton stays linear in the member count.
Keys are matched in every JSON spelling (escapes included).
"""
from __future__ import annotations

from itertools import product
from typing import Any

from ...automata.language_ops import as_dfa, difference, intersect
from ...ir.nodes import EMPTY, NOTHING, Automaton, Choice, Literal, Node, Repeat, Seq
from ...support import deadline
from ...support.errors import GrammarError
from .any_order import unordered_object
from .arrays import count_bound
from .conjunctions import Constraints, ObjectPart, conjunction, location
from .ecma_regex import ANY_STRING
from .excluded_names import without_names
from .literals import string_literal
from .string_sets import strings_of
from .strings import ecma_pattern, excluding, json_string
from .translation import Translation

MAX_PATTERN_REGIONS = 64
MAX_PRESENCE_BITS = 8
MEMBER_RULES_FROM = 8
"""Objects with more listed members than this get a rule per member: which keys may come next
differs at every position, so inlined keys make an automaton quadratic in the member count."""


class _Names:
    """The pattern and `propertyNames` languages of one object, as DFAs on decoded names."""

    def __init__(self, t: "Translation", c: "Constraints") -> None:
        self.t = t
        self.patterns: dict[str, Node] = {}
        for part in c.objects:
            for pattern, where in part.patterns:
                if pattern not in self.patterns:
                    self.patterns[pattern] = ecma_pattern(pattern, pointer=where, limits=t.limits)
        self.allowed = _property_names(t, c)

    def matches(self, pattern: str, name: str) -> bool:
        return as_dfa(self.patterns[pattern], self.t.limits).fullmatch(name.encode("utf-8"))

    def name_ok(self, name: str) -> bool:
        return self.allowed is None or as_dfa(self.allowed, self.t.limits).fullmatch(
            name.encode("utf-8"))


def _property_names(t: "Translation", c: "Constraints") -> Node | None:
    """The decoded names `propertyNames` allows (None: any), every combinator included."""
    if not c.property_names:
        return None
    names = strings_of(t, conjunction([location(p) for p in c.property_names]))
    return None if names is ANY_STRING else names


def _value_pointers(t: "Translation", names: _Names, part: "ObjectPart",
                    name: str) -> list[str] | None:
    """The subschemas of one part for property `name` (None: the part forbids it)."""
    matched = [where for pattern, where in part.patterns if names.matches(pattern, name)]
    if name in part.properties:
        return [part.properties[name], *matched]
    if matched:
        return matched
    if part.additional is not None:
        return [part.additional]
    return None if t.options.strict else []


def object_node(t: "Translation", c: "Constraints", depth: int) -> Node | None:
    """The objects `c` allows, or None if there are none."""
    names = _Names(t, c)
    order: list[str] = []
    for part in c.objects:
        order.extend(k for k in part.properties if k not in order)
    order.extend(k for k in c.required if k not in order)
    for when, then in c.presence:
        order.extend(k for k in (*then, *when) if k not in order)
    members: list[tuple[Node, bool]] = []
    allowed_names: list[str] = []
    for name in order:
        pointers: list[str] | None = []
        for part in c.objects:
            more = _value_pointers(t, names, part, name)
            pointers = None if more is None or pointers is None else pointers + more
        allowed = (pointers is not None and name not in c.forbidden and names.name_ok(name)
                   and not any(t.doc.at(p) is False for p in pointers))
        if not allowed:
            if name in c.required:
                return None
            continue
        assert pointers is not None
        allowed_names.append(name)
        key = excluding(string_literal(name), t.options.string_excludes, t.limits)
        kv: Node = Seq((key, t.layout.key(), t.member(pointers, depth + 1)))
        members.append((kv, name in c.required))
    if len(members) > MEMBER_RULES_FROM:
        where = c.objects[0].pointer if c.objects else "object"
        members = [(t.rule(f"{where}-{name}-member", kv), required)
                   for (kv, required), name in zip(members, allowed_names)]
    extra = _additional(t, c, names, order, depth)
    return _assemble(t, c, members, allowed_names, extra, depth)


def _additional(t: "Translation", c: "Constraints", names: _Names, listed: list[str],
                depth: int) -> Node | None:
    """One additional member (key, separator, value), or None if none is allowed."""
    patterns = list(names.patterns)
    if len(patterns) > 6:
        raise GrammarError(f"{len(patterns)} patternProperties make "
                           f"more than {MAX_PATTERN_REGIONS} name regions",
                           pointer=c.objects[0].pointer, code="budget")
    excluded = list(dict.fromkeys([*listed, *c.forbidden]))
    alts: list[Node] = []
    for chosen in product((False, True), repeat=len(patterns)):
        matched = {p for p, on in zip(patterns, chosen) if on}
        pointers: list[str] | None = []
        for part in c.objects:
            mine = [where for p, where in part.patterns if p in matched]
            if mine:
                pointers = None if pointers is None else pointers + mine
            elif part.additional is not None:
                pointers = None if pointers is None else pointers + [part.additional]
            elif t.options.strict:
                pointers = None
        if pointers is None or any(t.doc.at(p) is False for p in pointers):
            continue
        inside = [names.patterns[p] for p in matched] or [ANY_STRING]
        if names.allowed is not None:
            inside.append(names.allowed)
        outside = [names.patterns[p] for p in patterns if p not in matched]
        language = intersect(*inside, limits=t.limits) if len(inside) > 1 else inside[0]
        if outside:
            language = difference(language, Choice(tuple(outside)), limits=t.limits)
        if as_dfa(language, t.limits).is_empty_language:
            continue
        key = excluding(json_string(None if language is ANY_STRING else language,
                                    limits=t.limits), t.options.string_excludes, t.limits)
        if excluded:
            key = Automaton(without_names(as_dfa(key, t.limits), excluded, t.limits),
                            "JSON string")
            if key.dfa.is_empty_language:
                continue
        alts.append(Seq((key, t.layout.key(), t.member(pointers, depth + 1))))
    if not alts:
        return None
    return alts[0] if len(alts) == 1 else Choice(tuple(alts))


def _presence_check(c: "Constraints", names: list[str]) -> tuple[dict[int, int], Any]:
    """The members the presence rules mention (member index -> bit), and a test of a bit set
    against the rules."""
    mentioned = {k for rule in c.presence for group in rule for k in group}
    if len(mentioned) > MAX_PRESENCE_BITS:
        raise GrammarError(f"dependencies and "
                           f"not-required rules mention {len(mentioned)} properties, more than "
                           f"{MAX_PRESENCE_BITS}",
                           pointer=c.objects[0].pointer if c.objects else '/', code="budget")
    bit_of = {name: b for b, name in enumerate(sorted(mentioned))}
    bits = {i: bit_of[name] for i, name in enumerate(names) if name in bit_of}
    rules = [(sum(1 << bit_of[k] for k in when), sum(1 << bit_of[k] for k in then), not then)
             for when, then in c.presence]

    def ok(present: int) -> bool:
        return all(present & when != when or (present & then == then and not forbid)
                   for when, then, forbid in rules)

    return bits, ok


def _assemble(t: "Translation", c: "Constraints", members: list[tuple[Node, bool]],
              names: list[str], extra: Node | None, depth: int) -> Node | None:
    """`{ members… additional… }` with commas between present members, exact counts and the
    presence rules."""
    lo, hi = c.min_properties, c.max_properties
    if hi is not None and hi < lo:
        return None
    if extra is not None:
        count_bound(t, c, lo, hi, "Properties")
    bits, presence_ok = _presence_check(c, names)
    if t.options.property_order == "any":
        return unordered_object(t, c, members, names, extra, depth, bits, presence_ok)
    counting = lo > sum(req for _, req in members) or hi is not None
    cap = max(lo, (hi + 1) if hi is not None else 0)
    sep = t.layout.item(depth)
    n = len(members)
    more = Seq((sep, extra)) if extra is not None else NOTHING
    extras: dict[tuple[int, int | None], Node] = {}

    def repeat(least: int, most: int | None) -> Node:
        if (least, most) not in extras:
            extras[least, most] = Repeat(more, least, most)
        return extras[least, most]

    # Bits above the presence rules': the `some_additional` name sets a member is outside of.
    found_all = ((1 << len(c.some_additional)) - 1) << MAX_PRESENCE_BITS
    hits = {i: sum(1 << (MAX_PRESENCE_BITS + j) for j, outside in enumerate(c.some_additional)
                   if name not in outside) for i, name in enumerate(names)}

    def tail(count: int, nonempty: bool, present: int) -> Node:
        need = max(lo - count, 0) if counting else 0
        if present & found_all != found_all:
            need = max(need, 1)  # an additional member is outside every name set
        room = None if not counting or hi is None else hi - count
        if room is not None and room < need:
            return NOTHING
        if extra is None or room == 0:
            return NOTHING if need or nonempty else EMPTY
        if nonempty:
            return Seq((extra, repeat(max(need - 1, 0), None if room is None else room - 1)))
        return repeat(need, room)

    def normal(i: int, count: int, nonempty: bool, present: int) -> tuple[bool, int, int, int]:
        return nonempty, i, min(count, cap) if counting else 0, present

    def after(i: int, count: int, present: int) -> tuple[int, int]:
        """(count, present) once member i is present."""
        now = present | (1 << bits[i]) if i in bits else present
        return count + 1, now | hits[i]

    # chain[nonempty, i, count, present]: members i.. and the additional ones, after `count`
    # members (the `present` ones of those the presence rules mention), `nonempty`: none yet.
    # Built from the last member back, over the keys reachable from the first.
    level = [{normal(0, 0, True, 0)}]
    for i in range(n):
        deadline.check()
        nxt: set[tuple[bool, int, int, int]] = set()
        for nonempty, _, count, present in level[i]:
            done, now = after(i, count, present)
            nxt.add(normal(i + 1, done, False, now))
            if not members[i][1]:
                nxt.add(normal(i + 1, count, nonempty, present))
        level.append(nxt)
    chain: dict[tuple[bool, int, int, int], Node] = {}
    for nonempty, _, count, present in level[n]:
        chain[nonempty, n, count, present] = \
            tail(count, nonempty, present) if presence_ok(present) else NOTHING
    for i in range(n - 1, -1, -1):
        kv, required = members[i]
        member: dict[tuple[int, int], Node] = {}
        for key in level[i]:
            nonempty, _, count, present = key
            done, now = after(i, count, present)
            if (count, now) not in member:
                # One object whether member i comes first or after others.
                member[count, now] = Seq((kv, chain[normal(i + 1, done, False, now)]))
            node = member[count, now] if nonempty else Seq((sep, member[count, now]))
            if not required:
                node = Choice((node, chain[normal(i + 1, count, nonempty, present)]))
            chain[key] = node
    body = chain[normal(0, 0, True, 0)]
    may_be_empty = not any(req for _, req in members) and lo == 0 and presence_ok(0) \
        and not c.some_additional
    alts: list[Node] = []
    if may_be_empty:
        alts.append(Seq((Literal(b"{"), t.layout.empty(), Literal(b"}"))))
    alts.append(Seq((Literal(b"{"), t.layout.open(depth), body, t.layout.close(depth),
                     Literal(b"}"))))
    return alts[0] if len(alts) == 1 else Choice(tuple(alts))
