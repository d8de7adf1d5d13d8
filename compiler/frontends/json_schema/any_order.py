"""Objects whose members come in any order (`property_order="any"`), each listed one at most once.

The state of an object being written is the set S of listed members present so far (and, where
`minProperties`/`maxProperties` count them, how many members there are, up to the bound that
matters). From S the object goes on with a separator and a listed member not in S, or an
additional member (S unchanged), or ends when every required member is in S, the presence
rules hold for S, every witness (`Constraints.witnesses`, `objects.py`) was found by a member
(listed or additional; S also holds those found) and the count is allowed. That is exact: a key is never repeated, a required
one never missing, and every order of the allowed members is accepted.

It is also exponential: an object of k listed members has 2**k sets. They are made as a DAG of
nodes; past `INLINED_UP_TO` listed members each state is a rule of its own, with each member
and the additional member a rule too, so that the grammar's one automaton is over budget at
once and the pipeline keeps every rule as a rule, built as matchers reach them (an output
passes through at most k + 1 states; `grammask check` builds them all).
`Limits.max_unordered_properties` bounds k: past it, an error that names the bound.
Additional members are not checked against each other for repetition, as in schema order
(`objects.py`).
"""
from __future__ import annotations

from collections.abc import Callable

from ...ir.nodes import EMPTY, NOTHING, Choice, Literal, Node, Repeat, Seq
from ...support import deadline
from .conjunctions import Constraints
from .translation import Translation

INLINED_UP_TO = 3
"""Objects with at most this many listed members are one node DAG inlined into their rule
(at most 3! orders: a small automaton); larger ones keep a rule per state."""


def unordered_object(t: "Translation", c: "Constraints",
                     members: list[tuple[list[tuple[Node, int]], bool]], names: list[str],
                     extras: dict[int, Node], depth: int, bits: dict[int, int],
                     presence_ok: Callable[[int], bool], all_found: int) -> Node | None:
    """`{ … }` with the listed members in any order, each at most once, the additional ones
    anywhere between them, exact counts, the presence rules (`bits`: member index -> bit of
    the presence rules) and the witnesses (`objects._assemble`'s `members`, `extras` and
    `all_found`, with witness j as bit j)."""
    k = len(members)
    where = c.objects[0].pointer if c.objects else "/"
    if k > t.limits.max_unordered_properties:
        raise t.limits.exceeded("max_unordered_properties", k,
                                f"listed properties of the object at {where or '/'} in any "
                                f"order (one automaton state per subset of them)").located(
            pointer=where)
    lo, hi = c.min_properties, c.max_properties
    counting = lo > sum(req for _, req in members) or hi is not None
    cap = max(lo, (hi + 1) if hi is not None else 0)
    required = sum(1 << i for i, (_, req) in enumerate(members) if req)
    sep = t.layout.item(depth)
    ruled = k > INLINED_UP_TO
    if ruled:
        members = [([(t.rule(f"{where}-{name}-member" + (f"-{h:x}" if h else ""), kv), h)
                     for kv, h in kvs], req) for (kvs, req), name in zip(members, names)]
        extras = {h: t.rule(f"{where}-additional-member" + (f"-{h:x}" if h else ""), node)
                  for h, node in extras.items()}
    extra = extras.get(0)
    shift = k
    """Witness j is bit k + j of `seen`, above the listed members' bits."""
    found_all = all_found << shift
    hitting = [(node, h << shift) for h, node in extras.items() if h]

    def final(seen: int, count: int) -> bool:
        present = sum(1 << b for i, b in bits.items() if seen >> i & 1)
        return seen & required == required and presence_ok(present) and \
            seen & found_all == found_all and (not counting or lo <= count)

    def room(count: int) -> bool:
        return not counting or hi is None or count < hi

    def bump(count: int) -> int:
        return min(count + 1, cap) if counting else 0

    states: dict[tuple[int, int], Node] = {}

    def state(seen: int, count: int) -> Node:
        """After at least one member: the rest of the object, `seen` and `count` so far."""
        node = states.get((seen, count))
        if node is not None:
            return node
        deadline.check()
        after = bump(count)
        if extra is not None and after != count and (seen, after) not in states:
            for n in range(cap, count, -1):  # the chain of extra members, from its far end,
                state(seen, n)               # so that no recursion is as deep as the count
        alts: list[Node] = []
        if room(count):
            for i, (kvs, _) in enumerate(members):
                for kv, h in kvs:
                    if not seen >> i & 1 and (
                            rest := state(seen | 1 << i | h << shift, after)) is not NOTHING:
                        alts.append(Seq((sep, kv, rest)))
            if extra is not None and after != count and (
                    rest := state(seen, after)) is not NOTHING:
                alts.append(Seq((sep, extra, rest)))
            for node, h in hitting:
                if h & ~seen and (rest := state(seen | h, after)) is not NOTHING:
                    alts.append(Seq((sep, node, rest)))
        if final(seen, count):
            alts.append(EMPTY)
        body: Node = NOTHING if not alts else alts[0] if len(alts) == 1 else Choice(tuple(alts))
        if extra is not None and after == count and room(count) and body is not NOTHING:
            # Uncounted (or counted past `minProperties` with no maximum): any number more.
            body = Seq((Repeat(Seq((sep, extra)), 0, None), body))
        node = body
        if ruled and body is not NOTHING:
            node = t.rule(f"{where}-any-{seen:x}-{count}", body)
        states[seen, count] = node
        return node

    first: list[Node] = []
    if room(0):
        for i, (kvs, _) in enumerate(members):
            for kv, h in kvs:
                if (rest := state(1 << i | h << shift, bump(0))) is not NOTHING:
                    first.append(Seq((kv, rest)))
        if extra is not None and (rest := state(0, bump(0))) is not NOTHING:
            first.append(Seq((extra, rest)))
        for node, h in hitting:
            if (rest := state(h, bump(0))) is not NOTHING:
                first.append(Seq((node, rest)))
    alts: list[Node] = []
    if final(0, 0):
        alts.append(Seq((Literal(b"{"), t.layout.empty(), Literal(b"}"))))
    if first:
        body = first[0] if len(first) == 1 else Choice(tuple(first))
        alts.append(Seq((Literal(b"{"), t.layout.open(depth), body, t.layout.close(depth),
                         Literal(b"}"))))
    if not alts:
        return None
    return alts[0] if len(alts) == 1 else Choice(tuple(alts))
