"""From IR to a `CompiledGrammar`: NFA, DFA, minimization, token tables."""
from __future__ import annotations

from ..runtime.compiled import CompiledGrammar
from ..runtime.dfa_table import DFATable
from ..runtime.vocabulary import Vocabulary
from .dfa import determinize
from .errors import GrammarError
from .ir import Grammar, Node
from .limits import DEFAULT_LIMITS, Limits
from .lowering import inline_regular
from .minimize import minimize
from .nfa import build_nfa



def ir_to_dfa(node: Node, limits: Limits = DEFAULT_LIMITS) -> DFATable:
    """The minimal trimmed DFA of an IR expression."""
    return minimize(determinize(build_nfa(node, limits), limits))


def compile_ir(
    node: Node,
    vocab: Vocabulary,
    *,
    source: str = "",
    limits: Limits = DEFAULT_LIMITS,
    precompute: bool = False,
) -> CompiledGrammar:
    """Compile an IR expression against `vocab`; token sets are lazy unless `precompute`."""
    if not isinstance(vocab, Vocabulary):
        raise TypeError(f"vocab must be a grammask.runtime.Vocabulary, got {type(vocab).__name__}")
    dfa = ir_to_dfa(node, limits)
    if dfa.is_empty_language:
        raise GrammarError(
            "the language is empty: no string matches, so no token could ever be allowed",
            code="empty-language",
        )
    compiled = CompiledGrammar(vocab=vocab, dfa=dfa, source=source)
    if precompute:
        compiled.token_sets.precompute()
    return compiled


def compile_regex(
    pattern: str,
    vocab: Vocabulary,
    *,
    limits: Limits = DEFAULT_LIMITS,
    precompute: bool = False,
) -> CompiledGrammar:
    """Compile a regex (fullmatch semantics: the whole output must match) against `vocab`."""
    from .regex import parse_regex

    return compile_ir(parse_regex(pattern, limits=limits), vocab, source=pattern,
                      limits=limits, precompute=precompute)


def compile_grammar(
    grammar: Grammar,
    vocab: Vocabulary,
    *,
    limits: Limits = DEFAULT_LIMITS,
    precompute: bool = False,
) -> CompiledGrammar:
    """Compile a grammar IR against `vocab` (regular grammars only, for now)."""
    return compile_ir(inline_regular(grammar), vocab, source=grammar.source or grammar.start,
                      limits=limits, precompute=precompute)


def compile_gbnf(
    text: str,
    vocab: Vocabulary,
    *,
    start: str = "root",
    limits: Limits = DEFAULT_LIMITS,
    precompute: bool = False,
) -> CompiledGrammar:
    """Compile a GBNF grammar (llama.cpp's dialect) against `vocab`."""
    from .gbnf import parse_gbnf

    grammar = parse_gbnf(text, start=start, limits=limits)
    return compile_grammar(grammar, vocab, limits=limits, precompute=precompute)


def compile_lark(
    text: str,
    vocab: Vocabulary,
    *,
    start: str = "start",
    limits: Limits = DEFAULT_LIMITS,
    precompute: bool = False,
) -> CompiledGrammar:
    """Compile a Lark grammar against `vocab`."""
    from .lark_grammar import parse_lark

    grammar, _notes = parse_lark(text, start=start, limits=limits)
    return compile_grammar(grammar, vocab, limits=limits, precompute=precompute)
