"""Objects: listed properties in schema order, then any additional properties.

- Listed keys are the `properties` of every merged subschema in order of appearance, then the
  `required` keys none of them lists. A listed key's value is the conjunction, over the
  subschemas, of its `properties` schema and the `patternProperties` schemas its name
  matches, or, when there are none of those, `additionalProperties` (absent: anything; `strict`: nothing). A key whose
  conjunction holds `false`, that `not: {required: [k]}` forbids, or whose name `propertyNames`
  rejects (its subschema read as a string language with every combinator,
  `string_sets.strings_of`), cannot appear; if it is required, there is no such object.
- Additional keys come after the listed ones. Their names are split into regions by which
  patterns they match (the non-empty ones, at most `MAX_PATTERN_REGIONS`); each region's names are the strings in
  the matched patterns, in no other pattern, not listed, and allowed by `propertyNames`, and
  its value is the conjunction of the matched patterns' schemas (or `additionalProperties`
  for a subschema none of whose patterns match). The listed names are taken out of a region's
  key literals (`excluded_names.without_names`), not out of its decoded names, so the literal
  automaton of a region (any string, when there are no patterns) is shared. Additional
  keys are not checked against each other for repetition, which no finite automaton can do
  for an open set of names.
- `minProperties`/`maxProperties` count members exactly (listed and additional).
- `Constraints.witnesses` (from `violations.py`: a negated `patternProperties`,
  `additionalProperties` or `propertyNames`) each ask for a member whose name is in a
  language K (`string_sets.strings_of` of its names schema) and whose value meets a schema V:
  a member whose name is in some K's is written in one version per set h of them (its value
  also meeting each V of h; the set of every K whose V says nothing is always in h), and
  bits beside the presence rules' record the witnesses found; the additional members after
  the listed ones go on until every witness is found (`_Witnesses`). At most
  `MAX_WITNESSES` per object.
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
MAX_WITNESSES = 6
"""Members one object is asked to hold (`Constraints.witnesses`): a member is written in up
to 2**6 versions."""
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


class _Witnesses:
    """The members an object must hold (`Constraints.witnesses`): per witness its decoded-name
    language and its value pointer (None: any value); `bit(j)` is its bit among the presence
    rules' (above them)."""

    def __init__(self, t: "Translation", c: "Constraints") -> None:
        if len(c.witnesses) > MAX_WITNESSES:
            raise GrammarError(f"{len(c.witnesses)} members asked for by negated object "
                               f"keywords, more than {MAX_WITNESSES}",
                               pointer=c.objects[0].pointer if c.objects else "/",
                               code="budget")
        self.t = t
        self.names = [strings_of(t, conjunction([location(n)])) for n, _ in c.witnesses]
        self.values = [None if t.doc.at(v) is True else v for _, v in c.witnesses]
        self.all = sum(self.bit(j) for j in range(len(self.names)))

    @staticmethod
    def bit(j: int) -> int:
        return 1 << (MAX_PRESENCE_BITS + j)

    def named(self, name: str) -> list[int]:
        """The witnesses whose language holds `name`."""
        return [j for j, k in enumerate(self.names)
                if as_dfa(k, self.t.limits).fullmatch(name.encode("utf-8"))]

    def versions(self, among: list[int], pointers: list[str]) -> list[tuple[list[str], int]]:
        """(value pointers, witness bits) of each version of a member that witnesses `among`
        may find, with value `pointers`."""
        forced = sum(self.bit(j) for j in among if self.values[j] is None)
        optional = [j for j in among if self.values[j] is not None]
        out = []
        for chosen in product((False, True), repeat=len(optional)):
            h = [j for j, on in zip(optional, chosen) if on]
            out.append(([*pointers, *(self.values[j] for j in h)],  # type: ignore[misc]
                        forced | sum(self.bit(j) for j in h)))
        return out


def object_node(t: "Translation", c: "Constraints", depth: int) -> Node | None:
    """The objects `c` allows, or None if there are none."""
    names = _Names(t, c)
    found = _Witnesses(t, c)
    order: list[str] = []
    for part in c.objects:
        order.extend(k for k in part.properties if k not in order)
    order.extend(k for k in c.required if k not in order)
    for when, then in c.presence:
        order.extend(k for k in (*then, *when) if k not in order)
    members: list[tuple[list[tuple[Node, int]], bool]] = []
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
        kvs = [(Seq((key, t.layout.key(), t.member(p, depth + 1))), bits)
               for p, bits in found.versions(found.named(name), pointers)]
        members.append((kvs, name in c.required))
    if len(members) > MEMBER_RULES_FROM:
        where = c.objects[0].pointer if c.objects else "object"
        members = [([(t.rule(f"{where}-{name}-member" + (f"-{bits:x}" if bits else ""), kv),
                      bits) for kv, bits in kvs], required)
                   for (kvs, required), name in zip(members, allowed_names)]
    extra = _additional(t, c, names, order, depth, found)
    return _assemble(t, c, members, allowed_names, extra, depth, found.all)


def _additional(t: "Translation", c: "Constraints", names: _Names, listed: list[str],
                depth: int, found: _Witnesses) -> dict[int, Node]:
    """One additional member (key, separator, value) by the witness bits it finds: under 0
    any additional member (found or not), under bits h those whose name is in each of h's
    languages and whose value meets each of their schemas; empty if none is allowed."""
    excluded = list(dict.fromkeys([*listed, *c.forbidden]))
    alts: dict[int, list[Node]] = {}
    for matched, language in _regions(t, c, names):
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
        for among in product((False, True), repeat=len(found.names)):
            h = [j for j, on in enumerate(among) if on]
            region = intersect(language, *(found.names[j] for j in h), limits=t.limits) \
                if h else language
            if as_dfa(region, t.limits).is_empty_language:
                continue
            key = excluding(json_string(None if region is ANY_STRING else region,
                                        limits=t.limits), t.options.string_excludes, t.limits)
            if excluded:
                key = Automaton(without_names(as_dfa(key, t.limits), excluded, t.limits),
                                "JSON string")
                if key.dfa.is_empty_language:
                    continue
            value = [*pointers, *(found.values[j] for j in h if found.values[j] is not None)]
            bits = sum(found.bit(j) for j in h)
            alts.setdefault(bits, []).append(
                Seq((key, t.layout.key(), t.member(value, depth + 1))))
    return {bits: nodes[0] if len(nodes) == 1 else Choice(tuple(nodes))
            for bits, nodes in alts.items()}


def _regions(t: "Translation", c: "Constraints", names: _Names) -> list[tuple[set[str], Node]]:
    """The regions of additional names: (the patterns matched, the decoded names that match
    exactly those and that `propertyNames` allows), the empty ones left out; each pattern
    splits every region in two, so disjoint patterns make few regions. At most
    `MAX_PATTERN_REGIONS`."""
    regions: list[tuple[set[str], Node]] = [
        (set(), ANY_STRING if names.allowed is None else names.allowed)]
    for pattern, node in names.patterns.items():
        split: list[tuple[set[str], Node]] = []
        for matched, inside in regions:
            both = node if inside is ANY_STRING else intersect(inside, node, limits=t.limits)
            for m, language in ((matched | {pattern}, both),
                                (matched, difference(inside, node, limits=t.limits))):
                if not as_dfa(language, t.limits).is_empty_language:
                    split.append((m, language))
        if len(split) > MAX_PATTERN_REGIONS:
            raise GrammarError(f"{len(names.patterns)} patternProperties make more than "
                               f"{MAX_PATTERN_REGIONS} name regions",
                               pointer=c.objects[0].pointer, code="budget")
        regions = split
    return regions


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


def _assemble(t: "Translation", c: "Constraints",
              members: list[tuple[list[tuple[Node, int]], bool]], names: list[str],
              extras: dict[int, Node], depth: int, all_found: int) -> Node | None:
    """`{ members… additional… }` with commas between present members, exact counts, the
    presence rules and the witnesses (`members`: each member's versions with the witness bits
    they find; `extras`: the additional member by witness bits, `_additional`)."""
    lo, hi = c.min_properties, c.max_properties
    if hi is not None and hi < lo:
        return None
    extra = extras.get(0)
    if extra is not None:
        count_bound(t, c, lo, hi, "Properties")
    bits, presence_ok = _presence_check(c, names)
    if t.options.property_order == "any":
        low = MAX_PRESENCE_BITS  # witness j as bit j
        return unordered_object(t, c, [([(kv, h >> low) for kv, h in kvs], req)
                                       for kvs, req in members], names,
                                {h >> low: node for h, node in extras.items()}, depth, bits,
                                presence_ok, all_found >> low)
    counting = lo > sum(req for _, req in members) or hi is not None
    cap = max(lo, (hi + 1) if hi is not None else 0)
    sep = t.layout.item(depth)
    n = len(members)
    more = Seq((sep, extra)) if extra is not None else NOTHING
    repeats: dict[tuple[int, int | None], Node] = {}
    hitting = [(node, h) for h, node in extras.items() if h]

    def repeat(least: int, most: int | None) -> Node:
        if (least, most) not in repeats:
            repeats[least, most] = Repeat(more, least, most)
        return repeats[least, most]

    def bump(count: int) -> int:
        return min(count + 1, cap) if counting else 0

    def tail(count: int, nonempty: bool) -> Node:
        """The additional members, every witness found, after `count` members."""
        need = max(lo - count, 0) if counting else 0
        room = None if not counting or hi is None else hi - count
        if room is not None and room < need:
            return NOTHING
        if extra is None or room == 0:
            return NOTHING if need or nonempty else EMPTY
        if nonempty:
            return Seq((extra, repeat(max(need - 1, 0), None if room is None else room - 1)))
        return repeat(need, room)

    finding: dict[tuple[int, bool, int], Node] = {}

    def seek(got: int, nonempty: bool, count: int) -> Node:
        """The additional members once the listed ones are written, `got` the witnesses
        found: others, then one that finds more, until every witness is found."""
        if got & all_found == all_found:
            return tail(count, nonempty)
        key = (got & all_found, nonempty, count)
        if key in finding:
            return finding[key]
        room = None if not counting or hi is None else hi - count
        after = bump(count)
        alts = [Seq((node, rest)) for node, h in hitting if h & ~got
                and (rest := seek(got | h, False, after)) is not NOTHING]
        node: Node = NOTHING
        if alts and room != 0:
            hit = alts[0] if len(alts) == 1 else Choice(tuple(alts))
            lead = hit if nonempty else Seq((sep, hit))
            if extra is None:
                node = lead
            elif after == count:  # uncounted: any number of other members first
                loop = Repeat(Seq((sep, extra)), 0, None)
                node = Choice((hit, Seq((extra, loop, sep, hit)))) if nonempty else \
                    Seq((loop, sep, hit))
            else:
                other = seek(got, False, after)
                node = lead if other is NOTHING else Choice((
                    lead, Seq((extra, other)) if nonempty else Seq((sep, extra, other))))
        finding[key] = node
        return node

    def normal(i: int, count: int, nonempty: bool, present: int) -> tuple[bool, int, int, int]:
        return nonempty, i, min(count, cap) if counting else 0, present

    def after(i: int, count: int, present: int, found: int) -> tuple[int, int]:
        """(count, present) once member i is present, finding the witnesses `found`."""
        now = present | (1 << bits[i]) if i in bits else present
        return count + 1, now | found

    # chain[nonempty, i, count, present]: members i.. and the additional ones, after `count`
    # members (the `present` ones of those the presence rules mention, and the witnesses
    # found), `nonempty`: none yet. Built from the last member back, over the keys reachable
    # from the first.
    level = [{normal(0, 0, True, 0)}]
    for i in range(n):
        deadline.check()
        nxt: set[tuple[bool, int, int, int]] = set()
        for nonempty, _, count, present in level[i]:
            for _, found in members[i][0]:
                done, now = after(i, count, present, found)
                nxt.add(normal(i + 1, done, False, now))
            if not members[i][1]:
                nxt.add(normal(i + 1, count, nonempty, present))
        level.append(nxt)
    if counting and all_found:  # the counted chain of `seek`, from its far end (no deep recursion)
        for far in range(cap, -1, -1):
            for h in range(0, all_found + 1, 1 << MAX_PRESENCE_BITS):
                seek(h, False, far)
    chain: dict[tuple[bool, int, int, int], Node] = {}
    for nonempty, _, count, present in level[n]:
        chain[nonempty, n, count, present] = \
            seek(present, nonempty, count) if presence_ok(present) else NOTHING
    for i in range(n - 1, -1, -1):
        kvs, required = members[i]
        member: dict[tuple[int, int, int], Node] = {}
        for key in level[i]:
            nonempty, _, count, present = key
            alts: list[Node] = []
            for v, (kv, found) in enumerate(kvs):
                done, now = after(i, count, present, found)
                if (v, count, now) not in member:
                    # One object whether member i comes first or after others.
                    member[v, count, now] = Seq((kv, chain[normal(i + 1, done, False, now)]))
                alts.append(member[v, count, now] if nonempty else Seq((sep, member[v, count, now])))
            if not required:
                alts.append(chain[normal(i + 1, count, nonempty, present)])
            chain[key] = alts[0] if len(alts) == 1 else Choice(tuple(alts))
    body = chain[normal(0, 0, True, 0)]
    may_be_empty = not any(req for _, req in members) and lo == 0 and presence_ok(0) \
        and not all_found
    alts = []
    if may_be_empty:
        alts.append(Seq((Literal(b"{"), t.layout.empty(), Literal(b"}"))))
    alts.append(Seq((Literal(b"{"), t.layout.open(depth), body, t.layout.close(depth),
                     Literal(b"}"))))
    return alts[0] if len(alts) == 1 else Choice(tuple(alts))
