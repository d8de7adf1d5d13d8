"""`dependentSchemas`, and `dependencies` with a schema among its values (drafts 4-7): one
alternative per set of trigger properties present.

`dependentSchemas: {k: S}` holds for a non-object, and for an object that lacks k or satisfies
S. With triggers k1..kd the instances split exactly into non-objects and, for each subset P of
the triggers, the objects holding exactly the triggers of P. So the conjunction becomes the
choice of 2^d + 1 conjunctions: the rest of it with a non-object type, and for each P the rest
with an object type, `required: [k]` and S_k for k in P, and the negation of `required: [k]`
(a presence rule, `objects.py`) for k not in P. In `dependencies`, a value that
lists names is `required` of them, when its trigger is present. Subschemas made here are
registered in the document under the keyword's pointer with a `~` suffix (never part of a real
JSON pointer, as `members.py` does). At most `MAX_TRIGGERS` triggers (2^6 alternatives); more
is an `unsupported-keyword` error (lenient: ignored, with a warning). Draft 03's `dependencies`
stays with the presence rules (`constraints.py`), its `required` being a property flag.
"""
from __future__ import annotations

from itertools import product
from typing import Any

from .conjunctions import TYPES, Location, location, negated
from .constraints import Collector
from .document import join
from .translation import Translation, remaining, unsupported

__all__ = ["MAX_TRIGGERS", "dependent_branches", "dependent_keyword"]

MAX_TRIGGERS = 6


def dependent_keyword(collector: Collector, schema: Any, ignored: frozenset[str]) -> str | None:
    """The keyword of `schema` this module splits on: `dependentSchemas`, or `dependencies`
    holding a schema (not under draft 03), when present, not ignored and not empty."""
    if not isinstance(schema, dict):
        return None
    value = schema.get("dependentSchemas")
    if "dependentSchemas" not in ignored and isinstance(value, dict) and value:
        return "dependentSchemas"
    value = schema.get("dependencies")
    if "dependencies" not in ignored and isinstance(value, dict) and not collector.doc.draft3 \
            and any(isinstance(v, (dict, bool)) for v in value.values()):
        return "dependencies"
    return None


def _registered(t: "Translation", pointer: str, schema: Any) -> str:
    """`schema` in the document at `pointer` (a `~`-suffixed pointer of this module)."""
    t.doc.make(pointer, schema)
    return pointer


def dependent_branches(t: "Translation", parts: list[Location], loc: Location,
                       keyword: str) -> list[list[Location]]:
    """The conjunctions whose choice is `parts` (module docstring); `loc` holds `keyword`."""
    pointer = loc[0]
    where = join(pointer, keyword)
    triggers = list(t.doc.at(pointer)[keyword])
    rest = remaining(parts, loc, keyword)
    if len(triggers) > MAX_TRIGGERS:
        unsupported(t, where, f"{len(triggers)} trigger properties, more than {MAX_TRIGGERS} "
                              f"(one alternative per set of them present)")
        return [rest]
    others = _registered(t, where + "~other", {"type": [n for n in TYPES if n != "object"]})
    branches = [rest + [location(others)]]
    objects = _registered(t, where + "~object", {"type": "object"})
    for present in product((False, True), repeat=len(triggers)):
        branch = rest + [location(objects)]
        for name, on in zip(triggers, present):
            at = join(where, name)
            has = _registered(t, at + "~present", {"required": [name]})
            if not on:
                branch.append(negated(has))
                continue
            branch.append(location(has))
            value = t.doc.at(pointer)[keyword][name]
            if isinstance(value, list):
                branch.append(location(_registered(t, at + "~required", {"required": value})))
            else:
                branch.append(location(at))
        branches.append(branch)
    return branches
