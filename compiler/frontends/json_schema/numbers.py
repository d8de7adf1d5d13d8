"""Exact languages of JSON number texts under the numeric keywords of JSON Schema (draft 2020-12):
`type: integer`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`.

A JSON number text (RFC 8259) is  -?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?  and its value
is the exact rational it denotes (`-0` is 0, `3.00` the integer 3, `1.50` is 3/2).

`number_node` returns the IR of these texts:
- With no constraint at all: every JSON number text, exponents included.
- With bounds at zero only (`minimum`, `maximum` and their exclusive forms, each 0 or absent,
  no integer, no multipleOf): every number text on the allowed side(s) of zero, exponents
  included, since the sign and a zero mantissa decide whatever the exponent.
- With any other constraint (integer, a bound, multipleOf): exactly the texts WITHOUT exponent
  whose value satisfies every constraint (sound and complete on them). With exponents the
  language is not regular (`0.0…01e<k> <= 1` compares a count of zeros with k), so `1e2` is
  not an integer here; write `100` (or `100.0`).

Values (bounds, multipleOf) are taken exactly: `Fraction`, `int` or a finite `Decimal`; a float
is refused (TypeError): the caller converts parsed JSON by its shortest repr
(`values.exact_number`: 0.1 is 1/10). A bound must be a finite decimal unless only multiples of
a step are admitted (integer or multipleOf): then it is rounded inward to a multiple. The caller
passes the tighter of `minimum`/`exclusiveMinimum` and of `maximum`/`exclusiveMaximum`.

Errors, each naming the keyword with `pointer`: multipleOf <= 0, a non-decimal bound, or an
exclusive flag without its bound is `invalid-schema`; constraints no number satisfies are
`empty-language`; a residue automaton over `Limits.max_dfa_states` (0.123456789 unbounded; with
both bounds, up to 1/16 of that budget of multiples are listed instead) or a value of more than
`Limits.max_repeat` digits is `BudgetExceeded`.

Multiples of p/q among decimals are the multiples of P/10^s, with P/10^s = p/q times the part of
q prime to 10 (an integer multiple of p/q is a multiple of p): a residue automaton
(`residues.py`). Bounds are digit-by-digit comparisons on zero-padded digit strings, split by
the length of the integer part and by sign; they stay plain IR, and only a step P > 1 is
intersected with them as an `Automaton`.
"""
from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

from ...automata.build import ir_to_dfa
from ...automata.language_ops import intersect
from ...ir.nodes import EMPTY, NOTHING, Automaton, CharClass, Choice, Literal, Node, Repeat, Seq
from ...support.caches import memo
from ...support.errors import BudgetExceeded, GrammarError
from ...support.limits import DEFAULT_LIMITS, Limits
from ..regex import parse_regex
from .residues import residue_dfa
from .values import number_digits

Exact = Fraction | int | Decimal

_DIGIT = CharClass(((ord("0"), ord("9")),))
_NONZERO = CharClass(((ord("1"), ord("9")),))
_ZERO = Literal(b"0")
_DOT = Literal(b".")
_MINUS = Literal(b"-")

_ANY, _NONZERO_TAIL, _ZEROS, _NONE = "any", "nonzero", "zeros", "none"


def _seq(*items: Node) -> Node:
    parts: list[Node] = []
    for item in items:
        if item == NOTHING:
            return NOTHING
        if isinstance(item, Seq):
            parts.extend(item.items)
        else:
            parts.append(item)
    return parts[0] if len(parts) == 1 else Seq(tuple(parts))


def _alt(*items: Node) -> Node:
    parts: list[Node] = []
    for item in items:
        for part in item.alternatives if isinstance(item, Choice) else (item,):
            if not any(part is q for q in parts) and not (part == EMPTY and EMPTY in parts):
                parts.append(part)
    return parts[0] if len(parts) == 1 else Choice(tuple(parts))


def _rep(item: Node, lo: int, hi: int | None) -> Node:
    return EMPTY if hi == 0 else Repeat(item, lo, hi)


def _text(spelled: str) -> Node:
    return Literal(spelled.encode()) if spelled else EMPTY


def _digits_class(digits: list[int]) -> CharClass:
    return CharClass.of((48 + d, 48 + d) for d in digits)


_INT_PART = _alt(_ZERO, _seq(_NONZERO, _rep(_DIGIT, 0, None)))
JSON_NUMBER: Node = _seq(
    _alt(EMPTY, _MINUS), _INT_PART, _alt(EMPTY, _seq(_DOT, _rep(_DIGIT, 1, None))),
    _alt(EMPTY, _seq(CharClass(((ord("E"), ord("E")), (ord("e"), ord("e")))),
                     _alt(EMPTY, CharClass(((ord("+"), ord("+")), (ord("-"), ord("-"))))),
                     _rep(_DIGIT, 1, None))))
"""Every JSON number text (RFC 8259), exponents included."""


def _exact(value: Exact | None, keyword: str, pointer: str, limits: Limits) -> Fraction | None:
    """The rational value of a bound or step; a Decimal's digits are counted from its exponent
    first, so `1e1000000000` is refused without building a billion-digit integer."""
    if value is None:
        return None
    if isinstance(value, (float, bool)) or not isinstance(value, (int, Fraction, Decimal)):
        raise TypeError(f"{keyword} must be a Fraction, int or Decimal (exact), got "
                        f"{type(value).__name__} {value!r}; convert parsed JSON numbers with "
                        "values.exact_number")
    if isinstance(value, Decimal) and not value.is_finite():
        raise GrammarError(f"{keyword} must be a finite number, got {value}", pointer=pointer,
                           code="invalid-schema")
    if isinstance(value, Decimal) and number_digits(value) > limits.max_repeat:
        raise _too_long(keyword, number_digits(value), limits, pointer)
    return Fraction(value)


def _too_long(keyword: str, measured: int, limits: Limits, pointer: str) -> BudgetExceeded:
    return BudgetExceeded(
        f"{keyword} has more than {limits.max_repeat} digits, the budget Limits.max_repeat; "
        "raise it with limits=Limits(max_repeat=...)", pointer=pointer, code="budget",
        limit="max_repeat", value=limits.max_repeat, measured=measured)


def _split_ten(d: int) -> tuple[int, int, int]:
    """(a, b, rest) with d = 2**a * 5**b * rest and rest prime to 10, for d >= 1."""
    a = (d & -d).bit_length() - 1
    d >>= a
    powers = [5]
    while d % (powers[-1] * powers[-1]) == 0:
        powers.append(powers[-1] * powers[-1])
    b = 0
    for i in range(len(powers) - 1, -1, -1):
        if d % powers[i] == 0:
            d //= powers[i]
            b += 1 << i
    return a, b, d


def _is_decimal(x: Fraction) -> bool:
    return _split_ten(x.denominator)[2] == 1


def _int_str(n: int) -> str:
    """Decimal digits of an int of any size (int's own str is capped at 4300 digits)."""
    return format(Decimal(n), "f")


def _fraction_digits(x: Fraction) -> str:
    """The digits after the point of a non-negative finite decimal, without trailing zeros."""
    a, b, _ = _split_ten(x.denominator)
    k = max(a, b)
    return _int_str(x.numerator % x.denominator * 10 ** k // x.denominator).zfill(k) if k else ""


def _whole_length(x: Fraction) -> int:
    return len(_int_str(x.numerator // x.denominator))


def _fmt(x: Fraction) -> str:
    if not _is_decimal(x):
        return f"{_int_str(x.numerator)}/{_int_str(x.denominator)}"
    sign, m = ("-" if x < 0 else ""), abs(x)
    whole, frac = _int_str(m.numerator // m.denominator), _fraction_digits(m)
    if not frac and len(whole) > 24 and whole.rstrip("0") != whole:
        digits = whole.rstrip("0")
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{len(whole) - 1}"
    return f"{sign}{whole}" + (f".{frac}" if frac else "")


def _step(m: Fraction, integer: bool) -> tuple[int, int]:
    """(P, s) such that the admitted values are exactly the multiples of P / 10**s."""
    if integer:
        return m.numerator, 0
    twos, fives, _ = _split_ten(m.denominator)
    s = max(twos, fives)
    return m.numerator * 2 ** (s - twos) * 5 ** (s - fives), s


class _Shape:
    """Unsigned texts with an n-digit integer part whose fraction digits after the s-th must be
    zeros (s None: any fraction). Positions index the digits of the integer part then the
    fraction; a '.' precedes position n."""

    def __init__(self, n: int, s: int | None) -> None:
        self.n, self.s = n, s

    def allowed(self, j: int) -> list[int]:
        """Digits at position j < n + s (bounds have at most s fraction digits, so comparisons
        end there and `tail` takes over)."""
        return list(range(1, 10)) if j == 0 and self.n > 1 else list(range(10))

    def fraction_rest(self, consumed: int, nonempty: bool) -> Node:
        """Fraction digits after `consumed` of them were read."""
        lo = 1 if nonempty else 0
        if self.s is None:
            return _rep(_DIGIT, lo, None)
        free = max(self.s - consumed, 0)
        if free == 0:
            return _rep(_ZERO, lo, None)
        tail = _seq(_rep(_DIGIT, 1, free), _rep(_ZERO, 0, None))
        return tail if nonempty else _alt(EMPTY, tail)

    def free(self, j: int) -> Node:
        """Every continuation from position j."""
        n = self.n
        if j > n:
            return self.fraction_rest(j - n, False)
        fraction = _alt(EMPTY, _seq(_DOT, self.fraction_rest(0, True)))
        if j == n:
            return fraction
        first = _digits_class(self.allowed(j))
        return _seq(first, _rep(_DIGIT, n - j - 1, n - j - 1), fraction)

    def tail(self, kind: str, j: int) -> Node:
        """From a position j >= n past every bound digit: `kind` says which zero-padded
        remainders pass (any, one with a nonzero digit, only zeros, none)."""
        if kind == _ANY:
            return self.free(j)
        if kind == _NONE or (kind == _NONZERO_TAIL and self.s is not None):
            return NOTHING
        if kind == _ZEROS:
            zeros = _rep(_ZERO, 1 if j == self.n else 0, None)
            return _alt(EMPTY, _seq(_DOT, zeros)) if j == self.n else zeros
        nonzero = _seq(_rep(_DIGIT, 0, None), _NONZERO, _rep(_DIGIT, 0, None))
        return _seq(_DOT, nonzero) if j == self.n else nonzero


def _meet(a: str, b: str) -> str:
    if a == _ANY:
        return b
    if b == _ANY or a == b:
        return a
    return _NONE


def _same_length(shape: _Shape, lo: tuple[str, bool] | None,
                 hi: tuple[str, bool] | None) -> Node:
    """Texts of `shape` whose zero-padded digit string is >= (or > when strict) lo's digits and
    <= (or <) hi's; None is no bound.

    Built flat, as alternatives that each spell a prefix of the bounds' digits and then leave
    them, so the tree stays shallow however long the bounds are."""
    a, a_strict = lo or ("", False)
    b, b_strict = hi or ("", False)
    n = shape.n
    last = max(len(a), len(b), n, n + (shape.s or 0))
    a_zeros_from, b_zeros_from = len(a.rstrip("0")), len(b.rstrip("0"))

    def digit(ds: str, j: int) -> int:
        return int(ds[j]) if j < len(ds) else 0

    def following(j: int, lt: bool, ht: bool) -> Node:
        """Continuations from position j while the digits so far equal lo's (lt) and hi's (ht)."""
        alts: list[Node] = []
        spelled = ""
        while True:
            if j == last:
                lo_kind = (_NONZERO_TAIL if a_strict else _ANY) if lt else _ANY
                hi_kind = (_NONE if b_strict else _ZEROS) if ht else _ANY
                alts.append(_seq(_text(spelled), shape.tail(_meet(lo_kind, hi_kind), j)))
                break
            if j >= n and (not lt or (not a_strict and j >= a_zeros_from)) and (
                    not ht or not b_strict or j < b_zeros_from):
                alts.append(_text(spelled))
            groups: dict[tuple[bool, bool], list[int]] = {}
            for c in shape.allowed(j):
                if (lt and c < digit(a, j)) or (ht and c > digit(b, j)):
                    continue
                groups.setdefault((lt and c == digit(a, j), ht and c == digit(b, j)), []).append(c)
            dot = "." if j == n else ""
            kept = groups.pop((lt, ht), None)
            for key, cs in groups.items():
                rest = following(j + 1, *key) if any(key) else shape.free(j + 1)
                alts.append(_seq(_text(spelled + dot), _digits_class(cs), rest))
            if kept is None:
                break
            spelled += dot + str(kept[0])
            j += 1
        return _alt(*alts)

    return following(0, bool(lo), bool(hi)) if lo or hi else shape.free(0)


def _magnitudes(a: Fraction, a_strict: bool, b: Fraction | None, b_strict: bool,
                s: int | None) -> Node:
    """Unsigned texts whose value m satisfies a <= m <= b (< with the strict flags; b None:
    unbounded)."""
    if b is not None and (a > b or (a == b and (a_strict or b_strict))):
        return NOTHING

    def digits(x: Fraction, strict: bool) -> tuple[str, bool]:
        return _int_str(x.numerator // x.denominator) + _fraction_digits(x), strict

    lo = None if a == 0 and not a_strict else digits(a, a_strict)
    hi = None if b is None else digits(b, b_strict)
    n_a, n_b = _whole_length(a), None if b is None else _whole_length(b)
    if n_a == n_b:
        return _same_length(_Shape(n_a, s), lo, hi)
    parts = [_same_length(_Shape(n_a, s), lo, None)]
    if n_b is None or n_b > n_a + 1:
        middle = _Shape(n_a + 1, s)
        parts.append(_seq(_NONZERO, _rep(_DIGIT, n_a, None if n_b is None else n_b - 2),
                          middle.free(middle.n)))
    if n_b is not None:
        parts.append(_same_length(_Shape(n_b, s), None, hi))
    return _alt(*parts)


def _signed_range(lo: Fraction | None, lo_strict: bool, hi: Fraction | None, hi_strict: bool,
                  s: int | None) -> Node:
    """Exponent-free texts whose value lies in the interval; `-0` counts as 0."""
    plus: Node = NOTHING
    minus: Node = NOTHING
    if hi is None or hi > 0 or (hi == 0 and not hi_strict):
        a, a_strict = (lo, lo_strict) if lo is not None and lo >= 0 else (Fraction(0), False)
        plus = _magnitudes(a, a_strict, hi, hi_strict, s)
    if lo is None or lo < 0 or (lo == 0 and not lo_strict):
        a, a_strict = (-hi, hi_strict) if hi is not None and hi <= 0 else (Fraction(0), False)
        minus = _magnitudes(a, a_strict, None if lo is None else -lo, lo_strict, s)
    if (lo is None and hi is None) or (
            lo is not None and hi is not None and lo == -hi and lo_strict == hi_strict):
        return _seq(_alt(EMPTY, _MINUS), plus)
    return _alt(plus, _seq(_MINUS, minus))


def _enumerated(lo: Fraction, hi: Fraction, unit: Fraction) -> Node:
    """Exponent-free texts of the multiples of `unit` in [lo, hi]."""
    texts: list[Node] = []
    for k in range(math.ceil(lo / unit), math.floor(hi / unit) + 1):
        v = k * unit
        m = abs(v)
        whole, frac = _int_str(m.numerator // m.denominator), _fraction_digits(m)
        sign = _alt(EMPTY, _MINUS) if v == 0 else (_MINUS if v < 0 else EMPTY)
        if frac:
            texts.append(_seq(sign, Literal(f"{whole}.{frac}".encode()), _rep(_ZERO, 0, None)))
        else:
            texts.append(_seq(sign, Literal(whole.encode()),
                              _alt(EMPTY, _seq(_DOT, _rep(_ZERO, 1, None)))))
    return _alt(*texts)


def _describe(integer: bool, lo: Fraction | None, lo_strict: bool, hi: Fraction | None,
              hi_strict: bool, m: Fraction | None) -> str:
    parts = ["type integer"] if integer else []
    if lo is not None:
        parts.append(f"{'exclusiveMinimum' if lo_strict else 'minimum'} {_fmt(lo)}")
    if hi is not None:
        parts.append(f"{'exclusiveMaximum' if hi_strict else 'maximum'} {_fmt(hi)}")
    if m is not None:
        parts.append(f"multipleOf {_fmt(m)}")
    return ", ".join(parts)


def number_node(
    *,
    integer: bool = False,
    minimum: Exact | None = None,
    maximum: Exact | None = None,
    exclusive_minimum: bool = False,
    exclusive_maximum: bool = False,
    multiple_of: Exact | None = None,
    pointer: str = "",
    limits: Limits = DEFAULT_LIMITS,
) -> Node:
    """The IR of the JSON number texts whose value satisfies the constraints (see the module
    docstring for the exponent-free subset accepted under any constraint). `minimum`/`maximum`
    are exclusive when the matching flag is set; `pointer` locates the schema in errors."""
    lo_kw = "exclusiveMinimum" if exclusive_minimum else "minimum"
    hi_kw = "exclusiveMaximum" if exclusive_maximum else "maximum"
    lo = _exact(minimum, lo_kw, pointer, limits)
    hi = _exact(maximum, hi_kw, pointer, limits)
    m = _exact(multiple_of, "multipleOf", pointer, limits)
    for flag, bound, kw in ((exclusive_minimum, lo, lo_kw), (exclusive_maximum, hi, hi_kw)):
        if flag and bound is None:
            raise GrammarError(f"{kw} is set exclusive but has no value", pointer=pointer,
                               code="invalid-schema")
    if m is not None and m <= 0:
        raise GrammarError(f"multipleOf must be greater than 0, got {_fmt(m)}", pointer=pointer,
                           code="invalid-schema")
    if not integer and lo is None and hi is None and m is None:
        return JSON_NUMBER
    _check_sizes(limits, pointer, ((lo, lo_kw), (hi, hi_kw), (m, "multipleOf")))
    what = _describe(integer, lo, exclusive_minimum, hi, exclusive_maximum, m)
    empty = GrammarError(f"no {'integer' if integer else 'number'} satisfies {what}",
                         pointer=pointer, code="empty-language")
    if m is None and not integer:
        for bound, kw in ((lo, lo_kw), (hi, hi_kw)):
            if bound is not None and not _is_decimal(bound):
                raise GrammarError(f"{kw} {_fmt(bound)} is not a finite decimal number",
                                   pointer=pointer, code="invalid-schema")
        if lo is not None and hi is not None and (
                lo > hi or (lo == hi and (exclusive_minimum or exclusive_maximum))):
            raise empty
        if {lo, hi} <= {None, Fraction(0)}:
            return _by_sign(lo is not None, exclusive_minimum, hi is not None, exclusive_maximum)
        return _signed_range(lo, exclusive_minimum, hi, exclusive_maximum, None)
    p, s = _step(m if m is not None else Fraction(1), integer)
    unit = Fraction(p, 10 ** s)
    if lo is not None:
        lo = (math.floor(lo / unit) + 1 if exclusive_minimum else math.ceil(lo / unit)) * unit
    if hi is not None:
        hi = (math.ceil(hi / unit) - 1 if exclusive_maximum else math.floor(hi / unit)) * unit
    if lo is not None and hi is not None and lo > hi:
        raise empty
    _check_sizes(limits, pointer, ((lo, lo_kw), (hi, hi_kw)), s)
    residue_states = 3 + (3 + s) * p
    if p > 1 and residue_states > limits.max_dfa_states:
        if lo is not None and hi is not None and (hi - lo) / unit < limits.max_dfa_states // 16:
            return _enumerated(lo, hi, unit)
        raise BudgetExceeded(
            f"multipleOf {_fmt(m if m is not None else unit)}: the residue automaton needs "
            f"{residue_states} states, more than the budget Limits.max_dfa_states="
            f"{limits.max_dfa_states}; raise it with limits=Limits(max_dfa_states=...), or bound "
            "the value with minimum and maximum", pointer=pointer, code="budget",
            limit="max_dfa_states", value=limits.max_dfa_states, measured=residue_states)
    if p == 1:
        return _signed_range(lo, False, hi, False, s)
    residues = residue_dfa(p, s)
    label = f"multipleOf {_fmt(unit)}"
    if lo is None and hi is None:
        return Automaton(residues, label)
    return intersect(_signed_range(lo, False, hi, False, s), residues, limits=limits, label=label)


_EXPONENT = "([eE][+-]?[0-9]+)?"
_NONZERO_MANTISSA = r"(0\.0*[1-9][0-9]*|[1-9][0-9]*(\.[0-9]+)?)"


@memo(maxsize=8)
def _by_sign(above: bool, above_strict: bool, below: bool, below_strict: bool) -> Node:
    """Every number text, exponents included, whose value is on the side(s) of zero that
    bounds at zero allow (`minimum: 0`, `exclusiveMaximum: 0`, ...): the sign and whether the
    mantissa is zero decide, whatever the exponent."""
    zero = rf"-?0(\.0+)?{_EXPONENT}"
    sides = []
    if not below:
        sides.append(_NONZERO_MANTISSA + _EXPONENT)
    if not above:
        sides.append("-" + _NONZERO_MANTISSA + _EXPONENT)
    if not (above and above_strict) and not (below and below_strict):
        sides.append(zero)
    return parse_regex("|".join(sides))


def number_automaton(
    *,
    integer: bool = False,
    minimum: Exact | None = None,
    maximum: Exact | None = None,
    exclusive_minimum: bool = False,
    exclusive_maximum: bool = False,
    multiple_of: Exact | None = None,
    pointer: str = "",
    limits: Limits = DEFAULT_LIMITS,
) -> Node:
    """`number_node` as one `Automaton`, built once per set of constraints and shared by every
    compile that asks again (a leaf that lowering splices in, with no IR to walk)."""
    try:
        return _number_leaf(integer, minimum, maximum, exclusive_minimum, exclusive_maximum,
                            multiple_of, limits)
    except BudgetExceeded as exc:
        raise exc.located(pointer=pointer) from None
    except GrammarError as exc:
        raise GrammarError(exc.message, pointer=pointer, code=exc.code) from None


@memo(maxsize=1024)
def _number_leaf(integer: bool, minimum: Exact | None, maximum: Exact | None,
                 exclusive_minimum: bool, exclusive_maximum: bool, multiple_of: Exact | None,
                 limits: Limits) -> Node:
    node = number_node(integer=integer, minimum=minimum, maximum=maximum,
                       exclusive_minimum=exclusive_minimum, exclusive_maximum=exclusive_maximum,
                       multiple_of=multiple_of, limits=limits)
    if isinstance(node, Automaton):
        return node
    return Automaton(ir_to_dfa(node, limits), label="integer" if integer else "number")


def _check_sizes(limits: Limits, pointer: str, values: tuple[tuple[Fraction | None, str], ...],
                 step: int = 0) -> None:
    """Refuse values (and a step of 10**-step) of more than Limits.max_repeat digits before
    building anything; a non-decimal value is only checked by its size in bits."""
    sizes = [(step, "multipleOf")]
    for x, keyword in values:
        if x is None:
            continue
        bits = x.numerator.bit_length() + x.denominator.bit_length()
        if bits > 8 * limits.max_repeat or not _is_decimal(x):
            sizes.append((bits // 8, keyword))
        else:
            sizes.append((_whole_length(abs(x)) + len(_fraction_digits(abs(x))), keyword))
    size, keyword = max(sizes)
    if size > limits.max_repeat:
        raise _too_long(keyword, size, limits, pointer)
