"""Key literals without the listed names (`excluded_names.without_names`).

Oracles: Python's `json` module decodes every literal the tests spell (raw characters, short
escapes, `\\uXXXX` in random case, surrogate pairs), and the product construction of
`language_ops.difference` on the names' literal automata gives the same language.
"""
from __future__ import annotations

import json
import random

import pytest
from grammask.compiler import BudgetExceeded, Limits
from tests.support.equivalence import dfa_difference
from grammask.compiler.ir.nodes import Choice, Literal
from grammask.compiler.frontends.json_schema.excluded_names import without_names
from grammask.compiler.frontends.json_schema.strings import json_string
from grammask.compiler.frontends.json_schema.literals import string_literal
from grammask.compiler.automata.language_ops import as_dfa, difference
from grammask.compiler.support.limits import DEFAULT_LIMITS
from hypothesis import given, settings
from hypothesis import strategies as st

from ..support.budget import examples

# Characters with every kind of spelling: plain ASCII (hex letters in their escapes), the
# eight short escapes, controls, two- and three-byte UTF-8, the edges of the surrogate gap,
# astral (surrogate pairs).
ALPHABET = "abnz_0AZ\"\\/\b\f\n\r\t\x01\x1féª\u4e2d\ud7ff\ue000\uffff😀\U00010000\U0010ffff"
names = st.lists(st.text(alphabet=ALPHABET, max_size=4), min_size=1, max_size=5)
REGIONS = {
    "any": lambda: json_string(None),
    "pattern": lambda: json_string(None, pattern="^[a-z\"]"),
    "bounded": lambda: json_string(None, min_length=1, max_length=3),
}
CHECKS = {
    "any": lambda v: True,
    "pattern": lambda v: bool(v) and ("a" <= v[0] <= "z" or v[0] == '"'),
    "bounded": lambda v: 1 <= len(v) <= 3,
}
_SHORT = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n",
          "\r": "\\r", "\t": "\\t"}


def _escape(unit: int, rnd: random.Random) -> str:
    return "\\u" + "".join(d.upper() if rnd.random() < 0.5 else d for d in f"{unit:04x}")


def spell(value: str, rnd: random.Random) -> bytes:
    """A random JSON spelling of `value`, quotes included."""
    out = []
    for ch in value:
        cp = ord(ch)
        forms = []
        if cp >= 0x20 and ch not in '"\\':
            forms.append(ch)
        if ch in _SHORT:
            forms.append(_SHORT[ch])
        if cp < 0x10000:
            forms.append(_escape(cp, rnd))
        else:
            v = cp - 0x10000
            forms.append(_escape(0xD800 | (v >> 10), rnd) + _escape(0xDC00 | (v & 0x3FF), rnd))
        out.append(rnd.choice(forms))
    return ('"' + "".join(out) + '"').encode("utf-8")


def _near(listed: list[str], rnd: random.Random) -> str:
    """A listed name, a prefix or extension of one, or one with a character changed."""
    name = rnd.choice(listed)
    pick = rnd.randrange(4)
    if pick == 0 or not name:
        return name + (rnd.choice(ALPHABET) if pick else "")
    if pick == 1:
        return name[:-1]
    i = rnd.randrange(len(name))
    return name[:i] + rnd.choice(ALPHABET) + name[i + 1:]


@settings(max_examples=examples(200))
@given(names, st.sampled_from(sorted(REGIONS)), st.randoms(use_true_random=False))
def test_a_literal_is_accepted_iff_its_value_is_in_the_region_and_not_listed(
        listed, region, rnd):
    dfa = without_names(as_dfa(REGIONS[region]()), listed, DEFAULT_LIMITS)
    for _ in range(12):
        value = _near(listed, rnd)
        literal = spell(value, rnd)
        assert json.loads(literal) == value
        expected = CHECKS[region](value) and value not in listed
        assert dfa.fullmatch(literal) == expected, (literal, listed)


@settings(max_examples=examples(100))
@given(names, st.sampled_from(sorted(REGIONS)))
def test_same_language_as_the_product_with_the_names_literals(listed, region):
    kept = as_dfa(REGIONS[region]())
    direct = without_names(kept, listed, DEFAULT_LIMITS)
    product = difference(kept, Choice(tuple(string_literal(k) for k in listed))).dfa
    assert dfa_difference(direct, product) is None
    assert direct.n_states == product.n_states  # both minimal


def test_nothing_left_is_the_empty_language() -> None:
    only = as_dfa(json_string(Literal(b"ab")))
    assert without_names(only, ["ab"], DEFAULT_LIMITS).is_empty_language
    assert without_names(only, ["a", "abc", ""], DEFAULT_LIMITS).fullmatch(b'"\\u0061b"')


def test_one_automaton_per_region_and_names() -> None:
    kept = as_dfa(json_string(None))
    first = without_names(kept, ["id", "name"], DEFAULT_LIMITS)
    assert without_names(kept, ["id", "name", "id"], DEFAULT_LIMITS) is first
    # No literal spells a lone surrogate, so such a name takes nothing away.
    assert without_names(kept, ["id", "a\ud800", "name"], DEFAULT_LIMITS) is first


def test_the_state_budget_holds() -> None:
    listed = [f"name{i}" for i in range(400)]
    with pytest.raises(BudgetExceeded, match="max_dfa_states"):
        without_names(as_dfa(json_string(None)), listed, Limits(max_dfa_states=500))


_BOUNDS_SCRIPT = r"""
import random
from grammask.compiler.frontends.json_schema.excluded_names import without_names
from grammask.compiler.frontends.json_schema.strings import json_string
from grammask.compiler.automata.language_ops import as_dfa
from grammask.compiler.support.limits import DEFAULT_LIMITS
rng = random.Random(3)
alphabet = ALPHABET
kept = as_dfa(json_string(None))
for size in (1, 3, 40, 200):
    names = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(12))) for _ in range(size)]
    assert not without_names(kept, names, DEFAULT_LIMITS).is_empty_language
print("ok")
"""


def test_the_kernel_stays_in_bounds(tmp_path) -> None:
    """Numba checks no bounds: the construction runs here once with bounds checking on (fresh
    cache), growing its tables many times over."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path))
    script = _BOUNDS_SCRIPT.replace("alphabet = ALPHABET", f"alphabet = {ALPHABET!r}")
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]
