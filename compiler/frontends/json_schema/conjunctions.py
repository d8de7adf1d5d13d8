"""The conjunctions the JSON Schema frontend translates, and what `constraints.Collector` reads
off them: locations of subschemas (a pointer and the keywords left out, or negated), the
object and array parts of one subschema, the `contains` counts, and `Constraints`, everything a
conjunction says per type. Data only; `constraints.py` fills it, the keyword modules read it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ...support.diagnostics import Diagnostic

__all__ = ["ArrayPart", "Conjunction", "Constraints", "Contains", "LENIENT_SUFFIXES", "Location",
           "MEMBER", "NEGATED", "ObjectPart", "TYPES", "conjunction", "lenient_warning",
           "location", "negated"]

Location = tuple[str, frozenset[str]]
Conjunction = tuple[Location, ...]

TYPES = ("null", "boolean", "object", "array", "string", "number", "integer")
MEMBER = "~member"
"""The keyword, in a made schema only, of a `Constraints.witnesses` entry: an object
`{"names": schema, "value": schema}` (`violations.py`)."""
NEGATED = "!not"
"""The marker, among a location's ignored keywords, of a negated subschema."""


LENIENT_SUFFIXES = {"schema-lenient-ignored": "; ignored (lenient)",
                    "schema-oneof-as-anyof": "; read as anyOf (lenient)"}
"""How a lenient warning's message ends, by its code."""


def lenient_warning(pointer: str, message: str,
                    code: str = "schema-lenient-ignored") -> Diagnostic:
    """What lenient mode reports where it relaxed the schema at `pointer` instead of raising
    (`code`: a keyword or format ignored, or a oneOf read as anyOf)."""
    return Diagnostic("warning", code, message + LENIENT_SUFFIXES[code], pointer=pointer)


def location(pointer: str, *ignored: str) -> Location:
    """The subschema at `pointer`, without the keywords `ignored`."""
    return (pointer, frozenset(ignored))


def negated(pointer: str) -> Location:
    """The negation of the subschema at `pointer`."""
    return (pointer, frozenset((NEGATED,)))


def conjunction(locations: list[Location] | tuple[Location, ...]) -> Conjunction:
    """A canonical conjunction: sorted, without duplicates."""
    return tuple(sorted(set(locations), key=lambda loc: (loc[0], sorted(loc[1]))))


@dataclass
class ObjectPart:
    """The object keywords of one subschema."""

    pointer: str
    properties: dict[str, str]
    patterns: list[tuple[str, str]]
    additional: str | None


@dataclass
class ArrayPart:
    """The array keywords of one subschema: per-position schemas, then the rest."""

    pointer: str
    prefix: list[str]
    rest: str | None


@dataclass
class Contains:
    """A `contains` of one subschema: the subschema at `pointer` matched by at least `least`
    items and at most `most` (None: any number); `where` is the subschema holding it."""

    pointer: str
    least: int
    most: int | None
    where: str


@dataclass
class Constraints:
    """Everything a conjunction says, per type."""

    types: set[str] = field(default_factory=lambda: set(TYPES))
    values: dict[Any, Any] | None = None
    value_pointer: str = ""
    minimum: Fraction | None = None
    exclusive_minimum: bool = False
    maximum: Fraction | None = None
    exclusive_maximum: bool = False
    multiple_of: Fraction | None = None
    number_pointer: str = ""
    min_length: int = 0
    max_length: int | None = None
    patterns: list[tuple[str, str]] = field(default_factory=list)
    formats: list[tuple[str, str]] = field(default_factory=list)
    string_pointer: str = ""
    arrays: list[ArrayPart] = field(default_factory=list)
    contains: list[Contains] = field(default_factory=list)
    unique: str | None = None
    """The pointer of a `uniqueItems: true` in force (`unique.py`), or None."""
    min_items: int = 0
    max_items: int | None = None
    objects: list[ObjectPart] = field(default_factory=list)
    required: dict[str, str] = field(default_factory=dict)
    property_names: list[str] = field(default_factory=list)
    count_pointers: dict[str, str] = field(default_factory=dict)
    """The JSON pointer of the count keyword in force, by name (`maxItems`: `/…/maxItems`)."""
    min_properties: int = 0
    max_properties: int | None = None
    nots: list[str] = field(default_factory=list)
    excluded_values: set[Any] = field(default_factory=set)
    excluded_numbers: list[Fraction] = field(default_factory=list)
    excluded_strings: list[str] = field(default_factory=list)
    excluded_string_sets: list["Constraints"] = field(default_factory=list)
    """Subschemas under `not` whose strings are excluded (their string keywords)."""
    excluded_number_sets: list["Constraints"] = field(default_factory=list)
    """Subschemas under `not` whose numbers are excluded (their number keywords)."""
    forbidden: set[str] = field(default_factory=set)
    not_integer: bool = False
    presence: list[tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)
    """Rules on which properties are present: (if all of these, then all of those), with
    `then` empty meaning "not all of these"."""
    warnings: list[Diagnostic] = field(default_factory=list)
    """What lenient mode ignored here (`lenient_warning`)."""
    witnesses: list[tuple[str, str]] = field(default_factory=list)
    """Members the object must hold, each from a made schema (`violations.py`): (the pointer
    of a schema its name is a string of, the pointer of a schema its value meets)."""

    @property
    def structured(self) -> bool:
        """Whether arrays or objects are constrained beyond their type."""
        return bool(self.arrays or self.objects or self.required or self.property_names
                    or self.min_items or self.max_items is not None or self.min_properties
                    or self.max_properties is not None or self.forbidden or self.presence
                    or self.contains or bool(self.witnesses))

    @property
    def numbers(self) -> str | None:
        """'number', 'integer' or None: which numbers the types allow."""
        if "number" in self.types:
            return "number"
        return "integer" if "integer" in self.types else None
