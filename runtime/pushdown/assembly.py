"""Rule automata → one `PushdownTable`: all at once, or as the recognizer reaches them.

The compiler builds each kept rule's automaton on its own (`RuleAutomaton`: columns over the
rule's own byte classes, then one per rule it calls). `assemble` numbers the states of the
built rules one rule after another and maps each rule's columns onto the coarsest byte
partition that refines them all (two bytes share a class when every built rule's classes put
them together), so the table has no two equal columns.

Lazily: the compiler assembles the rules it built (the start rule at least) with the
`RuleSource` that builds the others and the grammar-level facts (nullable, follow, can_end),
which a table cannot derive from part of its rules. A step that predicts a rule not built
stops with `RuleNeeded` (`earley.py`), and `extended` returns the table with that rule and,
breadth-first from it and from the unbuilt rules the table calls already, the next rules a
step may reach, while the states added stay under half of the table's (fewer, larger
extensions: each restarts the walk that needed it). A rule built ahead of need that fails
(over a budget) is left out, and ends the extension: its error comes when a step needs it.
Rules built ahead of need count in the budget like the others, so a grammar whose rules
together pass `max_pushdown_states` may meet it sooner than its walks alone would, and near
that bound extensions add one needed rule at a time. A rule with a token bound
(`rule_tokens`) is placed followed by its relaxed copy (`PushdownTable.relax`, `_relaxed`).
The table's state numbers never change (rules are appended): an extension writes the rows of
its new rules after the prior table's, in the same buffers (`arrays.RowArena`, whose prefixes
never change), and the new table checks only those rows (`PushdownTable._extends`), so an
extension costs its new rules, not the table.
Its byte classes may be refined, which re-maps the columns of the rules already in it, a
gather of the whole table. So an extension that refines a large table also refines it by the
source's partition (`RuleSource.byte_partition`: bytes no rule of the grammar tells apart),
once (`PARTITION_FROM_STATES`): the rules built later fit its classes.
Callers serialize extensions of one table (`PushdownTokenSets.need`).
"""
from __future__ import annotations

import collections
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..arrays import RowArena
from .table import PushdownTable, RuleSource


@dataclass(frozen=True, eq=False)
class RuleAutomaton:
    """One rule's automaton: state 0 starts it; `transitions` int32[m, k + c] has a column per
    byte class of its own (`byte_class` int32[256] in [0, k)) and then one per rule it calls
    (`called` int32[c], rule numbers), -1 for no move; `accepting` bool[m]. Checked at
    construction: types, shapes and indices, what placing it in a table relies on; the table
    it is assembled into checks the rest (trimmed, `PushdownTable`)."""

    transitions: np.ndarray
    byte_class: np.ndarray
    accepting: np.ndarray
    called: np.ndarray

    def __post_init__(self) -> None:
        for name, dtype, ndim in (("transitions", np.int32, 2), ("byte_class", np.int32, 1),
                                  ("accepting", np.bool_, 1), ("called", np.int32, 1)):
            a = getattr(self, name)
            if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != ndim:
                raise TypeError(f"{name} must be a {ndim}-D numpy array of {np.dtype(dtype)}")
        tr, bc = self.transitions, self.byte_class
        m = tr.shape[0]
        if bc.shape != (256,) or int(bc.min()) < 0:
            raise ValueError("byte_class must be int32[256] with values >= 0")
        own = int(bc.max()) + 1
        if m < 1 or tr.shape[1] != own + len(self.called) or self.accepting.shape != (m,):
            raise ValueError(f"transitions must be [m >= 1, {own} + {len(self.called)}] and "
                             f"accepting [m], got {tr.shape} and {self.accepting.shape}")
        if int(tr.min()) < -1 or int(tr.max()) >= m:
            raise ValueError(f"transitions must lie in [-1, {m})")

    @property
    def n_states(self) -> int:
        return int(self.transitions.shape[0])

    @property
    def n_own_classes(self) -> int:
        return int(self.byte_class.max()) + 1


Facts = tuple[np.ndarray, np.ndarray, np.ndarray]
"""(nullable bool[R], follow bool[R, 256], can_end bool[R]) of a grammar's rules."""


def refined_partition(partitions: list[np.ndarray]) -> np.ndarray:
    """int32[256]: the coarsest partition refining every one of `partitions`, numbered in
    order of each class's first byte."""
    key = np.zeros(256, dtype=np.int64)
    for p in partitions:
        key = key * (int(p.max()) + 1) + p
        if len(partitions) > 2:
            key = np.unique(key, return_inverse=True)[1].reshape(-1)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int32)
    rank[np.argsort(first)] = np.arange(len(first), dtype=np.int32)
    return rank[inverse.reshape(-1)]


PARTITION_FROM_STATES = 8192
"""An extension that refines the byte classes of a table of at least this many states also
refines them by the source's partition (`RuleSource.byte_partition`), so that the extensions
after it append rows only. Below, re-gathering the table costs about a millisecond, less
than reading the partition from a large grammar's IR (a few milliseconds, paid once)."""


def _partition(source: RuleSource | None) -> np.ndarray | None:
    """The source's byte partition (`RuleSource.byte_partition`), checked, or None."""
    p = None if source is None else source.byte_partition()
    if p is None:
        return None
    if not isinstance(p, np.ndarray) or p.shape != (256,) or p.dtype.kind not in "iu" \
            or int(p.min()) < 0:
        raise ValueError("a rule source's byte partition must be an integer array[256] >= 0")
    return p


def _relaxed(a: RuleAutomaton) -> RuleAutomaton:
    """`a` (which calls no rule) followed by its relaxed copy (`PushdownTable.relax`): state
    i + m moves as state i does, to copies, and not at all where accepting."""
    if len(a.called):
        raise ValueError("a rule with a token bound must call no rule")
    tr, m = a.transitions, a.n_states
    copy = np.where(a.accepting[:, None] | (tr < 0), -1, tr + m).astype(np.int32)
    return RuleAutomaton(np.concatenate([tr, copy]), a.byte_class,
                         np.concatenate([a.accepting, a.accepting]), a.called)


def assemble(automata: Mapping[int, RuleAutomaton], rule_names: tuple[str, ...],
             start_rule: int, facts: Facts | None = None, source: RuleSource | None = None,
             prior: PushdownTable | None = None,
             rule_tokens: np.ndarray | None = None) -> PushdownTable:
    """The table of `prior`'s rules (if given) and `automata` (rule number → automaton, in
    the order their states are numbered); rules in neither are not built, and then `facts`
    and `source` are needed (`PushdownTable`). A rule with a token bound in `rule_tokens`
    (int32 per rule, -1: none; `prior`'s when given) is placed with its relaxed copy."""
    names = rule_names
    n_rules = len(names)
    if prior is not None:
        rule_tokens = prior.rule_tokens
    tokens = (np.full(n_rules, -1, np.int32) if rule_tokens is None
              else np.asarray(rule_tokens, dtype=np.int32))
    if tokens.shape != (n_rules,):
        raise ValueError(f"rule_tokens must have shape ({n_rules},)")
    automata = {r: _relaxed(a) if tokens[r] >= 0 else a for r, a in automata.items()}
    for r, a in automata.items():
        if not 0 <= r < n_rules or (prior is not None and prior.rule_start[r] >= 0):
            raise ValueError(f"rule {r} is out of range or already built")
        if len(a.called) and (int(a.called.min()) < 0 or int(a.called.max()) >= n_rules):
            raise ValueError(f"rule {r} calls a rule out of range")
    parts = [a.byte_class for a in automata.values()]
    if prior is not None:
        parts.append(prior.byte_class)
    classes = refined_partition(parts)
    if prior is not None and prior.n_states >= PARTITION_FROM_STATES and \
            not np.array_equal(classes, prior.byte_class):
        hint = _partition(source or prior.source)
        if hint is not None:
            classes = refined_partition([classes, hint])
    n_classes = int(classes.max()) + 1
    first_byte = np.zeros(n_classes, dtype=np.int64)
    first_byte[classes[::-1]] = np.arange(255, -1, -1)
    base = 0 if prior is None else prior.n_states
    total = base + sum(a.n_states for a in automata.values())
    # With the byte classes unchanged, the prior rows are kept as they are and the new ones
    # appended after them (`RowArena`: each array written past the prior's rows only, and the
    # table checks only the rows it adds, `PushdownTable`); else every row is gathered again.
    appending = prior is not None and prior.n_classes == n_classes
    transitions = np.empty((total - base if appending else total, n_classes), dtype=np.int32)
    offset = base if appending else 0
    rule_start = np.full(n_rules, -1, dtype=np.int32)
    accepting, state_rule, sources, callees, targets, relax = [], [], [], [], [], []
    if prior is not None:
        rule_start[:] = prior.rule_start
        if not appending:
            transitions[:base] = prior.transitions[:, prior.byte_class[first_byte]]
            relax.append(prior.relax)
            accepting.append(prior.accepting)
            state_rule.append(prior.state_rule)
            sources.append(np.repeat(np.arange(base, dtype=np.int32),
                                     np.diff(prior.call_offsets)))
            callees.append(prior.call_rule)
            targets.append(prior.call_next)
    for r, a in automata.items():
        m, own = a.n_states, a.n_own_classes
        block = transitions[base - offset:base - offset + m]
        block[...] = a.transitions[:, a.byte_class[first_byte]]
        np.add(block, base, out=block, where=block >= 0)
        accepting.append(a.accepting)
        state_rule.append(np.full(m, r, dtype=np.int32))
        own_relax = np.full(m, -1, dtype=np.int32)
        if tokens[r] >= 0:
            own_relax[:m // 2] = np.arange(base + m // 2, base + m, dtype=np.int32)
        relax.append(own_relax)
        calls = a.transitions[:, own:]
        s, j = np.nonzero(calls >= 0)
        sources.append(s + base)
        callees.append(a.called[j])
        targets.append(calls[s, j] + base)
        rule_start[r] = base
        base += m
    counts = np.bincount(_joined(sources, np.int32) - offset, minlength=base - offset)
    call_offsets = np.cumsum(counts, dtype=np.int32)
    arrays = dict(transitions=transitions, accepting=_joined(accepting, np.bool_),
                  state_rule=_joined(state_rule, np.int32), relax=_joined(relax, np.int32),
                  call_rule=_joined(callees, np.int32), call_next=_joined(targets, np.int32))
    if appending:
        assert prior is not None
        arrays = {name: RowArena.appended(getattr(prior, name), a) for name, a in arrays.items()}
        call_offsets = RowArena.appended(prior.call_offsets, call_offsets + prior.call_offsets[-1])
    else:
        call_offsets = np.concatenate([np.zeros(1, dtype=np.int32), call_offsets])
    if prior is not None:
        facts = facts or (prior.nullable, prior.follow, prior.can_end)
        source = source or prior.source
    complete = bool((rule_start >= 0).all())
    return PushdownTable(
        byte_class=classes, call_offsets=call_offsets, rule_start=rule_start,
        start_rule=start_rule, rule_names=names, rule_tokens=tokens,
        nullable=None if facts is None else facts[0],
        follow=None if facts is None else facts[1],
        can_end=None if facts is None else facts[2],
        source=None if complete else source, prior=prior if appending else None, **arrays)


def _joined(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)


EXTENSION_SHARE = 0.5
"""`extended` adds unbuilt callees of the needed rule while the states it adds stay under
this share of the table's states."""


def extended(table: PushdownTable, rule: int) -> PushdownTable:
    """`table` with rule `rule` built, then, breadth-first from it and from the unbuilt rules
    the table calls, more rules while the added states stay under `EXTENSION_SHARE` of the
    table's (module docstring)."""
    source = table.source
    if source is None or table.rule_start[rule] >= 0:
        raise ValueError(f"rule {rule} is already built or the table has no source")
    batch: dict[int, RuleAutomaton] = {}
    called = table.call_rule[table.rule_start[table.call_rule] < 0]
    queue = collections.deque([rule, *np.unique(called).tolist()])
    added = 0
    while queue:
        r = queue.popleft()
        if table.rule_start[r] >= 0 or r in batch:
            continue
        if batch:
            try:
                a = _built(source, r, ahead=True)
            except Exception:  # noqa: BLE001 - a rule built ahead of need fails when needed
                break  # over a budget: the next would be too, most likely
        else:
            a = _built(source, r)
        batch[r] = a
        added += a.n_states
        if added >= EXTENSION_SHARE * table.n_states:
            break
        queue.extend(int(c) for c in a.called)
    return assemble(batch, table.rule_names, table.start_rule, prior=table)


def complete(table: PushdownTable) -> PushdownTable:
    """`table` with every rule built (itself when it is)."""
    source = table.source
    if source is None:
        return table
    missing = np.flatnonzero(table.rule_start < 0).tolist()
    return assemble({r: _built(source, r) for r in missing}, table.rule_names,
                    table.start_rule, prior=table)


def _built(source: RuleSource, rule: int, ahead: bool = False) -> RuleAutomaton:
    a = source.build(rule, ahead)
    if not isinstance(a, RuleAutomaton):
        raise TypeError(f"a rule source must build a RuleAutomaton, got {type(a).__name__}")
    return a
