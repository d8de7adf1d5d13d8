"""An Earley recognizer over the rule automata of a `PushdownTable`, one byte at a time.

Items are (automaton state, origin set). Set k holds the items alive after k bytes: scanning a
byte moves items along byte transitions; the closure then predicts called rules (and, for
nullable rules, also steps over the call at once, after Aycock and Horspool) and completes
items that reached an accepting state by advancing the callers waiting in their origin set. An
item whose origin is -1 is a root: completing it marks the set as `popped` (for the start rule,
the text may end here; for a token-set walk from one state, the walk left that state's rule).
A completion that heads a chain of tail calls (right recursion through several rules) adds
only the chain's top, after Leo (`leo.py`): such recursion costs each byte a constant, not one
completion per level.

State lives in `EarleyArrays` and is only ever appended to or truncated: pushing a byte builds
one more set after the last, popping drops sets, so rollback and the depth-first token-trie
walks cost nothing beyond the sets they build. A push that would overflow the arrays changes
nothing and reports OVERFLOW; the caller grows the arrays and pushes again. The same OVERFLOW
stops a step whose Earley operations (items added or found, callers looked at while
completing) pass the bound in the counters; the caller tells the two apart by the counts.
`EarleyArrays.run` is that caller's loop, the one every user of the recognizer goes through: it
grows the arrays within a `RuntimeLimits` (or raises `MatcherBudgetExceeded`) and runs the
kernel again, so a kernel never checks a limit beyond its counters.

Kernel argument groups (tuples, unpacked inside): `g` = (transitions, byte_class, accepting,
call_offsets, call_rule, call_next, state_rule, rule_start, nullable) of a validated
`PushdownTable`; `e` = (items, sets, per_state, counters) of an `EarleyArrays`. Indices into
`g` come from the table itself or from a start state in range, so its invariants bound them;
indices into `e` are checked against its capacity before every write (OVERFLOW), and the
number of sets is only ever set to one the recognizer built (>= 1 after a start).

Token bounds (`PushdownTable.rule_tokens`): the third column of `sets` is, per set k, the index
of the first token that begins at or after byte k (1 + the index of the token whose byte made
set k; 0 for set 0), and counters[TOKEN] the index of the token whose bytes are being scanned
(a text step's bytes count as part of the token before them, so they begin no token); both are
kept only for a table with bounds (`relax` not empty). An item (s, o) of a bounded rule whose
occurrence has begun its bound of tokens, TOKEN - sets[o, 2] >= bound, scans as its relaxed
copy `relax[s]` (`live_state`): the occurrence ends at the first place it can. That is constant
across one token's bytes, so rows classified from a root item (which never expires) hold for
every item that has not expired, and a fill reads an expired item's row from its copy. The
closure never looks at it (bounded rules call no rule).

A table may not have built every rule yet (`rule_start` -1, see `assembly.py`): predicting
such a rule stops the step like an OVERFLOW, changing nothing, with the rule in the counters
(NEEDED); `EarleyArrays.run` raises `RuleNeeded` for it, and the caller extends the table (one
place per caller: `PushdownTokenSets.need`) and runs the step again on the extended one.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numba.types import Tuple, boolean, int32, int64, uint8

from ..jit import A, R, kernel
from ..run_limits import RuntimeLimits
from .counters import GEN, N_ITEMS, N_SETS, NEEDED, SCANNED, TOKEN, UNBOUNDED, WORK, WORK_LIMIT
from .leo import completion

OVERFLOW = -1

class RuleNeeded(Exception):
    """A step predicted `rule`, which the table has not built yet; nothing changed."""

    def __init__(self, rule: int) -> None:
        super().__init__(f"rule {rule} is not built")
        self.rule = rule


@dataclass
class EarleyArrays:
    """Mutable recognizer state: items int32[cap, 3] (state, origin, next item with the same
    state in its set), sets int32[set_cap, 3] (first item, popped flag, first token at or
    after it; one extra row ends the last set), per_state int64[n_states, 3] (dedup stamp,
    head item, fill mark), counters."""

    items: np.ndarray
    sets: np.ndarray
    per_state: np.ndarray
    counters: np.ndarray
    header: np.ndarray = field(init=False, repr=False)

    relocations: ClassVar[int] = 0
    """Bumped whenever any recognizer's arrays move (`grow`, `cover`): a batch plan made
    from headers is still good while this is unchanged."""

    def __post_init__(self) -> None:
        self._locate()

    def _locate(self) -> None:
        """`header`: int64[7], the data addresses and rows of items, sets and per_state and
        the address of counters, for a kernel that reaches the arrays of many recognizers in
        one call (`kernels.fill_rows`)."""
        self.header = np.array([self.items.ctypes.data, self.items.shape[0],
                                self.sets.ctypes.data, self.sets.shape[0],
                                self.per_state.ctypes.data, self.per_state.shape[0],
                                self.counters.ctypes.data], dtype=np.int64)
        EarleyArrays.relocations += 1

    @classmethod
    def empty(cls, n_states: int, capacity: int = 256, set_capacity: int = 64) -> "EarleyArrays":
        per_state = np.zeros((n_states, 3), dtype=np.int64)
        per_state[:, 0] = -1
        per_state[:, 2] = -1
        counters = np.zeros(9, dtype=np.int64)
        counters[WORK_LIMIT] = UNBOUNDED
        counters[NEEDED] = -1
        return cls(np.zeros((capacity, 3), dtype=np.int32), np.zeros((set_capacity, 3), dtype=np.int32),
                   per_state, counters)

    def kernel_args(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.items, self.sets, self.per_state, self.counters

    @property
    def capacity(self) -> int:
        """Items the arrays can hold now."""
        return int(self.items.shape[0])

    def grow(self) -> None:
        """Double the item and set capacity, keeping the contents."""
        self.items = np.concatenate([self.items, np.zeros_like(self.items)])
        self.sets = np.concatenate([self.sets, np.zeros_like(self.sets)])
        self._locate()

    def cover(self, n_states: int) -> None:
        """Room in `per_state` for a table extended to `n_states` states (called whenever the
        table a recognizer walks changes, so `relocations` moves then too)."""
        n = self.per_state.shape[0]
        if n < n_states:
            more = np.zeros((n_states - n, 3), dtype=np.int64)
            more[:, 0] = -1
            more[:, 2] = -1
            self.per_state = np.concatenate([self.per_state, more])
        self._locate()

    def limit(self, limits: RuntimeLimits) -> None:
        """Bound the Earley work of every later step by `limits.max_step_work`."""
        self.counters[WORK_LIMIT] = limits.max_step_work

    def overflowed(self, limits: RuntimeLimits, what: str) -> None:
        """After a step's OVERFLOW (which left the sets as they were): grow the arrays so
        that the step can be run again, or raise `MatcherBudgetExceeded` for `what` when its
        work passed `max_step_work` or the arrays may not grow within `max_earley_items`;
        `RuleNeeded` when the step predicted a rule the table has not built."""
        rule = int(self.counters[NEEDED])
        if rule >= 0:
            self.counters[NEEDED] = -1
            raise RuleNeeded(rule)
        if self.counters[WORK] > self.counters[WORK_LIMIT]:
            raise limits.exceeded("max_step_work", f"{what}: the Earley work of one step")
        if 2 * self.capacity > limits.max_earley_items:
            raise limits.exceeded("max_earley_items",
                                  f"{what}: more than {self.capacity:,} Earley items")
        self.grow()

    def run(self, limits: RuntimeLimits, what: str, kernel: Callable[..., Any],
            g: tuple[np.ndarray, ...], *args: Any) -> Any:
        """`kernel(g, self.kernel_args(), *args)` (a kernel of this module or of `kernels.py`),
        run again after each OVERFLOW once `overflowed` grew the arrays (or raised for `what`
        past `limits`); its first result that is not OVERFLOW. `RuleNeeded` passes through."""
        while (r := kernel(g, self.kernel_args(), *args)) == OVERFLOW:
            self.overflowed(limits, what)
        return r

    def copy(self) -> "EarleyArrays":
        """An independent copy holding the same sets (capacity trimmed to what is used)."""
        n_sets = int(self.counters[N_SETS])
        used = int(self.sets[n_sets, 0]) if n_sets else 0
        items = np.zeros((max(256, 2 * used), 3), dtype=np.int32)
        items[:used] = self.items[:used]
        sets = np.zeros((max(64, 2 * (n_sets + 1)), 3), dtype=np.int32)
        sets[:n_sets + 1] = self.sets[:n_sets + 1]
        return EarleyArrays(items, sets, self.per_state.copy(), self.counters.copy())

    @property
    def n_sets(self) -> int:
        return int(self.counters[N_SETS])

    def truncate(self, n_sets: int) -> None:
        """Drop the sets after the first `n_sets`."""
        self.counters[N_SETS] = n_sets

    def nbytes(self) -> int:
        return int(self.items.nbytes + self.sets.nbytes + self.per_state.nbytes)


# Every kernel here and in `kernels.py` runs without Numba's reference counting (nrt=False:
# they only read and write arrays they are given, never allocate): with reference counting,
# each array passed or unpacked costs an atomic update, and one byte's step would cost ~200 ns
# instead of ~10 ns. The small steps (add_item, start_step, push_step, and `kernels.py`'s chain
# steps) are inlined into their callers at Numba's level, since LLVM does not inline across
# kernels compiled apart (pushdown fills about 20% slower at the mean without); close_set, the
# large one, stays a call: inlined into every step of every caller it tripled the cold
# compile of the first pushdown mask (16 s against 6 s) for no measurable speed.
GRAMMAR = Tuple((R(int32, 2), R(int32), R(boolean), R(int32), R(int32), R(int32), R(int32),
                 R(int32), R(boolean), R(int32), R(int32)))
"""The type of `g`, the table's arrays (read-only)."""
ENGINE = Tuple((A(int32, 2), A(int32, 2), A(int64, 2), A(int64)))
"""The type of `e`, an `EarleyArrays` (written)."""


@kernel(A(int32, 2), A(int64, 2), A(int64), int64, int64, nrt=False, inline=True)
def add_item(items, per_state, counters, s, origin):  # type: ignore[no-untyped-def]
    """Add item (s, origin) to the set being built: 1 added, 0 already there, OVERFLOW."""
    counters[WORK] += 1
    if counters[WORK] > counters[WORK_LIMIT]:
        return OVERFLOW
    gen = counters[GEN]
    if per_state[s, 0] == gen:
        j = per_state[s, 1]
        while j >= 0:
            if items[j, 1] == origin:
                return 0
            j = items[j, 2]
    else:
        per_state[s, 0] = gen
        per_state[s, 1] = -1
    n = counters[N_ITEMS]
    if n >= items.shape[0]:
        return OVERFLOW
    items[n, 0] = s
    items[n, 1] = origin
    items[n, 2] = per_state[s, 1]
    per_state[s, 1] = n
    counters[N_ITEMS] = n + 1
    return 1


@kernel(R(int32, 2), R(boolean), R(int32), R(int32), R(int32), R(int32), R(int32), R(boolean),
        A(int32, 2), A(int32, 2), A(int64, 2), A(int64), int64, nrt=False)
def close_set(tr, acc, coff, crule, cnext, srule, rstart, nullable, items, sets, per_state, counters, k):  # type: ignore[no-untyped-def]
    """Predict and complete over set k (items from sets[k, 0] up to the end); set its popped
    flag and return it, or OVERFLOW. A completion whose rule has one waiting item in its origin
    set, whose call is a tail call, adds the top of that chain of tail calls (`completion`,
    after Leo) instead of every complete item along it: a right recursion through several
    rules then costs each byte a constant, not one completion per level."""
    popped = 0
    j = sets[k, 0]
    while j < counters[N_ITEMS]:
        s = items[j, 0]
        origin = items[j, 1]
        for c in range(coff[s], coff[s + 1]):
            r = crule[c]
            if rstart[r] < 0:
                counters[NEEDED] = r
                return OVERFLOW
            if add_item(items, per_state, counters, rstart[r], k) == OVERFLOW:
                return OVERFLOW
            if nullable[r] and add_item(items, per_state, counters, cnext[c], origin) == OVERFLOW:
                return OVERFLOW
        if acc[s]:
            if origin < 0:
                popped = 1
            elif origin < k:
                to, o = completion(tr, acc, coff, crule, cnext, srule, items, sets, counters,
                                   origin, srule[s])
                if counters[WORK] > counters[WORK_LIMIT]:
                    return OVERFLOW
                if to >= 0:
                    if add_item(items, per_state, counters, to, o) == OVERFLOW:
                        return OVERFLOW
                elif to == -2:
                    q = srule[s]
                    for i in range(sets[origin, 0], sets[origin + 1, 0]):
                        s2 = items[i, 0]
                        for c in range(coff[s2], coff[s2 + 1]):
                            if crule[c] == q and add_item(items, per_state, counters, cnext[c],
                                                         items[i, 1]) == OVERFLOW:
                                return OVERFLOW
        j += 1
    sets[k, 1] = popped
    return popped


@kernel(R(int32), R(int32), R(int32), A(int32, 2), A(int32, 2), int64, int64, nrt=False,
        inline=True)
def live_state(relax, rtok, srule, items, sets, i, tok):  # type: ignore[no-untyped-def]
    """The state item i scans with while token `tok`'s bytes are scanned: its own, or its
    relaxed copy once its occurrence of a bounded rule has begun its bound of tokens. `relax`
    is empty for a table without bounds (`PushdownTable.kernel_args`): one test per step."""
    s = items[i, 0]
    if len(relax) == 0:
        return s
    r = relax[s]
    if r >= 0:
        o = items[i, 1]
        if o >= 0 and tok - sets[o, 2] >= rtok[srule[s]]:
            return r
    return s


@kernel(R(int32, 2), R(boolean), R(int32), R(int32), R(int32), R(int32), R(int32),
        R(boolean), A(int32, 2), A(int32, 2), A(int64, 2), A(int64), int32, nrt=False,
        inline=True)
def start_step(tr, acc, coff, crule, cnext, srule, rstart, nullable, items, sets, per_state, counters, state):  # type: ignore[no-untyped-def]
    if sets.shape[0] < 2:
        return OVERFLOW
    counters[GEN] += 1
    sets[0, 0] = 0
    sets[0, 2] = 0
    counters[TOKEN] = 0
    counters[N_ITEMS] = 0
    if add_item(items, per_state, counters, state, -1) == OVERFLOW:
        return OVERFLOW
    counters[SCANNED] = 1
    if close_set(tr, acc, coff, crule, cnext, srule, rstart, nullable, items, sets, per_state,
                 counters, 0) == OVERFLOW:
        return OVERFLOW
    sets[1, 0] = counters[N_ITEMS]
    counters[N_SETS] = 1
    return 1


@kernel(R(int32, 2), R(int32), R(boolean), R(int32), R(int32), R(int32), R(int32), R(int32),
        R(boolean), R(int32), R(int32), A(int32, 2), A(int32, 2), A(int64, 2), A(int64), uint8,
        boolean, nrt=False, inline=True)
def push_step(tr, bc, acc, coff, crule, cnext, srule, rstart, nullable, relax, rtok, items,  # type: ignore[no-untyped-def]
              sets, per_state, counters, b, bounded):
    k = counters[N_SETS]
    if k + 1 >= sets.shape[0]:
        return OVERFLOW
    base = sets[k, 0]
    cls = bc[b]
    prev = sets[k - 1, 0]
    tok = counters[TOKEN] if bounded else 0
    if bounded:
        sets[k, 2] = tok + 1
    if base - prev == 1:
        # One item moving to a state that neither calls nor accepts: its set is that one
        # item, with nothing to deduplicate, predict or complete (most bytes inside strings).
        t = tr[live_state(relax, rtok, srule, items, sets, prev, tok) if bounded
               else items[prev, 0], cls]
        if t < 0:
            return 0
        if coff[t] == coff[t + 1] and not acc[t]:
            if base >= items.shape[0]:
                return OVERFLOW
            items[base, 0] = t
            items[base, 1] = items[prev, 1]
            items[base, 2] = -1
            sets[k, 1] = 0
            sets[k + 1, 0] = base + 1
            counters[N_ITEMS] = base + 1
            counters[N_SETS] = k + 1
            counters[SCANNED] = 1
            return 1
    counters[GEN] += 1
    counters[N_ITEMS] = base
    for i in range(prev, base):
        t = tr[live_state(relax, rtok, srule, items, sets, i, tok) if bounded
               else items[i, 0], cls]
        if t >= 0 and add_item(items, per_state, counters, t, items[i, 1]) == OVERFLOW:
            return OVERFLOW
    if counters[N_ITEMS] == base:
        return 0
    counters[SCANNED] = counters[N_ITEMS] - base
    if close_set(tr, acc, coff, crule, cnext, srule, rstart, nullable, items, sets, per_state,
                 counters, k) == OVERFLOW:
        return OVERFLOW
    sets[k + 1, 0] = counters[N_ITEMS]
    counters[N_SETS] = k + 1
    return 1


@kernel(GRAMMAR, ENGINE, int32, nrt=False)
def earley_start(g, e, state):  # type: ignore[no-untyped-def]
    """Reset to set 0 = the closure of the root item (state, -1); 1 or OVERFLOW."""
    tr, bc, acc, coff, crule, cnext, srule, rstart, nullable, relax, rtok = g
    items, sets, per_state, counters = e
    counters[WORK] = 0
    return start_step(tr, acc, coff, crule, cnext, srule, rstart, nullable, items, sets,
                      per_state, counters, state)


@kernel(GRAMMAR, ENGINE, uint8, nrt=False)
def push_byte(g, e, b):  # type: ignore[no-untyped-def]
    """Build the set after text byte `b` (which begins no token): 1 if some item survives, 0
    if none does (nothing changes), OVERFLOW (nothing changes)."""
    tr, bc, acc, coff, crule, cnext, srule, rstart, nullable, relax, rtok = g
    items, sets, per_state, counters = e
    counters[WORK] = 0
    counters[TOKEN] = sets[counters[N_SETS] - 1, 2] - 1
    return push_step(tr, bc, acc, coff, crule, cnext, srule, rstart, nullable, relax, rtok,
                     items, sets, per_state, counters, b, len(relax) > 0)


@kernel(GRAMMAR, ENGINE, R(uint8), int64, int64, int64, nrt=False)
def push_bytes(g, e, data, begin, end, token):  # type: ignore[no-untyped-def]
    """Push data[begin:end] all or nothing, as one token's bytes (`token` 1) or as text that
    begins no token (0): 1 if all survive, 0 if not, OVERFLOW; on 0 and OVERFLOW the sets are
    as before."""
    tr, bc, acc, coff, crule, cnext, srule, rstart, nullable, relax, rtok = g
    items, sets, per_state, counters = e
    counters[WORK] = 0
    n0 = counters[N_SETS]
    counters[TOKEN] = sets[n0 - 1, 2] - 1 + token
    for p in range(begin, end):
        r = push_step(tr, bc, acc, coff, crule, cnext, srule, rstart, nullable, relax, rtok,
                      items, sets, per_state, counters, data[p], len(relax) > 0)
        if r != 1:
            counters[N_SETS] = n0
            return r
    return 1


@kernel(GRAMMAR, ENGINE, A(boolean), nrt=False)
def next_bytes(g, e, out):  # type: ignore[no-untyped-def]
    """Mark in bool[256] `out` the text bytes that some item of the last set can scan;
    return how many."""
    tr, bc, acc, coff, crule, cnext, srule, rstart, nullable, relax, rtok = g
    items, sets, per_state, counters = e
    k = counters[N_SETS] - 1
    tok = sets[k, 2] - 1
    count = 0
    for b in range(256):
        cls = bc[b]
        for i in range(sets[k, 0], sets[k + 1, 0]):
            if tr[live_state(relax, rtok, srule, items, sets, i, tok), cls] >= 0:
                out[b] = True
                count += 1
                break
    return count
