"""Size estimates: the NFA the start rule would expand to, without building it (`state-budget`
warnings), and rule/node counts (`stats`); on request, the sizes of the automata the grammar
really compiles to (`analyse_backend`).

The estimate follows the Thompson construction of `compiler.nfa`: a literal costs a state per
byte, a class about a state per UTF-8 byte range, a choice two states per alternative, and a
repetition `{m,n}` n copies of its item (m+1 when unbounded). Rule references cost the size of
the rule (recursive references: one state). A second measure, byte positions (bytes a match
walks through, repetitions expanded), tracks the DFA: a minimal DFA usually has about one state
per position, so positions above `Limits.max_dfa_states` make a DFA budget error likely.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...runtime.compiled import CompiledGrammar
from ...runtime.vocab.vocabulary import Vocabulary
from ..ir.graph import dependency_order, find_cycle, reachable_rules
from ..ir.nodes import (
    Automaton,
    CharClass,
    Choice,
    Grammar,
    Literal,
    Node,
    Repeat,
    RuleRef,
    Seq,
    TokenRef,
    walk,
)
from ..ir.summaries import fold
from ..ir.utf8 import utf8_sequences
from ..pipeline import compile_grammar
from ..support.caches import memo
from ..support.diagnostics import Diagnostic
from ..support.errors import BudgetExceeded, GrammarError
from ..support.limits import Limits
from .common import diagnostic, rule_span

__all__ = ["SizeEstimate", "analyse_backend", "analyse_size", "analyse_stats", "automata_sizes",
           "compile_structure", "estimate_size"]

CAP = 10 ** 15


@dataclass(frozen=True)
class SizeEstimate:
    """Estimated NFA states and byte positions of the start rule inlined, and for each measure
    the repetition whose own expansion is largest by it (None when there is none)."""

    nfa_states: int
    positions: int
    largest_repeat: Repeat | None = None
    largest_repeat_states: int = 0
    widest_repeat: Repeat | None = None
    widest_repeat_positions: int = 0


def _class_cost(node: CharClass) -> tuple[int, int]:
    states = 0
    width = 0
    for lo, hi in node.ranges:
        for seq in utf8_sequences(lo, hi):
            states += len(seq) - 1
            width = max(width, len(seq))
    return max(states, 1), width


MARKER_BYTES = 4
"""The bytes of a token reference's marker (`runtime/vocab/spelling.py`)."""


def estimate_size(grammar: Grammar) -> SizeEstimate:
    """The size estimate of the start rule with every reference inlined (zero when the start
    rule is missing)."""
    sizes: dict[str, tuple[int, int]] = {}
    best: list[tuple[int, Repeat | None]] = [(0, None), (0, None)]

    def combine(n: Node, kids: list[tuple[int, int]]) -> tuple[int, int]:
        if isinstance(n, Literal):
            return len(n.data), len(n.data)
        if isinstance(n, CharClass):
            return _class_cost(n)
        if isinstance(n, Automaton):
            return n.dfa.n_states, n.dfa.n_states
        if isinstance(n, TokenRef):  # a marker and, for a named text token, its text
            return MARKER_BYTES + 1, MARKER_BYTES + 1
        if isinstance(n, RuleRef):
            return sizes.get(n.name, (1, 1))
        if isinstance(n, Seq):
            return (min(CAP, sum(k[0] for k in kids) + max(len(kids) - 1, 0)),
                    min(CAP, sum(k[1] for k in kids)))
        if isinstance(n, Choice):
            return (min(CAP, sum(k[0] for k in kids) + 2 * len(kids)),
                    min(CAP, sum(k[1] for k in kids)))
        assert isinstance(n, Repeat)
        copies = n.max if n.max is not None else n.min + 1
        states = min(CAP, kids[0][0] * copies + copies + 2)
        positions = min(CAP, kids[0][1] * copies)
        if states > best[0][0]:
            best[0] = (states, n)
        if positions > best[1][0]:
            best[1] = (positions, n)
        return states, positions

    for name in dependency_order(grammar):
        sizes[name] = fold(grammar.by_name[name].body, combine)
    nfa, positions = sizes.get(grammar.start, (0, 0))
    return SizeEstimate(nfa + 2 if nfa else 0, positions, best[0][1], best[0][0], best[1][1],
                        best[1][0])


def _about(n: int) -> str:
    return f"{n:,}" if n < CAP else f"more than {CAP:,}"


def analyse_size(grammar: Grammar, limits: Limits) -> list[Diagnostic]:
    """A `state-budget` warning when the estimate exceeds `max_nfa_states`, or when the byte
    positions exceed `max_dfa_states` (a DFA that large is likely)."""
    est = estimate_size(grammar)
    start_span = rule_span(grammar, grammar.start)
    if est.nfa_states > limits.max_nfa_states:
        repeat, size = est.largest_repeat, f"about {_about(est.largest_repeat_states)} states"
        return [diagnostic(
            "state-budget",
            f"the start rule '{grammar.start}' expands to an NFA of about"
            f" {_about(est.nfa_states)} states, over the budget Limits.max_nfa_states="
            f"{limits.max_nfa_states}, so compiling it will fail"
            + _advice(repeat, size, "max_nfa_states"),
            (repeat.span if repeat else None) or start_span)]
    if est.positions > limits.max_dfa_states:
        repeat = est.widest_repeat
        size = f"about {_about(est.widest_repeat_positions)} positions"
        return [diagnostic(
            "state-budget",
            f"the start rule '{grammar.start}' walks through about {_about(est.positions)}"
            f" byte positions, so its DFA likely exceeds the budget Limits.max_dfa_states="
            f"{limits.max_dfa_states}" + _advice(repeat, size, "max_dfa_states"), (repeat.span if repeat else None) or start_span)]
    return []


def _advice(repeat: Repeat | None, size: str, limit: str) -> str:
    raise_it = f"raise the limit (--limit {limit}=...)"
    if repeat is None:
        return f"; simplify the grammar or {raise_it}"
    return f"; the largest part is this repetition ({size}): lower its count, or {raise_it}"


def analyse_stats(grammar: Grammar, limits: Limits) -> list[Diagnostic]:
    """`stats`: rules defined and reachable, IR nodes, and the NFA estimate."""
    nodes = sum(1 for rule in grammar.rules for _ in walk(rule.body))
    reachable = len(reachable_rules(grammar))
    n = len(grammar.rules)
    message = (f"{n} rule{'' if n == 1 else 's'} ({reachable} reachable from"
               f" '{grammar.start}'), {nodes:,} IR node{'' if nodes == 1 else 's'}")
    if reachable:
        message += f", an NFA of about {_about(estimate_size(grammar).nfa_states)} states"
    return [diagnostic("stats", message)]


@memo(maxsize=1, static=True)
def _no_tokens() -> Vocabulary:
    return Vocabulary.from_token_bytes([None], 0)


def compile_structure(grammar: Grammar, limits: Limits) -> CompiledGrammar:
    """`grammar` compiled as `compile_grammar` compiles it, but against a vocabulary without
    tokens: the automata and the compiler's choice of backend, with nothing spent on token
    sets, every rule automaton built. Raises what `compile_grammar` raises."""
    compiled = compile_grammar(grammar, _no_tokens(), limits=limits)
    compiled.automaton
    return compiled


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def automata_sizes(compiled: CompiledGrammar, names_shown: int = 4) -> str:
    """The sizes of `compiled`'s automata in words: for a pushdown grammar the rules kept as
    rules (the first `names_shown` named), states, byte classes and call edges; for a DFA
    states and byte classes."""
    stats = compiled.stats()
    sizes = [_count(int(stats["states"]), "state", "states"),
             _count(int(stats["byte_classes"]), "byte class", "byte classes")]
    if compiled.pushdown is None:
        return ", ".join(sizes)
    names = compiled.pushdown.rule_names
    shown = ", ".join(names[:names_shown]) + (", ..." if len(names) > names_shown else "")
    kept = _count(len(names), "rule kept as a rule", "rules kept as rules") + f" ({shown})"
    if int(stats["rules_built"]) < len(names):
        kept += f", {stats['rules_built']:,} built so far"
    return ", ".join([kept, *sizes, _count(int(stats["call_edges"]), "call edge", "call edges")])


def analyse_backend(grammar: Grammar, limits: Limits) -> list[Diagnostic]:
    """`stats`: the backend the grammar compiles to under `limits` (dfa or pushdown), why, and
    the sizes of its automata; a `state-budget` error when compiling exceeds a budget (for a
    regular grammar, the rule automata that replace a DFA over budget exceed one too)."""
    try:
        compiled = compile_structure(grammar, limits)
    except BudgetExceeded as exc:
        fallback = " (the fallback for a DFA over budget)" if find_cycle(grammar) is None else ""
        return [diagnostic("state-budget", f"compiling to rule automata for the pushdown"
                           f" runtime{fallback} failed: {exc.message}",
                           rule_span(grammar, grammar.start), severity="error")]
    except GrammarError as exc:
        return [diagnostic("stats", f"no backend: the grammar does not compile ({exc.message})")]
    why = "; ".join(compiled.notes) or compiled.kind
    return [diagnostic("stats", f"backend {why}; {automata_sizes(compiled)}")]
