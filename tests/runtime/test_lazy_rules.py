"""Rule automata built as matchers reach them (`runtime/pushdown/assembly.py`) against the
same rules built whole: bit-identical masks along walks on random grammars, the test
grammars and schemas; the compiler's facts (`lowering/rule_facts.py`) equal to those the
complete table derives (a table built from its arrays derives them and checks the given ones
equal: an extension keeps the compiler's); the state budget is an error at
the step that passes it, leaving the matcher as it was; a lazily built table shared by threads
and pickled whole."""
from __future__ import annotations

import json
import pickle
import random
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grammask.compiler import (
    BudgetExceeded,
    GrammarError,
    Limits,
    compile_gbnf,
    compile_grammar,
    compile_json_schema,
    compile_structural_tag,
)
from grammask.runtime import (
    CompiledGrammar,
    Matcher,
    Vocabulary,
    allocate_token_bitmask,
    batch_fill_next_token_bitmask,
)
from grammask.runtime.pushdown import assembly
from grammask.runtime.pushdown.assembly import RuleAutomaton, assemble, extended
from grammask.runtime.pushdown.table import PushdownTable

from ..support.budget import examples
from ..support.cfg_strategies import grammars
from ..support.paths import DATA
from ..support.vocabularies import small_vocabulary

LAZY = Limits(max_inline_states=1)
"""Limits under which no inlined attempt fits, so every recursive grammar keeps its rules as
rules, built lazily."""


def lazy_and_whole(compile_lazy) -> tuple[CompiledGrammar, CompiledGrammar]:  # type: ignore[no-untyped-def]
    """Two compiles of one grammar: as compiled (lazy), and with every rule built first; the
    same twice for a DFA."""
    lazy, other = compile_lazy(), compile_lazy()
    if other.pushdown is None:
        return lazy, other
    t = other.automaton
    rederived = PushdownTable(t.byte_class, t.transitions, t.accepting, t.call_offsets,
                              t.call_rule, t.call_next, t.state_rule, t.rule_start,
                              t.start_rule, t.rule_names, t.rule_tokens, t.relax,
                              t.nullable, t.follow, t.can_end)
    whole = CompiledGrammar(other.vocab, pushdown=rederived, source=other.source,
                            named_tokens=other.named_tokens)
    assert whole.pushdown is not None and whole.pushdown.complete
    return lazy, whole


def same_walks(lazy: CompiledGrammar, whole: CompiledGrammar, seed: int, steps: int) -> int:
    """Walk both with the same random allowed tokens, asserting equal masks and answers at
    each step; the steps taken."""
    rng = random.Random(seed)
    vocab = lazy.vocab
    a, b = Matcher(lazy), Matcher(whole)
    bm = allocate_token_bitmask(2, vocab.size)
    eos = set(vocab.eos_token_ids.tolist())
    for k in range(steps):
        a.fill_next_token_bitmask(bm, 0)
        b.fill_next_token_bitmask(bm, 1)
        assert np.array_equal(bm[0], bm[1]), f"masks differ after {k} tokens"
        assert a.can_terminate() == b.can_terminate()
        allowed = np.flatnonzero(np.unpackbits(bm[0].view(np.uint8), bitorder="little"))
        allowed = [int(t) for t in allowed if t < vocab.size and int(t) not in eos]
        if not allowed:
            return k
        tid = rng.choice(allowed)
        assert a.accept_token(tid) and b.accept_token(tid)
    return steps


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(grammar=grammars(), seed=st.integers(0, 2**16))
def test_random_grammars_lazy_masks_equal_whole(grammar, seed: int) -> None:  # type: ignore[no-untyped-def]
    vocab = small_vocabulary()
    try:
        lazy, whole = lazy_and_whole(lambda: compile_grammar(grammar, vocab, limits=LAZY))
    except (GrammarError, BudgetExceeded):
        return
    same_walks(lazy, whole, seed, 30)


GBNF = ("json.gbnf", "arithmetic.gbnf", "list.gbnf", "c.gbnf", "chess.gbnf")


@pytest.mark.parametrize("name", GBNF)
def test_grammars_lazy_masks_equal_whole(name: str) -> None:
    text, vocab = (DATA / "gbnf" / name).read_text(), Vocabulary.default()
    lazy, whole = lazy_and_whole(lambda: compile_gbnf(text, vocab, limits=LAZY))
    table = lazy.pushdown
    assert table is not None and (table.n_rules == 1 or not table.complete)
    for seed in range(3):
        same_walks(lazy, whole, seed, 40)


def _sample() -> list[dict]:
    return [json.loads(line) for line in (DATA / "json_schema_sample.jsonl").open()]


def test_schemas_lazy_masks_equal_whole() -> None:
    """Every vendored schema, its rules kept and built lazily, walked at random by both."""
    vocab = Vocabulary.default()
    walked = 0
    for row in _sample():
        try:
            lazy, whole = lazy_and_whole(
                lambda: compile_json_schema(row["schema"], vocab, limits=LAZY))
        except (GrammarError, BudgetExceeded):
            continue
        if lazy.pushdown is None or lazy.pushdown.complete:
            continue
        for seed in range(2):
            same_walks(lazy, whole, seed, 50)
        walked += 1
    assert walked >= 20


def test_first_mask_builds_few_rules() -> None:
    """A schema with many definitions builds only the rules its first steps reach."""
    defs = {f"d{i}": {"type": "object", "properties": {f"p{i}": {"$ref": f"#/$defs/d{i + 1}"}}}
            for i in range(60)}
    defs["d60"] = {"type": "integer"}
    schema = {"$defs": defs, "type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}}
    vocab = Vocabulary.default()
    compiled = compile_json_schema(schema, vocab, limits=LAZY)
    Matcher(compiled).fill_next_token_bitmask(allocate_token_bitmask(1, vocab.size))
    stats = compiled.stats()
    assert stats["kind"] == "pushdown"
    assert 0 < stats["rules_built"] < stats["rules"] / 2, stats
    compiled.automaton
    assert compiled.stats()["rules_built"] == stats["rules"]


def test_state_budget_is_an_error_at_the_step() -> None:
    """A budget the start rule fits but the nested rules pass: the step that reaches them
    raises the budget error, and the matcher is as it was."""
    text = 'root ::= "[" item "]"\nitem ::= "(" item ")" | "x" [a-z]{0,40} | root\n'
    vocab = small_vocabulary()
    limits = Limits(max_inline_states=1, max_pushdown_states=8)
    compiled = compile_gbnf(text, vocab, limits=limits)  # the start rule fits the budget
    m = Matcher(compiled)
    for _ in range(2):  # the failed step changed nothing, and fails again
        with pytest.raises(BudgetExceeded) as info:
            m.accept_token(ord("["))
        assert info.value.limit == "max_pushdown_states"
        assert info.value.__context__ is None
        assert m.num_rollback_steps == 0 and not m.is_terminated()


def test_threads_share_a_lazy_table() -> None:
    vocab = small_vocabulary()
    text = (DATA / "gbnf" / "json.gbnf").read_text()
    lazy, whole = lazy_and_whole(lambda: compile_gbnf(text, vocab, limits=LAZY))
    errors: list[BaseException] = []

    def run(seed: int) -> None:
        try:
            same_walks(lazy, whole, seed, 40)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


@pytest.mark.parametrize("threads", [1, 2])
def test_batches_build_rules_as_their_matchers_reach_them(threads: int) -> None:
    """A batch over a lazy table: fills that meet an unbuilt rule or a state without its set
    leave the compiled call for the matcher's own fill, and every row equals one-by-one."""
    vocab = small_vocabulary()
    compiled = compile_gbnf((DATA / "gbnf" / "json.gbnf").read_text(), vocab, limits=LAZY)
    docs = [list(json.dumps({f"k{i}": list(range(i * 3)), "s": {"t": [True, None, "x" * i]}})
                 .encode()) for i in range(8)]
    matchers = [Matcher(compiled) for _ in docs]
    batch = allocate_token_bitmask(len(docs), vocab.size)
    expected = allocate_token_bitmask(len(docs), vocab.size)
    built = compiled.stats()["rules_built"]
    for step in range(max(map(len, docs))):
        batch_fill_next_token_bitmask(matchers, batch, max_threads=threads)
        for i, m in enumerate(matchers):
            m.fill_next_token_bitmask(expected, i)
        assert np.array_equal(batch, expected), step
        for m, doc in zip(matchers, docs):
            if step < len(doc):
                assert m.accept_token(doc[step])
    assert compiled.stats()["rules_built"] > built


def test_pickled_lazy_grammar_is_whole() -> None:
    vocab = small_vocabulary()
    text = (DATA / "gbnf" / "json.gbnf").read_text()
    lazy = compile_gbnf(text, vocab, limits=LAZY)
    assert not lazy.pushdown.complete  # type: ignore[union-attr]
    loaded = pickle.loads(pickle.dumps(lazy))
    assert loaded.pushdown.complete and loaded.pushdown.source is None
    same_walks(lazy, loaded, 3, 40)


def test_rule_automaton_is_checked() -> None:
    bc = np.zeros(256, dtype=np.int32)
    bc[ord("a")] = 1
    good = dict(transitions=np.array([[-1, 1], [-1, -1]], dtype=np.int32), byte_class=bc,
                accepting=np.array([False, True]), called=np.zeros(0, dtype=np.int32))
    RuleAutomaton(**good)
    with pytest.raises(ValueError, match="trimmed"):  # checked by the table it goes into
        assemble({0: RuleAutomaton(**{**good, "accepting": np.array([False, False])})}, ("a",), 0)
    with pytest.raises(TypeError, match="int32"):
        RuleAutomaton(**{**good, "called": np.zeros(0, dtype=np.int64)})
    with pytest.raises(ValueError, match="lie in"):
        RuleAutomaton(**{**good, "transitions": np.array([[-1, 2], [-1, -1]], dtype=np.int32)})
    with pytest.raises(ValueError, match="needs nullable"):
        assemble({0: RuleAutomaton(**good)}, ("a", "b"), 0)
    table = assemble({0: RuleAutomaton(**good)}, ("a",), 0)
    assert table.complete and table.source is None


def test_a_rule_over_budget_fails_only_the_steps_that_need_it() -> None:
    """B is over `max_dfa_states`; reaching C also tries B ahead of need, which must not fail
    the steps that need only C. B is needed by the first step whose tokens can reach it (a
    fill: some token ends in B's first bytes), which raises its error and changes nothing."""
    gap = "q" * 16  # longer than any token of the vocabulary
    text = f'root ::= "a" c "{gap}" b\nc ::= "x" c | "y"\nb ::= [ab]* "a" [ab]{{8}}\n'
    vocab = small_vocabulary()
    compiled = compile_gbnf(text, vocab, limits=Limits(max_inline_states=1, max_dfa_states=100))
    m = Matcher(compiled)
    bm = allocate_token_bitmask(1, vocab.size)
    accepted = 0
    with pytest.raises(BudgetExceeded) as info:
        for ch in "axy" + gap:
            m.fill_next_token_bitmask(bm)
            assert m.accept_token(ord(ch))
            accepted += 1
    assert accepted >= 3 + len(gap) - 14
    assert info.value.limit == "max_dfa_states" and "rule 'b'" in str(info.value)
    with pytest.raises(BudgetExceeded):
        m.fill_next_token_bitmask(bm)


def test_marked_rules_are_built_when_reached_and_past_the_inlining_budget() -> None:
    """Tool arguments (rules a structural tag marks to stay rules) are built when a call
    reaches them; one over the inlining budget is built within `max_dfa_states` instead of
    failing, since the compile can no longer fall back to keeping every rule."""
    pattern = "^(a|b)*a(a|b){6}$"  # 128+ DFA states, over the inlining budget below
    tags = [{"begin": f"<{name}>", "content": {"type": "json_schema", "json_schema": {
        "type": "string", "pattern": pattern}}, "end": f"</{name}>"} for name in ("f", "g", "h")]
    spec = {"type": "structural_tag", "format": {
        "type": "triggered_tags", "triggers": ["<"], "tags": tags}}
    vocab = small_vocabulary()
    limits = Limits(max_inline_states=64)
    compiled = compile_structural_tag(spec, vocab, limits=limits)
    assert compiled.stats()["rules_built"] < compiled.stats()["rules"]
    m = Matcher(compiled)
    assert m.accept_string('hi <g>"bbab') and m.accept_string('aaaab"</g>') and m.can_terminate()
    assert not Matcher(compiled).accept_string('<g>"ab"</g>')  # the pattern needs 7 more
    with pytest.raises(BudgetExceeded):  # past max_dfa_states itself: an error at the step
        Matcher(compile_structural_tag(spec, vocab, limits=Limits(
            max_inline_states=64, max_dfa_states=100))).accept_string('<g>"')


def _partition_refines_every_rule(table) -> None:  # type: ignore[no-untyped-def]
    """The source's byte partition refines each rule's byte classes; built one extension at a
    time, with the partition used from the first state on, the table's classes change at
    most once (where the partition refines them), whatever the order rules come in."""
    source = table.source
    partition = source.byte_partition()
    if partition is None:
        return
    n = int(partition.max()) + 1
    assert partition.shape == (256,) and len(np.unique(partition)) == n
    for r in range(table.n_rules):
        try:
            a = source.build(r)
        except BudgetExceeded:
            continue
        pairs = np.unique(np.stack([partition, a.byte_class]), axis=1)
        assert pairs.shape[1] == n, table.rule_names[r]  # one rule class per partition class
    threshold, assembly.PARTITION_FROM_STATES = assembly.PARTITION_FROM_STATES, 0
    try:
        changes = 0
        while not table.complete:
            try:
                grown = extended(table, int(np.flatnonzero(table.rule_start < 0)[-1]))
            except BudgetExceeded:
                break
            changes += not np.array_equal(grown.byte_class, table.byte_class)
            assert len(np.unique(grown.byte_class)) == grown.n_classes
            table = grown
        assert changes <= 1
    finally:
        assembly.PARTITION_FROM_STATES = threshold


@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(grammar=grammars())
def test_random_grammars_byte_partition_refines_every_rule(grammar) -> None:  # type: ignore[no-untyped-def]
    try:
        compiled = compile_grammar(grammar, small_vocabulary(), limits=LAZY)
    except (GrammarError, BudgetExceeded):
        return
    table = compiled.pushdown
    if table is not None and not table.complete:
        _partition_refines_every_rule(table)


def test_grammars_and_schemas_byte_partition_refines_every_rule() -> None:
    vocab = Vocabulary.default()
    compiles = [lambda name=name: compile_gbnf((DATA / "gbnf" / name).read_text(), vocab,
                                               limits=LAZY) for name in GBNF]
    compiles += [lambda row=row: compile_json_schema(row["schema"], vocab, limits=LAZY)
                 for row in _sample()]
    checked = 0
    for compile_one in compiles:
        try:
            table = compile_one().pushdown
        except (GrammarError, BudgetExceeded):
            continue
        if table is not None and not table.complete:
            _partition_refines_every_rule(table)
            checked += 1
    assert checked >= 20


def test_a_large_recursive_schema_with_marked_rules_keeps_its_rules_at_once() -> None:
    """Marked rules (a long string's chunks) do not make a large recursive grammar try
    inlining first; a raised `max_inline_states` still asks for the attempt, whose table
    gives the same masks."""
    schema = {"type": "object", "properties": {
        **{f"p{i}": {"type": "string"} for i in range(40)},
        "child": {"$ref": "#"}, "text": {"type": "string", "maxLength": 1000}}}
    vocab = small_vocabulary()
    kept = compile_json_schema(schema, vocab)
    assert "since the grammar is large" in kept.notes[0]
    tried = compile_json_schema(schema, vocab, limits=Limits(max_inline_states=100_000))
    assert "since the grammar is large" not in tried.notes[0]
    for seed in range(3):
        same_walks(kept, tried, seed, 40)
