"""Scalar subschemas translated once per content: `{"type": "string"}`, an integer range, an
enum of strings, met again in the same schema or in the next one.

A *leaf* is a conjunction of one subschema, none of its keywords ignored, whose keywords all
constrain scalars (`type` without `object`/`array`, `enum`/`const` of scalars, string and
number bounds, `pattern`, `format`) or are annotations (`description`, `title`, ...): its rule
body is a choice of scalar spellings that refers to no rule, so it depends on nothing but the
subschema's assertions, the document's draft, the options and the limits. `leaf_key` gives
that content as a key (None for anything else); `Translator._body` looks a leaf up before
translating it and stores the body after, unless the translation warned (a warning names
its pointer) or referred to a rule (a long string's chunk rules are the
translation's own, made or reused). Annotations are left out of the key, so tools that
describe their `query` parameters differently share one body.

The cache is process-wide, least recently used first out, bounded by `MAX_LEAVES` entries
(`specs/limits.md`), and cleared with the compiler's other caches.
"""
from __future__ import annotations

import collections
import json
import threading
from typing import TYPE_CHECKING, Any

from ...ir.nodes import Node
from ...support.caches import cache_name, register
from .conjunctions import Conjunction

if TYPE_CHECKING:
    from .translate import Translator

ASSERTIONS = frozenset(("type", "enum", "const", "minLength", "maxLength", "pattern", "format",
                        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                        "multipleOf"))
"""The keywords a leaf may assert with."""
ANNOTATIONS = frozenset(("description", "title", "examples", "default", "$comment",
                         "deprecated", "readOnly", "writeOnly"))
"""Keywords that never change the language, left out of a leaf's key."""
SCALAR_TYPES = frozenset(("null", "boolean", "number", "integer", "string"))
MAX_LEAVES = 4096

_LEAVES: collections.OrderedDict[tuple[object, ...], Node] = collections.OrderedDict()
_lock = threading.Lock()


def _clear() -> None:
    with _lock:
        _LEAVES.clear()


register(cache_name(__name__, "leaves"), _clear, lambda: len(_LEAVES), MAX_LEAVES)


def _scalar(value: Any) -> bool:
    return not isinstance(value, (dict, list))


def leaf_key(t: Translator, conj: Conjunction) -> tuple[object, ...] | None:
    """The content key of `conj` if it is a leaf (module docstring), else None."""
    if len(conj) != 1 or conj[0][1] or t.doc.draft3:
        return None
    schema = t.doc.at(conj[0][0])
    if not isinstance(schema, dict) or not schema:
        return None
    asserted: dict[str, Any] = {}
    for keyword, value in schema.items():
        if keyword in ANNOTATIONS:
            continue
        if keyword not in ASSERTIONS:
            return None
        asserted[keyword] = value
    types = asserted.get("type")
    if types is None:
        if "enum" not in asserted and "const" not in asserted:
            return None  # every type, objects and arrays too
    elif not all(isinstance(n, str) and n in SCALAR_TYPES
                 for n in (types if isinstance(types, list) else [types])):
        return None
    if "enum" in asserted and not (isinstance(asserted["enum"], list)
                                   and all(map(_scalar, asserted["enum"]))):
        return None
    if "const" in asserted and not _scalar(asserted["const"]):
        return None
    try:
        text = json.dumps(asserted, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return text, t.doc.dialect, t.options, t.limits


def cached_leaf(key: tuple[object, ...]) -> Node | None:
    """The body stored under `key`, or None."""
    with _lock:
        body = _LEAVES.get(key)
        if body is not None:
            _LEAVES.move_to_end(key)
        return body


def store_leaf(key: tuple[object, ...], body: Node) -> None:
    """Remember `body` under `key` (the least recently used entry out past `MAX_LEAVES`)."""
    with _lock:
        _LEAVES[key] = body
        _LEAVES.move_to_end(key)
        while len(_LEAVES) > MAX_LEAVES:
            _LEAVES.popitem(last=False)
