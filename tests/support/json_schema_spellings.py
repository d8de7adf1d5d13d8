"""The JSON spellings of a value: numbers written plain, with fraction zeros, with exponents
(`10`, `10.0`, `1e1`, `1E+1`, `100e-1`, `0.1e2`), zero signed or not (`-0`, `0e0`, `-0.0`);
strings and member names with characters raw or escaped (`\\u0061` in either hex case, short
escapes, surrogate pairs); whitespace between tokens; members in any order.

Values hold `int` and `Decimal` numbers (floats are written by their shortest repr).
`write(value, rng, ...)` writes one text; `documented_texts` gives texts in the frontend's
documented form (the value's own member order, no exponent, at most a few whitespace characters
per gap and none around the value), `exotic_texts` texts outside it (exponents, shuffled
members, long whitespace runs, whitespace around the value); `respell_numbers` rewrites every
number of a text.
"""
from __future__ import annotations

import random
import re
from decimal import Decimal
from typing import Any

WHITESPACE = " \t\n\r"
SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n",
                 "\r": "\\r", "\t": "\\t"}
MAX_DOCUMENTED_GAP = 3
"""Whitespace characters per gap in documented texts (the frontend allows 24)."""
LONG_GAP = 25
"""A gap past the frontend's default bound."""
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)',
                   re.DOTALL)


def _digits(x: int | Decimal | float) -> tuple[bool, str, int]:
    """(negative, digits without trailing zeros, exponent): x = ±digits × 10^exponent."""
    d = Decimal(repr(x)) if isinstance(x, float) else Decimal(x)
    sign, digits, exp = d.as_tuple()
    text = "".join(map(str, digits)).lstrip("0")
    if not text:
        return bool(sign), "0", 0
    stripped = text.rstrip("0")
    return bool(sign), stripped, int(exp) + len(text) - len(stripped)


def _plain(digits: str, exp: int, zeros: int = 0) -> str:
    """digits × 10^exp without exponent, with `zeros` more fraction digits."""
    if exp >= 0:
        whole, frac = digits + "0" * exp if digits != "0" else "0", ""
    else:
        padded = digits.rjust(-exp + 1, "0")
        whole, frac = padded[:exp], padded[exp:]
    frac += "0" * zeros
    return whole + ("." + frac if frac else "")


def plain_number(x: int | Decimal | float, rng: random.Random | None = None) -> str:
    """x without exponent: minimal, or (with `rng`) sometimes with fraction zeros or a sign on
    zero (`10.0`, `-0`, `-0.00`)."""
    negative, digits, exp = _digits(x)
    zeros = rng.choice([0, 0, 0, 1, 3, 21]) if rng is not None else 0
    if digits == "0" and rng is not None:
        negative = rng.random() < 0.4
    if isinstance(x, int) and not isinstance(x, bool) and zeros == 0 and rng is None:
        return str(x)
    return ("-" if negative else "") + _plain(digits, exp, zeros)


def exponent_number(x: int | Decimal | float, rng: random.Random) -> str:
    """x with an exponent: mantissa shifted by a random power of ten, `e` or `E`, a sign or
    none, leading zeros in the exponent sometimes."""
    negative, digits, exp = _digits(x)
    if digits == "0":
        negative = rng.random() < 0.5
    shift = rng.choice([-2, -1, 0, 1, 2, len(digits) - 1, len(digits) + exp - 1])
    mantissa = _plain(digits, exp - shift, rng.choice([0, 0, 1, 2]))
    power = f"{abs(shift):0{rng.choice([1, 1, 2])}d}"
    sign = "-" if shift < 0 else rng.choice(["", "+"])
    return f"{'-' if negative else ''}{mantissa}{rng.choice('eE')}{sign}{power}"


def char_spellings(c: str, rng: random.Random) -> list[str]:
    """Every JSON spelling of one character inside a string literal: raw where JSON allows it,
    its short escape if it has one, and its `\\u` escape (a surrogate pair above U+FFFF),
    hex digits in random case."""
    code = ord(c)
    forms = [c] if code >= 0x20 and c not in '"\\' else []
    if c in SHORT_ESCAPES:
        forms.append(SHORT_ESCAPES[c])
    halves = [code] if code < 0x10000 else [0xD800 + ((code - 0x10000) >> 10),
                                            0xDC00 + ((code - 0x10000) & 0x3FF)]
    forms.append("".join("\\u" + "".join(ch.upper() if rng.random() < 0.5 else ch
                                          for ch in f"{h:04x}") for h in halves))
    return forms


def _escape(c: str, rng: random.Random) -> str:
    escaped = [f for f in char_spellings(c, rng) if f.startswith("\\")]
    return escaped[0] if len(escaped) == 1 or rng.random() < 0.5 else escaped[1]


def write_string(s: str, rng: random.Random, escapes: float) -> str:
    """A JSON string literal of s, each character escaped with probability `escapes` (and
    always where JSON requires it)."""
    out = ['"']
    for c in s:
        must = c in '"\\' or ord(c) < 0x20
        if must or rng.random() < escapes:
            out.append(_escape(c, rng) if not must or rng.random() < 0.8
                       else SHORT_ESCAPES.get(c, f"\\u{ord(c):04x}"))
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def write(value: Any, rng: random.Random, *, exponents: float = 0.0, escapes: float = 0.0,
          gap: int = 0, long_gaps: float = 0.0, shuffle: bool = False,
          varied_numbers: bool = True) -> str:
    """One JSON text of `value`: each number with an exponent with probability `exponents`
    (else plain, fraction zeros and signed zero sometimes when `varied_numbers`), characters
    escaped with probability `escapes`, at most `gap` whitespace characters in each gap between
    tokens (a run of LONG_GAP or more with probability `long_gaps`), members in random order
    with `shuffle`, else in the value's order."""

    def ws() -> str:
        if long_gaps and rng.random() < long_gaps:
            return "".join(rng.choice(WHITESPACE) for _ in range(rng.randint(LONG_GAP, 30)))
        n = rng.randint(0, gap) if gap else 0
        return "".join(rng.choice(WHITESPACE) if gap > 1 else " " for _ in range(n))

    def num(x: Any) -> str:
        if exponents and rng.random() < exponents:
            return exponent_number(x, rng)
        return plain_number(x, rng if varied_numbers else None)

    def go(v: Any) -> str:
        if v is None or isinstance(v, bool):
            return {None: "null", True: "true", False: "false"}[v]
        if isinstance(v, (int, float, Decimal)):
            return num(v)
        if isinstance(v, str):
            return write_string(v, rng, escapes)
        if isinstance(v, list):
            if not v:
                return "[" + ws() + "]"
            return "[" + ws() + (ws() + "," + ws()).join(map(go, v)) + ws() + "]"
        keys = list(v)
        if shuffle:
            rng.shuffle(keys)
        if not keys:
            return "{" + ws() + "}"
        members = [write_string(k, rng, escapes) + ws() + ":" + ws() + go(v[k]) for k in keys]
        return "{" + ws() + (ws() + "," + ws()).join(members) + ws() + "}"

    return go(value)


def documented_texts(value: Any, rng: random.Random) -> list[str]:
    """Texts of `value` (already in member order) in the documented form: compact, Python's
    separators, single spaces, escapes, plain number variants, short whitespace runs."""
    canonical = write(value, rng, varied_numbers=False)
    return list(dict.fromkeys([
        canonical,
        write(value, rng, gap=1, varied_numbers=False),
        write(value, rng, escapes=0.3, gap=1),
        write(value, rng, escapes=0.1, gap=MAX_DOCUMENTED_GAP),
    ]))


def exotic_texts(value: Any, rng: random.Random, n: int = 4) -> list[str]:
    """Texts of `value` outside the documented form (and some inside it): exponents,
    shuffled members, escapes, long whitespace runs, whitespace around the value."""
    out = [write(value, rng, exponents=1.0, varied_numbers=False),
           write(value, rng, exponents=0.5, escapes=0.3, shuffle=True, gap=2)]
    for _ in range(max(0, n - 2)):
        text = write(value, rng, exponents=rng.random(), escapes=rng.random() * 0.5,
                     gap=rng.choice([0, 1, 3]), long_gaps=rng.choice([0.0, 0.0, 0.1]),
                     shuffle=rng.random() < 0.5)
        if rng.random() < 0.15:
            text = rng.choice(["", " ", "\n"]) + text + rng.choice(["", " ", "\t\n"])
        out.append(text)
    return list(dict.fromkeys(out))


def respell_numbers(text: str, spell: Any) -> str:
    """The text with every number token (outside strings) replaced by `spell(token)`."""
    return TOKEN.sub(lambda m: spell(m.group(1)) if m.group(1) else m.group(0), text)


def has_exponent(text: str) -> bool:
    """Whether a number of the text (outside strings) has an exponent."""
    return any(m.group(1) and m.group(1).lower().count("e") for m in TOKEN.finditer(text))


def minimal_number(token: str) -> str:
    """A number token rewritten without exponent, fraction zeros or sign on zero."""
    negative, digits, exp = _digits(Decimal(token))
    return ("-" if negative and digits != "0" else "") + _plain(digits, exp)
