"""A grammar compiled against one vocabulary: what a `Matcher` runs."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

from .dfa_table import DFATable
from .token_sets import DFATokenSets
from .vocabulary import Vocabulary


@dataclass(frozen=True, eq=False)
class CompiledGrammar:
    """Immutable tables for one grammar and one vocabulary, shareable across threads.

    `source` describes where it came from (the pattern, or the grammar's name); token sets are
    filled in lazily on first use unless the compiler was asked to precompute them.
    """

    vocab: Vocabulary
    dfa: DFATable
    source: str = ""
    token_sets: DFATokenSets = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "token_sets", DFATokenSets(self.dfa, self.vocab))

    @functools.cached_property
    def transition_lists(self) -> tuple[list[list[int]], list[int], list[bool]]:
        """The DFA as Python lists (transitions, byte classes, accepting), for walking one
        short token without a call into compiled code."""
        d = self.dfa
        return d.transitions.tolist(), d.byte_class.tolist(), d.accepting.tolist()

    @property
    def vocab_size(self) -> int:
        return self.vocab.size

    def nbytes(self) -> int:
        """Memory of the automaton and of the token sets computed so far."""
        return self.dfa.nbytes() + self.token_sets.nbytes()

    def stats(self) -> dict[str, int | str | bool]:
        """Sizes for reports and lint."""
        return {
            "kind": "dfa",
            "states": self.dfa.n_states,
            "byte_classes": self.dfa.n_classes,
            "empty_language": self.dfa.is_empty_language,
            "token_sets_computed": self.token_sets.n_computed,
            "bytes": self.nbytes(),
        }
