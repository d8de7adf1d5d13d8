"""Runtime bounds: a step past `max_step_work` or a recognizer past `max_earley_items` raises
`MatcherBudgetExceeded` naming the bound and leaves the matcher as it was; the bounds come
from the compile's `Limits`, travel with the compiled grammar (pickles too) and can be
overridden per matcher."""
from __future__ import annotations

import pickle

import pytest

from grammask.compiler import compile_gbnf
from grammask.compiler.cli.main import main
from grammask.compiler.support.limits import Limits
from grammask.runtime import (
    Matcher,
    MatcherBudgetExceeded,
    MatcherError,
    RuntimeLimits,
    Vocabulary,
    allocate_token_bitmask,
)

from ..support.grammars import JSON_GBNF
from ..support.masks import observable_state
from ..support.vocabularies import small_vocabulary

# Every split of a run of a's is a parse: each byte completes O(n) items, each with O(n)
# callers, so the work of one step grows with the text.
AMBIGUOUS = 'root ::= s\ns ::= s s | "a"\n'
NESTED = 'root ::= x\nx ::= "[" x "]" | "a"\n'
ROOMY = RuntimeLimits(max_step_work=10**12, max_earley_items=1 << 30)


def seen(m: Matcher) -> tuple:
    """What a matcher in the same state shows, observed without the bounds."""
    observer = m.fork()
    observer.limits = ROOMY
    return observable_state(observer)


def test_step_work_bound_raises_and_changes_nothing() -> None:
    vocab = small_vocabulary()
    compiled = compile_gbnf(AMBIGUOUS, vocab, limits=Limits(max_step_work=20_000))
    assert compiled.runtime_limits == RuntimeLimits(max_step_work=20_000)
    m = Matcher(compiled)
    a = ord("a")  # single bytes are ids 0-255
    accepted = 0
    with pytest.raises(MatcherBudgetExceeded) as info:
        for _ in range(1_000):
            assert m.accept_token(a)
            accepted += 1
    error = info.value
    assert error.limit == "max_step_work" and error.value == 20_000
    assert "max_step_work=20000" in str(error) and "--limit max_step_work=" in str(error)
    assert isinstance(error, MatcherError) and 10 < accepted < 1_000
    assert m.num_rollback_steps == accepted
    before = seen(m)
    with pytest.raises(MatcherBudgetExceeded):
        m.accept_token(a)
    assert seen(m) == before
    m.rollback(5)
    assert m.accept_token(a)
    roomy = Matcher(compiled, limits=ROOMY)
    assert all(roomy.accept_token(a) for _ in range(accepted + 5))


def test_a_fill_past_the_step_bound_raises_and_changes_nothing() -> None:
    # Inside nested JSON, tokens like '"}},' leave the inner object's rule: the fill checks
    # them against the real Earley sets, which is Earley work.
    m = Matcher(compile_gbnf(JSON_GBNF, Vocabulary.default()))
    assert m.accept_string('{"a": {"b": "c')
    bitmask = allocate_token_bitmask(1, m.vocab_size)
    m.fill_next_token_bitmask(bitmask)
    tight = m.fork()
    tight.limits = RuntimeLimits(max_step_work=1)
    with pytest.raises(MatcherBudgetExceeded, match="fill_next_token_bitmask"):
        tight.fill_next_token_bitmask(bitmask)
    assert seen(tight) == observable_state(m)


def test_item_bound_raises_and_changes_nothing() -> None:
    vocab = small_vocabulary()
    compiled = compile_gbnf(NESTED, vocab, limits=Limits(max_earley_items=4_096))
    m = Matcher(compiled)
    bracket = ord("[")
    depth = 0
    with pytest.raises(MatcherBudgetExceeded) as info:
        for _ in range(100_000):
            assert m.accept_token(bracket)
            depth += 1
    assert info.value.limit == "max_earley_items" and "max_earley_items=4096" in str(info.value)
    assert 100 < depth < 4_096
    before = seen(m)
    with pytest.raises(MatcherBudgetExceeded):
        m.accept_token(bracket)
    assert seen(m) == before
    m.limits = ROOMY
    assert m.accept_string(b"a" + b"]" * depth) and m.can_terminate()


def test_runtime_limits_are_validated_and_pickled() -> None:
    for bad in (0, -1, 1.5, True, None):
        with pytest.raises(ValueError):
            RuntimeLimits(max_step_work=bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            Limits(max_earley_items=bad)  # type: ignore[arg-type]
    compiled = compile_gbnf(NESTED, small_vocabulary(), limits=Limits(max_step_work=77))
    assert pickle.loads(pickle.dumps(compiled)).runtime_limits.max_step_work == 77
    with pytest.raises(TypeError):
        Matcher(compiled, limits={"max_step_work": 5})  # type: ignore[arg-type]


def test_cli_check_reports_a_runtime_bound(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    grammar = tmp_path / "ambiguous.gbnf"
    grammar.write_text(AMBIGUOUS, encoding="utf-8")
    code = main(["check", str(grammar), "a" * 200, "--limit", "max_step_work=1000"])
    out, err = capsys.readouterr()
    assert code != 0 and "Traceback" not in out + err
    assert "max_step_work=1000" in out + err
