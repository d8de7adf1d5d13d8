"""From IR to a `CompiledGrammar`: NFA, DFA, minimization, token tables.

A grammar compiles to one DFA when no rule reachable from its start is recursive and the DFA
fits the budgets; otherwise to rule automata for the pushdown runtime. When a regular
grammar's DFA, or a recursive grammar's inlined rule automata, are over budget, every reachable
rule is kept as a rule but the small ones that use no other (`SMALL_LEAF_STATES` states at
most: strings, numbers), which are inlined. `CompiledGrammar.notes` says which and why.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..runtime.compiled import CompiledGrammar
from ..runtime.dfa.token_sets import DFATokenSets
from ..runtime.matcher import Matcher
from ..runtime.pushdown.table import PushdownTable
from ..runtime.vocab.vocabulary import Vocabulary
from .automata.build import check_table_bytes, grammar_dfa
from .automata.flat_ir import NO_INLINE
from .frontends.json_schema import JsonSchemaOptions, schema_to_grammar
from .frontends.lazy import lazy_grammar
from .frontends.parsed import Parsed
from .frontends.regex import parse_regex
from .frontends.registry import read
from .frontends.structural_tag import structural_tag_to_grammar
from .frontends.tool_calls import tool_calls_spec
from .ir.graph import check_references, find_cycle, grammar_size
from .ir.nodes import Grammar, Node
from .lowering.regular import inline_regular
from .lowering.rule_automata import build_pushdown
from .lowering.tokens import resolve_tokens, trigger_token
from .support import caches, deadline
from .support.compile_cache import CompileCache
from .support.deadline import compile_deadline
from .support.diagnostics import Diagnostic
from .support.errors import BudgetExceeded, GrammarError
from .support.limits import DEFAULT_LIMITS, Limits


def precompute_token_sets(compiled: CompiledGrammar, limits: Limits = DEFAULT_LIMITS,
                          progress: Callable[[int, int], None] | None = None) -> None:
    """Compute every token set of `compiled` now, within `max_table_bytes` (automata and sets
    together) and the compile deadline; `progress(done, total)` after each state."""
    sets = compiled.token_sets
    with compile_deadline(limits):
        n = sets.dfa.n_states if isinstance(sets, DFATokenSets) else sets.complete().n_states
        for state in range(n):
            sets.get(state)
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
    named_tokens: tuple[int, ...] = (),
    inline: Mapping[str, Node] = NO_INLINE,
) -> CompiledGrammar:
    """Compile an IR expression against `vocab`; token sets are lazy unless `precompute`.
    `named_tokens` are the text tokens its spellings read as references
    (`lowering.tokens.resolve_tokens`); the references in `node` stand for the bodies `inline`
    gives them (`lowering.regular.inline_regular`)."""
    if not isinstance(vocab, Vocabulary):
        raise TypeError(f"vocab must be a grammask.runtime.Vocabulary, got {type(vocab).__name__}")
    with compile_deadline(limits):
        dfa = grammar_dfa(node, limits, inline)
        if dfa.is_empty_language:
            raise GrammarError(
                "the language is empty: no string matches, so no token could ever be allowed",
                code="empty-language",
            )
        compiled = CompiledGrammar(vocab=vocab, dfa=dfa, source=source, notes=notes,
                                   runtime_limits=limits.runtime(), named_tokens=named_tokens)
        if precompute:
            precompute_token_sets(compiled, limits)
        return compiled


def compile_regex(
    pattern: str,
    vocab: Vocabulary,
    *,
    limits: Limits = DEFAULT_LIMITS,
    precompute: bool = False,
    cache: CompileCache | None = None,
) -> CompiledGrammar:
    """Compile a regex (fullmatch semantics: the whole output must match) against `vocab`.
    With `cache` (every compile function takes one), an equal earlier request's grammar."""
    if cache is not None:
        return _cached(cache, "regex", pattern, vocab, limits, dict(precompute=precompute),
                       lambda: compile_regex(pattern, vocab, limits=limits,
                                             precompute=precompute))
    with compile_deadline(limits):
        return compile_ir(parse_regex(pattern, limits=limits), vocab, source=pattern,
                          limits=limits, precompute=precompute)


def clear_caches() -> None:
    """Forget the automata a process keeps across compiles (rule automata by structure,
    shared number and string automata, the edges of classes and automata, results of language
    operations, every other registered cache of results, `support/caches.py`): the next compile
    builds them again, as the first compile of a process does. The static caches (the parsers of
    the regex and GBNF syntaxes, Unicode tables: nothing derived from an input) are kept."""
    caches.clear_all()


INLINE_NFA_FACTOR = 4
"""A first attempt stops past this many NFA states per state of `max_inline_states`."""

INLINE_ATTEMPT_MAX_SIZE = 1000
"""A recursive grammar with more sequences, choices and repetitions than this (`grammar_size`)
keeps its rules as rules at once, without first trying to inline most of them. On 1,500
JSONSchemaBench schemas, every inlining attempt that fit was under 530, and 198 of the 392
that went over budget (72% of the time they took) were over 1,000. A grammar guessed large
wrongly gets the kept rules' table: the same language, more rule ends. A `max_inline_states`
raised past its default asks for the attempt whatever the size. Rules marked to stay rules
(a schema's shared values) do not change this: on the first 60 schemas of each split, all 30
recursive grammars with marked rules went over budget (19 over 1,000, whose attempts took
2.7 of their 9.2 s)."""


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
            exc.limit in ("max_dfa_states", "max_nfa_states")):
        return f"more than {limits.max_inline_states} states, Limits.max_inline_states"
    return exc.message


def _kept_rules(grammar: Grammar, limits: Limits) -> PushdownTable:
    """Every rule kept as a rule but small leaf rules; every rule, if inlining those goes over
    budget. Rules are built as matchers reach them (`build_pushdown`'s `lazy`)."""
    try:
        return build_pushdown(grammar, limits, keep_all=True, inline_leaves=True, lazy=True)
    except BudgetExceeded:
        if deadline.expired():
            raise
        return build_pushdown(grammar, limits, keep_all=True, lazy=True)


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
    grammar, named, one_token = resolve_tokens(grammar, vocab, limits)
    source = grammar.source or grammar.start
    cycle = find_cycle(grammar)
    marked = [r.name for r in grammar.rules if r.kept]
    keep_all = False
    if kind == "dfa" and one_token:
        raise GrammarError("a single negated token reference (exactly one token of almost the "
                           "whole vocabulary) needs the pushdown backend, not kind='dfa'",
                           code="token-reference")
    if kind == "dfa" and cycle is not None:
        inline_regular(grammar)
    if kind == "pushdown" or one_token:
        keep_all = cycle is None
        why = "pushdown: asked for" if kind == "pushdown" else \
            "pushdown: a single negated token reference reads one token as one step"
    elif cycle is None and marked:
        why = "pushdown: rules marked to stay rules (" + ", ".join(marked[:3]) + \
            (", ..." if len(marked) > 3 else "") + ")"
    elif cycle is None:
        try:
            root, rules = inline_regular(grammar)
            return compile_ir(root, vocab, source=source,
                              limits=limits if kind == "dfa" else _inlining(limits),
                              precompute=precompute, named_tokens=named, inline=rules,
                              notes=("dfa: no rule reachable from the start is recursive",))
        except BudgetExceeded as exc:
            if kind == "dfa" or deadline.expired():
                raise
            keep_all = True
            why = f"pushdown: the grammar is regular but its DFA is over budget ({_over(exc, limits)})"
    else:
        why = "pushdown: the grammar is recursive (" + " -> ".join(cycle) + ")"
        if kind is None and limits.max_inline_states <= \
                DEFAULT_LIMITS.max_inline_states and (size := grammar_size(grammar)) > \
                INLINE_ATTEMPT_MAX_SIZE:
            keep_all = True
            why += (f"; rules kept as rules (but small ones that use no other), since the "
                    f"grammar is large ({size} expressions, more than "
                    f"{INLINE_ATTEMPT_MAX_SIZE} to try inlining)")
    try:
        if keep_all and kind != "pushdown" and not one_token:
            table = _kept_rules(grammar, limits)
        elif marked and not keep_all:
            # Rules marked to stay rules (each tool's arguments, a schema's shared values)
            # are built as matchers reach them; past the inlining budget, within `limits`.
            table = build_pushdown(grammar, _inlining(limits), lazy=True, relaxed=limits)
        else:
            table = build_pushdown(grammar, limits if keep_all else _inlining(limits),
                                   keep_all=keep_all, lazy=keep_all)
    except BudgetExceeded as exc:
        if keep_all or deadline.expired():
            raise
        table = _kept_rules(grammar, limits)
        why += (f"; rules kept as rules (but small ones that use no other), since inlining went"
                f" over budget ({_over(exc, limits)})")

    def compiled_from(table: PushdownTable, why: str) -> CompiledGrammar:
        check_table_bytes(table.nbytes(), limits, "rule automata tables")
        compiled = CompiledGrammar(vocab=vocab, pushdown=table, source=source, notes=(why,),
                                   runtime_limits=limits.runtime(), named_tokens=named,
                                   one_token=one_token)
        if not table.complete:
            # A matcher's start builds the rules its first Earley set predicts: every use
            # needs them, so their budget errors are the compile's.
            Matcher(compiled)
        return compiled

    try:
        compiled = compiled_from(table, why)
    except BudgetExceeded as exc:
        # A marked rule that its inlined callees make too large for `limits`: every rule
        # kept instead, as for a grammar whose inlining goes over budget.
        if not (marked and not keep_all) or deadline.expired():
            raise
        compiled = compiled_from(_kept_rules(grammar, limits), why + (
            f"; rules kept as rules (but small ones that use no other), since a marked rule "
            f"went over budget ({_over(exc, limits)})"))
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
    triggers: Sequence[str] = (),
    trigger_tokens: Sequence[int | str] = (),
    cache: CompileCache | None = None,
) -> CompiledGrammar:
    """Compile a GBNF grammar (llama.cpp's dialect, with its token references and XGrammar's
    `Regex("...")`) against `vocab`. With `triggers` (words) or `trigger_tokens` (ids or
    token texts), the grammar is lazy, as llama.cpp's `grammar_lazy`: free text until a
    trigger, then the grammar from the trigger on (`frontends/lazy.py`)."""
    if cache is not None:
        return _cached(cache, "gbnf", text, vocab, limits, dict(
            start=start, precompute=precompute, kind=kind, triggers=list(triggers),
            trigger_tokens=list(trigger_tokens)), lambda: compile_gbnf(
                text, vocab, start=start, limits=limits, precompute=precompute, kind=kind,
                triggers=triggers, trigger_tokens=trigger_tokens))
    return _compile_text("gbnf", text, vocab, start, limits, precompute, kind, triggers,
                         trigger_tokens=trigger_tokens)


def compile_lark(
    text: str,
    vocab: Vocabulary,
    *,
    start: str = "start",
    limits: Limits = DEFAULT_LIMITS,
    precompute: bool = False,
    kind: str | None = None,
    grammars: Mapping[str, Any] | None = None,
    cache: CompileCache | None = None,
) -> CompiledGrammar:
    """Compile a Lark grammar against `vocab`; what the frontend ignored (priorities,
    aliases, declared terminals) follows the backend's note in `CompiledGrammar.notes`.
    `grammars` are the grammars `@name` refers to: Lark texts or JSON Schemas by name."""
    if cache is not None:
        return _cached(cache, "lark", text, vocab, limits, dict(
            start=start, precompute=precompute, kind=kind,
            grammars=None if grammars is None else dict(grammars)), lambda: compile_lark(
                text, vocab, start=start, limits=limits, precompute=precompute, kind=kind,
                grammars=grammars))
    return _compile_text("lark", text, vocab, start, limits, precompute, kind,
                         grammars=grammars)


def _compile_text(language: str, text: str, vocab: Vocabulary, start: str, limits: Limits,
                  precompute: bool, kind: str | None, triggers: Sequence[str] = (),
                  grammars: Mapping[str, Any] | None = None,
                  trigger_tokens: Sequence[int | str] = ()) -> CompiledGrammar:
    """A grammar text read by its frontend (`frontends.registry`), made lazy when there are
    `triggers`, and compiled; the frontend's diagnostics become notes after the backend's."""
    with compile_deadline(limits):
        grammar, diagnostics = read(language, text, start=start, import_paths=(), limits=limits,
                                    grammars=grammars)
        if triggers or trigger_tokens:
            check_references(grammar)
            if isinstance(triggers, str) or isinstance(trigger_tokens, (str, int)):
                raise GrammarError("triggers and trigger_tokens are lists",
                                   code="invalid-trigger")
            tokens = [trigger_token(vocab, t) for t in trigger_tokens]
            grammar = lazy_grammar(grammar, triggers, limits, tokens)
        compiled = compile_grammar(grammar, vocab, limits=limits, precompute=precompute,
                                   kind=kind)
    return _with_notes(compiled, diagnostics)


def compile_json_schema(
    schema: Any,
    vocab: Vocabulary,
    *,
    options: JsonSchemaOptions | None = None,
    limits: Limits = DEFAULT_LIMITS,
    precompute: bool = False,
    cache: CompileCache | None = None,
    resources: Mapping[str, Any] | None = None,
    **option_fields: Any,
) -> CompiledGrammar:
    """Compile a JSON Schema against `vocab`. Options come as a `JsonSchemaOptions` or as its
    fields (`strict=True`, `lenient=True`, `whitespace="compact"`, ...). `resources` maps
    absolute URIs to the other documents its `$ref`s may reach (nothing is fetched)."""
    if options is None:
        options = JsonSchemaOptions(**option_fields)
    elif option_fields:
        raise TypeError("pass either options= or option fields, not both")
    if cache is not None:
        return _cached(cache, "json_schema", schema, vocab, limits, dict(
            options=dataclasses.asdict(options), precompute=precompute,
            resources=dict(resources or {})),
            lambda: compile_json_schema(schema, vocab, options=options, limits=limits,
                                        precompute=precompute, resources=resources))
    with compile_deadline(limits):
        return compile_parsed_schema(
            schema_to_grammar(schema, options, limits, resources=resources), vocab,
            limits=limits, precompute=precompute)


def compile_parsed_schema(parsed: Parsed, vocab: Vocabulary, *, limits: Limits = DEFAULT_LIMITS,
                          precompute: bool = False) -> CompiledGrammar:
    """Compile a schema's grammar (`schema_to_grammar`'s result); its diagnostics (what
    lenient mode ignored, the relaxations taken) become notes after the backend's."""
    try:
        compiled = compile_grammar(parsed.grammar, vocab, limits=limits, precompute=precompute)
    except GrammarError as exc:
        if exc.code != "empty-language":
            raise
        raise GrammarError("no JSON value satisfies this schema, so nothing could be "
                           "generated", code="empty-language", pointer="") from None
    return _with_notes(compiled, parsed.diagnostics)


def compile_structural_tag(spec: Any, vocab: Vocabulary, *, limits: Limits = DEFAULT_LIMITS,
                           precompute: bool = False,
                           cache: CompileCache | None = None) -> CompiledGrammar:
    """Compile a structural tag (XGrammar's format, as vLLM and SGLang pass it: a dict or a JSON
    string) against `vocab`; `specs/structural_tags.md` gives the language of each format."""
    if cache is not None:
        return _cached(cache, "structural_tag", spec, vocab, limits, dict(precompute=precompute),
                       lambda: compile_structural_tag(spec, vocab, limits=limits,
                                                      precompute=precompute))
    with compile_deadline(limits):
        parsed = structural_tag_to_grammar(spec, limits, _control_texts(vocab)[0])
        compiled = compile_grammar(parsed.grammar, vocab, limits=limits, precompute=precompute)
    return _with_notes(compiled, parsed.diagnostics)


def compile_tool_calls(tools: Any, vocab: Vocabulary, *, format: str, tool_choice: Any = "auto",
                       parallel_tool_calls: bool = True, reasoning: bool = False,
                       response_format: Any = None, max_whitespace: int | None = None,
                       max_reasoning_tokens: int | None = None,
                       limits: Limits = DEFAULT_LIMITS, precompute: bool = False,
                       cache: CompileCache | None = None) -> CompiledGrammar:
    """Compile a tool-calling request (OpenAI-style `tools`, `tool_choice` "auto", "required",
    "none" or one named function) in a model family's own `format` (`llama`, `qwen_3`,
    `qwen_3_5`/`qwen_3_coder`, `mistral`, `deepseek_r1`, `deepseek_v3_1`, `deepseek_v3_2`,
    `deepseek_v4`, `deepseek_v4_1`, `kimi`, `kimi_k3`, `glm_4_7`, `minimax`, `mimo`,
    `cohere`, `exaone`, `harmony`;
    `specs/structural_tags.md`). Markers that `vocab` has as control tokens are matched as
    those tokens. An error in a tool's
    schema names the tool's pointer (`/tools/2/function/parameters/...`). With `reasoning`,
    `max_reasoning_tokens` bounds the tokens of the reasoning text (`specs/structural_tags.md`)."""
    if cache is not None:
        return _cached(cache, "tool_calls", tools, vocab, limits, dict(
            format=format, tool_choice=tool_choice, parallel_tool_calls=parallel_tool_calls,
            reasoning=reasoning, response_format=response_format,
            max_whitespace=max_whitespace, max_reasoning_tokens=max_reasoning_tokens,
            precompute=precompute), lambda: compile_tool_calls(
                tools, vocab, format=format, tool_choice=tool_choice,
                parallel_tool_calls=parallel_tool_calls, reasoning=reasoning,
                response_format=response_format, max_whitespace=max_whitespace,
                max_reasoning_tokens=max_reasoning_tokens, limits=limits,
                precompute=precompute))
    controls, stops = _control_texts(vocab)
    spec, schemas = tool_calls_spec(
        tools, controls, format=format, tool_choice=tool_choice,
        parallel_tool_calls=parallel_tool_calls, reasoning=reasoning,
        response_format=response_format, max_whitespace=max_whitespace, stops=stops,
        max_reasoning_tokens=max_reasoning_tokens)
    try:
        return compile_structural_tag(spec, vocab, limits=limits, precompute=precompute)
    except GrammarError as exc:
        where = exc.pointer or ""
        for inside, request in schemas:
            if where == inside or where.startswith(inside + "/"):
                raise exc.located(pointer=request + where[len(inside):]) from None
        raise


def _control_texts(vocab: Vocabulary) -> tuple[frozenset[str], frozenset[str]]:
    """The texts of `vocab`'s control tokens that are not stop tokens, and of its stop tokens."""
    eos = set(vocab.eos_token_ids.tolist())
    texts = [(i, text.decode("utf-8", "replace")) for i, text in vocab.special_token_text]
    return (frozenset(t for i, t in texts if i not in eos),
            frozenset(t for i, t in texts if i in eos))


def _with_notes(compiled: CompiledGrammar,
                diagnostics: tuple[Diagnostic, ...]) -> CompiledGrammar:
    """`compiled` with a frontend's diagnostics as notes after the backend's, each
    `line:column: message` or `pointer: message` (the root pointer shown as `/`)."""
    if not diagnostics:
        return compiled
    return dataclasses.replace(compiled, notes=compiled.notes + tuple(map(_note, diagnostics)))


def _note(diagnostic: Diagnostic) -> str:
    span, pointer = diagnostic.span, diagnostic.pointer
    if span is not None:
        return f"{span.line}:{span.column}: {diagnostic.message}"
    return diagnostic.message if pointer is None else f"{pointer or '/'}: {diagnostic.message}"


def _cached(cache: CompileCache, what: str, request: Any, vocab: Vocabulary, limits: Limits,
            options: dict[str, Any], build: Callable[[], CompiledGrammar]) -> CompiledGrammar:
    """`build()`'s grammar through `cache`, keyed by the request, its options and limits."""
    if not isinstance(cache, CompileCache):
        raise TypeError(f"cache must be a CompileCache, got {type(cache).__name__}")
    if not isinstance(limits, Limits):
        raise TypeError(f"limits must be a Limits, got {type(limits).__name__}")
    return cache.get(what, request, {**options, "limits": dataclasses.asdict(limits)}, vocab,
                     build)
