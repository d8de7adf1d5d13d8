"""From IR to a `CompiledGrammar`: NFA, DFA, minimization, token tables.

A grammar compiles to one DFA when no rule reachable from its start is recursive and the DFA
fits the budgets; otherwise to rule automata for the pushdown runtime (every reachable rule
kept as a rule when a regular grammar's DFA, or a recursive grammar's inlined rule automata,
are over budget). `CompiledGrammar.notes` says which
and why.
"""
from __future__ import annotations

from ..runtime.compiled import CompiledGrammar
from ..runtime.dfa_table import DFATable
from ..runtime.vocabulary import Vocabulary
from .dfa import determinize
from .errors import BudgetExceeded, GrammarError
from .ir import Grammar, Node
from .limits import DEFAULT_LIMITS, Limits
from .lowering import check_references, find_cycle, inline_regular
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
    notes: tuple[str, ...] = (),
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
    compiled = CompiledGrammar(vocab=vocab, dfa=dfa, source=source, notes=notes)
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
    kind: str | None = None,
) -> CompiledGrammar:
    """Compile a grammar IR against `vocab`: a DFA when it is regular and within budget,
    rule automata for the pushdown runtime otherwise; `kind` ('dfa' or 'pushdown') forces
    one (a recursive grammar cannot be a DFA; a regular one forced to pushdown keeps every
    rule as a rule)."""
    if not isinstance(vocab, Vocabulary):
        raise TypeError(f"vocab must be a grammask.runtime.Vocabulary, got {type(vocab).__name__}")
    if kind not in (None, "dfa", "pushdown"):
        raise ValueError(f"kind must be None, 'dfa' or 'pushdown', got {kind!r}")
    check_references(grammar)
    source = grammar.source or grammar.start
    cycle = find_cycle(grammar)
    keep_all = False
    if kind == "dfa" and cycle is not None:
        inline_regular(grammar)
    if kind == "pushdown":
        keep_all = cycle is None
        why = "pushdown: asked for"
    elif cycle is None:
        try:
            return compile_ir(inline_regular(grammar), vocab, source=source, limits=limits,
                              precompute=precompute,
                              notes=("dfa: no rule reachable from the start is recursive",))
        except BudgetExceeded as exc:
            if kind == "dfa":
                raise
            keep_all = True
            why = f"pushdown: the grammar is regular but its DFA is over budget ({exc.message})"
    else:
        why = "pushdown: the grammar is recursive (" + " -> ".join(cycle) + ")"
    from .rule_automata import build_pushdown

    try:
        table = build_pushdown(grammar, limits, keep_all=keep_all)
    except BudgetExceeded as exc:
        if keep_all:
            raise
        table = build_pushdown(grammar, limits, keep_all=True)
        why += f"; every rule kept as a rule, since inlining went over budget ({exc.message})"
    compiled = CompiledGrammar(vocab=vocab, pushdown=table, source=source, notes=(why,))
    if precompute:
        compiled.token_sets.precompute()
    return compiled


def compile_gbnf(
    text: str,
    vocab: Vocabulary,
    *,
    start: str = "root",
    limits: Limits = DEFAULT_LIMITS,
    precompute: bool = False,
    kind: str | None = None,
) -> CompiledGrammar:
    """Compile a GBNF grammar (llama.cpp's dialect) against `vocab`."""
    from .gbnf import parse_gbnf

    grammar = parse_gbnf(text, start=start, limits=limits)
    return compile_grammar(grammar, vocab, limits=limits, precompute=precompute, kind=kind)


def compile_lark(
    text: str,
    vocab: Vocabulary,
    *,
    start: str = "start",
    limits: Limits = DEFAULT_LIMITS,
    precompute: bool = False,
    kind: str | None = None,
) -> CompiledGrammar:
    """Compile a Lark grammar against `vocab`."""
    from .lark_grammar import parse_lark

    grammar, _notes = parse_lark(text, start=start, limits=limits)
    return compile_grammar(grammar, vocab, limits=limits, precompute=precompute, kind=kind)
