"""A grammar compiled against one vocabulary: what a `Matcher` runs.

Two kinds: `dfa` (a regular language: one DFA and per-state token rows) and `pushdown` (rule
automata with calls, run by the Earley kernels, with per-state accepted and uncertain tokens).
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field

import numpy as np

from .. import __version__
from .bitmask import bitmask_words
from .completion import CompletionCosts, completion_costs
from .dfa.table import DFATable
from .dfa.token_sets import DFATokenSets
from .errors import SerializedGrammarError
from .pushdown.one_token import OneTokenSteps, check_one_token, one_token_steps
from .pushdown.table import PushdownTable
from .pushdown.token_sets import PushdownTokenSets
from .run_limits import DEFAULT_RUNTIME_LIMITS, RuntimeLimits
from .serialized import pack, unpack
from .vocab.spelling import TokenSpelling, check_named, token_spelling
from .vocab.vocabulary import Vocabulary

_TABLE_FIELDS = {
    "dfa": ("byte_class", "transitions", "accepting", "start"),
    "pushdown": ("byte_class", "transitions", "accepting", "call_offsets", "call_rule",
                 "call_next", "state_rule", "rule_start", "start_rule", "rule_names",
                 "rule_tokens", "relax"),
}
"""The constructor arguments of each kind's table, in the order of its `__reduce__`."""


def _as_tuple(header: dict, key: str) -> tuple:
    value = header.get(key)
    if not isinstance(value, list):
        raise SerializedGrammarError(f"header {key!r} must be a list")
    return tuple(value)


@dataclass(frozen=True, eq=False)
class CompiledGrammar:
    """Immutable tables for one grammar and one vocabulary, shareable across threads.

    Exactly one of `dfa` and `pushdown` is given. `source` describes where it came from (the
    pattern, or the grammar's name); token sets are filled in lazily on first use unless the
    compiler was asked to precompute them. `notes` says why the compiler chose this kind.
    `runtime_limits` are the default bounds of the matchers that walk it. `named_tokens` are
    the text tokens the grammar names in token references, read as references everywhere in it
    (`vocab.spelling`). `one_token` holds the excluded ids of each one-token step (a single
    negated token reference, `pushdown/one_token.py`; pushdown grammars only).
    Every table is validated when built (see the invariants of `DFATable`, `PushdownTable`,
    `TokenTrie` and `Vocabulary`) and its arrays are immutable; the lazily filled token sets
    are written under a lock and only ever completed, never changed. A pickled grammar is
    rebuilt through the constructors, so loading validates it again (token sets are recomputed
    on use).
    `pushdown` may not have built every rule yet (`pushdown/assembly.py`); the matchers extend
    the table they share as they reach rules (`token_sets.table` is the current one), and
    `automaton` or pickling builds the rest.
    """

    vocab: Vocabulary
    dfa: DFATable | None = None
    source: str = ""
    pushdown: PushdownTable | None = None
    notes: tuple[str, ...] = ()
    runtime_limits: RuntimeLimits = DEFAULT_RUNTIME_LIMITS
    named_tokens: tuple[int, ...] = ()
    one_token: tuple[tuple[int, ...], ...] = ()
    token_sets: DFATokenSets | PushdownTokenSets = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.vocab, Vocabulary):
            raise TypeError(f"vocab must be a Vocabulary, got {type(self.vocab).__name__}")
        if (self.dfa is None) == (self.pushdown is None):
            raise ValueError("CompiledGrammar needs exactly one of dfa and pushdown")
        if self.dfa is not None and not isinstance(self.dfa, DFATable):
            raise TypeError(f"dfa must be a DFATable, got {type(self.dfa).__name__}")
        if self.pushdown is not None and not isinstance(self.pushdown, PushdownTable):
            raise TypeError(f"pushdown must be a PushdownTable, got {type(self.pushdown).__name__}")
        if not isinstance(self.source, str):
            raise TypeError(f"source must be a str, got {type(self.source).__name__}")
        if not isinstance(self.notes, tuple) or not all(isinstance(n, str) for n in self.notes):
            raise TypeError("notes must be a tuple of str")
        if not isinstance(self.runtime_limits, RuntimeLimits):
            raise TypeError(f"runtime_limits must be a RuntimeLimits, got "
                            f"{type(self.runtime_limits).__name__}")
        if not isinstance(self.named_tokens, tuple):
            raise TypeError("named_tokens must be a tuple of token ids")
        object.__setattr__(self, "named_tokens", check_named(self.vocab, self.named_tokens))
        object.__setattr__(self, "one_token", check_one_token(self.vocab, self.one_token))
        if self.one_token and self.dfa is not None:
            raise ValueError("one-token steps need a pushdown grammar")
        named = self.named_tokens
        sets = (DFATokenSets(self.dfa, self.vocab, named) if self.dfa is not None
                else PushdownTokenSets(self.pushdown, self.vocab, named))  # type: ignore[arg-type]
        object.__setattr__(self, "token_sets", sets)

    def __reduce__(self) -> tuple:
        # Pickling goes through the serialized form, so loading checks what `from_bytes` does.
        return (CompiledGrammar.from_bytes, (self.to_bytes(), self.vocab))

    def to_bytes(self) -> bytes:
        """This grammar as bytes (`serialized.py`'s container): the automaton with every
        rule built, where it came from, its notes and limits, the fingerprint of its
        vocabulary and the grammask version. Token sets are not included: a loaded grammar
        computes them as masks reach its states, as a fresh compile does."""
        table = self.automaton
        arrays, fields = {}, {}
        for name, value in zip(_TABLE_FIELDS[self.kind], table.__reduce__()[1]):
            if isinstance(value, np.ndarray):
                arrays[name] = value
            else:
                fields[name] = list(value) if isinstance(value, tuple) else value
        header = {"grammask": __version__, "vocab": self.vocab.fingerprint, "kind": self.kind,
                  "source": self.source, "notes": list(self.notes),
                  "runtime_limits": dataclasses.asdict(self.runtime_limits),
                  "named_tokens": list(self.named_tokens),
                  "one_token": [list(ids) for ids in self.one_token], "table": fields}
        return pack(header, arrays)

    @classmethod
    def from_bytes(cls, data: bytes, vocab: Vocabulary) -> CompiledGrammar:
        """The grammar `to_bytes` wrote, for `vocab` (the one it was compiled for, or one
        with the same fingerprint). Everything is checked as when it was compiled;
        `SerializedGrammarError` says what is wrong (and where, for the container), and
        nothing else is raised for bad bytes."""
        if not isinstance(vocab, Vocabulary):
            raise TypeError(f"vocab must be a Vocabulary, got {type(vocab).__name__}")
        header, arrays = unpack(data)
        kind = header.get("kind")
        if kind not in _TABLE_FIELDS:
            raise SerializedGrammarError(f"unknown grammar kind {kind!r}")
        if header.get("vocab") != vocab.fingerprint:
            raise SerializedGrammarError(
                f"compiled for another vocabulary (fingerprint {header.get('vocab')!r}; this "
                f"one is {vocab.fingerprint!r})")
        fields = header.get("table")
        names = _TABLE_FIELDS[kind]
        if not isinstance(fields, dict) or set(fields) | set(arrays) != set(names):
            raise SerializedGrammarError(f"a {kind} table needs exactly the fields "
                                         f"{', '.join(names)}")
        args = [arrays[n] if n in arrays else fields[n] for n in names]
        args = [tuple(a) if isinstance(a, list) else a for a in args]
        try:
            table = (DFATable if kind == "dfa" else PushdownTable)(*args)
            limits = header.get("runtime_limits")
            return cls(vocab, **{kind: table}, source=header.get("source"),
                       notes=_as_tuple(header, "notes"),
                       runtime_limits=RuntimeLimits(**limits) if isinstance(limits, dict)
                       else limits,
                       named_tokens=_as_tuple(header, "named_tokens"),
                       one_token=tuple(tuple(ids) if isinstance(ids, list) else ids
                                       for ids in (_as_tuple(header, "one_token")
                                                   if "one_token" in header else ())))
        except (TypeError, ValueError) as exc:  # the constructors' checks
            raise SerializedGrammarError(f"the {kind} grammar fails its checks: {exc}") from None

    @property
    def automaton(self) -> DFATable | PushdownTable:
        """The DFA, or the rule automata with every rule built (the rest built now)."""
        if self.dfa is not None:
            return self.dfa
        sets = self.token_sets
        assert isinstance(sets, PushdownTokenSets)
        return sets.complete()

    @property
    def spelling(self) -> TokenSpelling:
        """What the automata read for each token id (`vocab.spelling`)."""
        return token_spelling(self.vocab, self.named_tokens)

    @property
    def kind(self) -> str:
        """'dfa' or 'pushdown'."""
        return "dfa" if self.dfa is not None else "pushdown"

    @functools.cached_property
    def transition_lists(self) -> tuple[list[list[int]], list[int], list[bool]]:
        """The DFA as Python lists (transitions, byte classes, accepting), for walking one
        short token without a call into compiled code."""
        d = self.dfa
        assert d is not None, "transition_lists exist for DFA grammars only"
        return d.transitions.tolist(), d.byte_class.tolist(), d.accepting.tolist()

    @functools.cached_property
    def completion_costs(self) -> CompletionCosts:
        """From each state of the automaton, the fewest tokens that surely finish the text
        (`completion.py`; rule automata get every rule built first)."""
        spelling = self.spelling
        if self.dfa is not None:
            d = self.dfa
            return completion_costs(d.transitions, d.byte_class, d.accepting,
                                    (spelling.data, spelling.offsets))
        t = self.automaton
        assert isinstance(t, PushdownTable)
        data, offsets = spelling.data, spelling.offsets
        if self.one_token:  # each step's marker is one more token's spelling
            steps = self.one_token_steps
            assert steps is not None
            data = np.concatenate([data, steps.markers])
            offsets = np.concatenate([offsets, offsets[-1] + 4 * np.arange(
                1, len(self.one_token) + 1, dtype=offsets.dtype)])
        return completion_costs(t.transitions, t.byte_class, t.accepting, (data, offsets),
                                (t.call_offsets, t.call_rule, t.call_next, t.rule_start))

    @functools.cached_property
    def one_token_steps(self) -> OneTokenSteps | None:
        """The one-token steps' markers and token rows (`pushdown/one_token.py`), or None."""
        if not self.one_token:
            return None
        return one_token_steps(self.vocab, self.spelling.offsets, self.one_token,
                               bitmask_words(self.vocab.size))

    @property
    def vocab_size(self) -> int:
        return self.vocab.size

    def nbytes(self) -> int:
        """Memory of the automata and of the token sets computed so far."""
        sets = self.token_sets
        table = sets.dfa if isinstance(sets, DFATokenSets) else sets.table
        return table.nbytes() + sets.nbytes()

    def stats(self) -> dict[str, int | str | bool]:
        """Sizes for reports and lint."""
        if self.dfa is not None:
            return {
                "kind": "dfa",
                "states": self.dfa.n_states,
                "byte_classes": self.dfa.n_classes,
                "empty_language": self.dfa.is_empty_language,
                "token_sets_computed": self.token_sets.n_computed,
                "bytes": self.nbytes(),
            }
        sets = self.token_sets
        assert isinstance(sets, PushdownTokenSets)
        p = sets.table
        return {
            "kind": "pushdown",
            "rules": p.n_rules,
            "rules_built": int((p.rule_start >= 0).sum()),
            "states": p.n_states,
            "byte_classes": p.n_classes,
            "call_edges": int(len(p.call_rule)),
            "empty_language": False,
            "token_sets_computed": self.token_sets.n_computed,
            "bytes": self.nbytes(),
        }
