"""The keywords of a conjunction of subschemas, merged into one set of constraints per JSON type.

A conjunction is a set of locations: (pointer, keywords to ignore there), or the negation of
the subschema at a pointer (`negated`: what `not`, the `else` of `if` and overlapping `oneOf`
branches need; folded in by `negation.py`). `flatten` expands `$ref` and `allOf` into it (both are conjunctions in draft 2020-12; in drafts 3-7 a `$ref`
hides its siblings), `collect` merges what the remaining subschemas say:
- `type` sets are intersected (`integer` is the integral part of `number`), `enum`/`const`
  value sets are intersected by JSON equality;
- numeric, length, item and property-count bounds are tightened; `multipleOf` becomes the
  least common multiple;
- `pattern`s and `format`s are kept as lists (all must hold);
- item and property schemas stay locations, merged again when their conjunction is compiled.
`anyOf`, `oneOf`, `if`/`then`/`else` and `dependentSchemas` are left to the translator, which
distributes them into alternative conjunctions before merging (merging ignores them, which only
over-approximates); `contains` and its counts are kept for `contains.py` (`Contains`).
Keywords that only annotate are ignored, as the specification says of unknown keywords, and so
is every keyword outside the vocabulary of the document's draft: the document holds only the
keywords in force (`SchemaDocument.at`, `vocabularies.py`), so nothing here enforces another
draft's keyword, positively or under a negation. Keywords whose validation is not supported
raise `GrammarError` (`unsupported-keyword`), or, with `lenient`, are ignored with a warning:
the compiled language is then a superset.
Under a draft-03 `$schema`, `extends`, `disallow` and a `type` array of one schema are expanded
by `flatten` too, a `type` union holding a schema is an alternative (`alternative`), and
`divisibleBy`, `any`, boolean `required` and single-name `dependencies` are read as `draft3.py`
says. Under drafts 3-4, `exclusiveMinimum`/`exclusiveMaximum` only flag `minimum`/`maximum` as
exclusive (any true value, as validators read it); elsewhere a boolean one is read so too (a
legacy spelling the later metaschemas reject), a number is a bound of its own.
"""
from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

from ...support.diagnostics import Diagnostic
from ...support.errors import BudgetExceeded, GrammarError
from . import draft3
from .conjunctions import (
    MEMBER,
    NEGATED,
    TYPES,
    ArrayPart,
    Conjunction,
    Constraints,
    Contains,
    Location,
    ObjectPart,
    lenient_warning,
    location,
    negated,
)
from .document import DRAFT3_TYPES, SchemaDocument, join
from .formats import is_known_format
from .unevaluated import KEYWORDS as UNEVALUATED
from .unevaluated import apply_unevaluated
from .values import canonical, exact_number, is_number, json_type, number_digits
from .vocabularies import VALIDATING

UNSUPPORTED = ("$recursiveRef",)
"""Keywords whose validation is not supported (in general: `_special` takes the trivial forms)."""
POSITIVE = ("contains", "minContains", "maxContains", "dependentSchemas", "uniqueItems",
            *UNEVALUATED)
"""Keywords supported where they must hold, not inside a negated subschema (`contains.py`,
`dependent.py`, `unique.py`, `unevaluated.py`)."""
PRESENCE = ("dependentRequired", "dependencies")
"""Keywords supported in their property-list form only."""
HANDLED = frozenset((
    "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "minLength", "maxLength", "pattern", "format", "items", "prefixItems",
    "additionalItems", "minItems", "maxItems", "properties", "patternProperties",
    "additionalProperties", "required", "propertyNames", "minProperties", "maxProperties",
    "not", "anyOf", "oneOf", "allOf", "$ref", "$dynamicRef", "if", "then", "else", *draft3.KEYWORDS))
REFERENCES = ("$ref", "$dynamicRef")
"""The keywords `flatten` expands into the subschema they reference (`SchemaDocument.resolve`)."""
EXPANDED = frozenset((*REFERENCES, "allOf"))
"""The keywords `flatten` expands into the conjunction itself."""
MAX_COUNT = 2**63 - 1
"""No instance has more characters, items or members than this (its text would fit in no
memory): a larger `max*` count bounds nothing, a larger `min*` count admits no value of its
type (`{"minLength": 1e400}` still admits every non-string)."""
_COUNTED = {"minLength": "string", "minItems": "array", "minProperties": "object"}
class Collector:
    """Flattens and merges conjunctions of one document."""

    def __init__(self, doc: SchemaDocument, lenient: bool, strict_formats: bool = False) -> None:
        self.doc = doc
        self.lenient = lenient
        self.strict_formats = strict_formats
        self.bound_flags = "exclusiveMinimum" not in VALIDATING[doc.dialect]
        """Whether `exclusiveMinimum`/`exclusiveMaximum` are only flags (drafts 3-4)."""

    def alternative(self, pointer: str, ignored: frozenset[str]) -> str | None:
        """The keyword, not in `ignored`, that splits the subschema at `pointer` into
        alternatives (the branches at `pointer/keyword/i`): `anyOf`, `oneOf`, or under draft 03
        a `type` union holding a schema (a type name member is the schema `{"type": name}`)."""
        schema = self.doc.at(pointer)
        if not isinstance(schema, dict):
            return None
        for keyword in ("anyOf", "oneOf"):
            if keyword in schema and keyword not in ignored:
                return keyword
        if self.doc.draft3 and "type" not in ignored and draft3.union(schema.get("type")):
            return "type"
        return None

    def flatten(self, conj: Conjunction) -> list[Location] | None:
        """The locations of `conj` with `$ref`, `allOf` and aliases (`SchemaDocument.aliases`)
        expanded and each `not` as a negated location; a negated location is expanded where that keeps it a conjunction:
        the negation of `not: A` is A, of `anyOf` the negations of its branches, of a lone
        `$ref` the negation of its target. None if one part is `false`."""
        todo = list(reversed(conj))
        seen: set[Location] = set()
        parts: list[Location] = []
        while todo:
            loc = todo.pop()
            if self.doc.dynamic:
                loc = (self.doc.enter(loc[0]), loc[1])
            if loc in seen:
                continue
            seen.add(loc)
            pointer, ignored = loc
            if pointer in self.doc.aliases:
                todo.append((self.doc.aliases[pointer], ignored))
                continue
            schema = self.doc.at(pointer)
            if NEGATED in ignored:
                if schema is True:
                    return None
                if schema is not False:
                    expanded = self._negation(pointer, schema)
                    if expanded is None:
                        parts.append(loc)
                    else:
                        todo.extend(reversed(expanded))
                continue
            if schema is True:
                continue
            if schema is False:
                return None
            if "$ref" in schema and "$ref" not in ignored and self.doc.legacy:
                todo.append(location(self.doc.resolve(schema["$ref"], pointer)))
                continue
            if "not" in schema and "not" not in ignored:
                loc = (pointer, ignored | {"not"})
                todo.append(negated(join(pointer, "not")))
            if self.doc.draft3:
                done, plain, negations = draft3.conjuncts(pointer, schema, ignored)
                if done:
                    loc = (pointer, loc[1] | done)
                    todo.extend(negated(p) for p in reversed(negations))
                    todo.extend(location(p) for p in reversed(plain))
            parts.append(loc)
            if "allOf" in schema and "allOf" not in ignored:
                todo.extend(location(join(pointer, "allOf", i))
                            for i in reversed(range(len(schema["allOf"]))))
            for keyword in REFERENCES:
                if keyword in schema and keyword not in ignored:
                    todo.append(location(self.doc.resolve(schema[keyword], pointer, keyword)))
        return parts

    def _negation(self, pointer: str, schema: dict[str, Any]) -> list[Location] | None:
        """The negation of the subschema `schema` at `pointer` as a conjunction, when it is
        one (see `flatten`), else None."""
        keywords = {k for k in schema
                    if k in HANDLED or k in UNSUPPORTED or k in PRESENCE or k in POSITIVE}
        if "$ref" in schema and (self.doc.legacy or keywords == {"$ref"}):
            return [negated(self.doc.resolve(schema["$ref"], pointer))]
        if keywords == {"$dynamicRef"}:
            return [negated(self.doc.resolve(schema["$dynamicRef"], pointer, "$dynamicRef"))]
        if keywords == {"not"}:
            return [location(join(pointer, "not"))]
        if keywords == {"anyOf"} and isinstance(schema["anyOf"], list):
            return [negated(join(pointer, "anyOf", i)) for i in range(len(schema["anyOf"]))]
        if keywords == {"allOf"} and isinstance(schema["allOf"], list) and len(schema["allOf"]) == 1:
            return [negated(join(pointer, "allOf", 0))]
        if keywords == {"type"} and self.alternative(pointer, frozenset()) == "type":
            return [negated(join(pointer, "type", i)) for i in range(len(schema["type"]))]
        return None

    def unsupported(self, c: Constraints, keyword: str, pointer: str, why: str = "") -> None:
        """Report a keyword whose validation is not supported."""
        where = join(pointer, keyword)
        message = f"keyword {keyword!r} is not supported{why}"
        if not self.lenient:
            raise GrammarError(message + "; compile with lenient=True to ignore it "
                               "(the output may then violate it)", pointer=where,
                               code="unsupported-keyword")
        c.warnings.append(lenient_warning(where, message))

    def collect(self, parts: list[Location]) -> Constraints:
        """The merged constraints of flattened locations."""
        c = Constraints()
        unevaluated: list[tuple[str, str]] = []
        for pointer, ignored in parts:
            if NEGATED in ignored:
                c.nots.append(pointer)
                continue
            schema = self.doc.at(pointer)
            for keyword in schema:
                if keyword in ignored:
                    continue
                if keyword in UNEVALUATED:
                    unevaluated.append((keyword, pointer))
                elif keyword in UNSUPPORTED or keyword in PRESENCE or keyword in POSITIVE:
                    self._special(c, schema, keyword, pointer)
                elif keyword in HANDLED:
                    self._keyword(c, schema, keyword, pointer)
                elif keyword == MEMBER and pointer in self.doc.made:
                    c.witnesses.append((join(pointer, MEMBER, "names"),
                                        join(pointer, MEMBER, "value")))
        why = apply_unevaluated(self.doc, parts, c, unevaluated) if unevaluated else None
        if why is not None:
            self.unsupported(c, "unevaluatedItems", next(
                p for k, p in unevaluated if k == "unevaluatedItems"), ": " + why)
        return c

    def _special(self, c: Constraints, schema: dict[str, Any], keyword: str, pointer: str) -> None:
        value = schema[keyword]
        if keyword == "uniqueItems":
            if not isinstance(value, bool):
                raise GrammarError(f"uniqueItems must be a boolean, got {value!r}",
                                   pointer=join(pointer, keyword), code="invalid-schema")
            if value:
                c.unique = c.unique or join(pointer, keyword)
            return
        if keyword in ("minContains", "maxContains"):
            return  # annotations without `contains`, read by it beside it
        if keyword == "contains":
            least = self._contains_count(schema, "minContains", pointer)
            most = self._contains_count(schema, "maxContains", pointer)
            c.contains.append(Contains(join(pointer, "contains"),
                                       1 if least is None else least, most, pointer))
            return
        if keyword in ("dependentRequired", "dependentSchemas", "dependencies") and not value:
            return
        if keyword == "dependencies" and self.doc.draft3 and isinstance(value, dict):
            value = draft3.dependencies(value)
        if keyword in ("dependentRequired", "dependencies") and isinstance(value, dict) and all(
                isinstance(v, list) and all(isinstance(k, str) for k in v)
                for v in value.values()):
            c.presence.extend(((name,), tuple(needs)) for name, needs in value.items() if needs)
            return
        self.unsupported(c, keyword, pointer, ": its schema form is not supported, only lists of "
                         "property names" if keyword == "dependencies" else "")

    def _contains_count(self, schema: dict[str, Any], keyword: str, pointer: str) -> int | None:
        """`minContains`/`maxContains` of `schema` (read from draft 2019-09 on: `schema` is as
        its draft reads it), or None."""
        value = schema.get(keyword)
        if value is None:
            return None
        if isinstance(value, bool) or not is_number(value) or value != int(value) or value < 0:
            raise GrammarError(f"{keyword} must be a non-negative integer, got {value!r}",
                               pointer=join(pointer, keyword), code="invalid-schema")
        return min(int(value), MAX_COUNT)

    def _keyword(self, c: Constraints, schema: dict[str, Any], keyword: str, pointer: str) -> None:
        value = schema[keyword]
        where = join(pointer, keyword)
        if keyword == "type":
            names = value if isinstance(value, list) else [value]
            if self.doc.draft3 and draft3.any_type(value):
                return
            if self.doc.draft3 and isinstance(value, list) and any(isinstance(n, dict)
                                                                     for n in value):
                self.unsupported(c, keyword, pointer, draft3.TYPE_UNION)
                return
            if not names or any(n not in TYPES for n in names):
                known = DRAFT3_TYPES if self.doc.draft3 else TYPES
                raise GrammarError(f"type must be one of {', '.join(known)} or an "
                                   f"array of them, got {value!r}",
                                   pointer=where, code="invalid-schema")
            allowed = set(names) | ({"integer"} if "number" in names else set())
            c.types &= allowed
        elif keyword in ("enum", "const"):
            members = [value] if keyword == "const" else value
            if not isinstance(members, list):
                raise GrammarError("enum must be an array", pointer=where, code="invalid-schema")
            keyed = {canonical(v): v for v in members}
            c.values = keyed if c.values is None else {k: v for k, v in c.values.items()
                                                       if k in keyed}
            c.value_pointer = where
        elif keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            self._bound(c, schema, keyword, pointer)
        elif keyword in ("multipleOf", "divisibleBy"):
            m = self._number(value, where)
            if m <= 0:
                raise GrammarError(f"{keyword} must be greater than 0",
                                   pointer=where, code="invalid-schema")
            c.multiple_of = m if c.multiple_of is None else _lcm(c.multiple_of, m)
            c.number_pointer = where
        elif keyword in ("minLength", "maxLength", "minItems", "maxItems", "minProperties",
                         "maxProperties"):
            self._count(c, keyword, value, where)
        elif keyword == "pattern":
            if not isinstance(value, str):
                raise GrammarError("pattern must be a string", pointer=where, code="invalid-schema")
            c.patterns.append((value, where))
        elif keyword == "format":
            if not isinstance(value, str):
                raise GrammarError("format must be a string", pointer=where, code="invalid-schema")
            if self.strict_formats or is_known_format(value):
                c.formats.append((value, where))
            else:  # an annotation (2020-12's format-annotation vocabulary, and earlier drafts)
                c.warnings.append(Diagnostic(
                    "warning", "schema-unknown-format",
                    f"format {value!r} is unknown, so it is read as an annotation: any string "
                    f"(strict_formats=True, --strict-formats: an error)", pointer=where))
        elif keyword in ("items", "prefixItems", "additionalItems"):
            self._array(c, schema, pointer)
        elif keyword in ("properties", "patternProperties", "additionalProperties"):
            self._object(c, schema, pointer)
            if keyword == "properties" and self.doc.draft3:
                for name, required in draft3.required_properties(schema, pointer):
                    c.required.setdefault(name, required)
        elif keyword == "required":  # draft 03's is no keyword of its own (`vocabularies.py`)
            if not isinstance(value, list) or not all(isinstance(k, str) for k in value):
                raise GrammarError("required must be an array of strings",
                                   pointer=where, code="invalid-schema")
            for k in value:
                c.required.setdefault(k, where)
        elif keyword == "propertyNames":
            c.property_names.append(where)

    def _number(self, value: Any, where: str) -> Fraction:
        """The exact value of a numeric keyword (int, float at its shortest repr, Decimal),
        its digits bounded by `Limits.max_repeat` before the rational is built."""
        if not is_number(value):
            raise GrammarError(f"expected a number, got {value!r}",
                               pointer=where, code="invalid-schema")
        try:
            json_type(value)
        except ValueError as exc:
            raise GrammarError(f"{exc}", pointer=where, code="invalid-schema") from None
        self._check_digits(value, where)
        return exact_number(value)

    def _check_digits(self, value: Any, where: str) -> None:
        """`BudgetExceeded` for a finite float or Decimal of more digits than
        `Limits.max_repeat` written without exponent (an int costs nothing to convert; its
        digits are counted where it is used, in `numbers.py`)."""
        limit = self.doc.limits.max_repeat
        if not isinstance(value, int) and number_digits(value) > limit:
            raise BudgetExceeded(f"this number has more than {limit} digits written without "
                                 "exponent, the budget Limits.max_repeat; raise it with "
                                 "limits=Limits(max_repeat=...)", pointer=where, code="budget",
                                 limit="max_repeat", value=limit, measured=number_digits(value))

    def _bound(self, c: Constraints, schema: dict[str, Any], keyword: str, pointer: str) -> None:
        value = schema[keyword]
        where = join(pointer, keyword)
        plain = "minimum" if keyword in ("minimum", "exclusiveMinimum") else "maximum"
        flag = "exclusiveM" + plain[1:]
        if keyword == flag and (isinstance(value, bool) or self.bound_flags):
            if self._flagged(value) and plain in schema:
                self._tighten(c, plain, self._number(schema[plain], join(pointer, plain)), True)
            c.number_pointer = where
            return
        if keyword == plain and self._flagged(schema.get(flag)):
            return
        self._tighten(c, plain, self._number(value, where), keyword == flag)
        c.number_pointer = where

    def _flagged(self, value: Any) -> bool:
        """Whether an `exclusiveMinimum`/`exclusiveMaximum` value makes its bound exclusive:
        `true`, or under drafts 3-4 any value a validator takes for true (a non-zero number)."""
        return value is True or (self.bound_flags and not isinstance(value, bool)
                                 and value is not None and bool(value))

    @staticmethod
    def _tighten(c: Constraints, side: str, bound: Fraction, exclusive: bool) -> None:
        current = getattr(c, side)
        flag = "exclusive_" + side
        lower = side == "minimum"
        if current is None or (bound > current if lower else bound < current):
            setattr(c, side, bound)
            setattr(c, flag, exclusive)
        elif bound == current:
            setattr(c, flag, getattr(c, flag) or exclusive)

    def _count(self, c: Constraints, keyword: str, value: Any, where: str) -> None:
        if isinstance(value, (float, Decimal)):
            try:
                integral = json_type(value) == "integer"
            except ValueError:  # not finite
                integral = False
            if integral:
                self._check_digits(value, where)
                value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise GrammarError(f"{keyword} must be a non-negative integer",
                               pointer=where, code="invalid-schema")
        if value > MAX_COUNT:
            if keyword.startswith("min"):
                c.types.discard(_COUNTED[keyword])
            return
        name = {"minLength": "min_length", "maxLength": "max_length", "minItems": "min_items",
                "maxItems": "max_items", "minProperties": "min_properties",
                "maxProperties": "max_properties"}[keyword]
        current = getattr(c, name)
        tighter = current is None or (value > current if keyword.startswith("min")
                                      else value < current)
        if tighter:
            setattr(c, name, value)
            c.count_pointers[keyword] = where
            if keyword in ("minLength", "maxLength"):
                c.string_pointer = where

    def _array(self, c: Constraints, schema: dict[str, Any], pointer: str) -> None:
        if any(part.pointer == pointer for part in c.arrays):
            return
        items = schema.get("items")
        prefix: list[str] = []
        rest: str | None = None
        if isinstance(items, list):
            prefix = [join(pointer, "items", i) for i in range(len(items))]
            if "additionalItems" in schema:
                rest = join(pointer, "additionalItems")
        else:
            if "prefixItems" in schema:
                prefix = [join(pointer, "prefixItems", i)
                          for i in range(len(schema["prefixItems"]))]
            if "items" in schema:
                rest = join(pointer, "items")
        c.arrays.append(ArrayPart(pointer, prefix, rest))

    def _object(self, c: Constraints, schema: dict[str, Any], pointer: str) -> None:
        if any(part.pointer == pointer for part in c.objects):
            return
        props = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        for key, value in (("properties", props), ("patternProperties", patterns)):
            if not isinstance(value, dict):
                raise GrammarError(f"{key} must be an object",
                                   pointer=join(pointer, key), code="invalid-schema")
        additional = join(pointer, "additionalProperties") \
            if "additionalProperties" in schema else None
        c.objects.append(ObjectPart(
            pointer,
            {name: join(pointer, "properties", name) for name in props},
            [(p, join(pointer, "patternProperties", p)) for p in patterns],
            additional))


def _lcm(a: Fraction, b: Fraction) -> Fraction:
    """The least positive rational that is an integer multiple of both."""
    return Fraction(math.lcm(a.numerator, b.numerator), math.gcd(a.denominator, b.denominator))
