"""What every fuzz target shares: the small limits, the byte vocabulary, the target type and
the checked matcher walk."""
from __future__ import annotations

import dataclasses
import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from grammask.compiler import BudgetExceeded, Limits
from grammask.compiler.ir.nodes import Grammar, Node, Rule
from grammask.runtime import Matcher, Vocabulary, allocate_token_bitmask
from tests.support.reference_earley import ReferenceRecognizer

LIMITS = Limits(max_nfa_states=20_000, max_dfa_states=2_000, max_repeat=200,
                max_pushdown_states=20_000, max_schema_depth=200, max_schema_rules=2_000,
                max_compile_seconds=2.0, max_table_bytes=2**26)
BYTES = Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256])
# Bytes a walk prefers, so that walks through JSON values and grammars often finish.
STRUCTURAL = frozenset(b'{}[]",:0123456789-+.eE \ntfnrualsx()*=;')


class FindingError(AssertionError):
    """A property of a target that does not hold for an input."""


@dataclass
class Target:
    """One fuzzed surface: seed inputs, a structure-aware mutator, and `run`, which raises for a
    finding and returns whether the input was accepted (compiled), so it may seed more."""

    name: str
    seeds: list[str]
    run: Callable[[str], bool]
    mutate: Callable[[str, random.Random], str]


def input_rng(text: str) -> random.Random:
    """The random choices a run makes for `text`, the same on every replay."""
    return random.Random(zlib.crc32(text.encode("utf-8", "surrogatepass")))


def reference_for(grammar: Grammar | Node) -> ReferenceRecognizer | None:
    """The plain Earley recognizer of a grammar or regex IR; None when it cannot run it (a
    byte automaton, a literal that is not UTF-8, an undefined reference)."""
    if not isinstance(grammar, Grammar):
        grammar = Grammar((Rule("root", grammar),), "root")
    try:
        return ReferenceRecognizer(grammar)
    except (ValueError, AssertionError):
        return None


_STRUCTURAL: dict[int, tuple[Vocabulary, np.ndarray]] = {}


def _structural(vocab: Vocabulary) -> np.ndarray:
    """Which ids of `vocab` are one STRUCTURAL byte."""
    if id(vocab) not in _STRUCTURAL:
        lengths = np.diff(vocab.token_offsets)
        first = vocab.token_data[np.minimum(vocab.token_offsets[:-1], len(vocab.token_data) - 1)]
        flags = (lengths == 1) & np.isin(first, np.array(sorted(STRUCTURAL), dtype=first.dtype))
        flags[vocab.special_token_ids] = False
        _STRUCTURAL[id(vocab)] = (vocab, flags)
    return _STRUCTURAL[id(vocab)][1]


def _mask(m: Matcher, vocab: Vocabulary, bitmask: np.ndarray) -> np.ndarray:
    m.fill_next_token_bitmask(bitmask)
    return np.unpackbits(bitmask[0].view(np.uint8), bitorder="little")[:vocab.size]


def _expect(cond: bool, message: str) -> None:
    if not cond:
        raise FindingError(message)


def _reference_check(ref: ReferenceRecognizer, vocab: Vocabulary, prefix: bytes,
                     bits: np.ndarray, rng: random.Random, left: int | None) -> None:
    """A sample of the mask against the reference: allowed tokens keep the prefix viable
    (and, with `left` tokens of a budget, can be finished in the rest, each byte a token of a
    byte vocabulary), sampled others agree, EOS exactly at complete prefixes."""
    eos = set(vocab.eos_token_ids.tolist())
    specials = set(vocab.special_token_ids.tolist())
    allowed = [t for t in np.flatnonzero(bits).tolist() if t not in eos]
    sample = rng.sample(allowed, min(6, len(allowed)))
    sample += [rng.randrange(vocab.size) for _ in range(6)]
    for tid in (t for t in sample if t not in eos):
        spelled = vocab.token_bytes(tid)
        expected = tid not in specials and bool(spelled) and ref.viable(prefix + spelled)
        if expected and left is not None:
            try:
                cost = ref.completion_bytes(prefix + spelled)
            except ValueError:  # too many code points finish its last character
                continue
            expected = cost is not None and cost <= left - 1
        _expect(bool(bits[tid]) == expected,
                f"token {tid} {spelled!r} after {prefix!r}: mask {bool(bits[tid])},"
                f" reference {expected}" + ("" if left is None else f", {left} tokens left"))
    complete = ref.complete(prefix)
    _expect(all(bool(bits[e]) == complete for e in eos),
            f"EOS after {prefix!r}: mask {[bool(bits[e]) for e in eos]}, reference {complete}")


def walk(m: Matcher, vocab: Vocabulary, rng: random.Random, steps: int,
         ref: ReferenceRecognizer | None = None,
         finished: Callable[[bytes], None] | None = None) -> None:
    """Random fills, accepts, rollbacks, copies and resets, each mask checked against the
    tokens it allows, a random token against its bit and, with `ref`, against the reference;
    `finished` gets every text the matcher accepted EOS after. A step that builds a rule
    automaton over `Limits` (rules kept as rules are built as matchers reach them) ends the
    walk with `BudgetExceeded`: a finding only if the error names no bound of `Limits`."""
    try:
        _walk(m, vocab, rng, steps, ref, finished)
    except BudgetExceeded as exc:
        budget_met(exc)


def budget_met(exc: BudgetExceeded) -> None:
    """A matcher call that built a rule automaton over `Limits` (a step, or the completion
    costs, which build every rule): a finding only if the error names no bound of `Limits`."""
    _expect(exc.limit in _LIMIT_NAMES, f"a matcher's budget error names no bound: {exc}")


_LIMIT_NAMES = frozenset(f.name for f in dataclasses.fields(Limits))


def _walk(m: Matcher, vocab: Vocabulary, rng: random.Random, steps: int,
          ref: ReferenceRecognizer | None, finished: Callable[[bytes], None] | None) -> None:
    bitmask = allocate_token_bitmask(1, vocab.size)
    eos = vocab.eos_token_ids.tolist()
    history: list[bytes] = []
    for _step in range(steps):
        bits = _mask(m, vocab, bitmask)
        allowed = np.flatnonzero(bits)
        prefix = b"".join(history)
        if m.is_terminated():
            _expect(set(allowed.tolist()) == set(eos), "a terminated matcher allows only EOS")
            m.rollback(1)
            history.pop()
            continue
        _expect(len(allowed) > 0, f"no continuation after {prefix!r}")
        left = m.tokens_left
        if left is not None:  # a budget: the text can always be finished in the tokens left
            cost = m.completion_cost()
            _expect(cost is not None and cost <= left,
                    f"{left} tokens left after {prefix!r}, but finishing takes {cost}")
        if ref is not None:
            _reference_check(ref, vocab, prefix, bits, rng, m.tokens_left)
        op = rng.random()
        if op < 0.7:
            preferred = allowed[_structural(vocab)[allowed]].tolist()
            tid = int(rng.choice(preferred if preferred and rng.random() < 0.8
                                 else allowed.tolist()))
            _expect(m.accept_token(tid), f"allowed token {tid} rejected after {prefix!r}")
            history.append(b"" if tid in eos else vocab.token_bytes(tid))
            if tid in eos and finished is not None:
                finished(prefix)
        elif op < 0.8:
            tid = rng.randrange(vocab.size)
            accepted = m.accept_token(tid)
            _expect(accepted == bool(bits[tid]), f"token {tid}: accept {accepted}, mask"
                                                 f" {bool(bits[tid])} after {prefix!r}")
            if accepted:
                history.append(b"" if tid in eos else vocab.token_bytes(tid))
        elif op < 0.88 and m.num_rollback_steps:
            n = rng.randint(1, min(m.num_rollback_steps, len(history)) or 1)
            m.rollback(n)
            del history[len(history) - n:]
        elif op < 0.92:
            _check_draft(m, vocab, rng, allowed)
        elif op < 0.95:
            m = m.fork()
        else:
            m.reset()
            history.clear()



def _check_draft(m: Matcher, vocab: Vocabulary, rng: random.Random, allowed: np.ndarray) -> None:
    """`validate_tokens` and `fill_draft_bitmasks` of a random draft against the same steps
    one at a time on a fork; the matcher must be left as it was."""
    draft = [int(rng.choice(allowed.tolist())) if rng.random() < 0.8 else rng.randrange(vocab.size)
             for _ in range(rng.randint(0, 4))]
    before = (m.num_rollback_steps, m.can_terminate())
    rows = allocate_token_bitmask(len(draft) + 1, vocab.size)
    n_valid, n_rows = m.validate_tokens(draft), m.fill_draft_bitmasks(draft, rows)
    _expect((m.num_rollback_steps, m.can_terminate()) == before, "a draft changed the matcher")
    f, one = m.fork(), allocate_token_bitmask(1, vocab.size)
    accepted = 0
    for k in range(len(draft) + 1):
        f.fill_next_token_bitmask(one)
        _expect(np.array_equal(one[0], rows[k]), f"draft row {k} differs from a step's fill")
        if k == len(draft) or f.is_terminated() or not f.accept_token(draft[k]):
            break
        accepted += 1
    _expect(n_valid == accepted and n_rows == accepted + 1,
            f"draft {draft}: validate {n_valid}, rows {n_rows}, one by one {accepted}")
