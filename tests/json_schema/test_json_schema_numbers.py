"""JSON number languages under numeric JSON Schema keywords, checked against exact arithmetic.

The oracle is independent of the construction: a text is expected to be accepted iff it is
JSON number syntax (a regex), it lies in the documented subset (no exponent once any constraint
is given, but for bounds at zero only), and its exact `Fraction` value satisfies the
constraints.
"""
from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler import Limits
from tests.support.equivalence import dfa_difference
from grammask.compiler.support.errors import BudgetExceeded, GrammarError
from grammask.compiler.ir.nodes import Node
from grammask.compiler.frontends.json_schema.numbers import number_node
from grammask.compiler.automata.nfa import build_nfa
from grammask.compiler.automata.build import ir_to_dfa
from grammask.compiler.frontends.regex import parse_regex

from ..support.budget import examples
from ..support.paths import JSON_SCHEMA_SUITE

NUMBER_RE = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
SUITE = JSON_SCHEMA_SUITE


@dataclass(frozen=True)
class Constraints:
    """The arguments of one `number_node` call, and the oracle judging a text against them."""

    integer: bool = False
    lo: Fraction | None = None
    lo_strict: bool = False
    hi: Fraction | None = None
    hi_strict: bool = False
    m: Fraction | None = None

    @property
    def constrained(self) -> bool:
        return self.integer or self.lo is not None or self.hi is not None or self.m is not None

    def satisfied_by(self, v: Fraction) -> bool:
        return ((not self.integer or v.denominator == 1)
                and (self.lo is None or (v > self.lo if self.lo_strict else v >= self.lo))
                and (self.hi is None or (v < self.hi if self.hi_strict else v <= self.hi))
                and (self.m is None or (v / self.m).denominator == 1))

    @property
    def by_sign(self) -> bool:
        """Only bounds at zero: exponents stay allowed (the sign decides)."""
        return not self.integer and self.m is None and {self.lo, self.hi} <= {None, 0}

    def expected(self, text: str) -> bool:
        if not NUMBER_RE.fullmatch(text):
            return False
        if self.constrained and not self.by_sign and re.search("[eE]", text):
            return False
        return self.satisfied_by(Fraction(text))

    def node(self) -> Node:
        return number_node(integer=self.integer, minimum=self.lo, maximum=self.hi,
                           exclusive_minimum=self.lo_strict, exclusive_maximum=self.hi_strict,
                           multiple_of=self.m, pointer="/properties/x")


def render(v: Fraction, zeros: int = 0) -> str:
    """The plain decimal text of a finite decimal, with `zeros` extra fractional zeros."""
    with localcontext() as ctx:
        ctx.prec = 400
        text = format(Decimal(v.numerator) / Decimal(v.denominator), "f")
    if zeros:
        text += ("" if "." in text else ".") + "0" * zeros
    return text


def is_decimal(v: Fraction) -> bool:
    d = v.denominator
    while d % 2 == 0:
        d //= 2
    while d % 5 == 0:
        d //= 5
    return d == 1


small = st.builds(lambda n, k: Fraction(n, 10 ** k), st.integers(-3000, 3000), st.integers(0, 3))
large = st.builds(lambda n, k: Fraction(n * 10 ** k), st.integers(-99, 99), st.integers(0, 22))
values = st.one_of(small, small, large, st.integers(-12, 12).map(Fraction))
steps = st.one_of(
    st.integers(1, 12).map(Fraction),
    st.sampled_from(["0.5", "0.25", "2.5", "0.01", "1.5", "0.2", "0.0001", "0.75", "12.5", "0.3"]
                    ).map(Fraction),
    st.sampled_from([Fraction(1, 3), Fraction(2, 3), Fraction(7, 6)]),
)


@st.composite
def constraints(draw, with_step: bool) -> Constraints:  # type: ignore[no-untyped-def]
    """Int, short decimal and large bounds, often absent, sometimes empty, sometimes close
    together or symmetric around 0; a step when `with_step`."""
    lo, hi = draw(st.none() | values), draw(st.none() | values)
    if lo is not None and hi is not None and lo > hi and draw(st.integers(0, 4)):
        lo, hi = hi, lo
    if lo is not None and not draw(st.integers(0, 3)):
        hi = lo + draw(st.builds(lambda n, k: Fraction(n, 10 ** k), st.integers(0, 999),
                                 st.integers(0, 4)))
    elif lo is not None and not draw(st.integers(0, 5)):
        lo, hi = -abs(lo), abs(lo)
    return Constraints(
        integer=draw(st.booleans()), lo=lo, lo_strict=lo is not None and draw(st.booleans()),
        hi=hi, hi_strict=hi is not None and draw(st.booleans()),
        m=draw(steps) if with_step and draw(st.integers(0, 5)) else None)


def random_syntax(rnd: random.Random) -> str:
    """A digit string with optional sign, point and exponent; leading zeros are kept."""
    def digits(lo: int, hi: int) -> str:
        return "".join(rnd.choice("0123456789") for _ in range(rnd.randint(lo, hi)))
    text = rnd.choice(["", "-"]) + digits(1, 4)
    if rnd.random() < 0.6:
        text += "." + digits(0, 4)
    if rnd.random() < 0.3:
        text += rnd.choice("eE") + rnd.choice(["", "+", "-"]) + digits(1, 2)
    return text


@st.composite
def texts(draw, c: Constraints) -> list[str]:  # type: ignore[no-untyped-def]
    """Texts near the bounds, zero and multiples of the step, values inside the range, random
    syntax (leading zeros, `-0`, trailing zeros, exponents) and garbage."""
    rnd = random.Random(draw(st.integers(0, 2 ** 32)))
    centers = [Fraction(0)] + [b for b in (c.lo, c.hi) if b is not None]
    if c.lo is not None and c.hi is not None:
        centers += [c.lo + (c.hi - c.lo) * Fraction(rnd.randint(0, 1000), 1000) for _ in range(3)]
    if c.m is not None:
        centers += [c.m * (round(x / c.m) + d) for x in centers for d in (-1, 0, 1)]
    deltas = [Fraction(0), Fraction(1), Fraction(1, 10), Fraction(1, 1000)] + (
        [c.m] if c.m is not None else [])
    out: list[str] = []
    for v in centers:
        for d in deltas:
            for w in (v - d, v + d):
                if is_decimal(w):
                    out.append(render(w, rnd.choice([0, 0, 1, 3])))
    out += [t.replace("-", "", 1) if t.startswith("-") else "-" + t for t in out[:6]]
    out += ["-0", "-0.0", "0.000", "00", "01", "-", ".5", "5.", "1e2", "1.0e1", "-0e0"]
    out += [random_syntax(rnd) for _ in range(24)]
    out += ["".join(rnd.choice("-+.eE0123456789") for _ in range(rnd.randint(0, 7)))
            for _ in range(6)]
    return out


def check_iff(c: Constraints, candidates: list[str]) -> None:
    try:
        dfa = ir_to_dfa(c.node())
    except GrammarError as e:
        assert e.code == "empty-language" and e.pointer == "/properties/x", e
        assert not any(c.expected(t) for t in candidates)
        return
    assert not dfa.is_empty_language
    for t in candidates:
        assert dfa.fullmatch(t.encode()) == c.expected(t), (c, t)


@given(st.data())
@settings(max_examples=examples(350), deadline=None)
def test_bounds_and_integers_are_exact(data: st.DataObject) -> None:
    c = data.draw(constraints(with_step=False))
    check_iff(c, data.draw(texts(c)))


@given(st.data())
@settings(max_examples=examples(250), deadline=None)
def test_multiple_of_with_bounds_is_exact(data: st.DataObject) -> None:
    c = data.draw(constraints(with_step=True))
    check_iff(c, data.draw(texts(c)))


def all_short_texts() -> list[str]:
    """Every string of sign, one or two integer digits (leading zeros included) and an
    optional point with up to two fraction digits."""
    wholes = [str(d) for d in range(10)] + [f"{a}{b}" for a in range(10) for b in range(10)]
    fracs = ["", "."] + [f".{d}" for d in range(10)] + [f".{d:02d}" for d in range(100)]
    return [s + w + f for s in ("", "-") for w in wholes for f in fracs]


TYPICAL = [
    Constraints(lo=Fraction(0), hi=Fraction(100)),
    Constraints(lo=Fraction(0)), Constraints(lo=Fraction(0), lo_strict=True),
    Constraints(hi=Fraction(0)), Constraints(hi=Fraction(0), hi_strict=True),
    Constraints(lo=Fraction(0), hi=Fraction(0)),
    Constraints(integer=True, lo=Fraction(1)),
    Constraints(lo=Fraction("-1.5"), lo_strict=True, hi=Fraction("3.25")),
    Constraints(integer=True, lo=Fraction(0), hi=Fraction(1000), m=Fraction(7)),
    Constraints(lo=Fraction(0), lo_strict=True, hi=Fraction(1), hi_strict=True),
    Constraints(lo=Fraction(-10), hi=Fraction("20.5"), hi_strict=True, m=Fraction("0.25")),
    Constraints(hi=Fraction("-0.05")),
    Constraints(lo=Fraction(1), lo_strict=True, hi=Fraction("1.25")),
    Constraints(lo=Fraction(-5), lo_strict=True, hi=Fraction(5)),
    Constraints(m=Fraction("2.5")),
    Constraints(integer=True, hi=Fraction(0), hi_strict=True, m=Fraction(3)),
]


@pytest.mark.parametrize("c", TYPICAL, ids=lambda c: repr(c)[12:-1])
def test_typical_cases_exhaustively_on_short_texts(c: Constraints) -> None:
    dfa = ir_to_dfa(c.node())
    short = all_short_texts()
    for t in short + [t + e for t in short[::3] for e in ("e0", "E+2", "e-3", "e10")]:
        assert dfa.fullmatch(t.encode()) == c.expected(t), t


@pytest.mark.parametrize("kwargs, pattern", [
    ({}, r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?"),
    ({"integer": True}, r"-?(0|[1-9][0-9]*)(\.0+)?"),
    ({"multiple_of": Fraction("0.01")}, r"-?(0|[1-9][0-9]*)(\.[0-9]{1,2}0*)?"),
    ({"multiple_of": Fraction(1, 3)}, r"-?(0|[1-9][0-9]*)(\.0+)?"),
    ({"integer": True, "minimum": Fraction(10)}, r"[1-9][0-9]+(\.0+)?"),
    ({"maximum": Fraction(0), "exclusive_maximum": True},
     r"-(0\.0*[1-9][0-9]*|[1-9][0-9]*(\.[0-9]+)?)([eE][+-]?[0-9]+)?"),
    ({"maximum": Fraction("-0.5"), "exclusive_maximum": True},
     r"-(0\.(5[0-9]*[1-9]|[6-9])[0-9]*|[1-9][0-9]*(\.[0-9]+)?)"),
    ({"integer": True, "multiple_of": Fraction(2)}, r"-?(0|[1-9][0-9]*[02468])(\.0+)?|-?[02468](\.0+)?"),
])
def test_languages_equal_known_regexes(kwargs: dict, pattern: str) -> None:
    assert dfa_difference(ir_to_dfa(number_node(**kwargs)), ir_to_dfa(parse_regex(pattern))) is None


def test_large_bounds_stay_small() -> None:
    dfa = ir_to_dfa(number_node(maximum=Fraction("1e308")))
    assert dfa.n_states < 1000
    top = "1" + "0" * 308
    for t, ok in [(top, True), (top + ".000", True), (top + ".001", False), (top + "0", False),
                  ("9" * 308 + ".99", True), ("-" + top + "0", True), ("1e308", False)]:
        assert dfa.fullmatch(t.encode()) == ok, t[:12]
    dfa = ir_to_dfa(number_node(integer=True, minimum=-9007199254740993))
    assert dfa.n_states < 100
    for t, ok in [("-9007199254740993", True), ("-9007199254740993.0", True),
                  ("-9007199254740994", False), ("-10000000000000000", False),
                  ("-999999999999999", True), ("123456789012345678901234567890", True)]:
        assert dfa.fullmatch(t.encode()) == ok, t


def test_long_bounds_are_shallow_or_refused_by_budget() -> None:
    b = int("7" * 800)
    node, again = number_node(minimum=-b, maximum=b), number_node(minimum=-b, maximum=b)
    assert hash(node) == hash(again) and node == again
    huge = 10 ** 4400 + 1
    nfa = build_nfa(number_node(maximum=huge, limits=Limits(max_repeat=5000)),
                    Limits(max_repeat=5000))
    assert nfa.matches(b"1" + b"0" * 4399 + b"1") and nfa.matches(b"9" * 4400)
    assert not nfa.matches(b"1" + b"0" * 4399 + b"2")
    with pytest.raises(BudgetExceeded, match="max_repeat") as info:
        number_node(maximum=10 ** 20000, pointer="/maximum")
    assert info.value.pointer == "/maximum" and "maximum" in info.value.message


def test_large_step_with_narrow_bounds_is_enumerated() -> None:
    c = Constraints(integer=True, lo=Fraction(-30000), hi=Fraction(100000), m=Fraction(12345))
    dfa = ir_to_dfa(c.node())
    for k in range(-4, 12):
        for t in (str(k * 12345), f"{k * 12345}.00", str(k * 12345 + 1)):
            assert dfa.fullmatch(t.encode()) == c.expected(t), t
    assert dfa.fullmatch(b"-0")


@pytest.mark.parametrize("kwargs, code, words", [
    ({"multiple_of": 0}, "invalid-schema", "multipleOf"),
    ({"multiple_of": Fraction(-1, 2)}, "invalid-schema", "multipleOf"),
    ({"minimum": 5, "maximum": 3}, "empty-language", "minimum 5, maximum 3"),
    ({"minimum": 1, "maximum": 1, "exclusive_maximum": True}, "empty-language", "exclusiveMaximum"),
    ({"integer": True, "minimum": Fraction("2.1"), "maximum": Fraction("2.9")}, "empty-language",
     "integer"),
    ({"minimum": 1, "maximum": 6, "multiple_of": 7}, "empty-language", "multipleOf 7"),
    ({"maximum": Fraction(1, 3)}, "invalid-schema", "maximum 1/3"),
    ({"exclusive_minimum": True}, "invalid-schema", "exclusiveMinimum"),
    ({"integer": True, "multiple_of": Fraction("0.123456789")}, "budget", "multipleOf"),
])
def test_bad_constraints_are_reported_with_the_pointer(kwargs: dict, code: str, words: str) -> None:
    with pytest.raises(GrammarError) as info:
        number_node(pointer="/properties/n", **kwargs)
    assert info.value.code == code and info.value.pointer == "/properties/n"
    assert words in info.value.message and str(info.value).startswith("/properties/n: ")
    assert isinstance(info.value, BudgetExceeded) == (code == "budget")


def test_values_must_be_exact() -> None:
    with pytest.raises(TypeError, match="exact"):
        number_node(maximum=0.1)  # type: ignore[arg-type]
    with pytest.raises(GrammarError) as info:
        number_node(minimum=Decimal("NaN"), pointer="/minimum")
    assert info.value.code == "invalid-schema" and "minimum" in info.value.message
    dfa = ir_to_dfa(number_node(minimum=Decimal("0.1"), maximum=Fraction(1, 5)))
    assert dfa.fullmatch(b"0.1") and dfa.fullmatch(b"0.2") and not dfa.fullmatch(b"0.09")


def suite_cases() -> list[tuple[str, dict, str, bool]]:
    """(description, schema, instance text, valid) for the numeric instances of the suite's
    groups whose schema uses only numeric keywords and `type`."""
    cases = []
    for name in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "type"):
        for group in json.loads((SUITE / f"{name}.json").read_text(), parse_float=Decimal):
            schema = group["schema"]
            if not isinstance(schema, dict) or not set(schema) - {"$schema"} <= {
                    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
                    "type"}:
                continue
            for test in group["tests"]:
                data = test["data"]
                if isinstance(data, (int, Decimal)) and not isinstance(data, bool):
                    text = json.dumps(float(data) if isinstance(data, Decimal) else data)
                    cases.append((f"{name}: {group['description']}: {test['description']}",
                                  schema, text, test["valid"]))
    return cases


def suite_node(schema: dict):  # type: ignore[no-untyped-def]
    """(number_node for a schema, whether it constrains numbers), or None when the schema
    admits no number type."""
    types = schema.get("type", ["number"])
    types = [types] if isinstance(types, str) else types
    if "number" not in types and "integer" not in types:
        return None
    constrained = "number" not in types or bool(set(schema) - {"$schema", "type"})
    lows = [(Fraction(schema[k]), k == "exclusiveMinimum")
            for k in ("minimum", "exclusiveMinimum") if k in schema]
    highs = [(Fraction(schema[k]), k == "exclusiveMaximum")
             for k in ("maximum", "exclusiveMaximum") if k in schema]
    lo = max(lows, default=(None, False))
    hi = min(highs, key=lambda b: (b[0], not b[1]), default=(None, False))
    step = schema.get("multipleOf")
    node = number_node(integer="number" not in types, minimum=lo[0], exclusive_minimum=lo[1],
                       maximum=hi[0], exclusive_maximum=hi[1],
                       multiple_of=None if step is None else Fraction(step), pointer="")
    return node, constrained


@pytest.mark.skipif(not SUITE.is_dir(), reason="JSON-Schema-Test-Suite corpus not present")
def test_json_schema_test_suite_numeric_instances() -> None:
    agreed, outside, unsupported, mismatches = 0, 0, 0, []
    for description, schema, text, valid in suite_cases():
        try:
            built = suite_node(schema)
        except BudgetExceeded:
            unsupported += 1
            continue
        if built is None:
            assert not valid, description
            agreed += 1
            continue
        node, constrained = built
        accepted = ir_to_dfa(node).fullmatch(text.encode())
        if constrained and re.search("[eE]", text):
            assert not accepted, description
            outside += 1
        elif accepted == valid:
            agreed += 1
        else:
            mismatches.append((description, text, valid))
    assert not mismatches
    assert agreed >= 30 and outside + unsupported <= 2, (agreed, outside, unsupported)
