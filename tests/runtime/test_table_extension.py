"""A lazily built table extended by appending (`assembly.assemble` with a prior table,
`arrays.RowArena`): the rows of every table handed out never change, an extension is checked
on the rows it appends, and a table whose prior is not its prefix is checked whole."""
from __future__ import annotations

import numpy as np
import pytest

from grammask.runtime.arrays import RowArena, is_immutable, same_prefix
from grammask.runtime.pushdown.assembly import RuleAutomaton, assemble, extended
from grammask.runtime.pushdown.table import PushdownTable

NAMES = ("r0", "r1", "r2", "r3")


def _rule(byte: str, callee: int | None) -> RuleAutomaton:
    """`byte`, then a call of `callee` (if any): states 0 -byte-> 1 (-call-> 2)."""
    bc = np.zeros(256, dtype=np.int32)
    bc[ord(byte)] = 1
    if callee is None:
        return RuleAutomaton(np.array([[-1, 1], [-1, -1]], dtype=np.int32), bc,
                             np.array([False, True]), np.zeros(0, dtype=np.int32))
    return RuleAutomaton(np.array([[-1, 1, -1], [-1, -1, 2], [-1, -1, -1]], dtype=np.int32), bc,
                         np.array([False, False, True]), np.array([callee], dtype=np.int32))


class _Source:
    """Rule r reads "aaad"[r] and calls rule r + 1 (the last none)."""

    def build(self, rule: int, ahead: bool = False) -> RuleAutomaton:
        return _rule("aaad"[rule], rule + 1 if rule + 1 < len(NAMES) else None)

    def byte_partition(self) -> np.ndarray | None:
        return None


def _first() -> PushdownTable:
    r = len(NAMES)
    # Each rule is called last by the one before: nothing follows any, each may end the text.
    facts = (np.zeros(r, dtype=bool), np.zeros((r, 256), dtype=bool), np.ones(r, dtype=bool))
    return assemble({0: _Source().build(0)}, NAMES, 0, facts, _Source())


def _arrays(t: PushdownTable) -> dict[str, object]:
    """Writable copies of `t`'s constructor arguments (its facts and source as they are)."""
    return dict(byte_class=np.array(t.byte_class), transitions=np.array(t.transitions),
                accepting=np.array(t.accepting), call_offsets=np.array(t.call_offsets),
                call_rule=np.array(t.call_rule), call_next=np.array(t.call_next),
                state_rule=np.array(t.state_rule), rule_start=np.array(t.rule_start),
                start_rule=t.start_rule, rule_names=t.rule_names,
                rule_tokens=np.array(t.rule_tokens), relax=np.array(t.relax),
                nullable=t.nullable, follow=t.follow, can_end=t.can_end, source=t.source)


def test_extensions_append_and_never_change_rows_handed_out() -> None:
    t0 = _first()
    t1 = extended(t0, 1)  # a new arena: t0's rows copied once
    t2 = extended(t1, 2)  # appended in t1's arena
    assert RowArena.of(t2.transitions) is RowArena.of(t1.transitions) is not None
    before = np.array(t2.transitions)
    other = extended(t1, 2)  # t1 extended again: its arena's rows past t1 are t2's, so a copy
    assert RowArena.of(other.transitions) is not RowArena.of(t1.transitions)
    t3 = extended(t2, 3)  # "d" refines the byte classes: every row gathered again
    assert t3.complete and t3.source is None and t3.n_classes == t2.n_classes + 1
    assert np.array_equal(t2.transitions, before) and np.array_equal(other.transitions, before)
    for t in (t1, t2, other):
        assert same_prefix(t.transitions, t0.transitions)
    for t in (t1, t2, t3, other):
        for name in ("transitions", "accepting", "state_rule", "relax", "call_offsets",
                     "call_rule", "call_next"):
            a = getattr(t, name)
            assert is_immutable(a)
            with pytest.raises(ValueError):
                a.setflags(write=True)
    assert np.array_equal(t3.rule_start, [0, 3, 6, 9]) and t3.n_states == 11


def test_an_extension_is_checked_on_the_rows_it_appends() -> None:
    t0 = _first()
    good = _arrays(extended(t0, 1))
    PushdownTable(**good, prior=t0)
    into_prior = np.array(good["transitions"])
    into_prior[3, 1] = 0  # rule r1's start moves into r0's start
    with pytest.raises(ValueError, match="lie in"):
        PushdownTable(**{**good, "transitions": into_prior}, prior=t0)
    dead = np.array(good["accepting"])
    dead[5] = False  # r1 cannot finish
    with pytest.raises(ValueError, match="trimmed"):
        PushdownTable(**{**good, "accepting": dead}, prior=t0)
    wrong_rule = np.array(good["state_rule"])
    wrong_rule[4] = 0  # an appended state said to be r0's, a rule the prior built
    with pytest.raises(ValueError):
        PushdownTable(**{**good, "state_rule": wrong_rule}, prior=t0)


def test_a_table_whose_prior_is_not_its_prefix_is_checked_whole() -> None:
    t0 = _first()
    good = _arrays(extended(t0, 1))
    changed = np.array(good["transitions"])
    changed[0, good["byte_class"][ord("a")]] = -1  # r0's start no longer reads "a"
    with pytest.raises(ValueError, match="trimmed"):
        PushdownTable(**{**good, "transitions": changed}, prior=t0)
    unrelated = _first()  # an equal table, not the same one: compared, then the rows checked
    assert PushdownTable(**good, prior=unrelated).n_states == 6
