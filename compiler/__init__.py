"""grammask.compiler: grammars in, byte-level automata and token tables out.

The public API is the names below; the layers behind them are described in
`specs/architecture.md` (one folder per layer, imports flowing one way).
"""
from .automata.build import ir_to_dfa
from .frontends.json_schema import schema_to_grammar
from .pipeline import (
    clear_caches,
    compile_gbnf,
    compile_grammar,
    compile_ir,
    compile_json_schema,
    compile_lark,
    compile_regex,
    compile_structural_tag,
    compile_tool_calls,
)
from .support.compile_cache import CompileCache
from .support.errors import BudgetExceeded, GrammarError
from .support.limits import DEFAULT_LIMITS, Limits
from .tools.diff import Witness, difference
from .tools.extract import Match, extract

__all__ = [
    "BudgetExceeded",
    "CompileCache",
    "DEFAULT_LIMITS",
    "GrammarError",
    "Limits",
    "Match",
    "Witness",
    "clear_caches",
    "compile_gbnf",
    "compile_grammar",
    "compile_ir",
    "compile_json_schema",
    "compile_lark",
    "compile_regex",
    "compile_structural_tag",
    "compile_tool_calls",
    "difference",
    "extract",
    "ir_to_dfa",
    "schema_to_grammar",
]
