"""From IR to a `CompiledGrammar`: NFA, DFA, minimization, token tables.

A grammar compiles to one DFA when no rule reachable from its start is recursive and the DFA
fits the budgets; otherwise to rule automata for the pushdown runtime. When a regular
grammar's DFA, or a recursive grammar's inlined rule automata, are over budget, every reachable
rule is kept as a rule but the small ones that use no other (`SMALL_LEAF_STATES` states at
most: strings, numbers), which are inlined. `CompiledGrammar.notes` says which and why.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ..runtime.compiled import CompiledGrammar
from ..runtime.dfa.table import DFATable
from ..runtime.pushdown.table import PushdownTable
from ..runtime.dfa.token_sets import DFATokenSets
from ..runtime.vocab.vocabulary import Vocabulary
from .support import deadline
from .automata.counted import counted_or_nfa
from .support.deadline import compile_deadline
from .automata.dfa import byte_classes, subset_table
from .support.errors import BudgetExceeded, GrammarError
from .automata.flat_ir import flatten
from .ir.nodes import Grammar, Node
from .support.limits import DEFAULT_LIMITS, Limits
from .ir.graph import check_references, find_cycle, inline_regular
from .automata.minimize import minimize_table
from .automata.nfa import NFA, build_nfa


def ir_to_dfa(node: Node, limits: Limits = DEFAULT_LIMITS) -> DFATable:
    """The minimal trimmed DFA of an IR expression."""
    with compile_deadline(limits):
        return minimal_dfa(build_nfa(node, limits), limits)


def grammar_dfa(node: Node, limits: Limits = DEFAULT_LIMITS) -> DFATable:
    """The trimmed DFA of an IR expression for a compiled grammar: bounded repetitions of
    one-byte classes counted where their counts can be told apart (`counted.py`; then not
    always minimal), else `ir_to_dfa`'s minimal DFA."""
    with compile_deadline(limits):
        built = counted_or_nfa(flatten(node, limits, {}), limits)
        if isinstance(built, NFA):
            return minimal_dfa(built, limits)
        check_table_bytes(built.transitions.nbytes, limits, "DFA transition table")
        return built.dfa()


def minimal_dfa(nfa: NFA, limits: Limits = DEFAULT_LIMITS) -> DFATable:
    """The minimal trimmed DFA of `nfa`, its subset table within `max_table_bytes`."""
    deadline.check()
    classes = byte_classes(nfa)
    transitions, accepting = subset_table(nfa, classes, 0, limits)
    check_table_bytes(transitions.nbytes, limits, "DFA transition table")
    deadline.check()
    # Hopcroft's blocks trim as they minimize: no trimmed table in between.
    return minimize_table(classes, transitions, accepting, 0)


def check_table_bytes(nbytes: int, limits: Limits, what: str) -> None:
    """`BudgetExceeded` for `max_table_bytes` when a table of `nbytes` is over it."""
    if nbytes > limits.max_table_bytes:
        raise limits.exceeded("max_table_bytes", nbytes, f"{what} in bytes")


def precompute_token_sets(compiled: CompiledGrammar, limits: Limits = DEFAULT_LIMITS,
                          progress: Callable[[int, int], None] | None = None) -> None:
    """Compute every token set of `compiled` now, within `max_table_bytes` (automata and sets
    together) and the compile deadline; `progress(done, total)` after each state."""
    sets = compiled.token_sets
    with compile_deadline(limits):
        dfa_sets = isinstance(sets, DFATokenSets)
        n = sets.dfa.n_states if dfa_sets else sets.table.n_states
        for state in range(n):
            if dfa_sets:
                sets.get(state)
            else:
                sets.ensure(state)
            check_table_bytes(compiled.nbytes(), limits, "compiled tables with token sets")
            deadline.check()
            if progress is not None:
                progress(state + 1, n)


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
    with compile_deadline(limits):
        dfa = grammar_dfa(node, limits)
        if dfa.is_empty_language:
            raise GrammarError(
                "the language is empty: no string matches, so no token could ever be allowed",
                code="empty-language",
            )
        compiled = CompiledGrammar(vocab=vocab, dfa=dfa, source=source, notes=notes,
                                   runtime_limits=limits.runtime())
        if precompute:
            precompute_token_sets(compiled, limits)
        return compiled


def compile_regex(
    pattern: str,
    vocab: Vocabulary,
    *,
    limits: Limits = DEFAULT_LIMITS,
    precompute: bool = False,
) -> CompiledGrammar:
    """Compile a regex (fullmatch semantics: the whole output must match) against `vocab`."""
    from .frontends.regex import parse_regex

    with compile_deadline(limits):
        return compile_ir(parse_regex(pattern, limits=limits), vocab, source=pattern,
                          limits=limits, precompute=precompute)


def clear_caches() -> None:
    """Forget the automata a process keeps across compiles (rule automata by structure,
    shared number and string automata, the edges of classes and automata, results of language
    operations): the next compile builds them again, as the first compile of a process does."""
    from .automata import flat_ir
    from .automata import language_ops
    from .lowering import rule_automata
    from .frontends.json_schema import excluded_names
    from .frontends.json_schema import numbers
    from .frontends.json_schema import strings

    rule_automata.clear_rule_dfas()
    for cached in (language_ops._node_dfa, language_ops._product, flat_ir.class_edges,
                   flat_ir.automaton_edges, strings._literals,
                   numbers._number_leaf, excluded_names._without):
        cached.cache_clear()


INLINE_NFA_FACTOR = 4
"""A first attempt stops past this many NFA states per state of `max_inline_states`."""


def _inlining(limits: Limits) -> Limits:
    """The limits of a first attempt that has a cheaper fallback (a regular grammar's single
    DFA, rule automata with most rules inlined): past `max_inline_states` states the compiler
    stops building it and keeps every rule as a rule."""
    if limits.max_inline_states >= limits.max_dfa_states:
        return limits
    # Every first attempt that fit had at most 1.6 NFA states per DFA state (JSONSchemaBench,
    # measured in commit 1d5d51b); an NFA four times the DFA budget is not worth building.
    return dataclasses.replace(limits, max_dfa_states=limits.max_inline_states,
                               max_nfa_states=min(limits.max_nfa_states,
                                                  INLINE_NFA_FACTOR * limits.max_inline_states))


def _over(exc: BudgetExceeded, limits: Limits) -> str:
    """What a first attempt went over: `max_inline_states`, or the error's own limit."""
    if limits.max_inline_states < limits.max_dfa_states and (
            "max_dfa_states" in exc.message or "max_nfa_states" in exc.message):
        return f"more than {limits.max_inline_states} states, Limits.max_inline_states"
    return exc.message


def _kept_rules(grammar: Grammar, limits: Limits) -> PushdownTable:
    """Every rule kept as a rule but small leaf rules; every rule, if inlining those goes over
    budget."""
    from .lowering.rule_automata import build_pushdown

    try:
        return build_pushdown(grammar, limits, keep_all=True, inline_leaves=True)
    except BudgetExceeded:
        if deadline.expired():
            raise
        return build_pushdown(grammar, limits, keep_all=True)


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
    if len(grammar.rules) > limits.max_rules:
        raise limits.exceeded("max_rules", len(grammar.rules), "grammar rules")
    with compile_deadline(limits):
        return _compile_grammar(grammar, vocab, limits, precompute, kind)


def _compile_grammar(grammar: Grammar, vocab: Vocabulary, limits: Limits, precompute: bool,
                     kind: str | None) -> CompiledGrammar:
    check_references(grammar)
    source = grammar.source or grammar.start
    cycle = find_cycle(grammar)
    marked = [r.name for r in grammar.rules if r.kept]
    keep_all = False
    if kind == "dfa" and cycle is not None:
        inline_regular(grammar)
    if kind == "pushdown":
        keep_all = cycle is None
        why = "pushdown: asked for"
    elif cycle is None and marked:
        why = "pushdown: rules marked to stay rules (" + ", ".join(marked[:3]) + \
            (", ..." if len(marked) > 3 else "") + ")"
    elif cycle is None:
        try:
            return compile_ir(inline_regular(grammar), vocab, source=source,
                              limits=limits if kind == "dfa" else _inlining(limits),
                              precompute=precompute,
                              notes=("dfa: no rule reachable from the start is recursive",))
        except BudgetExceeded as exc:
            if kind == "dfa" or deadline.expired():
                raise
            keep_all = True
            why = f"pushdown: the grammar is regular but its DFA is over budget ({_over(exc, limits)})"
    else:
        why = "pushdown: the grammar is recursive (" + " -> ".join(cycle) + ")"
    from .lowering.rule_automata import build_pushdown

    try:
        if keep_all and kind != "pushdown":
            table = _kept_rules(grammar, limits)
        else:
            table = build_pushdown(grammar, limits if keep_all else _inlining(limits),
                                   keep_all=keep_all)
    except BudgetExceeded as exc:
        if keep_all or deadline.expired():
            raise
        table = _kept_rules(grammar, limits)
        why += (f"; rules kept as rules (but small ones that use no other), since inlining went"
                f" over budget ({_over(exc, limits)})")
    check_table_bytes(table.nbytes(), limits, "rule automata tables")
    compiled = CompiledGrammar(vocab=vocab, pushdown=table, source=source, notes=(why,),
                               runtime_limits=limits.runtime())
    if precompute:
        precompute_token_sets(compiled, limits)
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
    from .frontends.gbnf import parse_gbnf

    with compile_deadline(limits):
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
    from .frontends.lark_grammar import parse_lark

    with compile_deadline(limits):
        grammar, _notes = parse_lark(text, start=start, limits=limits)
        return compile_grammar(grammar, vocab, limits=limits, precompute=precompute, kind=kind)
