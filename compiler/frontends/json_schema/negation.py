"""`not`, folded into the constraints of its conjunction one JSON type at a time.

An instance of type T satisfies `not S` exactly when it is not in S_T, the values of type T
that S accepts. So `not S` keeps the other constraints and, per type T:
- removes nothing when S does not allow T (its `type` excludes T);
- removes T altogether when S allows T and says nothing about it (`not: {required: [a]}`
  rejects every string, since `required` holds of any non-object);
- otherwise removes S_T from T, where that is expressible: null and booleans by value;
  strings by automaton difference on the decoded value (S's `pattern`, `format`, lengths;
  a format that is a sound subset is removed as its superset); numbers by automaton
  difference on the number text (S's bounds, `multipleOf`, `integer`), inside the
  exponent-free domain (`relaxations.py`), so that no spelling of a removed value survives;
  arrays and objects when S bounds only their size on one side (`not: {minItems: 1}` is
  `maxItems: 0`) or, for objects, only requires properties (forbidden alone, or not all
  together); other arrays and objects of S as a union (`split_negation`): the conjunction
  without that type, and one conjunction per way to break S (`violations.py`).
`enum`/`const` in S make S_T finite: those values are excluded (arrays and objects among
them only where S constrains arrays and objects no further). `not: {anyOf: [A, B]}` is
`not A` and `not B`; `not: {not: A}` is A (expanded with `$ref` and `allOf` when flattening).
An S holding its own `not`, `anyOf`, `oneOf` or `if` is negated as a union of conjunctions
(`_union`), its rest negated in turn. Any other form (S_T a set of arrays or objects that
`violations.py` cannot write, a draft-03 `type` union beside other keywords) raises
`unsupported-keyword`; with `lenient`, that `not` is ignored: a superset. S is read in the document's draft: a keyword of another
draft in S is an annotation (`{"$schema": draft-04, "not": {"const": 1}}` rejects every value).
"""
from __future__ import annotations

from itertools import combinations

from .conjunctions import NEGATED, TYPES, Constraints, Location, location, negated
from .constraints import EXPANDED, HANDLED, POSITIVE, PRESENCE, UNSUPPORTED
from .document import join
from .scalars import enum_members
from .translation import Translation, settled, unsupported
from .values import canonical, exact_number, json_type
from .violations import value_violations, violations

NEGATABLE = ("subschemas that constrain scalars, and objects and arrays by properties, "
             "required, sizes, additionalProperties false, prefixItems and items, and "
             "not, anyOf, oneOf and if of those")
"""What the negation errors say is supported."""
_REFUSED = frozenset({"anyOf", "oneOf", "if", *UNSUPPORTED, *PRESENCE, *POSITIVE})


def _plan(t: "Translation", pointer: str) -> tuple[Constraints, list[object] | None] | bool:
    """How to remove what the subschema at `pointer` (a negated part left by `flatten`)
    accepts: True when it accepts nothing (nothing to remove), False when its negation is
    not expressible, else its merged constraints and its `enum`/`const` members."""
    parts = t.collector.flatten(((pointer, frozenset()),))
    if parts is None:
        return True
    keywords = {k for p, ignored in parts if NEGATED not in ignored for k in t.doc.at(p)
                if k not in ignored and (k in HANDLED or k in UNSUPPORTED or k in PRESENCE
                                         or k in POSITIVE)
                and k not in EXPANDED}
    if keywords & _REFUSED or any(NEGATED in ignored or t.collector.alternative(p, ignored)
                                  for p, ignored in parts):
        return False
    s = t.collector.collect(parts)
    for w in s.warnings:
        if w.code != "schema-unknown-format":
            return False  # something ignored: its negation would remove too little
        t.warn(w)  # an annotation: exact, and said where the schema is translated
    return s, None if s.values is None else _members(t, s)


def _union(t: "Translation", pointer: str) -> list[list[Location]] | None:
    """The negation of the subschema S at `pointer` as a union of conjunctions, where S holds
    nested negations, `anyOf`, `oneOf` or `if` (None where it holds none, or a draft-03 type
    union). With P the rest of S (a made copy without those keywords, `without`):
    not (P and not N) = not P or N; not (P and anyOf [A, B]) = not P or (not A and not B);
    not (P and oneOf [A, B, …]) = not P or (none of them) or (two of them, for each pair);
    not (P and if I then T else E) = not P or (I and not T) or (not I and not E)."""
    parts = t.collector.flatten(((pointer, frozenset()),))
    if parts is None:
        return None
    terms: list[list[Location]] = []
    kept: list[str] = []
    for p, ignored in parts:
        if NEGATED in ignored:
            terms.append([location(p)])
            continue
        schema = t.doc.at(p)
        if not isinstance(schema, dict):
            kept.append(p)
            continue
        drop = set(ignored) | EXPANDED  # what `flatten` has expanded into `parts`
        for keyword in ("anyOf", "oneOf"):
            if keyword in schema and keyword not in ignored:
                branches = [join(p, keyword, i) for i in range(len(schema[keyword]))]
                terms.append([negated(b) for b in branches])
                if keyword == "oneOf":
                    terms.extend([location(a), location(b)] for a, b in combinations(branches, 2))
                drop.add(keyword)
        if "if" in schema and "if" not in ignored:
            condition = join(p, "if")
            if "then" in schema:
                terms.append([location(condition), negated(join(p, "then"))])
            if "else" in schema:
                terms.append([negated(condition), negated(join(p, "else"))])
            drop |= {"if", "then", "else"}
        if t.collector.alternative(p, frozenset(drop)) is not None:
            return None  # a draft-03 type union
        drop &= schema.keys()
        kept.append(t.doc.without(p, frozenset(drop)) if drop else p)
    if not terms:
        return None
    rest = pointer + "~positive"
    t.doc.make(rest, {"allOf": [True] * len(kept)})
    for i, p in enumerate(kept):
        t.doc.aliases.setdefault(join(rest, "allOf", i), p)
    return [[negated(rest)], *terms]


def negatable(t: "Translation", pointer: str) -> bool:
    """Whether the negation of the subschema at `pointer` is expressible in any context."""
    todo, seen = [pointer], set()
    while todo:
        pointer = todo.pop()
        if pointer in seen:
            continue
        seen.add(pointer)
        parts = t.collector.flatten((negated(pointer),))
        for p, ignored in parts or ():
            if NEGATED not in ignored:
                continue
            union = _union(t, p)
            if union is not None:
                todo.extend(q for term in union for q, i in term if NEGATED in i)
                continue
            plan = _plan(t, p)
            if plan is True or (plan is not False and _expressible(Constraints(), *plan)):
                continue
            if plan is False:
                return False
            if plan[1] is not None:
                if _other_values(t, p, *plan, Constraints()) is None:
                    return False
            elif _broken(t, p, plan[0], _hard(plan[0]), None) is None:
                return False
    return True


def apply_nots(t: "Translation", c: Constraints) -> None:
    """Fold every negated part of `c` into its other constraints."""
    todo = list(c.nots)
    c.nots = []
    for pointer in todo:
        plan = _plan(t, pointer)
        if plan is True:
            continue
        if plan is not False and _expressible(c, *plan):
            _subtract(c, *plan, t.doc.plain_integers)
            if c.excluded_string_sets and not c.string_pointer:
                c.string_pointer = pointer  # where string errors and notes point
            continue
        unsupported(t, pointer, "the negation of this subschema is not expressible here "
                    "(needed by 'not', the 'else' of 'if', or overlapping 'oneOf' branches; "
                    f"supported: {NEGATABLE})")


def _members(t: "Translation", s: Constraints) -> list[object]:
    return enum_members(t, s, removed=True)


def _hard(s: Constraints) -> set[str]:
    """The structured types whose values in `s` cannot be removed in place (module docstring);
    `violations.py` may still express them as a union."""
    hard = set()
    if "array" in s.types and (s.arrays or (s.min_items and s.max_items is not None)):
        hard.add("array")
    sizes = bool(s.min_properties) + (s.max_properties is not None)
    if "object" in s.types and (s.objects or s.property_names or s.presence or s.forbidden
                                or sizes == 2 or (sizes and s.required)):
        hard.add("object")
    return hard


def _expressible(c: Constraints, s: Constraints, members: list[object] | None) -> bool:
    """Whether `c` minus the values `s` accepts is expressible in place (module docstring)."""
    if members is not None:
        if s.structured and any(json_type(v) in ("array", "object") for v in members):
            return False  # which listed arrays or objects S accepts is not decided here
        return c.values is not None or not any(
            json_type(v) in ("array", "object") and json_type(v) in c.types for v in members)
    return not _hard(s) & c.types


def _broken(t: "Translation", pointer: str, s: Constraints, kinds: set[str],
            c: Constraints | None) -> dict[str, list[str]] | None:
    """For each type of `kinds`, the schemas of its values that `s` (at `pointer`) rejects in
    the conjunction `c` (None: any) (`violations.py`); None if one is not expressible."""
    found = {kind: violations(t, pointer, s, kind, c) for kind in sorted(kinds)}
    return None if any(v is None for v in found.values()) else found  # type: ignore[return-value]


def split_negation(t: "Translation", parts: list[Location],
                   c: Constraints) -> list[list[Location]] | None:
    """The conjunctions whose union is `parts` (merged: `c`), when one of its negated parts
    can only be expressed as a union over the objects or arrays it rejects: `parts` without
    those types, and the rest of `parts` with each way to be rejected (`violations.py`); None
    when every negated part is removed in place (`apply_nots`)."""
    for pointer in c.nots:
        union = _union(t, pointer)
        if union is not None:
            rest = settled([p for p in parts if p != negated(pointer)])
            return [[*rest, *term] for term in union]
        plan = _plan(t, pointer)
        if plan is True or plan is False:
            continue
        s, members = plan
        if members is None:
            kinds = _hard(s) & c.types
            broken = _broken(t, pointer, s, kinds, c) if kinds else None
        else:
            broken = _other_values(t, pointer, s, members, c)
            kinds = set(broken or ())
        if broken is None:
            continue
        loc = negated(pointer)
        rest = settled([p for p in parts if p != loc])
        branches = [[*settled(parts), location(_other_types(t, kinds))]]
        branches.extend([*rest, location(v)] for kind in sorted(kinds) for v in broken[kind]
                        if not _impossible(t, c, v))
        return branches
    return None


def _other_values(t: "Translation", pointer: str, s: Constraints, members: list[object],
                  c: Constraints) -> dict[str, list[str]] | None:
    """Where the negated `enum`/`const` at `pointer` (merged: `s`, its members `members`)
    lists one object or one array of a type `c` allows and constrains nothing else of
    arrays and objects: per such type, the schemas of its other values (`value_violations`);
    None otherwise (in place, `_expressible`, or not expressible)."""
    if c.values is not None or s.structured:
        return None
    found: dict[str, list[object]] = {}
    for v in members:
        kind = json_type(v)
        if kind in ("array", "object") and kind in c.types:
            found.setdefault(kind, []).append(v)
    if not found or any(len(vs) > 1 for vs in found.values()):
        return None
    return {kind: value_violations(t, pointer, vs[0]) for kind, vs in found.items()}


def _other_types(t: "Translation", kinds: set[str]) -> str:
    """The pointer of a made schema allowing every type but `kinds`."""
    pointer = "~types-without-" + "-".join(sorted(kinds))
    t.doc.make(pointer, {"type": [n for n in TYPES if n not in kinds]})
    return pointer


def _impossible(t: "Translation", c: Constraints, pointer: str) -> bool:
    """Whether the made violation schema at `pointer` plainly contradicts `c` (a name both
    required and absent, sizes out of range), so that its conjunction is left out."""
    schema = t.doc.at(pointer)
    if any(name in c.forbidden for name in schema.get("required", ())):
        return True
    if any(name in c.required and t.doc.at(join(pointer, "properties", name)) is False
           for name in schema.get("properties", ())):
        return True
    for low, high, kind in ((c.min_properties, c.max_properties, "Properties"),
                            (c.min_items, c.max_items, "Items")):
        if schema.get("max" + kind, low) < low:
            return True
        if high is not None and schema.get("min" + kind, 0) > high:
            return True
    return False


def _subtract(c: Constraints, s: Constraints, members: list[object] | None,
              plain_integers: bool) -> None:
    """Remove from `c`, type by type, the values that `s` accepts (`members`: those of its
    `enum`/`const`, if it has one; `plain_integers`: drafts 3-4, where `1.0` is no integer)."""
    if members is not None:
        _exclude_values(c, members, plain_integers and s.numbers == "integer")
        return
    if "null" in s.types:
        c.types.discard("null")
    if "boolean" in s.types:
        c.types.discard("boolean")
    if "string" in s.types:
        if s.patterns or s.formats or s.min_length or s.max_length is not None:
            c.excluded_string_sets.append(s)
        else:
            c.types.discard("string")
    if "integer" in s.types:
        if s.minimum is not None or s.maximum is not None or s.multiple_of is not None:
            c.excluded_number_sets.append(s)
        elif "number" in s.types:
            c.types -= {"number", "integer"}
        elif "number" in c.types:
            c.not_integer = True
        else:
            c.types.discard("integer")
    if "array" in s.types and "array" in c.types:
        if s.min_items:
            limit = s.min_items - 1
            c.max_items = limit if c.max_items is None else min(c.max_items, limit)
        elif s.max_items is not None:
            c.min_items = max(c.min_items, s.max_items + 1)
        else:
            c.types.discard("array")
    if "object" in s.types and "object" in c.types:
        if s.required:
            names = tuple(s.required)
            if len(names) == 1:
                c.forbidden.add(names[0])
            else:
                c.presence.append((names, ()))
        elif s.min_properties:
            limit = s.min_properties - 1
            c.max_properties = limit if c.max_properties is None else min(c.max_properties,
                                                                           limit)
        elif s.max_properties is not None:
            c.min_properties = max(c.min_properties, s.max_properties + 1)
        else:
            c.types.discard("object")


def _exclude_values(c: Constraints, members: list[object], integer_texts: bool) -> None:
    """Exclude `members` from `c` by JSON equality; `integer_texts`: the excluding subschema
    is `type: integer` of drafts 3-4, so a number is excluded in its integer spelling only
    (`-7.0` is not the integer `-7` there) and a non-integral one not at all."""
    for v in members:
        kind = json_type(v)
        if integer_texts and kind in ("integer", "number"):
            if kind == "integer":
                x = exact_number(v)  # type: ignore[arg-type]
                c.excluded_number_sets.append(Constraints(types={"integer"}, minimum=x,
                                                          maximum=x))
            continue
        c.excluded_values.add(canonical(v))
        if c.values is not None:
            continue
        if kind == "null":
            c.types.discard("null")
        elif kind in ("integer", "number"):
            c.excluded_numbers.append(exact_number(v))  # type: ignore[arg-type]
        elif kind == "string":
            c.excluded_strings.append(v)  # type: ignore[arg-type]
    if canonical(True) in c.excluded_values and canonical(False) in c.excluded_values:
        c.types.discard("boolean")


__all__ = ["NEGATABLE", "apply_nots", "negatable", "split_negation"]
