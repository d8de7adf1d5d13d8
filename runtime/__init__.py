"""grammask.runtime: vocabularies, compiled tables and the Matcher (numpy + Numba only)."""
from .batch import batch_fill_next_token_bitmask
from .bitmask import allocate_token_bitmask, apply_token_bitmask_inplace, unpack_bitmask
from .compiled import CompiledGrammar
from .dfa.table import DFATable
from .matcher import Matcher, MatcherBudgetExceeded, MatcherError
from .run_limits import RuntimeLimits
from .vocab.vocabulary import Vocabulary

__all__ = [
    "CompiledGrammar",
    "DFATable",
    "Matcher",
    "MatcherBudgetExceeded",
    "MatcherError",
    "RuntimeLimits",
    "Vocabulary",
    "allocate_token_bitmask",
    "apply_token_bitmask_inplace",
    "batch_fill_next_token_bitmask",
    "unpack_bitmask",
]
