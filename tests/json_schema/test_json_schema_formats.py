"""JSON Schema formats as automata: the JSON-Schema-Test-Suite's format cases (a vendored copy,
and the live suite when ../shared has it) and properties against the standard library's own
parsers (ipaddress, uuid, datetime)."""
from __future__ import annotations

import functools
import ipaddress
import json
import string
import uuid
from datetime import date, datetime, timedelta, timezone

import pytest
from grammask.compiler.support.errors import GrammarError
from grammask.compiler.frontends.json_schema.formats import KNOWN_FORMATS, format_node
from grammask.compiler.automata.build import ir_to_dfa
from hypothesis import given, settings
from hypothesis import strategies as st

from ..support.budget import examples
from ..support.paths import DATA, JSON_SCHEMA_SUITE

VENDORED = DATA / "json_schema_formats.json"
SUITE = JSON_SCHEMA_SUITE / "optional" / "format"
UNSUPPORTED = ("regex",)


@functools.cache
def dfa(name: str):  # type: ignore[no-untyped-def]
    return ir_to_dfa(format_node(name))


def matches(name: str, text: str) -> bool:
    return dfa(name).fullmatch(text.encode("utf-8", "surrogatepass"))


def vendored_cases(name: str) -> tuple[list[str], list[str]]:
    cases = json.loads(VENDORED.read_text(encoding="utf-8"))["formats"][name]
    return cases["valid"], cases["invalid"]


def suite_cases(name: str) -> tuple[list[str], list[str]]:
    valid: list[str] = []
    invalid: list[str] = []
    for group in json.loads((SUITE / f"{name}.json").read_text(encoding="utf-8")):
        assert group["schema"]["format"] == name
        for case in group["tests"]:
            if isinstance(case["data"], str):
                (valid if case["valid"] else invalid).append(case["data"])
    return valid, invalid


def outside_sound_subset(name: str, text: str) -> bool:
    """The documented valid strings a format rejects: leap seconds outside UTC, A-labels
    (`xn--`), hostnames of more than 11 labels, and of more than three labels with a label
    over 21 characters; for the internationalized formats, any text that is not ASCII."""
    if name in ("time", "date-time"):
        return ":60" in text and not text.upper().endswith(("Z", "+00:00", "-00:00"))
    if name in ("idn-hostname", "idn-email") and not text.isascii():
        return True
    if name in ("hostname", "idn-hostname"):
        labels = text.split(".")
        return (any(lab[2:4] == "--" for lab in labels) or len(labels) > 11
                or (len(labels) > 3 and max(map(len, labels)) > 21))
    return False


def check_cases(name: str, valid: list[str], invalid: list[str]) -> None:
    assert valid or invalid
    assert [s for s in valid if not matches(name, s) and not outside_sound_subset(name, s)] == []
    assert [s for s in valid if outside_sound_subset(name, s) and matches(name, s)] == []
    assert [s for s in invalid if matches(name, s)] == []


@pytest.mark.parametrize("name", KNOWN_FORMATS)
def test_vendored_suite_cases(name: str) -> None:
    check_cases(name, *vendored_cases(name))


@pytest.mark.parametrize("name", KNOWN_FORMATS)
def test_live_suite_cases(name: str) -> None:
    if not (SUITE / f"{name}.json").is_file():
        pytest.skip(f"JSON-Schema-Test-Suite not found at {SUITE}")
    check_cases(name, *suite_cases(name))


def test_vendored_copy_is_in_the_live_suite() -> None:
    if not SUITE.is_dir():
        pytest.skip(f"JSON-Schema-Test-Suite not found at {SUITE}")
    for name in KNOWN_FORMATS:
        live_valid, live_invalid = suite_cases(name)
        valid, invalid = vendored_cases(name)
        assert set(valid) <= set(live_valid) and set(invalid) <= set(live_invalid), name


def test_every_format_fits_the_default_budget() -> None:
    for name in KNOWN_FORMATS:
        assert not dfa(name).is_empty_language, name
    assert set(KNOWN_FORMATS).isdisjoint(UNSUPPORTED)


@pytest.mark.parametrize("name", UNSUPPORTED + ("unknown", "", "Date", "ipv4 "))
def test_unsupported_formats_raise(name: str) -> None:
    with pytest.raises(GrammarError) as info:
        format_node(name, span_pointer="/properties/when")
    assert info.value.code == "unsupported-format"
    assert info.value.pointer == "/properties/when"
    assert repr(name) in str(info.value) and "/properties/when" in str(info.value)


def test_hostname_label_bounds_and_documented_gaps() -> None:
    assert matches("hostname", "a" * 63 + ".com")
    assert not matches("hostname", "a" * 64 + ".com")
    assert matches("hostname", "a0-b.c") and matches("hostname", "a--b.com")
    assert not matches("hostname", "a.-b") and not matches("hostname", "a.b-")
    assert matches("hostname", "my-service.us-east-1.elb.amazonaws.com")
    assert matches("hostname", ".".join(["a" * 21] * 11))
    assert not matches("hostname", ".".join(["a" * 21] * 12))
    assert not matches("hostname", ".".join(["a" * 63] * 4))
    assert not matches("hostname", "xn--X") and not matches("hostname", "xn--9n2bp8q.com")


@given(st.lists(st.text(string.ascii_lowercase + string.digits + "-", min_size=1, max_size=70),
                min_size=1, max_size=14))
@settings(max_examples=examples(200))
def test_hostname_never_accepts_an_invalid_name(labels: list[str]) -> None:
    text = ".".join(labels)
    valid = len(text) <= 253 and all(
        len(lab) <= 63 and lab[0] != "-" and lab[-1] != "-" for lab in labels)
    if matches("hostname", text):
        assert valid and not outside_sound_subset("hostname", text)
    elif valid:
        assert outside_sound_subset("hostname", text)


def test_json_pointer_takes_any_decoded_character() -> None:
    assert matches("json-pointer", "/\x00/\n/\U0010ffff/~0~1/\u00e9")
    assert not matches("json-pointer", "/~") and not matches("json-pointer", "x")
    assert matches("relative-json-pointer", "10/\u2028#")


def test_relative_json_pointer_index_manipulation() -> None:
    """draft-bhutton-relative-json-pointer-00, which draft 2020-12 cites: a non-negative
    integer, then optionally `+` or `-` and a positive integer, then a JSON pointer or `#`."""
    for good in ("0+1", "0-1", "1+2#", "2-10/foo/0", "0+9//", "10-3#", "0-1/~0~1"):
        assert matches("relative-json-pointer", good), good
    for bad in ("+1", "-1", "-1/0", "+1/foo", "0+0", "0-0", "0+01", "0+", "0-/a", "0+-1",
                "0+1+1", "0#+1", "0##", "0+1##", "0+1#/a", "01+1", "0 +1", "0+\u0661"):
        assert not matches("relative-json-pointer", bad), bad


def test_email_address_literals() -> None:
    for good in ("a@[IPv6:1:2:3:4:5:6:7:8]", "a@[ipv6:::1.2.3.4]", "a@[1.2.3.004]",
                 '"a\\"b"@x', "a@[IPv6:1:2:3:4:5:6::]"):
        assert matches("email", good), good
    for bad in ("a@[IPv6:1:2:3:4:5:6:7::]", "a@[IPv6:1:2:3:4:5::1.2.3.4]", "a@[1.2.3]",
                "a@[x:y]", "a@-x.com", "a@x-"):
        assert not matches("email", bad), bad


# --- ipv4 / ipv6 against ipaddress ---------------------------------------------------------

def ipaddress_accepts(cls: type, text: str) -> bool:
    try:
        cls(text)
    except ValueError:
        return False
    return True


@given(st.ip_addresses(v=4))
@settings(max_examples=examples(150))
def test_ipv4_addresses_match(address: ipaddress.IPv4Address) -> None:
    assert matches("ipv4", str(address))


@given(st.lists(st.text("0123456789", min_size=1, max_size=4) | st.text("0x1a.", max_size=3),
                min_size=1, max_size=6).map(".".join) | st.text(max_size=16))
@settings(max_examples=examples(200))
def test_ipv4_agrees_with_ipaddress(text: str) -> None:
    assert matches("ipv4", text) == ipaddress_accepts(ipaddress.IPv4Address, text)


@st.composite
def ipv6_texts(draw: st.DrawFn) -> str:
    """RFC 4291 text: 8 groups with random padding and case, an optional IPv4 tail, and an
    optional `::` over any run of zero groups."""
    groups = draw(st.lists(st.just(0) | st.integers(0, 0xFFFF), min_size=8, max_size=8))
    texts = []
    for g in groups:
        digits = format(g, "x").zfill(draw(st.integers(1, 4)))
        texts.append("".join(draw(st.sampled_from([c.lower(), c.upper()])) for c in digits))
    if draw(st.booleans()):
        texts[6:] = [str(ipaddress.IPv4Address((groups[6] << 16) | groups[7]))]
    zeros = [i for i in range(len(texts)) if groups[i] == 0 and (i < 6 or len(texts) == 8)]
    if zeros and draw(st.booleans()):
        start = end = draw(st.sampled_from(zeros))
        while end + 1 in zeros and draw(st.booleans()):
            end += 1
        return ":".join(texts[:start]) + "::" + ":".join(texts[end + 1:])
    return ":".join(texts)


@given(ipv6_texts())
@settings(max_examples=examples(200))
def test_ipv6_text_forms_match(text: str) -> None:
    assert ipaddress_accepts(ipaddress.IPv6Address, text), text
    assert matches("ipv6", text)


@given(st.ip_addresses(v=6))
@settings(max_examples=examples(100))
def test_ipv6_compressed_and_exploded_match(address: ipaddress.IPv6Address) -> None:
    assert matches("ipv6", address.compressed) and matches("ipv6", address.exploded.upper())


@given(ipv6_texts(), st.integers(0, 45), st.text("0123456789abcdefABCDEF:.g", max_size=3),
       st.integers(0, 2))
@settings(max_examples=examples(200))
def test_ipv6_edits_agree_with_ipaddress(text: str, at: int, insert: str, cut: int) -> None:
    edited = text[:at] + insert + text[at + cut:]
    assert matches("ipv6", edited) == ipaddress_accepts(ipaddress.IPv6Address, edited), edited


# --- uuid ------------------------------------------------------------------------------------

def uuid_accepts(text: str) -> bool:
    shaped = len(text) == 36 and all(
        (c == "-") if i in (8, 13, 18, 23) else (c in string.hexdigits)
        for i, c in enumerate(text))
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return shaped


@given(st.uuids(), st.lists(st.booleans(), min_size=36, max_size=36))
@settings(max_examples=examples(100))
def test_uuids_match_in_any_case(value: uuid.UUID, upper: list[bool]) -> None:
    text = "".join(c.upper() if u else c for c, u in zip(str(value), upper))
    assert matches("uuid", text)


@given(st.uuids(), st.integers(0, 36), st.text("0123456789abcdefABCDEFg-{}:", max_size=2),
       st.integers(0, 2))
@settings(max_examples=examples(200))
def test_uuid_edits_agree_with_uuid_module(value: uuid.UUID, at: int, insert: str, cut: int) -> None:
    text = str(value)
    edited = text[:at] + insert + text[at + cut:]
    assert matches("uuid", edited) == uuid_accepts(edited), edited


# --- date, time, date-time against datetime ---------------------------------------------------

def date_exists(year: int, month: int, day: int) -> bool:
    # datetime has no year 0; the Gregorian leap cycle repeats every 400 years.
    try:
        date(year or 400, month, day)
    except ValueError:
        return False
    return True


@given(st.integers(0, 9999), st.integers(0, 13), st.integers(0, 32))
@settings(max_examples=examples(200))
def test_dates_agree_with_datetime(year: int, month: int, day: int) -> None:
    text = f"{year:04d}-{month:02d}-{day:02d}"
    assert matches("date", text) == date_exists(year, month, day)
    assert matches("date-time", text + "T12:00:00Z") == date_exists(year, month, day)


@given(st.integers(0, 9999), st.sampled_from([2, 2, 2, 1, 4]), st.integers(28, 31))
@settings(max_examples=examples(150))
def test_month_ends_agree_with_datetime(year: int, month: int, day: int) -> None:
    assert matches("date", f"{year:04d}-{month:02d}-{day:02d}") == date_exists(year, month, day)


@given(st.text("0123456789-", min_size=8, max_size=11))
@settings(max_examples=examples(150))
def test_date_shapes(text: str) -> None:
    shaped = (len(text) == 10 and text[4] == text[7] == "-"
              and (text[:4] + text[5:7] + text[8:]).isdigit())
    expected = shaped and date_exists(int(text[:4]), int(text[5:7]), int(text[8:]))
    assert matches("date", text) == expected


offsets = st.one_of(
    st.sampled_from(["Z", "z"]).map(lambda z: (z, timedelta(0))),
    st.tuples(st.sampled_from([1, -1]), st.integers(0, 23), st.integers(0, 59)).map(
        lambda t: (f"{'+' if t[0] > 0 else '-'}{t[1]:02d}:{t[2]:02d}",
                   t[0] * timedelta(hours=t[1], minutes=t[2]))),
)
fractions = st.one_of(st.just(""),
                      st.text("0123456789", min_size=1, max_size=12).map(lambda d: "." + d))


@given(st.times(), fractions, offsets)
@settings(max_examples=examples(200))
def test_times_match(value, frac: str, offset) -> None:  # type: ignore[no-untyped-def]
    text = f"{value:%H:%M:%S}{frac}{offset[0]}"
    assert matches("time", text)
    assert not matches("time", f"{value:%H:%M:%S}{frac}")


@given(st.integers(0, 23), st.integers(0, 59), fractions, offsets)
@settings(max_examples=examples(200))
def test_leap_seconds_only_at_2359_utc(hour: int, minute: int, frac: str, offset) -> None:  # type: ignore[no-untyped-def]
    text, delta = offset
    utc = (datetime(2000, 1, 2, hour, minute, tzinfo=timezone(delta))
           .astimezone(timezone.utc))
    accepted = matches("time", f"{hour:02d}:{minute:02d}:60{frac}{text}")
    assert accepted == ((hour, minute) == (23, 59) and not delta)
    assert not accepted or (utc.hour, utc.minute) == (23, 59)


@given(st.integers(0, 99), st.integers(0, 99), st.integers(0, 99), st.integers(0, 99),
       st.integers(0, 99))
@settings(max_examples=examples(200))
def test_time_field_ranges(hour: int, minute: int, second: int, off_hour: int, off_minute: int) -> None:
    text = f"{hour:02d}:{minute:02d}:{second:02d}+{off_hour:02d}:{off_minute:02d}"
    in_range = hour < 24 and minute < 60 and off_hour < 24 and off_minute < 60
    utc = (hour * 60 + minute - off_hour * 60 - off_minute) % (24 * 60)
    expected = in_range and (second < 60 or (second == 60 and utc == 24 * 60 - 1
                                              and off_hour == off_minute == 0))
    assert matches("time", text) == expected


@given(st.datetimes(min_value=datetime(1, 1, 1)), fractions, offsets,
       st.sampled_from("Tt"))
@settings(max_examples=examples(200))
def test_date_times_match(value: datetime, frac: str, offset, sep: str) -> None:  # type: ignore[no-untyped-def]
    text = f"{value.year:04d}-{value:%m-%d}{sep}{value:%H:%M:%S}{frac}{offset[0]}"
    assert matches("date-time", text)
    assert not matches("date-time", text.replace(sep, " "))
    assert not matches("date", text) and not matches("time", text)


def test_an_unknown_format_is_an_annotation(vocab) -> None:  # type: ignore[no-untyped-def]
    from grammask.compiler import compile_json_schema
    from grammask.runtime import Matcher

    schema = {"type": "object", "properties": {
        "c": {"type": "string", "format": "color-hex", "maxLength": 7}}, "required": ["c"],
        "additionalProperties": False}
    compiled = compile_json_schema(schema, vocab)
    assert any(n.startswith("/properties/c/format: ") and "annotation" in n
               for n in compiled.notes)
    assert Matcher(compiled).accept_string('{"c": "not hex"}')  # any string: an annotation
    assert not Matcher(compiled).accept_string('{"c": "12345678"}')  # maxLength still holds
    with pytest.raises(GrammarError) as info:
        compile_json_schema(schema, vocab, strict_formats=True)
    assert (info.value.code, info.value.pointer) == ("unsupported-format", "/properties/c/format")
    # Under not, an annotation constrains nothing: not (any string) is every other type.
    negated = compile_json_schema({"not": {"type": "string", "format": "made-up"}}, vocab)
    assert not Matcher(negated).accept_string('"a"')
    m = Matcher(negated)
    assert m.accept_string("12") and m.can_terminate()
    # A format grammask asserts as a grammar stands alone (`regex_syntax.py`).
    with pytest.raises(GrammarError, match="'regex' is supported alone"):
        compile_json_schema({"type": "string", "format": "regex", "pattern": "a"}, vocab)


# IRIs (RFC 3987) against URIs (RFC 3986, checked above on the suite): an ASCII text is an IRI
# exactly when it is a URI; one whose other characters are all `ucschar` exactly when its
# UTF-8 percent-encoding (RFC 3987 section 3.1) is a URI; `iprivate` characters are allowed in
# queries only, and other characters nowhere.
UCSCHAR = "\u00e9\u4e2d\ufdf0\U0001f600\U000e1000"
IPRIVATE = "\ue000\U000f0000\U0010fffd"
OUTSIDE = "\u0080\ufdd0\ufffe\U0001fffe\U000e0001"
PIECE = st.text(alphabet=st.sampled_from("aZ09-._~!$&'()*+,;=:@%2F/?#[]" + UCSCHAR),
                max_size=5)


def percent_encoded(text: str) -> str:
    return "".join(c if ord(c) < 128 else "".join(f"%{b:02X}" for b in c.encode("utf-8"))
                   for c in text)


@st.composite
def iri_like(draw: st.DrawFn, extra: str = "") -> str:
    piece = PIECE if not extra else st.text(alphabet=st.sampled_from(
        "aZ09-._~:@/?" + UCSCHAR + extra), max_size=5)
    text = draw(st.sampled_from(["", "http:", "urn:", "h\u00e9:", "a+b:"]))
    if draw(st.booleans()):
        text += "//" + draw(piece) + draw(st.sampled_from(["", "@", ":80", "@h:1"]))
        text += draw(st.sampled_from(["", "[::1]", "[v1.x]", "1.2.3.4"]))
    for _ in range(draw(st.integers(0, 3))):
        text += "/" + draw(piece)
    if draw(st.booleans()):
        text += "?" + draw(piece)
    if draw(st.booleans()):
        text += "#" + draw(piece)
    return text


@given(text=iri_like())
@settings(max_examples=examples(300))
def test_iri_is_a_uri_once_percent_encoded(text: str) -> None:
    for iri, uri in (("iri", "uri"), ("iri-reference", "uri-reference")):
        assert matches(iri, text) == matches(uri, percent_encoded(text)), (iri, text)
        if text.isascii():
            assert matches(iri, text) == matches(uri, text), (iri, text)


@given(text=iri_like(IPRIVATE + OUTSIDE))
@settings(max_examples=examples(300))
def test_iri_private_and_outside_characters(text: str) -> None:
    for iri, uri in (("iri", "uri"), ("iri-reference", "uri-reference")):
        if matches(iri, text):
            assert matches(uri, percent_encoded(text)), (iri, text)
            assert not any(c in OUTSIDE for c in text), (iri, text)
            end = text.find("#") if "#" in text else len(text)
            start = text.find("?", 0, end)
            rest = text if start < 0 else text[:start] + text[end:]
            assert not any(c in IPRIVATE for c in rest), (iri, text)
