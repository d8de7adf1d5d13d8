"""Every sound subset the JSON Schema frontend takes, declared in one place with its domain.

The frontend's promise: an accepted instance always validates. Where the exact language is not
regular, or not of practical size, a keyword is compiled exactly only on a *domain* D of
instances, and the valid instances outside D are rejected. For that to stay sound under
negation, every language is taken inside its domain on both sides of a complement:

- a keyword S that must hold compiles to S ∩ D;
- a keyword S that must not hold (`not`, the `else` of `if`, the other branches of an
  overlapping `oneOf`) compiles to D \\ S, never to (everything \\ (S ∩ D)), which would let
  through the instances of S outside D (`{"not": {"const": 10}}` accepting `1e1`).

For formats the same rule reads as two approximations of the format's language F: an
*under*-approximation U ⊆ F where F must hold, an *over*-approximation O ⊇ F where F is
removed (the complement of O lies inside the complement of F). Exact formats have U = O = F.

`RELAXATIONS` lists them all; `specs/json_schema.md` and `specs/json_schema_support.json`
describe each by its name, and a test keeps the three in agreement. Layout (whitespace, key
order) and spelling (string escapes) relaxations constrain texts, not values: negation works on
values, so they never meet a complement. Nothing else in the frontend may drop valid instances.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ir.nodes import Node
from ...support.caches import memo
from ...support.diagnostics import Diagnostic
from ..regex import parse_regex
from .formats import format_node, format_superset


@dataclass(frozen=True)
class Relaxation:
    """One sound subset: its name, the instances on which it is exact, and where it applies."""

    name: str
    domain: str
    applies: str


RELAXATIONS: tuple[Relaxation, ...] = (
    Relaxation(
        "number-exponent",
        "number texts without an exponent: -?(0|[1-9][0-9]*)(\\.[0-9]+)?",
        "every number that a numeric keyword (type integer, bounds, multipleOf), enum/const or "
        "a complement constrains; an unconstrained number, and one whose only bounds are at "
        "zero (minimum 0, exclusiveMaximum 0, ...), accepts every JSON number text"),
    Relaxation(
        "key-order",
        "objects whose listed properties come in schema order, before any other key",
        "objects with properties or required keys, and object values of enum/const"),
    Relaxation(
        "whitespace",
        "texts with at most max_whitespace whitespace characters per gap (flexible layout), "
        "none (compact), or exactly json.dumps's indentation (indent)",
        "every instance; the layout option chooses"),
    Relaxation(
        "format-leap-second",
        "times whose second 60 is written 23:59:60 in UTC (Z, +00:00 or -00:00)",
        "formats time and date-time; removed as any time with second 60"),
    Relaxation(
        "format-hostname",
        "hostnames of at most three labels, or 4 to 11 labels of at most 21 characters, with no "
        "'--' in a label's third and fourth places",
        "format hostname; removed as any dot-separated labels of 1-63 letters, digits and "
        "hyphens that neither start nor end with a hyphen"),
    Relaxation(
        "format-idn-ascii",
        "internationalized hostnames and addresses written in ASCII: the format-hostname subset "
        "for idn-hostname (no U-label, no A-label), the email language for idn-email",
        "formats idn-hostname and idn-email; removed as any non-empty string and any string "
        "holding '@'"),
    Relaxation(
        "string-escapes",
        "string literals in which every character that JSON allows raw is written raw, and "
        "'\"', '\\' and the controls below U+0020 are written as their short escape where "
        "they have one (\\\" \\\\ \\b \\f \\n \\r \\t) and otherwise as \\u00XX (hex digits in "
        "either case)",
        "strings with a format, a pattern or values removed by a complement (and any length "
        "bounds) whose literal automaton with every spelling exceeds Limits.max_dfa_states, "
        "and every string of format regex; the compiled grammar's notes name each such "
        "string"),
    Relaxation(
        "string-length",
        "strings of at most k characters, k the largest count whose length-counting automaton "
        "fits Limits.max_dfa_states",
        "strings that must hold a format, a pattern or removed values with a maxLength whose "
        "exact counting automaton exceeds Limits.max_dfa_states (never a string that a "
        "complement removes); the compiled grammar's notes name each such string and its k"),
)
"""The sound subsets, each exact on its domain."""

NUMBER_DOMAIN = r"-?(0|[1-9][0-9]*)(\.[0-9]+)?"
"""The number texts on which every numeric constraint is exact (`number-exponent`)."""


@memo(maxsize=1)
def number_domain() -> Node:
    """The IR of `NUMBER_DOMAIN`, one node for every use (its automaton is built once)."""
    return parse_regex(NUMBER_DOMAIN)


def relaxation_note(pointer: str, name: str, what: str, why: str) -> Diagnostic:
    """What a compiled grammar notes where relaxation `name` was taken at `pointer` because the
    exact language is over budget (`schema-sound-subset`): `WHAT (relaxation NAME): WHY`."""
    assert any(r.name == name for r in RELAXATIONS), name
    return Diagnostic("info", "schema-sound-subset", f"{what} (relaxation {name}): {why}",
                      pointer=pointer)


def format_language(name: str, *, removed: bool, span_pointer: str = "") -> Node:
    """The decoded strings of format `name` as a keyword that must hold (`removed` False: its
    under-approximation) or that is removed by a complement (its over-approximation)."""
    if removed:
        return format_superset(name, span_pointer=span_pointer)
    return format_node(name, span_pointer=span_pointer)


__all__ = ["NUMBER_DOMAIN", "RELAXATIONS", "Relaxation", "format_language", "number_domain",
           "relaxation_note"]
