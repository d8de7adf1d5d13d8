"""The `string-escapes` relaxation: a string whose literal automaton with every JSON spelling
exceeds `Limits.max_dfa_states` is compiled with raw spellings only, its decoded values exact.

- Over budget (email / 120, uri-template / 200, hostname minLength 200): compiles with default
  limits, a note names the relaxation and the length keyword, raw spellings of valid values
  are accepted, escapes of raw-writable characters refused, invalid values refused.
- Under budget nothing changes: every escape is accepted and there is no note.
- The domain is exactly what `relaxations.py` states: the raw-spelling automaton equals the
  every-spelling automaton intersected with an independent IR of that domain.
- Soundness: random values near each format (valid ones, and mutated ones), spelled with
  random escapes, are accepted only when valid, judged by `jsonschema` (lengths, the loose
  email check) and by independent RFC checkers written here.
- The length counter (`strings.counted`) is exact, with the copies it prunes.
"""
from __future__ import annotations

import functools
import ipaddress
import json
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammask.compiler import BudgetExceeded
from tests.support.equivalence import dfa_difference
from grammask.compiler.ir.nodes import Automaton, CharClass, Choice, Literal, Repeat, Seq, walk
from grammask.compiler.frontends.json_schema import schema_to_grammar
from grammask.compiler import compile_json_schema
from grammask.compiler.frontends.json_schema.ecma_regex import ANY_CHAR, ANY_STRING
from grammask.compiler.frontends.json_schema.formats import format_node
from grammask.compiler.analyses.json_schema import lint_schema
from grammask.compiler.frontends.json_schema.relaxations import RELAXATIONS
from grammask.compiler.frontends.json_schema.strings import (
    RAW_SPELLINGS,
    counted,
    json_string,
    json_string_automaton,
)
from grammask.compiler.automata.language_ops import as_dfa, intersect
from grammask.compiler.support.limits import Limits
from grammask.compiler.frontends.regex import parse_regex
from tests.support.budget import examples
from tests.support.json_schema_oracle import validator
from tests.support.json_schema_spellings import char_spellings
from tests.support.json_schema_suite import accepts, byte_vocabulary

EMAIL = {"type": "string", "format": "email", "maxLength": 120}
TEMPLATE = {"type": "string", "format": "uri-template", "maxLength": 200}
HOSTNAME = {"type": "string", "format": "hostname", "minLength": 200}
OVER_BUDGET = {"email": EMAIL, "uri-template": TEMPLATE, "hostname": HOSTNAME}
LONG_HOST = ".".join(["abcdefghij-klmnopqrs"] * 10)           # 10 labels, 209 characters


@functools.cache
def compiled(name: str):  # type: ignore[no-untyped-def]
    return compile_json_schema(OVER_BUDGET[name], byte_vocabulary())


@functools.cache
def literals(name: str):  # type: ignore[no-untyped-def]
    """The string automaton the schema compiles to (its one `Automaton`)."""
    grammar, notes = schema_to_grammar(OVER_BUDGET[name])
    found = [n for rule in grammar.rules for n in walk(rule.body) if isinstance(n, Automaton)]
    assert len(found) == 1
    return found[0], notes


SHORT = {'"': '"', "\\": "\\", "/": "/", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t"}


def in_domain(form: str) -> bool:
    """Whether a spelling of one character lies in the `string-escapes` domain."""
    if not form.startswith("\\"):
        return True
    if form[1] == "u":
        v = int(form[2:6], 16)
        return len(form) == 6 and v < 0x20 and chr(v) not in SHORT
    return form[1] != "/"


def spell(value: str, rnd: random.Random, escape_rate: float) -> tuple[str, bool]:
    """A literal of `value` with characters escaped at random, and whether it lies in the
    domain (raw wherever JSON allows)."""
    out, inside = ['"'], True
    for ch in value:
        forms = char_spellings(ch, rnd)
        form = rnd.choice(forms) if forms[0] != ch or rnd.random() < escape_rate else ch
        inside &= in_domain(form)
        out.append(form)
    return "".join(out) + '"', inside


# ------------------------------------------------------------------ over budget, compiled

RAW_VALID = {
    "email": ["a@b.co", "x" * 100 + "@example.com", '"a\\"b\\\\c"@x.org', "o'neil@[10.0.0.1]",
              "a/b@c.de"],
    "uri-template": ["http://example.com/{user}/items{?page,size}", "/a/{b*}{+c:3}" * 10,
                     "caf\u00e9/{x}"],
    "hostname": [LONG_HOST, LONG_HOST.upper()],
}
RAW_INVALID = {
    "email": ["x" * 110 + "@example.com", "a@@b.co", "a b@c.de", "a@-b.co", "ab"],
    "uri-template": ["a" * 201, "{a", "a}", "{a b}", "%zz", "a<b"],
    "hostname": [LONG_HOST[:-10], LONG_HOST + "-", LONG_HOST.replace(".", "..", 1),
                 LONG_HOST.replace("j", "_")],
}
ESCAPED = {
    "email": ["\\u0061@b.co", "a\\/b@c.de", "a@b.\\u0063o", '\\u0022a\\"@x.org'],
    "uri-template": ["\\/a/{b}", "{\\u0061}", "caf\\u00E9/{x}"],
    "hostname": ["\\u0061" + LONG_HOST[1:], LONG_HOST[:-1] + "\\u006A"],
}


@pytest.mark.parametrize("name", sorted(OVER_BUDGET))
def test_over_budget_strings_compile_with_raw_spellings(name: str) -> None:
    c = compiled(name)
    keyword = "/maxLength" if "maxLength" in OVER_BUDGET[name] else "/minLength"
    notes = [n for n in c.notes if "string-escapes" in n]
    assert len(notes) == 1 and notes[0].startswith(keyword + ": "), c.notes
    check = validator(OVER_BUDGET[name])
    for value in RAW_VALID[name]:
        assert check.is_valid(value) and FORMAT_CHECKS[name](value), value
        assert accepts(c, json.dumps(value, ensure_ascii=False)), value
    for value in RAW_INVALID[name]:
        assert not (check.is_valid(value) and FORMAT_CHECKS[name](value)), value
        assert not accepts(c, json.dumps(value, ensure_ascii=False)), value
    for text in ESCAPED[name]:
        value = json.loads(f'"{text}"')
        assert accepts(c, json.dumps(value, ensure_ascii=False)), value   # the value is valid
        assert not accepts(c, f'"{text}"'), text                          # this spelling is not
    automaton, _ = literals(name)
    assert automaton.label == RAW_SPELLINGS
    assert automaton.dfa.n_states <= Limits().max_dfa_states


def test_needed_escapes_stay() -> None:
    """Quotes, backslashes and controls keep their one escape each (either hex case)."""
    node = json_string(pattern='^[\\u0000-\\u001f"\\\\a-z]*$', max_length=300,
                       limits=Limits(max_dfa_states=3000))
    assert node.label == RAW_SPELLINGS
    for text in [b'"\\b\\f\\n\\r\\t\\"\\\\ab"', b'"\\u0001\\u001F\\u000b\\u001e"', b'""',
                 b'"' + b"\\n" * 300 + b'"']:
        assert node.dfa.fullmatch(text), text
    for text in [b'"\\u0008"', b'"\\u0022"', b'"\\u005C"', b'"\\u0061"', b'"\\u000A"',
                 b'"\x01"', b'"\\/"', b'"' + b"\\n" * 301 + b'"']:
        assert not node.dfa.fullmatch(text), text


def test_under_budget_strings_keep_every_escape() -> None:
    schema = {"type": "string", "format": "email", "maxLength": 10}
    c = compile_json_schema(schema, byte_vocabulary())
    assert not any("string-escapes" in n for n in c.notes)
    for text in ['"\\u0061@b.co"', '"a\\/b@c.de"', '"\\u0061\\u0040\\u0062.\\u0063o"']:
        assert accepts(c, text), text
    assert accepts(c, '"\\u0061@b.cooooo"')                            # 10 characters
    assert not accepts(c, '"\\u0061@b.coooooo"')                       # 11 characters


def test_counting_over_budget_keeps_the_longest_values_that_fit() -> None:
    """Relaxation `string-length`: a URI of at most 200 characters needs more counter states
    than the budget, so values of at most k characters are kept, k the largest that fits."""
    schema = {"properties": {"u": {"type": "string", "format": "uri", "maxLength": 200}}}
    c = compile_json_schema(schema, byte_vocabulary())
    [note] = [n for n in c.notes if "(relaxation string-length)" in n]
    assert note.startswith("/properties/u/maxLength: strings of at most ")
    k = int(note.split("at most ")[1].split()[0])
    assert 50 < k < 200
    for n, ok in ((k, True), (k + 1, False), (12, True)):
        uri = "http://a.b/" + "x" * (n - 11)
        assert accepts(c, json.dumps({"u": uri})) is ok, n
    # Past Limits.max_repeat too (the counter is bounded by states, not by the count).
    image = {"type": "string", "maxLength": 32767,
             "pattern": "^data:image/(png|jpeg);base64,[0-9a-zA-Z+/=]*$"}
    c = compile_json_schema(image, byte_vocabulary())
    assert any("(relaxation string-length)" in n for n in c.notes)
    assert accepts(c, json.dumps("data:image/png;base64," + "A" * 5000))
    with pytest.raises(BudgetExceeded) as info:
        compile_json_schema({**image, "minLength": 32767}, byte_vocabulary())
    assert info.value.limit == "max_repeat" and info.value.pointer == "/minLength"
    # A complement counts exactly, or not at all.
    with pytest.raises(BudgetExceeded) as info:
        compile_json_schema({"not": schema["properties"]["u"]}, byte_vocabulary())
    assert info.value.pointer == "/not/maxLength"
    assert "Limits.max_dfa_states=20000" in info.value.message


def test_raw_spellings_over_budget_stay_budget_errors() -> None:
    with pytest.raises(BudgetExceeded) as info:
        json_string(pattern="^[\\u0000-\\u001f]*$", max_length=1000, pointer="/e",
                    limits=Limits(max_dfa_states=5000))
    assert info.value.pointer == "/e" and "(raw spellings)" in info.value.message


def test_the_note_names_the_property_and_lint_shows_it() -> None:
    schema = {"type": "object", "properties": {"email": EMAIL}}
    c = compile_json_schema(schema, byte_vocabulary())
    assert any(n.startswith("/properties/email/maxLength: string spellings restricted to raw "
                            "characters (relaxation string-escapes)") for n in c.notes), c.notes
    [note] = [n for n in c.notes if "(relaxation string-escapes)" in n]
    found = [d for d in lint_schema(json.dumps(schema), "s.json")
             if "string-escapes" in d.message]
    assert len(found) == 1 and found[0].pointer == "/properties/email/maxLength"
    assert found[0].severity != "error"


COMPLEMENTS = [  # (schema, accepted texts, refused texts): complements read decoded values
    ({"type": "string", "format": "email", "maxLength": 120, "not": {"const": "a@b.co"}},
     ['"a@b.cd"'], ['"a@b.co"', '"\\u0061@b.co"', '"a@b.cd\\u0020"']),
    ({"oneOf": [EMAIL, {"type": "string", "maxLength": 5}]},
     ['"a@b.cd"', '"\\u0061"', '"ab"'], ['"a@b.c"', '"\\u0061@b.c"', '"\\u0061@b.cd"']),
    ({"type": "string", "not": {"format": "email", "maxLength": 5}},
     ['"\\u0061b"', '"a@b.cd"'], ['"a@b.c"', '"\\u0061@b.c"', '"\\u0061\\u0040b.c"']),
]


@pytest.mark.parametrize("schema, good, bad", COMPLEMENTS, ids=lambda v: json.dumps(v)[:40])
def test_complements_work_on_decoded_values(schema: dict, good: list, bad: list) -> None:
    c = compile_json_schema(schema, byte_vocabulary())
    check = validator(schema)
    for text in good:
        assert check.is_valid(json.loads(text)) and accepts(c, text), text
    for text in bad:
        assert not accepts(c, text), text


# ------------------------------------------------------------------ the domain, exactly

_RAW = CharClass.of([(0x20, 0x21), (0x23, 0x5B), (0x5D, 0x10FFFF)])
_SHORT_NEEDED = Seq((Literal(b"\\"), CharClass.of([(c, c) for c in b'"\\bfnrt'])))
_HEX_ANY = CharClass.of([(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)])
_CONTROL_U = Seq((Literal(b"\\u00"), Choice((
    Seq((Literal(b"0"), CharClass.of([(0x30, 0x37), (0x42, 0x42), (0x62, 0x62), (0x45, 0x46),
                                      (0x65, 0x66)]))),
    Seq((Literal(b"1"), _HEX_ANY))))))
DOMAIN = Seq((Literal(b'"'), Repeat(Choice((_RAW, _SHORT_NEEDED, _CONTROL_U)), 0, None),
              Literal(b'"')))
"""The `string-escapes` domain as `relaxations.py` states it, written independently."""

VALUE_REGEXES = ['[a-z"\\\\/]*', ".*é.*", "[\\x00-\\x1f]{0,3}", "(ab|😀)*", "[^a]{1,4}",
                 "[\\x00-\\x7f]{0,2}"]


@pytest.mark.parametrize("regex", VALUE_REGEXES)
def test_raw_spellings_are_every_spelling_inside_the_domain(regex: str) -> None:
    values = intersect(ANY_STRING, parse_regex(regex)).dfa
    every = json_string_automaton(values)
    raw = json_string_automaton(values, escape_raw=False)
    inside = intersect(Automaton(every), DOMAIN).dfa
    assert dfa_difference(raw, inside) is None and dfa_difference(inside, raw) is None


def test_the_registry_states_the_domain() -> None:
    [entry] = [r for r in RELAXATIONS if r.name == "string-escapes"]
    for spelling in ('\\" \\\\ \\b \\f \\n \\r \\t', "\\u00XX", "raw", "either case"):
        assert spelling in entry.domain
    assert "\\/" not in entry.domain
    assert "max_dfa_states" in entry.applies and "notes" in entry.applies


# ------------------------------------------------------------------ soundness, by sampling

ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
LDH = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
QUOTED = r'"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"'


def rfc5321_mailbox(s: str) -> bool:
    """RFC 5321 section 4.1.2 `Mailbox` (IPv6 literals judged by `ipaddress`, a looser check
    that can only make this test weaker)."""
    m = re.fullmatch(rf"({ATEXT}+(?:\.{ATEXT}+)*|{QUOTED})@(.+)", s, re.ASCII)
    if m is None:
        return False
    domain = m.group(2)
    if re.fullmatch(rf"{LDH}(?:\.{LDH})*", domain, re.ASCII):
        return True
    literal = re.fullmatch(r"\[(.*)\]", domain)
    if literal is None:
        return False
    inner = literal.group(1)
    if re.fullmatch(r"[0-9]{1,3}(\.[0-9]{1,3}){3}", inner):
        return all(int(part) <= 255 for part in inner.split("."))
    if inner[:5].lower() == "ipv6:":
        try:
            ipaddress.IPv6Address(inner[5:])
        except ValueError:
            return False
        return True
    return False


def rfc1123_hostname(s: str) -> bool:
    return len(s) <= 253 and all(
        len(label) <= 63 and re.fullmatch(LDH, label, re.ASCII) for label in s.split("."))


_LITERAL = ("[\\x21\\x23\\x24\\x26-\\x3b\\x3d\\x3f-\\x5b\\x5d\\x5f\\x61-\\x7a\\x7e"
            "\\xa0-\\ud7ff\\ue000-\\ufdcf\\ufdf0-\\uffef\\U00010000-\\U0010fffd]|%[0-9A-Fa-f]{2}")
_VARCHAR = "(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})"
_VARSPEC = f"{_VARCHAR}(?:\\.?{_VARCHAR})*(?::[1-9][0-9]{{0,3}}|\\*)?"
_EXPRESSION = f"\\{{[+#./;?&=,!@|]?{_VARSPEC}(?:,{_VARSPEC})*\\}}"


def rfc6570_template(s: str) -> bool:
    """RFC 6570 section 2 (with erratum 6937: `'` in literals); noncharacters such as U+FFFE
    do not appear in the samples, so the literal ranges are written coarsely."""
    return re.fullmatch(f"(?:{_LITERAL}|{_EXPRESSION})*", s) is not None


FORMAT_CHECKS = {"email": rfc5321_mailbox, "uri-template": rfc6570_template,
                 "hostname": rfc1123_hostname}
NASTY = ['"', "\\", "@", ".", "-", " ", "\x01", "\n", "/", "{", "}", "%", "é", "😀", "a", "0"]


def _pick(rnd: random.Random, alphabet: str, n: int) -> str:
    return "".join(rnd.choice(alphabet) for _ in range(n))


def sample_value(name: str, rnd: random.Random) -> str:
    """A string near the format's valid values and the length bound."""
    if name == "email":
        if rnd.random() < 0.3:
            local = '"' + "".join(rnd.choice(['a', ' ', '\\"', '\\\\', '@', '.', 'é'])
                                  for _ in range(rnd.randint(0, 60))) + '"'
        else:
            local = ".".join(_pick(rnd, "abcxyz019!#$%&'*+/=?^_`{|}~-", rnd.randint(1, 40))
                             for _ in range(rnd.randint(1, 3)))
        domain = (f"[{rnd.randint(0, 300)}.1.2.{rnd.randint(0, 9)}]" if rnd.random() < 0.1 else
                  ".".join(_pick(rnd, "abz09", rnd.randint(1, 20))
                           for _ in range(rnd.randint(1, 4))))
        value = f"{local}@{domain}"
    elif name == "hostname":
        labels = [_pick(rnd, "abz09", 1) + _pick(rnd, "abz09-", rnd.randint(15, 19))
                  + _pick(rnd, "abz09", 1) for _ in range(rnd.randint(9, 11))]
        value = ".".join(labels)
    else:
        parts: list[str] = []
        target = rnd.randint(150, 210)
        while sum(map(len, parts)) < target:
            if rnd.random() < 0.5:
                parts.append("".join(rnd.choice(["a", "b", "/", ":", "?", "=", "&", "'", "%20",
                                                 "~", "\u00e9"]) for _ in range(8)))
            else:
                names = [".".join(_pick(rnd, "abz_09", rnd.randint(1, 3))
                                  for _ in range(rnd.randint(1, 2))) + rnd.choice(["", "*", ":3"])
                         for _ in range(rnd.randint(1, 3))]
                parts.append("{" + rnd.choice(["", "+", "#", "/", "?", "&"]) + ",".join(names)
                             + "}")
        value = "".join(parts)
    for _ in range(rnd.choice([0, 0, 1, 2])):
        i = rnd.randint(0, len(value))
        value = value[:i] + rnd.choice(NASTY + [""]) + value[i + rnd.randint(0, 1):]
    return value


@pytest.mark.parametrize("name", sorted(OVER_BUDGET))
@settings(max_examples=examples(150), deadline=None)
@given(seed=st.integers(0, 2**32), escape_rate=st.sampled_from([0.0, 0.0, 0.05, 0.5]))
def test_escaped_samples_accepted_only_when_valid(name: str, seed: int,
                                                  escape_rate: float) -> None:
    automaton, _ = literals(name)
    rnd = random.Random(seed)
    value = sample_value(name, rnd)
    text, inside = spell(value, rnd, escape_rate)
    data = text.encode("utf-8")
    assert json.loads(text) == value
    valid = validator(OVER_BUDGET[name]).is_valid(value) and FORMAT_CHECKS[name](value)
    if automaton.dfa.fullmatch(data):
        assert valid and inside, (value, text)
    in_subset = as_dfa(format_node(name)).fullmatch(value.encode("utf-8"))
    if inside and valid and in_subset:
        assert automaton.dfa.fullmatch(data), (value, text)


# ------------------------------------------------------------------ the length counter

COUNTED_REGEXES = ["[a-c]{1,3}(\\.[a-c]{1,3}){0,4}", "(ab|é|😀)*x?", "[a-z]{2,5}|[0-9]{8,9}",
                   "[0-9]{1,2}(\\.[0-9]{1,2}){2}"]


@pytest.mark.parametrize("regex", COUNTED_REGEXES)
@settings(max_examples=examples(40), deadline=None)
@given(lo=st.integers(0, 12), span=st.one_of(st.none(), st.integers(0, 6)))
def test_counted_equals_the_product_with_a_length_range(regex: str, lo: int,
                                                        span: int | None) -> None:
    hi = None if span is None else lo + span
    values = intersect(ANY_STRING, parse_regex(regex)).dfa
    product = intersect(Automaton(values), Repeat(ANY_CHAR, lo, hi)).dfa
    mine = counted(values, lo, hi, Limits())
    assert dfa_difference(mine, product) is None and dfa_difference(product, mine) is None


def test_counted_budget_counts_only_live_copies() -> None:
    values = intersect(ANY_STRING, format_node("hostname")).dfa
    assert counted(values, 200, None, Limits()).n_states <= Limits().max_dfa_states
    with pytest.raises(BudgetExceeded, match="string length counter"):
        counted(intersect(ANY_STRING, format_node("uri")).dfa, 0, 200, Limits())


def test_a_removed_bounded_format_takes_raw_spellings_too() -> None:
    """`not` of email within 120 characters: the complement's literal automaton is over budget
    with every escape, so it is compiled in `string-escapes`, noted at the `not`."""
    c = compile_json_schema({"type": "string", "not": {"format": "email", "maxLength": 120}},
                            byte_vocabulary())
    assert any("(relaxation string-escapes)" in n and n.startswith("/not:")
               for n in c.notes)
    assert not accepts(c, '"a@b.c"')                       # removed
    assert accepts(c, '"' + "a" * 130 + '@b.c"') and accepts(c, '"hello"')
    assert not accepts(c, '"h\\u0065llo"')                 # valid, outside the domain


def test_a_bound_every_value_meets_is_dropped() -> None:
    """A hostname has at most 241 characters here, so `maxLength: 255` leaves its automaton
    as it is (before, the counter copies exceeded the budget)."""
    values = as_dfa(format_node("hostname"))
    assert counted(values, 0, 255, Limits()) is values
    assert counted(values, 1, None, Limits()) is values
    shorter = counted(values, 0, 20, Limits())
    assert shorter.fullmatch(b"a" * 20) and not shorter.fullmatch(b"a" * 21)


_SHORT_PATTERNS = ["^[a-c]+$", "a", "^(ab|c)*$", "b.*c", "^[a-c]{2,}@[a-c]+$", "^(a|bc)+c?$"]


@settings(max_examples=examples(40), deadline=None)
@given(st.sampled_from(_SHORT_PATTERNS), st.integers(8, 400), st.integers(60, 400),
       st.lists(st.text("abc@", max_size=40), min_size=1, max_size=8))
def test_shortened_strings_are_exact_on_their_domain(pattern: str, longest: int, budget: int,
                                                     texts: list[str]) -> None:
    """Relaxation `string-length`, against Python's `re` (these patterns read alike in
    ECMA-262): with a small state budget the compiled string accepts exactly the values of at
    most k characters that match, k the noted bound (no note: exactly those of maxLength)."""
    schema = {"type": "string", "pattern": pattern, "maxLength": longest}
    try:
        c = compile_json_schema(schema, byte_vocabulary(), limits=Limits(max_dfa_states=budget))
    except BudgetExceeded:
        return
    notes = [n for n in c.notes if "(relaxation string-length)" in n]
    k = int(notes[0].split("at most ")[1].split()[0]) if notes else longest
    assert k <= longest
    for text in [*texts, "ab" * 200, "c" * k, "a" * (k + 1), "abc" * (k // 3 + 1)]:
        expected = re.search(pattern, text) is not None and len(text) <= k
        assert accepts(c, json.dumps(text)) == expected, (schema, k, text)
