"""Numbers of a schema are read exactly: a schema text's numbers as decimals (never floats), a
dict's `Decimal`s at their own value, a dict's floats at their shortest repr.

Each case would fail with float parsing: `1e-400` becoming 0, a 22-digit fraction rounding to
0.1, an integer past 2**53 rounding to its even neighbour, `1e400` becoming infinite.
"""
from __future__ import annotations

from decimal import Decimal, localcontext
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler import BudgetExceeded, GrammarError, Limits
from grammask.compiler.frontends.json_schema import load_schema
from grammask.compiler import compile_json_schema
from grammask.compiler.analyses.json_schema import lint_schema
from grammask.compiler.frontends.json_schema.numbers import number_node
from grammask.compiler.frontends.json_schema.values import (
    canonical, exact_number, json_type, number_digits,
)
from grammask.compiler.automata.build import ir_to_dfa
from tests.support.json_schema_suite import accepts, byte_vocabulary

from ..support.budget import examples

LONG = "0.1000000000000000000001"
BIG = 9007199254740993  # 2**53 + 1: no float has this value


def check(schema: object, valid: list[str], invalid: list[str], **options: object) -> None:
    c = compile_json_schema(schema, byte_vocabulary(), **options)
    for text in valid:
        assert accepts(c, text), f"{text[:80]!r} rejected by {str(schema)[:80]}"
    for text in invalid:
        assert not accepts(c, text), f"{text[:80]!r} accepted by {str(schema)[:80]}"


def zeros(n: int, last: str = "1") -> str:
    """0.<n zeros><last>."""
    return "0." + "0" * n + last


def test_tiny_minimum_is_not_zero() -> None:
    check('{"minimum": 1e-400}', ["1", zeros(399), zeros(398), zeros(399, "10")],
          ["0", "-0", "0.0", zeros(400), "-1", "1e-400"])
    check('{"exclusiveMinimum": 1E-400}', [zeros(399, "11"), zeros(398)],
          [zeros(399), "0", zeros(400)])
    check('{"maximum": -1e-400}', ["-" + zeros(399), "-1"], ["0", "-" + zeros(400)])


def test_long_const_is_its_own_value() -> None:
    check(f'{{"const": {LONG}}}', [LONG, LONG + "0", LONG + "000"],
          ["0.1", "0.1000000000000000000002", "0.10000000000000000000011", "-" + LONG])
    check(f'{{"const": {LONG}e1}}', ["1.000000000000000000001"], ["1", LONG])


def test_long_enum_members_stay_distinct() -> None:
    other = "0.1000000000000000000002"
    check(f'{{"enum": [{LONG}, {other}]}}', [LONG, other], ["0.1", "0.1000000000000000000003"])
    data = load_schema(f'{{"enum": [{LONG}, {other}, 0.1]}}')
    assert len({canonical(v) for v in data["enum"]}) == 3


def test_integers_past_two_to_the_53_as_decimals() -> None:
    check(f'{{"type": "integer", "maximum": {BIG}.0}}', [str(BIG), str(BIG - 1)],
          [str(BIG + 1), f"{BIG}.5"])
    check(f'{{"type": "integer", "minimum": {BIG}.0}}', [str(BIG), f"{BIG}.000"],
          [str(BIG - 1)])
    check(f'{{"const": {BIG}.0}}', [str(BIG), f"{BIG}.0"], [str(BIG - 1), str(BIG + 1)])
    check(f'{{"exclusiveMaximum": {BIG}.5}}', [str(BIG), f"{BIG}.4999"], [f"{BIG}.5"])


def test_huge_maximum_is_finite() -> None:
    check('{"maximum": 1e400}', ["1" + "0" * 400, "9" * 400, "-5", "0"],
          ["1" + "0" * 400 + ".1", "1" + "0" * 401])
    check('{"type": "integer", "maximum": 1E+400}', ["1" + "0" * 400, "1" + "0" * 400 + ".0"],
          ["1" + "0" * 399 + "1", "1" + "0" * 400 + ".5"])


def test_multiple_of_and_bounds_from_text() -> None:
    check('{"multipleOf": 0.1}', ["0.3", "1.1", "-0.7", "2"], ["0.35", "0.01"])
    # A float would make this bound 0.3 and exclude 0.3 itself.
    check('{"multipleOf": 0.1, "exclusiveMaximum": 0.30000000000000000001}',
          ["0.3", "0.2", "-5"], ["0.4", "0.31"])
    check('{"multipleOf": 1e-25, "minimum": 0, "maximum": 1}',
          [zeros(24), "1", "0.5"], [zeros(25), "1.1", "-" + zeros(24)])


def test_negative_zero_and_uppercase_exponents() -> None:
    check('{"const": -0.0}', ["0", "-0", "0.0", "-0.000"], ["1", "-1", "0.1"])
    check('{"type": "integer", "const": -0.0}', ["0"], ["1"])
    check('{"const": 1E2}', ["100", "100.0"], ["10", "1000", "1E2", "101"])
    check('{"type": "integer", "minimum": 1.5E0, "maximum": 3.00E+0}', ["2", "3", "3.0"],
          ["1", "4", "2.5"])
    check('{"maximum": 0e99999999999999999999}', ["0", "-1"], ["1", "0.1"])


def test_json_equality() -> None:
    ones = [1, 1.0, Decimal("1.0"), Decimal("1E0"), Decimal("0.1E1"), Decimal("10E-1")]
    assert len({canonical(v) for v in ones}) == 1
    assert canonical(True) != canonical(1) and canonical(False) != canonical(0)
    assert canonical(Decimal("-0.0")) == canonical(0) == canonical(-0.0)
    assert canonical([Decimal("2.50"), {"a": 1}]) == canonical([2.5, {"a": 1.0}])
    assert canonical(Decimal(LONG)) != canonical(0.1)
    assert canonical(Decimal("1E+400")) == canonical(10 ** 400)
    assert json_type(Decimal("1E2")) == "integer" and json_type(Decimal("100.0")) == "integer"
    assert json_type(Decimal("1.5")) == "number" and json_type(Decimal("1E-2")) == "number"
    assert json_type(True) == "boolean" and json_type(Decimal("-0.0")) == "integer"
    assert exact_number(Decimal("1E-400")) == Fraction(1, 10 ** 400)
    assert exact_number(0.1) == Fraction(1, 10) and exact_number(Decimal("0.1")) == Fraction(1, 10)
    check('{"enum": [1, 1.0, 1E0]}', ["1", "1.0"], ["true", "2"])
    check('{"const": true}', ["true"], ["1"])
    check('{"const": 1}', ["1", "1.00"], ["true"])


def test_number_digits() -> None:
    assert [number_digits(v) for v in (0, 7, -123, 10 ** 400, Decimal("0.001"), Decimal("1E3"),
                                       Decimal("1.50"), 2.5, Decimal("-0.0"))] == [
        1, 1, 3, 401, 4, 4, 2, 2, 1]
    # Counted from the exponent, never by writing the digits out.
    assert number_digits(Decimal("1E+999999999999999999")) == 10 ** 18
    assert number_digits(Decimal("1E-999999999999999999")) == 10 ** 18


def test_counts_read_from_decimals() -> None:
    check('{"maxLength": 2.0}', ['"ab"'], ['"abc"'])
    check('{"minLength": 2E0, "maxLength": 3.000}', ['"ab"', '"abc"'], ['"a"', '"abcd"'])
    check('{"type": "array", "maxItems": 1E0}', ["[]", "[1]"], ["[1, 2]"])
    for schema in ('{"maxLength": 2.5}', '{"minItems": -1.0}', '{"maxProperties": 1E-1}'):
        with pytest.raises(GrammarError) as info:
            compile_json_schema(schema, byte_vocabulary())
        assert info.value.code == "invalid-schema"


@pytest.mark.parametrize("schema, pointer", [
    ('{"maximum": 1e1000000000}', "/maximum"),
    ('{"minimum": -1e-1000000000}', "/minimum"),
    ('{"properties": {"a": {"enum": [1, 1e100000]}}}', "/properties/a/enum/1"),
    ('{"maxLength": 1E1000000000}', "/maxLength"),
    ('{"const": [1.5, {"x": 1e-100000}]}', "/const/1/x"),
])
def test_too_many_digits_are_refused_before_building(schema: str, pointer: str) -> None:
    """Refused by their digit count (a billion-digit integer built first would not finish)."""
    with pytest.raises(BudgetExceeded) as info:
        compile_json_schema(schema, byte_vocabulary())
    assert info.value.pointer == pointer and "max_repeat" in info.value.message


def test_number_node_counts_decimal_digits_first() -> None:
    for kwargs in ({"minimum": Decimal("-1e-1000000000")}, {"maximum": Decimal("1E+999999999")},
                   {"multiple_of": Decimal("1e-999999999999999999")}):
        with pytest.raises(BudgetExceeded) as info:
            number_node(pointer="/x", **kwargs)  # type: ignore[arg-type]
        assert info.value.pointer == "/x" and "max_repeat" in info.value.message
    dfa = ir_to_dfa(number_node(maximum=Decimal("1E+400"), minimum=Decimal("-0.0")))
    assert dfa.fullmatch(("1" + "0" * 400).encode()) and not dfa.fullmatch(b"-1")


def test_digit_budget_is_the_limit() -> None:
    with pytest.raises(BudgetExceeded):
        compile_json_schema('{"maximum": 1e400}', byte_vocabulary(),
                            limits=Limits(max_repeat=300))
    long_int = "1" * 5000  # past Python's 4,300-digit limit on parsing ints
    check(f'{{"const": {long_int}}}', [long_int], [long_int[:-1] + "2"],
          limits=Limits(max_repeat=6000))
    with pytest.raises(BudgetExceeded) as info:
        compile_json_schema(f'{{"const": {long_int}}}', byte_vocabulary(),
                            limits=Limits(max_repeat=4000))
    assert info.value.pointer == "/const"


@pytest.mark.parametrize("schema, token, line, column", [
    ('{"maximum": NaN}', "NaN", 1, 13),
    ('{\n  "type": "number",\n  "minimum": -Infinity\n}', "-Infinity", 3, 14),
    ('{"enum": ["NaN", Infinity]}', "Infinity", 1, 18),
])
def test_non_json_constants_are_refused_where_written(schema: str, token: str, line: int,
                                                       column: int) -> None:
    with pytest.raises(GrammarError) as info:
        load_schema(schema)
    assert info.value.code == "invalid-schema" and token in info.value.message
    assert (info.value.line, info.value.column) == (line, column)


def test_exponent_past_decimal_range_is_refused_where_written() -> None:
    with pytest.raises(BudgetExceeded) as info:
        load_schema('{"type": "number",\n "maximum": 1e99999999999999999999}')
    assert (info.value.line, info.value.column) == (2, 13)


def test_decimal_dicts_are_exact() -> None:
    check({"minimum": Decimal("1e-400")}, [zeros(399)], ["0", zeros(400)])
    check({"const": Decimal(LONG)}, [LONG], ["0.1"])
    check({"type": "integer", "maximum": Decimal(f"{BIG}.0")}, [str(BIG)], [str(BIG + 1)])
    check({"maxLength": Decimal("2")}, ['"ab"'], ['"abc"'])
    check({"enum": [Decimal("1.0"), 1]}, ["1"], ["2"])
    # A dict's float is its shortest repr: 0.1 is 1/10 (and 1e-400 was already 0.0).
    check({"multipleOf": 0.1, "maximum": 0.3}, ["0.3", "0.1"], ["0.4", "0.35"])
    check({"minimum": 1e-400}, ["0"], ["-" + zeros(400)])
    for bad in (Decimal("NaN"), Decimal("Infinity"), float("inf")):
        with pytest.raises(GrammarError) as info:
            compile_json_schema({"minimum": bad}, byte_vocabulary())
        assert info.value.code == "invalid-schema" and "/minimum" in str(info.value)
    with pytest.raises(BudgetExceeded) as budget:
        compile_json_schema({"not": {"const": Decimal("1e-1000000000")}}, byte_vocabulary())
    assert budget.value.pointer == "/not/const"


def test_negated_and_filtered_long_decimals() -> None:
    check(f'{{"type": "number", "not": {{"const": {LONG}}}}}', ["0.1", "1"], [LONG])
    check(f'{{"enum": [{LONG}, 0.1, 5], "maximum": {LONG}, "exclusiveMinimum": 0.1}}', [LONG],
          ["0.1", "5"])


def test_lint_reads_exact_numbers() -> None:
    found = lint_schema('{"type": "number", "minimum": 1e-400, "maximum": 1e400}', "s.json")
    assert not [d for d in found if d.severity == "error"], found
    found = lint_schema('{"maximum": NaN}', "s.json")
    assert [d.code for d in found if d.severity == "error"] == ["invalid-schema"]


def plain(d: Decimal) -> str:
    """The exponent-free spelling of a finite decimal without trailing fraction zeros."""
    text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("0", "-0") else text


@given(st.text("0123456789", min_size=1, max_size=40), st.integers(-30, 30), st.booleans(),
       st.booleans(), st.sampled_from(["", "e", "E", "e+", "E+"]))
@settings(max_examples=examples(40), deadline=None)
def test_decimal_const_is_exact(mantissa: str, exponent: int, negative: bool, point: bool,
                                marker: str) -> None:
    """A decimal const written in the schema text (long mantissa, exponent from -30 to 30) is
    accepted on its exponent-free spelling and rejected on its neighbours one unit of its last
    digit away."""
    digits = mantissa.lstrip("0") or "0"
    spelled = ("-" if negative else "") + (
        f"{digits[0]}.{digits[1:]}" if point and len(digits) > 1 else digits)
    if marker:
        spelled += f"{marker[0]}{'-' if exponent < 0 else marker[1:]}{abs(exponent)}"
    value = Decimal(spelled)
    with localcontext() as ctx:
        ctx.prec = 200
        unit = Decimal((0, (1,), value.as_tuple().exponent))
        neighbours = [plain(value + unit), plain(value - unit)]
    text = plain(value)
    assert Decimal(text) == value and text not in neighbours
    check(f'{{"const": {spelled}}}', [text, text + ("0" if "." in text else ".0")], neighbours)


@pytest.mark.parametrize("keyword,kind,instance", [
    ("Length", "string", '"ab"'), ("Items", "array", "[1, 2]"),
    ("Properties", "object", '{"a": 1, "b": 2}')])
def test_counts_beyond_any_instance(keyword: str, kind: str, instance: str) -> None:
    """A count past MAX_COUNT bounds nothing as a maximum, and as a minimum admits no value of
    its type and every value of the others, negated or not."""
    check(f'{{"max{keyword}": 1e400}}', [instance, "1"], [])
    check(f'{{"min{keyword}": 1e400}}', ["1", "null"], [instance])
    check(f'{{"not": {{"min{keyword}": 1e400}}}}', [instance], [])
    with pytest.raises(GrammarError) as info:  # every value satisfies the maximum
        compile_json_schema(f'{{"not": {{"max{keyword}": 1e400}}}}', byte_vocabulary())
    assert info.value.code == "empty-language"


def test_const_digits_follow_the_limits() -> None:
    """A const longer than the default `max_repeat` compiles once the limit is raised."""
    value = "1" + "0" * 12_000
    c = compile_json_schema(f'{{"const": {value}}}', byte_vocabulary(),
                            limits=Limits(max_repeat=20_000))
    assert accepts(c, value) and accepts(c, value + ".0") and not accepts(c, value + "0")
