"""The `enum`/`const` members of a merged conjunction as IR, each filtered by every sibling
keyword.

`scalars.enum_members` keeps the members whose value satisfies the scalar keywords. What a
value alone cannot settle is settled here, on the spellings:
- An array or object member beside array or object keywords (items, properties, required,
  `not: {required: …}`, dependencies, propertyNames, sizes, …) is compiled as the conjunction
  of those keywords with the member's own shape: the member v becomes the schema V(v) that
  holds exactly the values JSON-equal to v (an object: `required` every key of v,
  `properties` V(v[k]), `additionalProperties: false`; an array: array-form `items` V(v[i]),
  `additionalItems: false`, `minItems` len(v); a scalar: `const`), registered in the document
  at the member's pointer, and its object or array node is built with V(v)'s part beside the
  conjunction's own. Nested members meet the nested keywords the same way, in their own rules,
  so every keyword filters every listed value, at any depth.
- Under a draft-03/04 `$schema` an integer is a text without fraction (`1.0` is not one), so
  a numeric member where integers are constrained (`type: integer`, `not: {type: integer}`,
  a removed integer set) is spelled only as that constraint allows: its spellings intersected
  with the conjunction's number texts.
A synthetic pointer that a real subschema already holds gets a `~` appended (never part of a
JSON pointer), so the two never meet.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from ...automata.language_ops import intersect
from ...ir.nodes import Node
from ...support import deadline
from .arrays import array_node
from .conjunctions import ArrayPart, Constraints, ObjectPart
from .document import join
from .literals import value_node
from .objects import MEMBER_RULES_FROM, object_node
from .scalars import enum_members, number_text
from .translation import Translation
from .values import canonical, json_type


def member_nodes(t: "Translation", c: "Constraints", depth: int) -> list[Node]:
    """The spellings of every `enum`/`const` member of `c` that satisfies `c`; past
    `MEMBER_RULES_FROM` shaped members, each in a rule of its own, so that the rule listing
    them stays a choice of calls rather than one automaton of every member's object."""
    members = enum_members(t, c)
    spelled = _spelled_integers(t, c)
    numbers: Node | None = None
    position: dict[str, int] | None = None
    alts: list[Node] = []
    shaped: list[tuple[int, str]] = []
    for i, v in enumerate(members):
        if not i & 1023:
            deadline.check()
        kind = json_type(v)
        if c.unique and kind == "array" and len({canonical(x) for x in v}) < len(v):
            continue  # two equal items: not unique
        if c.structured and kind in ("array", "object"):
            if position is None:
                position = {key: j for j, key in enumerate(c.values or ())}
            pointer, node = _structured_member(t, c, v, position[canonical(v)], depth)
            if node is not None:
                shaped.append((len(alts), pointer))
        elif spelled and kind in ("integer", "number"):
            if numbers is None:
                numbers = number_text(t, c)
            if numbers is None:
                continue
            node = intersect(value_node(v, t.layout, depth), numbers, limits=t.limits,
                             label="number")
            if node.dfa.is_empty_language:
                continue
        else:
            node = value_node(v, t.layout, depth)
        if node is not None:
            alts.append(node)
    if len(shaped) > MEMBER_RULES_FROM:
        for j, pointer in shaped:
            alts[j] = t.rule(f"{pointer}-value", alts[j])
    return alts


def _spelled_integers(t: "Translation", c: "Constraints") -> bool:
    """Whether which spellings of a number are integers matters (drafts 3-4)."""
    return t.doc.plain_integers and (c.numbers == "integer" or c.not_integer or any(
        s.numbers == "integer" for s in c.excluded_number_sets))


def _structured_member(t: "Translation", c: "Constraints", v: Any, i: int,
                       depth: int) -> tuple[str, Node | None]:
    """The pointer of V(v) and the array or object member `v` (the i-th listed) under the array
    or object keywords of `c` (None: it violates them)."""
    base = c.value_pointer if c.value_pointer.endswith("/const") else join(c.value_pointer, i)
    pointer = _value_schema(t, base, v)
    kind = json_type(v)
    if kind == "object":
        own = ObjectPart(pointer, {k: join(pointer, "properties", k) for k in v}, [],
                         join(pointer, "additionalProperties"))
        required = dict(c.required)
        for k in v:
            required.setdefault(k, join(pointer, "required"))
        shaped = dataclasses.replace(c, types={"object"}, values=None,
                                     objects=[*c.objects, own], required=required)
        return pointer, object_node(t, shaped, depth)
    own_items = ArrayPart(pointer, [join(pointer, "items", j) for j in range(len(v))],
                          join(pointer, "additionalItems"))
    hi = len(v) if c.max_items is None else min(c.max_items, len(v))
    shaped = dataclasses.replace(c, types={"array"}, values=None, arrays=[*c.arrays, own_items],
                                 min_items=max(c.min_items, len(v)), max_items=hi)
    return pointer, array_node(t, shaped, depth)


def _value_schema(t: "Translation", pointer: str, value: Any) -> str:
    """Register V(value) (see the module docstring) in the document at `pointer`, or at
    `pointer` + `~` where a real subschema is; its pointer."""
    doc = t.doc
    key = canonical(value)
    while pointer in doc.schemas and t.synthetic.get(pointer) != key:
        pointer += "~"
    if pointer in doc.schemas:
        return pointer
    t.synthetic[pointer] = key
    stack: list[tuple[str, Any]] = [(pointer, value)]
    while stack:
        deadline.check()
        where, v = stack.pop()
        if where.count("/") > 3 * doc.limits.max_schema_depth:
            raise doc.limits.exceeded("max_schema_depth", where.count("/"),
                                      f"enum/const value nesting at {where}")
        if isinstance(v, dict):
            schema: Any = {"type": "object", "required": list(v),
                           "properties": {k: {} for k in v}, "additionalProperties": False}
            stack.extend((join(where, "properties", k), item) for k, item in v.items())
            doc.make(join(where, "additionalProperties"), False)
        elif isinstance(v, list):
            schema = {"type": "array", "items": [{}] * len(v), "additionalItems": False,
                      "minItems": len(v)}
            stack.extend((join(where, "items", j), item) for j, item in enumerate(v))
            doc.make(join(where, "additionalItems"), False)
        else:
            schema = {"const": v}
        doc.make(where, schema)
    return pointer


__all__ = ["member_nodes"]
