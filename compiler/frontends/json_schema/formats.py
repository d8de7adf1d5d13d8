"""JSON Schema `format` values (draft 2020-12) as regular languages, exact except where noted.

`format_node(name)` is the IR of the strings valid for that format. The IR describes the decoded
string content, code point by code point (each matched as its UTF-8 bytes): no quotes and no
JSON escaping, which the caller adds. Each language is written as the RFC's ABNF productions,
under the production's own name, and follows the ABNF exactly; ABNF string literals are
case-insensitive (RFC 5234 section 2.3), so `v` in IPvFuture and `IPv6:` in an e-mail address
literal match either case. Where the JSON-Schema-Test-Suite settles what the ABNF leaves to
prose, the suite is followed:

- date, time, date-time (RFC 3339 section 5.6): days per month exact, February 29 only in leap
  years of the proleptic Gregorian calendar (year 0000 included), `T`/`t` and `Z`/`z` either
  case, seconds 00-59, and second 60 only as 23:59:60 with offset `Z`, `+00:00` or `-00:00`
  (any date). That is a sound subset: a leap second written in another offset (`15:59:60-08:00`)
  is valid but rejected, because accepting exactly those needs the local time and the offset to
  sum to 23:59 UTC, an automaton of about 11,000 states, for every time field of every schema.
  No space in place of `T`.
- duration (RFC 3339 Appendix A): designators in upper case, as ISO 8601 writes them.
- email (RFC 5321 section 4.1.2 `Mailbox`): dot-string or quoted-string local part, then a
  domain or an IPv4 / IPv6 address literal. The general address literal is left out: its tag
  must be registered, and the only registered tag, `IPv6`, has its own production. The size
  limits of section 4.5.3.1 are not part of the ABNF and are not applied.
- hostname (RFC 1123 section 2.1): labels of 1-63 letters, digits and hyphens, neither first
  nor last a hyphen, joined by dots, 253 characters at most. Two sound subsets: the total is
  enforced as "at most three labels, or 4 to 11 labels of at most 21 characters" (exactly
  together with the label bound it needs a 23,809-state automaton, about 178,000 once JSON
  escapes are added), and no label has `--` in its third and fourth places, so A-labels
  (`xn--`), whose Punycode and IDNA validity no automaton of practical size checks, are
  rejected.
- ipv4, ipv6: RFC 3986 `IPv4address` (0-255, no leading zeros) and `IPv6address` (RFC 4291 text
  forms: every `::` compression, an IPv4 tail); no zone id, no brackets.
- uuid (RFC 4122): 8-4-4-4-12 hexadecimal digits, either case, any version and variant.
- uri, uri-reference (RFC 3986 `URI` and `URI-reference`); iri, iri-reference (RFC 3987 `IRI`
  and `IRI-reference`: the same with `ucschar` among the unreserved characters and `iprivate`
  in queries).
- uri-template (RFC 6570 level 4 syntax, with verified erratum 6937 that admits `'` in literals).
- json-pointer (RFC 6901), relative-json-pointer (draft-bhutton-relative-json-pointer-00, the
  reference of draft 2020-12: a non-negative integer, an optional index manipulation, a `+` or
  `-` then a positive integer, as in `0+1` or `1-2/foo`, then a JSON pointer or `#`).

- idn-hostname (RFC 5890/5891, IDNA2008), idn-email (RFC 6531): their ASCII sound subsets,
  the hostname and email languages above (an NR-LDH label is a valid IDNA2008 label, an RFC
  5321 mailbox a valid RFC 6531 one). U-labels and A-labels are rejected: a U-label's
  validity needs the IDNA2008 code point tables, its context rules and the Bidi rule, and its
  A-label's 63-octet bound the length of its Punycode, which no automaton of practical size
  follows. Removed as: any non-empty text (idn-hostname), any text holding `@` (idn-email).

regex, and every name not listed, raise `GrammarError` with code `unsupported-format`.
"""
from __future__ import annotations

from collections.abc import Callable

from ...ir.nodes import Literal, Node, Seq
from ...support.caches import memo
from ...support.errors import GrammarError
from ..regex import parse_regex
from .ecma_regex import ANY_CHAR, ANY_STRING

DIGIT = "[0-9]"
HEXDIG = "[0-9A-Fa-f]"
ALPHA = "[A-Za-z]"

# RFC 3339 section 5.6
date_fullyear = f"{DIGIT}{{4}}"
leap_year = f"({DIGIT}{{2}}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)"
full_date = (
    f"({date_fullyear}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])"
    f"|(0[469]|11)-(0[1-9]|[12][0-9]|30)"
    f"|02-(0[1-9]|1[0-9]|2[0-8]))"
    f"|{leap_year}-02-29)"
)
time_hour = "([01][0-9]|2[0-3])"
time_minute = "[0-5][0-9]"
time_second = "[0-5][0-9]"
time_secfrac = rf"\.{DIGIT}+"
time_numoffset = f"[+-]{time_hour}:{time_minute}"
time_offset = f"([Zz]|{time_numoffset})"
partial_time = f"{time_hour}:{time_minute}:{time_second}({time_secfrac})?"

# RFC 3339 Appendix A
dur_second = f"{DIGIT}+S"
dur_minute = f"{DIGIT}+M({dur_second})?"
dur_hour = f"{DIGIT}+H({dur_minute})?"
dur_time = f"T({dur_hour}|{dur_minute}|{dur_second})"
dur_day = f"{DIGIT}+D"
dur_week = f"{DIGIT}+W"
dur_month = f"{DIGIT}+M({dur_day})?"
dur_year = f"{DIGIT}+Y({dur_month})?"
dur_date = f"({dur_day}|{dur_month}|{dur_year})({dur_time})?"
duration = f"P({dur_date}|{dur_time}|{dur_week})"

# RFC 3986 section 3.2.2
dec_octet = f"(25[0-5]|2[0-4]{DIGIT}|1{DIGIT}{{2}}|[1-9]{DIGIT}|{DIGIT})"
IPv4address = rf"{dec_octet}(\.{dec_octet}){{3}}"
h16 = f"{HEXDIG}{{1,4}}"
ls32 = f"({h16}:{h16}|{IPv4address})"


def _h16_list(most: int) -> str:
    """`[ *most( h16 ":" ) h16 ]`: up to most + 1 groups, or none."""
    return f"(({h16}:){{0,{most}}}{h16})?" if most else f"({h16})?"


IPv6address = "(" + "|".join([
    f"({h16}:){{6}}{ls32}",
    f"::({h16}:){{5}}{ls32}",
    f"{_h16_list(0)}::({h16}:){{4}}{ls32}",
    f"{_h16_list(1)}::({h16}:){{3}}{ls32}",
    f"{_h16_list(2)}::({h16}:){{2}}{ls32}",
    f"{_h16_list(3)}::{h16}:{ls32}",
    f"{_h16_list(4)}::{ls32}",
    f"{_h16_list(5)}::{h16}",
    f"{_h16_list(6)}::",
]) + ")"

# RFC 3986 sections 2-4
unreserved = "[A-Za-z0-9._~-]"
sub_delims = "[!$&'()*+,;=]"
pct_encoded = f"%{HEXDIG}{HEXDIG}"
pchar = f"({unreserved}|{pct_encoded}|{sub_delims}|[:@])"
scheme = f"{ALPHA}[A-Za-z0-9+.-]*"
userinfo = f"({unreserved}|{pct_encoded}|{sub_delims}|:)*"
IPvFuture = rf"[Vv]{HEXDIG}+\.({unreserved}|{sub_delims}|:)+"
IP_literal = rf"\[({IPv6address}|{IPvFuture})\]"
reg_name = f"({unreserved}|{pct_encoded}|{sub_delims})*"
host = f"({IP_literal}|{IPv4address}|{reg_name})"
port = f"{DIGIT}*"
authority = f"({userinfo}@)?{host}(:{port})?"
segment = f"{pchar}*"
segment_nz = f"{pchar}+"
segment_nz_nc = f"({unreserved}|{pct_encoded}|{sub_delims}|@)+"
path_abempty = f"(/{segment})*"
path_absolute = f"/({segment_nz}(/{segment})*)?"
path_noscheme = f"{segment_nz_nc}(/{segment})*"
path_rootless = f"{segment_nz}(/{segment})*"
hier_part = f"(//{authority}{path_abempty}|{path_absolute}|{path_rootless}|)"
query = f"({pchar}|[/?])*"
fragment = f"({pchar}|[/?])*"
URI = rf"{scheme}:{hier_part}(\?{query})?(#{fragment})?"
relative_part = f"(//{authority}{path_abempty}|{path_absolute}|{path_noscheme}|)"
relative_ref = rf"{relative_part}(\?{query})?(#{fragment})?"
URI_reference = f"({URI}|{relative_ref})"

# RFC 3987 section 2.2: the URI productions with `ucschar` among the unreserved characters and
# `iprivate` in queries (IP-literal, IPv4address, port, scheme, pct-encoded as in RFC 3986)
ucschar = (r"\xa0-\ud7ff\uf900-\ufdcf\ufdf0-\uffef" + "".join(
    f"\\U{plane:04x}0000-\\U{plane:04x}fffd" for plane in range(1, 14)
) + r"\U000e1000-\U000efffd")
iprivate = r"\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd"
iunreserved = f"([A-Za-z0-9._~-]|[{ucschar}])"
ipchar = f"({iunreserved}|{pct_encoded}|{sub_delims}|[:@])"
iuserinfo = f"({iunreserved}|{pct_encoded}|{sub_delims}|:)*"
ireg_name = f"({iunreserved}|{pct_encoded}|{sub_delims})*"
ihost = f"({IP_literal}|{IPv4address}|{ireg_name})"
iauthority = f"({iuserinfo}@)?{ihost}(:{port})?"
isegment = f"{ipchar}*"
isegment_nz = f"{ipchar}+"
isegment_nz_nc = f"({iunreserved}|{pct_encoded}|{sub_delims}|@)+"
ipath_abempty = f"(/{isegment})*"
ipath_absolute = f"/({isegment_nz}(/{isegment})*)?"
ipath_noscheme = f"{isegment_nz_nc}(/{isegment})*"
ipath_rootless = f"{isegment_nz}(/{isegment})*"
ihier_part = f"(//{iauthority}{ipath_abempty}|{ipath_absolute}|{ipath_rootless}|)"
iquery = f"({ipchar}|[{iprivate}]|[/?])*"
ifragment = f"({ipchar}|[/?])*"
IRI = rf"{scheme}:{ihier_part}(\?{iquery})?(#{ifragment})?"
irelative_part = f"(//{iauthority}{ipath_abempty}|{ipath_absolute}|{ipath_noscheme}|)"
irelative_ref = rf"{irelative_part}(\?{iquery})?(#{ifragment})?"
IRI_reference = f"({IRI}|{irelative_ref})"

# RFC 1123 section 2.1 (with RFC 952 labels)
let_dig = "[A-Za-z0-9]"
ldh_str = f"[A-Za-z0-9-]*{let_dig}"
# Not `--` in the third and fourth places: no R-LDH label, so no A-label (`xn--`) either.
let_dig_hyp = "[A-Za-z0-9-]"


def _label(most: int) -> str:
    """A hostname label of 1 to `most` characters with no `--` in its third and fourth places."""
    return (f"{let_dig}({let_dig_hyp}?{let_dig}|{let_dig_hyp}{let_dig_hyp}{let_dig}"
            f"|{let_dig_hyp}([A-Za-z0-9]{let_dig_hyp}|-[A-Za-z0-9]){let_dig_hyp}{{0,{most - 5}}}"
            f"{let_dig})?")


# The 253-character total, soundly: three labels of up to 63 characters (191 at most) or
# 4-11 labels of up to 21 (241 at most).
hostname = rf"{_label(63)}(\.{_label(63)}){{0,2}}|{_label(21)}(\.{_label(21)}){{3,10}}"

# RFC 5321 section 4.1.2 and 4.1.3 (atext from RFC 5322 section 3.2.3)
atext = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
atom = f"{atext}+"
dot_string = rf"{atom}(\.{atom})*"
qtextSMTP = r"[\x20\x21\x23-\x5b\x5d-\x7e]"
quoted_pairSMTP = r"\\[\x20-\x7e]"
quoted_string = f'"({qtextSMTP}|{quoted_pairSMTP})*"'
local_part = f"({dot_string}|{quoted_string})"
sub_domain = f"{let_dig}({ldh_str})?"
domain = rf"{sub_domain}(\.{sub_domain})*"
snum = f"({DIGIT}{{1,2}}|[01]{DIGIT}{{2}}|2[0-4]{DIGIT}|25[0-5])"
IPv4_address_literal = rf"{snum}(\.{snum}){{3}}"
IPv6_hex = f"{HEXDIG}{{1,4}}"


def _hex_groups(n: int) -> str:
    """Exactly n `IPv6-hex` groups separated by colons (empty when n is 0)."""
    return f"{IPv6_hex}(:{IPv6_hex}){{{n - 1}}}" if n else ""


def _compressed(most: int, tail: str = "") -> str:
    """`::` with a groups before and b after, a + b <= most, then `tail` (RFC 5321's limit on
    groups "in addition to the '::'")."""
    return "(" + "|".join(
        f"{_hex_groups(a)}::{_hex_groups(b)}{':' if b and tail else ''}{tail}"
        for a in range(most + 1) for b in range(most + 1 - a)
    ) + ")"


IPv6_full = _hex_groups(8)
IPv6_comp = _compressed(6)
IPv6v4_full = f"{_hex_groups(6)}:{IPv4_address_literal}"
IPv6v4_comp = _compressed(4, IPv4_address_literal)
IPv6_addr = f"({IPv6_full}|{IPv6_comp}|{IPv6v4_full}|{IPv6v4_comp})"
IPv6_address_literal = f"[Ii][Pp][Vv]6:{IPv6_addr}"
address_literal = rf"\[({IPv4_address_literal}|{IPv6_address_literal})\]"
Mailbox = f"{local_part}@({domain}|{address_literal})"

# RFC 6570 section 2 (literals as corrected by erratum 6937)
literals = rf"([\x21\x23\x24\x26-\x3b\x3d\x3f-\x5b\x5d\x5f\x61-\x7a\x7e{ucschar}{iprivate}]|{pct_encoded})"
operator = "[+#./;?&=,!@|]"
varchar = f"([A-Za-z0-9_]|{pct_encoded})"
varname = rf"{varchar}(\.?{varchar})*"
modifier_level4 = rf"(:[1-9]{DIGIT}{{0,3}}|\*)"
varspec = f"{varname}({modifier_level4})?"
variable_list = f"{varspec}(,{varspec})*"
expression = rf"\{{({operator})?{variable_list}\}}"
URI_Template = f"({literals}|{expression})*"

# RFC 6901 section 3; draft-bhutton-relative-json-pointer-00 section 3
unescaped = r"[\x00-\x2e\x30-\x7d\x7f-\U0010ffff]"
escaped = "~[01]"
json_pointer = f"(/({unescaped}|{escaped})*)*"
positive_integer = f"[1-9]{DIGIT}*"
non_negative_integer = f"(0|{positive_integer})"
index_manipulation = f"[+-]{positive_integer}"
relative_json_pointer = f"{non_negative_integer}({index_manipulation})?({json_pointer}|#)"


@memo(maxsize=1)
def _full_time() -> Node:
    """`full-time`; second 60 only as 23:59:60 in UTC (offset `Z`, `+00:00` or `-00:00`)."""
    leap = f"23:59:60({time_secfrac})?([Zz]|[+-]00:00)"
    return parse_regex(f"{partial_time}{time_offset}|{leap}")


def _date_time() -> Node:
    return Seq((parse_regex(full_date + "[Tt]"), _full_time()))


def _pattern(text: str) -> Callable[[], Node]:
    return lambda: parse_regex(text)


_BUILDERS: dict[str, Callable[[], Node]] = {
    "date": _pattern(full_date),
    "time": _full_time,
    "date-time": _date_time,
    "duration": _pattern(duration),
    "email": _pattern(Mailbox),
    "hostname": _pattern(hostname),
    "idn-hostname": _pattern(hostname),
    "idn-email": _pattern(Mailbox),
    "ipv4": _pattern(IPv4address),
    "ipv6": _pattern(IPv6address),
    "uuid": _pattern(f"{HEXDIG}{{8}}-{HEXDIG}{{4}}-{HEXDIG}{{4}}-{HEXDIG}{{4}}-{HEXDIG}{{12}}"),
    "uri": _pattern(URI),
    "uri-reference": _pattern(URI_reference),
    "iri": _pattern(IRI),
    "iri-reference": _pattern(IRI_reference),
    "uri-template": _pattern(URI_Template),
    "json-pointer": _pattern(json_pointer),
    "relative-json-pointer": _pattern(relative_json_pointer),
}

KNOWN_FORMATS: tuple[str, ...] = tuple(_BUILDERS)
"""The formats `format_node` supports."""

_UNSUPPORTED = {
    "regex": "the ECMA-262 pattern language is not regular (nested groups); it is compiled "
             "as a grammar where it stands alone, without pattern, length or another format",
}


@memo(maxsize=len(_BUILDERS))
def _built(name: str) -> Node:
    return _BUILDERS[name]()


# Supersets of the two sound subsets (`relaxations.py`), for where a format is removed.
_any_second_time = (f"{time_hour}:{time_minute}:([0-5][0-9]|60)({time_secfrac})?"
                    f"{time_offset}")
_any_label = f"{let_dig}({let_dig_hyp}{{0,61}}{let_dig})?"
_SUPERSETS: dict[str, Callable[[], Node]] = {
    "time": _pattern(_any_second_time),
    "date-time": _pattern(f"{full_date}[Tt]{_any_second_time}"),
    "hostname": _pattern(rf"{_any_label}(\.{_any_label})*"),
    # Every internationalized hostname is a non-empty text; every address holds an `@`.
    "idn-hostname": lambda: Seq((ANY_CHAR, ANY_STRING)),
    "idn-email": lambda: Seq((ANY_STRING, Literal(b"@"), ANY_STRING)),
}


@memo(maxsize=len(_SUPERSETS))
def _superset(name: str) -> Node:
    return _SUPERSETS[name]()


def is_known_format(name: str) -> bool:
    """Whether grammask knows format `name`: one it asserts, or one it refuses to."""
    return name in _BUILDERS or name in _UNSUPPORTED


def format_superset(name: str, *, span_pointer: str = "") -> Node:
    """A language that holds every string valid for format `name`: `format_node` itself where
    that is exact, else the superset `relaxations.RELAXATIONS` names; errors as `format_node`."""
    if name in _SUPERSETS:
        return _superset(name)
    return format_node(name, span_pointer=span_pointer)


def format_node(name: str, *, span_pointer: str = "") -> Node:
    """The IR of the decoded string contents valid for JSON Schema format `name`; an
    unsupported or unknown name raises GrammarError (code `unsupported-format`) naming the
    format and `span_pointer`, the JSON pointer of the schema that uses it."""
    if name in _BUILDERS:
        return _built(name)
    if name in _UNSUPPORTED:
        message = f"format {name!r} is not supported: {_UNSUPPORTED[name]}"
    else:
        message = f"unknown format {name!r}; supported formats: {', '.join(KNOWN_FORMATS)}"
    raise GrammarError(message, pointer=span_pointer, code="unsupported-format")
