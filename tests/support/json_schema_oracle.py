"""The judge of the JSON Schema invariants: which values are valid, and which of them the
frontend must accept as `json.dumps` writes them.

- `validator(schema)`: `jsonschema`'s validator for the schema's draft (2020-12 when it names
  none), checking the formats the frontend supports. `date`, `time` and `date-time` are
  checked here by RFC 3339 section 5.6 itself, as the JSON-Schema-Test-Suite reads it (year
  0000 is a leap year of the proleptic Gregorian calendar; second 60 only where the time in
  UTC is 23:59): `jsonschema`'s own checks refuse both. The other formats `jsonschema` can
  check are its own; those it cannot (hostname, uri, uri-reference, uri-template, duration)
  are not checked.
- `MemberOrder`: object keys in the order the frontend accepts them.
- `documented_form(check, value)`: the value in member order if it is valid and lies in the
  frontend's documented subset: no number that `json.dumps` writes with an exponent, and no
  string on which Python's `re` (what `jsonschema` runs for `pattern`) may answer otherwise
  than ECMA-262 for a pattern that applies to it.
- `ecma_safe(schema, value)`: whether `jsonschema`'s verdict on the value is surely ECMA-262's
  (and RFC 5321's, for the loose email check); `format_edge(value)`: whether a string lies
  where the frontend's format subsets may reject a valid one.
- The exact reference for instance TEXTS (numbers as written, compared exactly) is
  `json_schema_exact`.
"""
from __future__ import annotations

import json
import re
from datetime import date
from typing import Any
from urllib.parse import unquote

import jsonschema

from grammask.compiler.frontends.json_schema.formats import KNOWN_FORMATS

RFC3339_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})", re.ASCII)
RFC3339_TIME = re.compile(
    r"([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?([Zz]|([+-])([0-9]{2}):([0-9]{2}))", re.ASCII)


def rfc3339_date(text: str) -> bool:
    """RFC 3339 `full-date`; year 0000 is leap like 2000 (same place in the 400-year cycle)."""
    m = RFC3339_DATE.fullmatch(text)
    if m is None:
        return False
    year, month, day = map(int, m.groups())
    try:
        date(year or 2000, month, day)
    except ValueError:
        return False
    return True


def rfc3339_time(text: str) -> bool:
    """RFC 3339 `full-time`; a leap second only at 23:59 UTC."""
    m = RFC3339_TIME.fullmatch(text)
    if m is None:
        return False
    hour, minute, second = int(m[1]), int(m[2]), int(m[3])
    off_hour, off_minute = (int(m[7]), int(m[8])) if m[6] else (0, 0)
    if hour > 23 or minute > 59 or second > 60 or off_hour > 23 or off_minute > 59:
        return False
    offset = (off_hour * 60 + off_minute) * (-1 if m[6] == "-" else 1)
    return second < 60 or (hour * 60 + minute - offset) % 1440 == 23 * 60 + 59


def rfc3339_date_time(text: str) -> bool:
    """RFC 3339 `date-time`: a full-date, `T` or `t`, a full-time."""
    day, sep, time = text[:10], text[10:11], text[11:]
    return sep in ("T", "t") and rfc3339_date(day) and rfc3339_time(time)


RFC3339 = {"date": rfc3339_date, "time": rfc3339_time, "date-time": rfc3339_date_time}


def format_checker(cls: Any) -> Any:
    """The format checker of the validator class `cls`, for the formats that the frontend
    supports (see the module docstring)."""
    checker = jsonschema.FormatChecker(formats=())
    checker.checkers = {name: check for name, check in cls.FORMAT_CHECKER.checkers.items()
                        if name in KNOWN_FORMATS and name not in RFC3339}
    for name, check in RFC3339.items():
        checker.checks(name)(lambda value, check=check: not isinstance(value, str) or check(value))
    return checker


def validator(schema: Any) -> Any:
    """A validator of the schema's draft (2020-12 when it names none), checking the formats
    that the frontend supports (see the module docstring)."""
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=format_checker(cls))


LEGACY_DRAFTS = ("draft-03", "draft-04", "draft-06", "draft-07")


class MemberOrder:
    """Puts object keys in the order the JSON Schema frontend accepts them.

    Keys come as: the `properties` of the subschemas the object must satisfy, in order of
    appearance, then their `required` keys that no `properties` lists, then the names of their
    presence rules (`dependentRequired`, the list form of `dependencies`: what a name needs,
    then the name; a negated `required` of several names), then every other key in the
    value's own order. The subschemas of a value are found depth first from the schema
    itself: its `$ref` target, then its `allOf` members in order (in drafts 3-7 a `$ref`
    replaces its siblings), and last, for each `anyOf`/`oneOf`, the first branch the value is
    valid against. Members and items get the subschemas that apply to them (`properties`,
    matching `patternProperties` or else `additionalProperties`; `prefixItems` or array-form
    `items`, else `items`/`additionalItems`). Only local references (`#` and a JSON pointer)
    are followed.
    """

    def __init__(self, root: Any, validator: Any) -> None:
        self.root = root
        self.validator = validator
        dialect = root.get("$schema", "") if isinstance(root, dict) else ""
        self.legacy = isinstance(dialect, str) and any(d in dialect for d in LEGACY_DRAFTS)

    def arrange(self, value: Any) -> tuple[Any, list[tuple[str, str]]]:
        """`value` with every object's keys in member order, and the (pattern, string) pairs
        that validating it checks (`pattern` on strings, `patternProperties` and
        `propertyNames` patterns on keys)."""
        met: list[tuple[str, str]] = []
        return self._arrange(value, [self.root], met), met

    def _arrange(self, value: Any, schemas: list[Any], met: list[tuple[str, str]]) -> Any:
        parts = self._parts(schemas, value)
        if isinstance(value, str):
            met.extend((p["pattern"], value) for p in parts if isinstance(p.get("pattern"), str))
        if isinstance(value, list):
            return [self._arrange(v, self._item(parts, i), met) for i, v in enumerate(value)]
        if not isinstance(value, dict):
            return value
        listed: list[str] = []
        for key in ("properties", "enum", "required", "dependentRequired", "dependencies"):
            if key == "enum":  # a listed object value: its own keys, in its own order
                member = next((m for part in parts for m in _listed(part) if isinstance(m, dict)
                               and _json_equal(m, value)), None)
                listed.extend(k for k in member or () if k not in listed)
                continue
            for part in parts:
                names = part.get(key, ())
                if key.startswith("depend") and isinstance(names, dict):
                    # Presence rules list what a name needs, then the name.
                    names = [n for name, needs in names.items() if isinstance(needs, list)
                             and needs for n in (*needs, name)]
                if isinstance(names, (list, dict)):
                    listed.extend(n for n in names if isinstance(n, str) and n not in listed)
        for part in parts:  # "not all of these" rules: a negated `required` of several names
            for negated in self._negated(part, value):
                names = negated.get("required") if isinstance(negated, dict) else None
                if isinstance(names, list) and len(names) > 1:
                    listed.extend(n for n in names if isinstance(n, str) and n not in listed)
        for part in parts:
            names = part.get("propertyNames")
            patterns = list(part.get("patternProperties", {}))
            if isinstance(names, dict) and isinstance(names.get("pattern"), str):
                patterns.append(names["pattern"])
            met.extend((p, k) for p in patterns for k in value)
        keys = [k for k in listed if k in value] + [k for k in value if k not in listed]
        return {k: self._arrange(value[k], self._member(parts, k), met) for k in keys}

    def _resolve(self, ref: Any) -> Any:
        if not isinstance(ref, str) or "#" not in ref:
            return None
        base, fragment = ref.split("#", 1)
        own = self.root.get("$id", "") if isinstance(self.root, dict) else ""
        if base and base != str(own).split("#")[0]:
            return None
        node = self.root
        for token in unquote(fragment).split("/")[1:] if fragment else ():
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                return None
        return node

    def _parts(self, schemas: list[Any], value: Any) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        seen: set[int] = set()

        def visit(start: Any) -> None:
            stack = [start]
            while stack:
                schema = stack.pop()
                if not isinstance(schema, dict) or id(schema) in seen:
                    continue
                seen.add(id(schema))
                if self.legacy and "$ref" in schema:
                    stack.append(self._resolve(schema["$ref"]))
                    continue
                parts.append(schema)
                children = [self._resolve(schema["$ref"])] if "$ref" in schema else []
                children += schema.get("allOf", [])
                stack.extend(reversed(children))

        for schema in schemas:
            visit(schema)
        i = 0
        while i < len(parts):
            for key in ("anyOf", "oneOf"):
                for branch in parts[i].get(key, ()):
                    if self.validator.evolve(schema=branch).is_valid(value):
                        visit(branch)
                        break
            if "if" in parts[i] and ("then" in parts[i] or "else" in parts[i]):
                if self.validator.evolve(schema=parts[i]["if"]).is_valid(value):
                    visit(parts[i]["if"])
                    visit(parts[i].get("then"))
                else:
                    visit(parts[i].get("else"))
            i += 1
        return parts

    def _negated(self, part: dict[str, Any], value: Any) -> list[Any]:
        """The subschemas a part negates for the value: `not` (and the branches of an anyOf
        under it), and an `if` the value fails where `then` or `else` is present."""
        out = [part.get("not")]
        if isinstance(out[0], dict) and isinstance(out[0].get("anyOf"), list):
            out += out[0]["anyOf"]
        condition = part.get("if")
        if ("then" in part or "else" in part) and isinstance(condition, dict) \
                and not self.validator.evolve(schema=condition).is_valid(value):
            out.append(condition)
        return out

    @staticmethod
    def _item(parts: list[dict[str, Any]], i: int) -> list[Any]:
        out = []
        for part in parts:
            items = part.get("items")
            prefix = items if isinstance(items, list) else part.get("prefixItems", [])
            if i < len(prefix):
                out.append(prefix[i])
            elif isinstance(items, list):
                out.append(part.get("additionalItems", True))
            elif items is not None:
                out.append(items)
        return out

    @staticmethod
    def _member(parts: list[dict[str, Any]], name: str) -> list[Any]:
        out = []
        for part in parts:
            matched = [s for p, s in part.get("patternProperties", {}).items()
                       if re.search(p, name)]
            if name in part.get("properties", {}):
                out += [part["properties"][name], *matched]
            elif matched:
                out += matched
            elif "additionalProperties" in part:
                out.append(part["additionalProperties"])
        return out


def _listed(part: dict[str, Any]) -> list[Any]:
    """The values a subschema's `enum` and `const` list."""
    values = list(part["enum"]) if isinstance(part.get("enum"), list) else []
    return values + ([part["const"]] if "const" in part else [])


def _json_equal(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value, `true` never `1`, objects regardless of key order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_json_equal, a, b))
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    return a == b


def _ecma_agrees(pattern: str, text: str) -> bool:
    """Whether `re.search` surely answers as ECMA-262 would: the ASCII reading of the
    shorthand classes gives the same answer, and no line terminator meets `.` or `$`."""
    try:
        if bool(re.search(pattern, text)) != bool(re.search(pattern, text, re.ASCII)):
            return False
    except re.error:
        return False
    return not (re.search(r"[\n\r\u2028\u2029]", text) and re.search(r"[.$]", pattern))


def _has_exponent(f: float) -> bool:
    return "e" in repr(f)


def without_exponents(value: Any) -> Any:
    """The value with each float that Python writes with an exponent replaced by a nearby
    one it writes without (the integer itself, or three decimals); callers validate again."""
    if isinstance(value, float) and _has_exponent(value):
        return int(value) if value.is_integer() else round(value, 3)
    if isinstance(value, list):
        return [without_exponents(v) for v in value]
    if isinstance(value, dict):
        return {k: without_exponents(v) for k, v in value.items()}
    return value


def _floats(value: Any) -> list[float]:
    if isinstance(value, float):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return [f for v in items for f in _floats(v)]


def _strings(value: Any) -> list[str]:
    """The strings in a value, member names included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [*value, *(s for v in value.values() for s in _strings(v))]
    return [s for v in value for s in _strings(v)] if isinstance(value, list) else []


def _patterns(schema: Any) -> list[str]:
    """Every `pattern` string and `patternProperties` name in a schema (more, where a value
    happens to look like a schema: only ever too careful)."""
    if isinstance(schema, list):
        return [p for v in schema for p in _patterns(v)]
    if not isinstance(schema, dict):
        return []
    own = [schema["pattern"]] if isinstance(schema.get("pattern"), str) else []
    if isinstance(schema.get("patternProperties"), dict):
        own += list(schema["patternProperties"])
    return own + [p for v in schema.values() for p in _patterns(v)]


PLAIN_EMAIL = re.compile(r"[a-z0-9]+(\.[a-z0-9]+)*@[a-z0-9]+(\.[a-z0-9]+){0,2}")
"""Addresses surely valid by RFC 5321; `jsonschema` takes any string with an `@` as one."""


def ecma_safe(schema: Any, value: Any) -> bool:
    """Whether the reference's verdict is sure: Python's `re` answers as ECMA-262 for every
    pattern of the schema on every string of the value, wherever either occurs, and, if the
    schema names the email format, each string with an `@` is a plain address."""
    patterns = _patterns(schema)
    strings = _strings(value)
    if any("@" in s and not PLAIN_EMAIL.fullmatch(s) for s in strings) and '"email"' in \
            json.dumps(schema, default=str):
        return False
    return not patterns or all(_ecma_agrees(p, s) for p in patterns for s in strings)


_LEAP = re.compile(r"[0-9]{2}:[0-9]{2}:60")
_UTC_LEAP = re.compile(r"23:59:60(\.[0-9]+)?Z")
_DOMAIN = re.compile(r"[A-Za-z0-9-]+(\.[A-Za-z0-9-]+){3,}")


def format_edge(value: Any) -> bool:
    """Whether a string of the value (or a member name) lies where the frontend's format
    subsets may reject a valid string: a leap second other than 23:59:60Z, an A-label
    (`xn--`), a host name of more than three labels (alone or after an `@`)."""
    for s in _strings(value):
        leap = _LEAP.search(s)
        if leap and not _UTC_LEAP.match(s, leap.start()) or "xn--" in s.lower():
            return True
        host = s.rsplit("@", 1)[-1]
        if _DOMAIN.fullmatch(host) and not host.replace(".", "").isdigit():
            return True
    return False


def documented_form(check: Any, value: Any) -> Any:
    """The value in member order if `check` (a validator) finds it valid and it can be
    written in the frontend's documented subset, else None."""
    if not check.is_valid(value) or any(map(_has_exponent, _floats(value))) \
            or format_edge(value):
        return None
    arranged, met = MemberOrder(check.schema, check).arrange(value)
    return arranged if all(_ecma_agrees(p, s) for p, s in met) else None
