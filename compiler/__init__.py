"""grammask.compiler: grammars in, byte-level automata and token tables out."""
from .support.errors import BudgetExceeded, GrammarError
from .support.limits import DEFAULT_LIMITS, Limits
from .pipeline import (
    clear_caches,
    compile_gbnf,
    compile_grammar,
    compile_ir,
    compile_lark,
    compile_regex,
    ir_to_dfa,
)
from .frontends.json_schema import compile_json_schema, schema_to_grammar

__all__ = [
    "BudgetExceeded",
    "DEFAULT_LIMITS",
    "GrammarError",
    "Limits",
    "clear_caches",
    "compile_gbnf",
    "compile_grammar",
    "compile_ir",
    "compile_json_schema",
    "compile_lark",
    "compile_regex",
    "ir_to_dfa",
    "schema_to_grammar",
]
