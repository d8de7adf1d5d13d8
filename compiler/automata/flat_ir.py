"""The IR as flat arrays (`FlatIR`), the input of the Thompson kernel (`thompson.py`).

`flatten` numbers the distinct node objects of an expression DAG breadth-first from the root
(node 0) and lays them out as arrays: per node its kind, its children, its arguments; the
bytes of literals; the edges of character classes (their UTF-8 byte tries, `class_edges`) and
of automata (`automaton_edges`), both cached. A reference to a rule of `inline` stands for
that rule's body, so a body with inlined rules is flattened without building it; other
references are calls (CALL + r). `separated_lists` finds where a sequence holds X (S X)*, which
the kernel builds with one copy of X. Flattening checks `Limits.max_repeat`, rejects
references outside `calls`, and checks the compile deadline every 4096 nodes. `FlatIR.key`
identifies what the kernel would build, for caches that outlive one compile.
"""
from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from numba.types import int32

from ...runtime.dfa.table import DFATable
from ...runtime.jit import R, kernel
from ..ir.nodes import (
    Automaton,
    CharClass,
    Choice,
    Literal,
    Node,
    Repeat,
    RuleRef,
    Seq,
    TokenRef,
    children,
)
from ..ir.utf8 import utf8_sequences
from ..support import deadline
from ..support.caches import memo
from ..support.errors import GrammarError
from ..support.limits import Limits

CALL = 256
"""Edge symbols from CALL up are rule calls: CALL + r calls rule r."""

SEQ, CHOICE, REPEAT, LITERAL, CLASS, AUTOMATON, REF = range(7)
_COMPOSITE = np.array([k in (SEQ, CHOICE, REPEAT, AUTOMATON) for k in range(7)])
NO_INLINE: Mapping[str, Node] = MappingProxyType({})
"""No inlined rules: every reference is a call (or an error)."""


@memo(maxsize=1024)
def class_edges(ranges: tuple[tuple[int, int], ...]) -> tuple[int, np.ndarray]:
    """(inner states, edges int64[m, 4] (from, lo, hi, to)) of a character class's byte trie,
    in local numbering: 0 entry, 1 exit, 2.. inner."""
    if ranges and ranges[-1][1] < 0x80:
        return 0, np.array([(0, lo, hi, 1) for lo, hi in ranges], dtype=np.int64)
    prefix_state: dict[tuple[tuple[int, int], ...], int] = {}
    edges: list[tuple[int, int, int, int]] = []
    for lo, hi in ranges:
        for seq in utf8_sequences(lo, hi):
            cur = 0
            for i, (blo, bhi) in enumerate(seq):
                if i == len(seq) - 1:
                    edges.append((cur, blo, bhi, 1))
                    break
                key = seq[: i + 1]
                nxt = prefix_state.get(key)
                if nxt is None:
                    nxt = 2 + len(prefix_state)
                    prefix_state[key] = nxt
                    edges.append((cur, blo, bhi, nxt))
                cur = nxt
    return len(prefix_state), np.array(edges, dtype=np.int64).reshape(-1, 4)


@memo(maxsize=256)
def automaton_edges(dfa: DFATable) -> tuple[np.ndarray, np.ndarray]:
    """(edges int64[m, 4] (from, lo, hi, to) over runs of equal class, accepting states) of
    `dfa`."""
    return _run_edges(dfa.byte_class, dfa.transitions), np.flatnonzero(dfa.accepting)


@kernel(R(int32), R(int32, 2), tiered=True)
def _run_edges(byte_class, transitions):  # type: ignore[no-untyped-def]
    """The moves of `transitions` per run of bytes of one class, state by state."""
    lo = np.empty(256, dtype=np.int64)
    hi = np.empty(256, dtype=np.int64)
    runs = 0
    for b in range(256):
        if b == 0 or byte_class[b] != byte_class[b - 1]:
            lo[runs] = b
            runs += 1
        hi[runs - 1] = b
    n = transitions.shape[0]
    m = 0
    for s in range(n):
        for r in range(runs):
            if transitions[s, byte_class[lo[r]]] >= 0:
                m += 1
    edges = np.empty((m, 4), dtype=np.int64)
    m = 0
    for s in range(n):
        for r in range(runs):
            t = transitions[s, byte_class[lo[r]]]
            if t >= 0:
                edges[m, 0], edges[m, 1], edges[m, 2], edges[m, 3] = s, lo[r], hi[r], t
                m += 1
    return edges


def _same(a: Node, b: Node) -> bool:
    """Whether two nodes are one sub-expression: the same object, or equal leaves."""
    return a is b or (type(a) is type(b) and type(a) in (Literal, CharClass, RuleRef) and a == b)


def _kids(node: Node, inline: Mapping[str, Node]) -> tuple[Node, ...]:
    """The children of `node`, each reference to a rule of `inline` replaced by its body."""
    kids = children(node)
    if inline and RuleRef in map(type, kids):
        return tuple(_inlined(k, inline) for k in kids)
    return kids


def _inlined(node: Node, inline: Mapping[str, Node]) -> Node:
    """`node`, or the body it stands for when it refers to a rule of `inline`."""
    steps = 0
    while type(node) is RuleRef and node.name in inline:  # type: ignore[union-attr]
        node = inline[node.name]  # type: ignore[union-attr]
        steps += 1
        if steps > len(inline):
            raise GrammarError("inlined rules refer to each other in a cycle")
    return node


def separated_lists(items: tuple[Node, ...],
                    inline: Mapping[str, Node] = NO_INLINE) -> list[tuple[int, int]]:
    """The places (j, k) where items[j - k:j] are the last k items of the body of
    items[j] = (S X)* (unbounded, may be absent), k as large as possible."""
    found: list[tuple[int, int]] = []
    taken = 0
    for j in range(1, len(items)):
        node = items[j]
        if type(node) is not Repeat or node.min != 0 or node.max is not None:
            continue
        item = _inlined(node.item, inline)
        loop = _kids(item, inline) if type(item) is Seq else (item,)
        k = 0
        while (k < min(len(loop), j - taken) and
               _same(items[j - k - 1], loop[len(loop) - k - 1])):
            k += 1
        if k:
            found.append((j, k))
            taken = j + 1
    return found


@dataclass(frozen=True, eq=False)
class FlatIR:
    """An expression DAG as arrays; node 0 is the root. Per node: `kind`, children
    `kids[kid_off[i]:kid_off[i + 1]]`, and `arg` (LITERAL: offset into `data` and length;
    CLASS: (inner states, offset into `edges`, edge count); AUTOMATON: (states, start, offset
    into `edges`, edge count, offset into `accepting`, count); REPEAT: (min, max or -1,
    split k or 0); REF: symbol). `shared` marks composite nodes with several parents;
    `lists[list_off[i]:list_off[i + 1]]` are a sequence's separated lists (j, k); `called`
    names the rules of the call symbols CALL + 0, CALL + 1, ...; `leaves` are the character
    classes' ranges and the automata's DFAs, in node order."""

    kind: np.ndarray
    kid_off: np.ndarray
    kids: np.ndarray
    arg: np.ndarray
    shared: np.ndarray
    list_off: np.ndarray
    lists: np.ndarray
    data: np.ndarray
    edges: np.ndarray
    accepting: np.ndarray
    called: tuple[str, ...]
    leaves: tuple[object, ...]

    def key(self) -> tuple[object, ...]:
        """A cache key for what `thompson` builds: a BLAKE2b digest of the arrays, with the
        leaves (DFAs compared by identity) and the called rules."""
        digest = hashlib.blake2b(digest_size=32)
        for a in (self.kind, self.kid_off, self.kids, self.arg, self.list_off, self.lists,
                  self.data):
            digest.update(a.tobytes())
        return digest.digest(), self.leaves, self.called


def flatten(root: Node, limits: Limits, calls: dict[str, int] | None,
            inline: Mapping[str, Node] = NO_INLINE) -> FlatIR:
    """The arrays of `root` for `thompson`; GrammarError for a reference outside `calls`,
    BudgetExceeded for a repetition bound above `Limits.max_repeat`. With `calls` None, every
    referenced rule is called, numbered in name order (`FlatIR.called`). A reference to a
    rule of `inline` stands for that rule's body (shared, not copied): the rules of `inline`
    must not reach themselves through `inline`."""
    root = _inlined(root, inline)
    index: dict[int, int] = {id(root): 0}
    nodes: list[Node] = [root]
    kind_of: list[int] = []
    kid_list: list[int] = []
    # Per kind, the nodes and what their `arg` rows hold; the rows are written at the end,
    # so a node costs one append to `kind_of` and one or two to its kind's lists.
    composite: list[int] = []
    kid_end: list[int] = []
    lit_at: list[int] = []
    pieces: list[bytes] = []
    rep_at: list[int] = []
    rep_arg: list[tuple[int, int]] = []
    leaf_at: list[int] = []
    leaf_arg: list[tuple[int, int, int, int, int, int]] = []
    refs: list[tuple[int, str]] = []
    list_at: list[int] = []
    list_end: list[int] = []
    list_pairs: list[tuple[int, int]] = []
    splits: dict[int, int] = {}
    blocks: list[np.ndarray] = []
    accepting_blocks: list[np.ndarray] = []
    leaves: list[object] = []
    n_edges = n_accepting = 0
    push_node, push_kid, lookup = nodes.append, kid_list.append, index.get
    push_kind = kind_of.append
    # `nodes` grows while it is walked: each composite node appends its new children (taken
    # here rather than by `_kids`, whose call per node was a third of the walk).
    for i, n in enumerate(nodes):
        if not i & 4095:
            deadline.check()
        kind = type(n)
        if kind is Literal:
            push_kind(LITERAL)
            lit_at.append(i)
            pieces.append(n.data)  # type: ignore[union-attr]
        elif kind is Seq or kind is Choice or kind is Repeat:
            kids = _kids(n, inline)
            for k in kids:
                j = lookup(id(k))
                if j is None:
                    j = index[id(k)] = len(nodes)
                    push_node(k)
                push_kid(j)
            composite.append(i)
            kid_end.append(len(kid_list))
            if kind is Seq:
                push_kind(SEQ)
                if Repeat in map(type, kids):
                    before = len(list_pairs)
                    for j, k in separated_lists(kids, inline):
                        loop = index[id(kids[j])]
                        if splits.setdefault(loop, k) == k:
                            list_pairs.append((j, k))
                    if len(list_pairs) > before:
                        list_at.append(i)
                        list_end.append(len(list_pairs))
            elif kind is Choice:
                push_kind(CHOICE)
            else:
                lo, hi = n.min, n.max  # type: ignore[union-attr]
                if lo > limits.max_repeat or (hi or 0) > limits.max_repeat:
                    raise limits.exceeded("max_repeat", max(lo, hi or 0), "repetition count")
                push_kind(REPEAT)
                rep_at.append(i)
                rep_arg.append((lo, -1 if hi is None else hi))
        elif kind is CharClass:
            inner, edges = class_edges(n.ranges)  # type: ignore[union-attr]
            leaves.append(n.ranges)  # type: ignore[union-attr]
            push_kind(CLASS)
            leaf_at.append(i)
            leaf_arg.append((inner, n_edges, len(edges), 0, 0, 0))
            blocks.append(edges)
            n_edges += len(edges)
        elif kind is Automaton:
            dfa = n.dfa  # type: ignore[union-attr]
            edges, acc = automaton_edges(dfa)
            leaves.append(dfa)
            push_kind(AUTOMATON)
            leaf_at.append(i)
            leaf_arg.append((dfa.n_states, dfa.start, n_edges, len(edges), n_accepting, len(acc)))
            blocks.append(edges)
            accepting_blocks.append(acc)
            n_edges += len(edges)
            n_accepting += len(acc)
        elif kind is RuleRef and (calls is None or n.name in calls):  # type: ignore[union-attr]
            push_kind(REF)
            refs.append((i, n.name))  # type: ignore[union-attr]
        elif kind is TokenRef:
            raise GrammarError("a token reference names tokens of a vocabulary: compile the "
                               "grammar with compile_grammar, which resolves it against one",
                               code="token-reference")
        else:
            raise GrammarError(f"cannot lower IR node {kind.__name__} to an NFA")
    size = len(nodes)
    args = np.zeros((size, 6), dtype=np.int64)
    lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    at = np.array(lit_at, dtype=np.int64)
    args[at, 1] = lengths
    args[at, 0] = np.cumsum(lengths) - lengths
    if rep_at:
        args[rep_at, :2] = rep_arg
    if leaf_at:
        args[leaf_at] = leaf_arg
    for loop, k in splits.items():
        args[loop, 2] = k
    if calls is None:
        called = tuple(sorted({name for _, name in refs}))
        symbol = {name: CALL + r for r, name in enumerate(called)}
    else:
        called, symbol = tuple(calls), {name: CALL + r for name, r in calls.items()}
    for at_ref, name in refs:
        args[at_ref, 0] = symbol[name]
    kinds = np.array(kind_of, dtype=np.int64)
    kid_array = np.array(kid_list, dtype=np.int64)
    return FlatIR(
        kind=kinds, kid_off=_offsets(size, composite, kid_end), kids=kid_array, arg=args,
        shared=_COMPOSITE[kinds] & (np.bincount(kid_array, minlength=size) > 1),
        list_off=_offsets(size, list_at, list_end),
        lists=np.array(list_pairs, dtype=np.int64).reshape(-1, 2),
        data=np.frombuffer(b"".join(pieces), dtype=np.uint8),
        edges=np.concatenate(blocks) if blocks else np.zeros((0, 4), np.int64),
        accepting=(np.concatenate(accepting_blocks) if accepting_blocks
                   else np.zeros(0, np.int64)),
        called=called, leaves=tuple(leaves))


def _offsets(size: int, at: list[int], ends: list[int]) -> np.ndarray:
    """int64[size + 1] offsets: node at[j] ends at ends[j] (both ascending), every other node
    where the one before it ends."""
    out = np.zeros(size + 1, dtype=np.int64)
    if at:
        out[np.array(at, dtype=np.int64) + 1] = ends
        np.maximum.accumulate(out, out=out)
    return out
