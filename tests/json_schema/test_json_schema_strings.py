"""JSON string literals under minLength / maxLength / pattern / content, and ECMA-262 patterns.

Oracles: Python's `json` module (what a literal decodes to, and whether it is one at all),
`len` for code-point lengths, and `re.search` on a Python translation of each generated ECMA
pattern (shorthands and `.` spelled out as explicit classes, `$` as `\\Z`), so the two engines
agree by construction. The JSON-Schema-Test-Suite string groups are checked when the corpus is
present.
"""
from __future__ import annotations

import json
import random
import re
import unicodedata

import pytest
import regex
from grammask.compiler import BudgetExceeded, GrammarError, Limits
from grammask.compiler.ir.nodes import Automaton, CharClass, Repeat, walk
from grammask.compiler.frontends.json_schema.strings import ecma_pattern, json_string, string_literals
from grammask.compiler.automata.build import ir_to_dfa
from grammask.compiler.frontends.regex import parse_regex
from hypothesis import given, settings
from hypothesis import strategies as st

from ..support.budget import examples
from ..support.json_schema_spellings import char_spellings
from ..support.paths import JSON_SCHEMA_SUITE

CORPUS = JSON_SCHEMA_SUITE
SPACES = "\\t-\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
# (ECMA-262 text, equivalent Python `re` text)
ATOMS = [
    ("a", "a"), ("b", "b"), ("0", "0"), ("é", "é"), ("😀", "😀"), ('"', '"'),
    ("\\\\", "\\\\"), ("\\/", "/"), ("\\.", "\\."), ("\\-", "-"), (".", "[^\\n\\r\\u2028\\u2029]"),
    ("\\d", "[0-9]"), ("\\D", "[^0-9]"), ("\\w", "[A-Za-z0-9_]"), ("\\W", "[^A-Za-z0-9_]"),
    ("\\s", f"[{SPACES}]"), ("\\S", f"[^{SPACES}]"), ("[^]", "[\\s\\S]"),
    ("[]", "[^\\x00-\\U0010ffff]"), ("\\cJ", "\\n"), ("\\u{1F600}", "😀"),
    ("\\uD83D\\uDE00", "😀"), ("\\x41", "A"), ("\\u00E9", "é"), ("[a-c]", "[a-c]"),
    ("[^a]", "[^a]"), ("[\\d_]", "[0-9_]"), ("[\\s-]", f"[{SPACES}\\-]"), ("\\t", "\\t"),
    ("[\\0]", "\\x00"), ("[\\b]", "\\x08"), ("\\u2028", "\\u2028"),
    ("[^\\w\\n]", "[^A-Za-z0-9_\\n]"),
]
ANCHORS = [("^", "^"), ("$", "\\Z")]
QUANTIFIERS = ["", "", "", "*", "+", "?", "{2}", "{0,2}", "{1,}", "*?", "+?"]
ALPHABET = "ab0Aé😀\"\\/.-_ \t\n\r\x00\x08\u2028\u00a0\u3000٣߀"


def _join(parts: list[tuple[str, str]], sep: str = "") -> tuple[str, str]:
    return sep.join(e for e, _ in parts), sep.join(p for _, p in parts)


def ecma_patterns(max_leaves: int = 6) -> st.SearchStrategy[tuple[str, str]]:
    """(ECMA pattern, Python pattern) pairs with the same search semantics; anchors may sit
    anywhere, including inside quantified groups."""
    atoms = st.tuples(st.sampled_from(ATOMS), st.sampled_from(QUANTIFIERS)).map(
        lambda t: (t[0][0] + t[1], t[0][1] + t[1]))
    leaves = st.one_of(atoms, atoms, st.sampled_from(ANCHORS))

    def extend(children: st.SearchStrategy[tuple[str, str]]) -> st.SearchStrategy[tuple[str, str]]:
        return st.one_of(
            st.lists(children, min_size=2, max_size=3).map(_join),
            st.lists(children, min_size=2, max_size=3).map(
                lambda xs: (f"(?:{_join(xs, '|')[0]})", f"(?:{_join(xs, '|')[1]})")),
            st.tuples(children, st.sampled_from(QUANTIFIERS[3:])).map(
                lambda t: (f"({t[0][0]}){t[1]}", f"(?:{t[0][1]}){t[1]}")),
        )

    tree = st.recursive(leaves, extend, max_leaves=max_leaves)
    return st.lists(tree, min_size=1, max_size=2).map(lambda xs: _join(xs, "|"))


def _dfa(node):  # type: ignore[no-untyped-def]
    return node.dfa if isinstance(node, Automaton) else ir_to_dfa(node)


def decoded(data: bytes) -> str | None:
    """The value of `data` if it is exactly one JSON string literal of scalar values."""
    try:
        text = data.decode("utf-8")
        value = json.loads(text)
    except (UnicodeDecodeError, ValueError):
        return None
    if not (isinstance(value, str) and text[:1] == '"' and text[-1:] == '"'):
        return None
    return None if any(0xD800 <= ord(c) <= 0xDFFF for c in value) else value


SHORT = {'"': '"', "\\": "\\", "/": "/", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t"}


def escape_randomly(s: str, rnd: random.Random) -> str:
    """A literal for `s` where every character takes a random allowed form."""
    return '"' + "".join(rnd.choice(char_spellings(ch, rnd)) for ch in s) + '"'


def encodings(s: str, rnd: random.Random) -> list[bytes]:
    return [json.dumps(s).encode(), json.dumps(s, ensure_ascii=False).encode(),
            escape_randomly(s, rnd).encode()]


texts = st.one_of(st.text(max_size=10), st.text(alphabet=ALPHABET, max_size=10))

# ------------------------------------------------------------------ ECMA patterns


@settings(max_examples=examples(150))
@given(ecma_patterns(), st.lists(st.text(alphabet=ALPHABET, max_size=8), min_size=6, max_size=6))
def test_pattern_search_matches_python(pair, strings):
    ecma, python = pair
    dfa = _dfa(ecma_pattern(ecma))
    for s in strings:
        assert dfa.fullmatch(s.encode()) == (re.search(python, s) is not None), (ecma, s)


LOOKAROUNDS = ["(?=", "(?!", "(?<=", "(?<!"]


@settings(max_examples=examples(150), deadline=None)
@given(ecma_patterns(3), ecma_patterns(3), ecma_patterns(3), st.sampled_from(LOOKAROUNDS),
       st.lists(st.text(alphabet=ALPHABET, max_size=8), min_size=6, max_size=6))
def test_lookarounds_match_python(before, inside, after, opener, strings):
    """Lookarounds (`lookaround.py`) against the `regex` module, which reads variable-width
    lookbehind as ECMA-262 does."""
    ecma = f"{before[0]}{opener}{inside[0]}){after[0]}"
    python = f"{before[1]}{opener}{inside[1]}){after[1]}"
    try:
        dfa = _dfa(ecma_pattern(ecma))
    except GrammarError as exc:
        assert exc.code == "unsupported-pattern" and "anchor inside" in exc.message, exc
        return
    for s in strings:
        assert dfa.fullmatch(s.encode()) == (regex.search(python, s) is not None), (ecma, s)


ECMA_CASES = [  # (pattern, string, found)
    ("^abc$", "abc\n", False), ("^abc$", "abc", True), ("^\\t$", "\t", True),
    ("^\\t$", "\\t", False), ("^\\cC$", "\x03", True), ("^\\cc$", "\x03", True),
    ("^\\d$", "0", True), ("^\\d$", "߀", False), ("^\\d+$", "٣٤", False), ("^\\D$", "߀", True),
    ("^\\w$", "é", False), ("^\\W$", "é", True), ("\\wcole", "l'école", False),
    ("[a-z]cole", "l'ecole", True), (".", "\u2028", False), (".", "\u2029", False),
    (".", "\r", False), (".", "\n", False), ("^.$", "\u0085", True), ("^.$", "😀", True),
    ("^\\s$", "\ufeff", True), ("^\\s$", "\u2003", True), ("^\\s$", "\u0001", False),
    ("^\\s$", "\u2013", False), ("^\\S$", "\u00a0", False), ("a+", "xxaayy", True),
    ("abc", "xabcx", True), ("abc", "ab", False), ("^a", "ba", False), ("a$", "ab", False),
    ("^a|b$", "bax", False), ("^a|b$", "xab", True), ("^[^]$", "\n", True), ("[]", "", False),
    ("^\\/$", "/", True), ("^\\u{1F600}$", "😀", True), ("^\\uD83D\\uDE00$", "😀", True),
    ("^[\\uD83D\\uDE00-\\uD83D\\uDE02]$", "😁", True), ("\\uD800", "", False),
    ("^\\p{Letter}+$", "Hello", True), ("^\\p{Letter}+$", "π", True),
    ("^\\p{Letter}+$", "123", False), ("^\\p{digit}+$", "৪২", True), ("^\\P{L}$", "a", False),
    ("^\\p{gc=Lu}$", "A", True), ("^\\p{ASCII}$", "é", False), ("(^a|b)c", "xac", False),
    ("(^a|b)c", "xbc", True), ("x(^|y)z", "xz", False), ("(a$)*", "", True), ("$^", "", True),
    ("^(?<year>\\d{4})-\\d\\d$", "2024-01", True), ("a{2,3}?", "aa", True), ("[\\b]", "\b", True),
    ("^(?!(False|None)$)[A-Za-z]+$", "None", False), ("^(?!(False|None)$)[A-Za-z]+$", "Nonex", True),
    ("^(?=.*\\d)(?=.*[a-z]).{4,}$", "ab12", True), ("^(?=.*\\d)(?=.*[a-z]).{4,}$", "abcd", False),
    ("(?<!\\$)x", "$x", False), ("(?<!\\$)x", "$xx", True), ("^(?:(?!ab).)*$", "aab", False), ("^(?:(?!ab).)*$", "aba", False),
    ("^(?:(?!ab).)*$", "bba", True), ("(?<=^|,)x", "a,x", True), ("(?<=^|,)x", "ax", False),
]


@pytest.mark.parametrize("pattern, string, found", ECMA_CASES)
def test_ecma_semantics(pattern, string, found):
    assert _dfa(ecma_pattern(pattern)).fullmatch(string.encode()) == found


def test_property_classes_follow_unicodedata():
    dfa = _dfa(ecma_pattern("^\\p{Nd}$"))
    for cp in range(0, 0x3000, 7):
        assert dfa.fullmatch(chr(cp).encode()) == (unicodedata.category(chr(cp)) == "Nd"), hex(cp)


def test_edge_anchors_give_plain_ir():
    for pattern in ["abc", "^[a-z]+$", "^a|b$|^c$", "(?:x)+"]:
        assert not any(isinstance(n, Automaton) for n in walk(ecma_pattern(pattern)))
    assert isinstance(ecma_pattern("(^a|b)c"), Automaton)


UNSUPPORTED = [  # (pattern, column, words in the message)
    ("a(?=(?!b))", 5, "a lookaround inside another"), ("x(?<=a^b)", 2, "anchor inside"),
    ("(?=$a)", 1, "anchor inside"), ("(?<=a$)", 1, "anchor inside"), ("(a)\\1", 4, "backreference"),
    ("(?<n>a)\\k<n>", 8, "backreference"), ("\\bfoo", 1, "word boundary"),
    ("a\\B", 2, "word boundary"), ("(?i:a)", 1, "modifier"), ("\\p{Script=Greek}", 1, "script"),
    ("[\\p{Alphabetic}]", 2, "Unicode property"),
]
INVALID = [
    ("a{", 2), ("]", 1), ("a}", 2), ("a**", 3), ("(a", 1), ("a)", 2), ("[a", 1), ("ab\\", 3),
    ("\\a", 1), ("\\u12", 1), ("\\x4", 1), ("[z-a]", 2), ("[\\d-z]", 2), ("*a", 1), ("^*", 2),
    ("\\c1", 1), ("a{3,1}", 2), ("\\01", 1), ("\\u{110000}", 1), ("(?<1a>x)", 1), ("\\p{foo}", 1),
    ("\\pL", 1), ("(?P<n>a)", 1),
]


@pytest.mark.parametrize("pattern, column, words", UNSUPPORTED)
def test_unsupported_constructs_name_column_and_pointer(pattern, column, words):
    with pytest.raises(GrammarError) as info:
        ecma_pattern(pattern, pointer="/properties/code/pattern")
    e = info.value
    assert (e.code, e.column, e.pointer) == ("unsupported-pattern", column,
                                             "/properties/code/pattern")
    assert words in e.message and f"column {column}" in e.message
    assert str(e).startswith(f"1:{column} /properties/code/pattern: ")


@pytest.mark.parametrize("pattern, column", INVALID)
def test_invalid_patterns(pattern, column):
    with pytest.raises(GrammarError) as info:
        ecma_pattern(pattern, pointer="/pattern")
    assert (info.value.code, info.value.column, info.value.pointer) == (
        "invalid-pattern", column, "/pattern")


def test_pattern_budgets():
    with pytest.raises(BudgetExceeded) as info:
        ecma_pattern("a{20000}", pointer="/p")
    assert (info.value.column, info.value.pointer) == (2, "/p")
    assert "max_repeat" in info.value.message
    with pytest.raises(BudgetExceeded, match="max_pattern_length"):
        ecma_pattern("a" * 11, limits=Limits(max_pattern_length=10))
    nested = "(" * 50_000 + "a" + ")" * 50_000
    assert _dfa(ecma_pattern(nested)).fullmatch(b"xa")


# ------------------------------------------------------------------ JSON string literals

CONTENTS = {  # name -> (grammask regex for the content, Python fullmatch text)
    "date-like": ("[0-9]{4}-[0-9]{2}", "[0-9]{4}-[0-9]{2}"),
    "quotes": ('[a-z"\\\\]*', '[a-z"\\\\]*'),
    "has-é": (".*é.*", "[^\\n]*é[^\\n]*"),
    "no-controls": ("[^\\x00-\\x1f]*", "[^\\x00-\\x1f]*"),
    "emoji-or-ab": ("(ab|😀)*", "(?:ab|😀)*"),
}
_BUILT: dict = {}


def literal_dfa(content, lo, hi, pattern):  # type: ignore[no-untyped-def]
    """The DFA of json_string(...) (None for the empty language), memoized."""
    key = (content, lo, hi, pattern)
    if key not in _BUILT:
        node = None if content is None else parse_regex(CONTENTS[content][0])
        try:
            _BUILT[key] = _dfa(json_string(node, min_length=lo, max_length=hi, pattern=pattern))
        except GrammarError as e:
            assert e.code == "empty-language"
            _BUILT[key] = None
    return _BUILT[key]


def satisfies(s, content, lo, hi, python_pattern) -> bool:  # type: ignore[no-untyped-def]
    return (lo <= len(s) and (hi is None or len(s) <= hi)
            and (content is None or re.fullmatch(CONTENTS[content][1], s) is not None)
            and (python_pattern is None or re.search(python_pattern, s) is not None))


def accepts(dfa, data: bytes) -> bool:  # type: ignore[no-untyped-def]
    return dfa is not None and dfa.fullmatch(data)


constraints = st.tuples(
    st.one_of(st.none(), st.none(), st.sampled_from(sorted(CONTENTS))),
    st.integers(0, 4),
    st.one_of(st.none(), st.integers(0, 8)),
    st.one_of(st.none(), ecma_patterns(max_leaves=4)),
)


@settings(max_examples=examples(150))
@given(constraints, st.lists(texts, min_size=4, max_size=4), st.randoms(use_true_random=False))
def test_literals_accepted_iff_value_satisfies(cons, strings, rnd):
    content, lo, hi, pair = cons
    ecma, python = pair if pair else (None, None)
    dfa = literal_dfa(content, lo, hi, ecma)
    for s in strings:
        expected = satisfies(s, content, lo, hi, python)
        for data in encodings(s, rnd):
            assert accepts(dfa, data) == expected, (cons, s, data)


PIECES = [b'"', b"\\", b" ", b"u", b"d83d", b"D800", b"\\ude00", b"\\uDC00", b"\\u00e9", b"\\n",
          b"\\/", b"\\x", b"a", b"0", b"F", b"\x00", b"\x1f", b"\x7f", "é".encode(),
          "😀".encode(), b"\xed\xa0\x80", b"\xc0\xaf", b"\xe2\x80", b"\xff"]
byte_strings = st.lists(st.one_of(st.sampled_from(PIECES), st.binary(max_size=2)),
                        max_size=8).map(b"".join)


@settings(max_examples=examples(150))
@given(constraints, st.lists(byte_strings, min_size=8, max_size=8), st.booleans())
def test_random_bytes_accepted_iff_literal_of_valid_value(cons, chunks, quoted):
    content, lo, hi, pair = cons
    ecma, python = pair if pair else (None, None)
    dfa = literal_dfa(content, lo, hi, ecma)
    for chunk in chunks:
        data = b'"' + chunk + b'"' if quoted else chunk
        value = decoded(data)
        expected = value is not None and satisfies(value, content, lo, hi, python)
        assert accepts(dfa, data) == expected, (cons, data)


EDGES = [0, 0x1F, 0x20, 0x22, 0x5C, 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF,
         0x10000, 0x103FF, 0x10400, 0x10FFFF]
code_points = st.one_of(st.sampled_from(EDGES), st.integers(0, 0x10FFFF)).filter(
    lambda c: not 0xD800 <= c <= 0xDFFF)


@settings(max_examples=examples(60))
@given(st.lists(st.tuples(code_points, code_points).map(sorted), min_size=1, max_size=4),
       st.lists(code_points, min_size=10, max_size=10), st.randoms(use_true_random=False))
def test_escape_ranges_follow_the_character_class(ranges, probes, rnd):
    cls = CharClass.of(ranges)
    dfa = _dfa(json_string(Repeat(cls, 1, 2)))
    edges = [v for lo, hi in cls.ranges for v in (lo - 1, lo, hi, hi + 1)]
    for cp in probes + [v for v in edges if 0 <= v <= 0x10FFFF and not 0xD800 <= v <= 0xDFFF]:
        inside = any(lo <= cp <= hi for lo, hi in cls.ranges)
        for data in encodings(chr(cp), rnd) + encodings(chr(cp) * 2, rnd):
            assert dfa.fullmatch(data) == inside, (hex(cp), data)


def test_length_bounds_alone_are_plain_ir():
    for kwargs in [{"min_length": 3, "max_length": 200}, {"min_length": 40},
                   {"max_length": 3000}, {"max_length": 10}, {"min_length": 2}]:
        node = json_string(**kwargs)
        assert not any(isinstance(n, Automaton) for n in walk(node)), kwargs
    assert isinstance(json_string(), Automaton) and json_string() is json_string()
    assert isinstance(json_string(pattern="abc"), Automaton)


@pytest.mark.parametrize("lo, hi", [(0, 1), (0, 3), (2, 2), (1, 5), (3, None)])
def test_plain_length_bounds_equal_the_encoded_literals(lo: int, hi: int | None) -> None:
    """The IR counter accepts exactly the literals of the encoder's automaton (which values
    with content or a pattern take)."""
    from tests.support.equivalence import dfa_difference

    encoded = string_literals(None, None, lo, hi, Limits()).dfa
    assert dfa_difference(_dfa(json_string(min_length=lo, max_length=hi)), encoded) is None


BAD_LITERALS = [
    b'"\\ud800"', b'"\\udc00\\ud800"', b'"\\ud83d\\u0041"', b'"\\ud83d"', b'"\\U00e9"',
    b'"\\x41"', b'"\\u00e"', b'"a', b'a"', b'"\x1f"', b'"\\\'"', b'"\xed\xa0\x80"', b' "a"',
    b'"a" ', b' a"', b'"\\"', b"",
]
GOOD_LITERALS = [b'"\\uD83D\\uDE00"', b'"\\ud83d\\uDE00"', b'"\\u00E9\\u00e9"', b'"\x7f"', b'""']


@pytest.mark.parametrize("pattern", [None, ""])
def test_lone_surrogates_and_bad_escapes_rejected(pattern):
    dfa = _dfa(json_string(pattern=pattern))
    for bad in BAD_LITERALS:
        assert not dfa.fullmatch(bad), bad
    for good in GOOD_LITERALS:
        assert dfa.fullmatch(good), good


def test_length_counts_code_points_not_bytes_or_escapes():
    dfa = _dfa(json_string(min_length=2, max_length=2, pattern="^.😀$"))
    assert not dfa.fullmatch('"\\n😀"'.encode())
    assert dfa.fullmatch(b'"\\t\\ud83d\\ude00"')
    assert not dfa.fullmatch(b'"\\t\\ud83d\\ude00\\t"')


def test_bounds_errors_and_budgets():
    with pytest.raises(GrammarError) as info:
        json_string(min_length=-1, pointer="/s")
    assert (info.value.code, info.value.pointer) == ("invalid-schema", "/s")
    for bad in [1.5, True, "3"]:
        with pytest.raises(GrammarError, match="maxLength"):
            json_string(max_length=bad)
    assert _dfa(json_string(min_length=2.0, max_length=2.0)).fullmatch(b'"ab"')
    with pytest.raises(GrammarError) as info:
        json_string(min_length=3, max_length=2, pointer="/s")
    assert info.value.code == "empty-language"
    with pytest.raises(GrammarError) as info:
        json_string(max_length=2, pattern="^abc$", pointer="/s")
    assert (info.value.code, info.value.pointer) == ("empty-language", "/s")
    with pytest.raises(BudgetExceeded, match="max_repeat"):
        json_string(max_length=10_001)
    with pytest.raises(BudgetExceeded, match="max_dfa_states") as info:
        json_string(pattern="abc", min_length=9000, pointer="/s")
    assert info.value.pointer == "/s"
    # Over budget under a maxLength: the longest values that fit (relaxation string-length).
    node = json_string(pattern="abc", max_length=2000, pointer="/s")
    assert node.label.endswith("characters at most (string-length)")
    assert node.dfa.fullmatch(b'"' + b"x" * 100 + b'abc"')
    with pytest.raises(GrammarError) as info:
        json_string(pattern="a(?=(?!b))", pointer="/s")
    assert (info.value.code, info.value.pointer, info.value.column) == (
        "unsupported-pattern", "/s", 5)


def test_length_bound_is_a_linear_counter():
    sizes = [json_string(pattern="^[a-z]+$", max_length=n).dfa.n_states for n in (100, 200, 400)]
    assert sizes[2] - sizes[1] == 2 * (sizes[1] - sizes[0])
    node = json_string(pattern="^[a-z]+$", min_length=1500, max_length=2500,
                       limits=Limits(max_dfa_states=30_000))
    assert node.dfa.fullmatch(b'"' + b"q" * 2500 + b'"')
    assert not node.dfa.fullmatch(b'"' + b"q" * 1499 + b'"')
    assert node.dfa.fullmatch(b'"' + b"\\u0071" * 1500 + b'"')


# ------------------------------------------------------------------ JSON-Schema-Test-Suite

STRING_KEYWORDS = {"$schema", "type", "pattern", "minLength", "maxLength"}


def suite_groups():  # type: ignore[no-untyped-def]
    for name in ["pattern.json", "minLength.json", "maxLength.json",
                 "optional/ecmascript-regex.json"]:
        path = CORPUS / name
        if not path.exists():
            continue
        for group in json.loads(path.read_text(encoding="utf-8")):
            schema = group["schema"]
            if set(schema) <= STRING_KEYWORDS and schema.get("type", "string") == "string":
                yield pytest.param(group, id=f"{name}:{group['description']}")


@pytest.mark.skipif(not CORPUS.is_dir(), reason="JSON-Schema-Test-Suite corpus not present")
@pytest.mark.parametrize("group", list(suite_groups()))
def test_json_schema_test_suite(group):
    schema = group["schema"]
    node = json_string(min_length=schema.get("minLength", 0), max_length=schema.get("maxLength"),
                       pattern=schema.get("pattern"), pointer="/schema")
    dfa = _dfa(node)
    for case in group["tests"]:
        if isinstance(case["data"], str):
            data = json.dumps(case["data"], ensure_ascii=False).encode()
            assert dfa.fullmatch(data) == case["valid"], case["description"]


def test_short_escapes_and_controls_map_to_their_characters():
    for ch, letter in SHORT.items():
        dfa = _dfa(json_string(pattern=f"^\\u{{{ord(ch):x}}}$"))
        for other in SHORT.values():
            assert dfa.fullmatch(f'"\\{other}"'.encode()) == (other == letter), (ch, other)
        assert dfa.fullmatch(f'"\\u{ord(ch):04X}"'.encode())
    dfa = _dfa(json_string(pattern="^[^]$"))
    for cp in range(0x20):
        assert not dfa.fullmatch(b'"' + bytes([cp]) + b'"'), cp
        assert dfa.fullmatch(f'"\\u{cp:04x}"'.encode()) and dfa.fullmatch(f'"\\u{cp:04X}"'.encode())
    assert dfa.fullmatch(b'"\x20"') and dfa.fullmatch(b'"\\""') and not dfa.fullmatch(b'"""')


CHUNKED_BOUNDS = [(0, 65535), (600, 2000), (0, 600), (512, None), (700, 700), (800, 900)]


@pytest.mark.parametrize("lo, hi", CHUNKED_BOUNDS, ids=[f"{a}-{b}" for a, b in CHUNKED_BOUNDS])
def test_long_string_bounds_are_exact(lo, hi):
    """Bounds past CHUNKED_FROM are counted in kept chunk rules: exact at every boundary, with
    raw, escaped and surrogate-pair characters each counting one."""
    from grammask.compiler import compile_json_schema
    from grammask.compiler.frontends.json_schema.strings import CHUNK, CHUNKED_FROM
    from grammask.runtime import Matcher

    from ..support.vocabularies import small_vocabulary

    assert max(lo, hi or 0) >= CHUNKED_FROM
    compiled = compile_json_schema({"type": "string", "minLength": lo,
                                    **({} if hi is None else {"maxLength": hi})},
                                   small_vocabulary())
    assert compiled.pushdown is not None and any(
        name.startswith("string-chunk") for name in compiled.pushdown.rule_names)
    rng = random.Random(lo * 7 + (hi or 1))
    near = {lo - 1, lo, lo + 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 3 * CHUNK + 1}
    if hi is not None:
        near |= {hi - 1, hi, hi + 1}
    pool = ["a", " ", "é", "😀", "\n", '"', "中", "\x7f"]
    for n in sorted(x for x in near if 0 <= x <= 70_000):
        text = "".join(rng.choice(pool) for _ in range(n))
        for ascii_only in (False, True):
            m = Matcher(compiled)
            ok = m.accept_string(json.dumps(text, ensure_ascii=ascii_only)) and m.can_terminate()
            assert ok == (lo <= n and (hi is None or n <= hi)), (n, ascii_only)


def test_long_string_token_by_token():
    from grammask.compiler import compile_json_schema
    from grammask.runtime import Matcher, Vocabulary
    from grammask.runtime.bitmask import allocate_token_bitmask

    vocab = Vocabulary.default()
    compiled = compile_json_schema({"type": "object", "properties": {
        "note": {"type": "string", "maxLength": 1000}}, "required": ["note"]}, vocab)
    mask = allocate_token_bitmask(1, vocab.size)
    text = json.dumps({"note": "Le café, 😀 and a \"quote\"; " * 30}, ensure_ascii=False)
    assert len(json.loads(text)["note"]) <= 1000
    m = Matcher(compiled)
    for t in vocab.encode(text):
        m.fill_next_token_bitmask(mask)
        assert mask[0, t >> 5] >> (t & 31) & 1
        assert m.accept_token(t)
    assert m.can_terminate()
    m = Matcher(compiled)
    assert not m.accept_string(json.dumps({"note": "x" * 1001}))
