"""`not`, in the forms whose complement stays inside the grammar:

- `not: true` (nothing) and `not: false` (no constraint);
- `not: {type: ...}` removes those types; `not: {type: integer}` beside `number` leaves the
  numbers with a non-zero fractional part, written without exponent;
- `not: {enum: [...]}` / `not: {const: ...}` removes those values: `null` and booleans from
  their types, numbers and strings by automaton difference;
- `not: {required: [...]}` (also spread over `allOf`) forbids the property, or, for several,
  their presence all together; `not: {required: []}` is `not: true`;
- `not: {anyOf: [A, B]}` is `not A` and `not B`; `$ref` and `allOf` of one subschema are
  followed.
Any other form raises `unsupported-keyword` (lenient: ignored, a superset).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import GrammarError
from .constraints import HANDLED, PRESENCE, TYPES, UNSUPPORTED
from .document import join
from .values import canonical, exact_number, json_type

if TYPE_CHECKING:
    from .constraints import Constraints
    from .translate import Translator


def apply_nots(t: "Translator", c: "Constraints") -> None:
    """Fold every `not` of `c` into its other constraints."""
    todo = list(c.nots)
    c.nots = []
    while todo:
        pointer = todo.pop()
        parts = t.collector.flatten(((pointer, frozenset()),))
        if parts is None:
            continue
        keywords = {k for p, ignored in parts for k in t.doc.at(p)
                    if k not in ignored and (k in HANDLED or k in UNSUPPORTED or k in PRESENCE)
                    and k not in ("$ref", "allOf")}
        if not keywords:
            c.types.clear()
            c.values = {}
            return
        if keywords == {"required"}:
            names = tuple(dict.fromkeys(k for p, _ in parts for k in t.doc.at(p).get("required", ())
                                        if isinstance(k, str)))
            if not names:
                c.types.clear()
                c.values = {}
                return
            if len(names) == 1:
                c.forbidden.add(names[0])
            else:
                c.presence.append((names, ()))
            continue
        if len(parts) == 1 and keywords == {"anyOf"}:
            p = parts[0][0]
            todo.extend(join(p, "anyOf", i) for i in range(len(t.doc.at(p)["anyOf"])))
            continue
        if len(parts) != 1 or len(keywords) != 1 or not _fold(t, c, parts[0][0], keywords.pop()):
            from .translate import unsupported

            unsupported(t, f"{pointer}: this form of 'not' is not supported (supported: a "
                        "single type, enum, const or required, or anyOf of those)")


def _fold(t: "Translator", c: "Constraints", pointer: str, keyword: str) -> bool:
    schema = t.doc.at(pointer)
    value = schema[keyword]
    if keyword == "type":
        listed = value if isinstance(value, list) else [value]
        if not listed or any(n not in TYPES for n in listed):
            raise GrammarError(f"{join(pointer, keyword)}: type must be one of {', '.join(TYPES)}"
                               f" or an array of them, got {value!r}", code="invalid-schema")
        names = set(listed)
        if "integer" in names and "number" not in names and "number" in c.types:
            c.not_integer = True
            names = names - {"integer"}
        c.types -= names | ({"integer"} if "number" in names else set())
        return True
    if keyword in ("enum", "const"):
        members = [value] if keyword == "const" else value
        if not isinstance(members, list):
            return False
        for v in members:
            kind = json_type(v)
            c.excluded_values.add(canonical(v))
            if c.values is not None:
                continue
            if kind == "null":
                c.types.discard("null")
            elif kind in ("integer", "number"):
                c.excluded_numbers.append(exact_number(v))
            elif kind == "string":
                c.excluded_strings.append(v)
            elif kind in ("array", "object") and (kind in c.types):
                return False
        if canonical(True) in c.excluded_values and canonical(False) in c.excluded_values:
            c.types.discard("boolean")
        return True
    return False


__all__ = ["apply_nots"]
