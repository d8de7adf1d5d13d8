"""A JSON Schema document: every subschema addressed by a JSON pointer from the document root,
with the base URI and anchors needed to resolve `$ref` locally.

Invariants:
- `at(pointer)` returns the subschema at a pointer that `index` recorded (a dict or a bool);
  every pointer the translator handles comes from here, so it always exists.
- Base URIs follow `$id` (under drafts 03/04 `id` instead; each is no keyword in the other
  drafts) by RFC 3986 resolution against the enclosing base; `$anchor`, `$dynamicAnchor` and fragment-only
  ids (`"$id": "#foo"`, drafts 6/7) name anchors. A reference resolves to a pointer in this document or raises `GrammarError`
  (`unsupported-ref` for a remote document, `invalid-ref` for a target that does not exist).
- Other documents come only from `resources` (absolute URI -> schema; nothing is fetched):
  each is indexed as if embedded, under the pointer prefix `URI#` (so its subschemas are
  `http://x/a.json#/$defs/b`, the address an error names), with `URI` as its base. A
  resource declares no other draft than the document's (`unsupported-ref` at its `$schema`).
- Schemas made while translating (`members.py`'s values, `violations.py`'s violations) are
  registered by `make` where the document has no subschema (an `enum` member's pointer, or
  one holding a `~` not followed by `0` or `1`, which no JSON pointer has); `made` lists
  them, and `aliases` maps such a pointer to the real subschema it stands for (`flatten` reads
  the target, negated or not).
- `$dynamicRef` (2020-12) resolves by the dynamic scope, the schema resources entered on the
  way to it, outermost first. What a subschema means then depends on one thing besides its
  pointer: the *binding*, for each `$dynamicAnchor` name, of the outermost resource entered
  that defines it (the first one entered wins, so bindings only grow). A document that holds
  a `$dynamicRef` (`dynamic`) reads every location under its binding, written into the
  pointer as the prefix `~scope<k>~` (`scoped`; binding 0, the empty one, has no prefix):
  `enter` binds the anchors of the resource whose root a pointer is, `resolve` those of the
  resource a reference lands in, and a bookended `$dynamicRef` (its static target defines the
  fragment as a `$dynamicAnchor`) lands on the bound resource's anchor. `join` keeps the
  prefix, so every subschema below a location shares its binding; `at` and the base URIs
  of a scoped pointer are those of its unscoped one. Bindings are finite (a name is bound once,
  to one of the document's resources); the rules they multiply are bounded by
  `Limits.max_schema_rules`.
- Indexing is iterative: nesting depth is bounded by `Limits.max_schema_depth`, not the stack.
- The document is read by the draft of its root `$schema` (`vocabularies.py`): `at(pointer)`
  holds only the keywords in force in that draft (`vocabulary`) beside annotations and
  structure, so a keyword of another draft is an annotation for every reader of the document;
  the subschemas of such a keyword are indexed only when a reference points into them.
- Under a draft-03 `$schema` (`draft3`), the schemas of `extends` (a schema or an array),
  `disallow` and `type` (arrays holding schemas) are subschemas too, and a type name in
  `disallow`, or in a `type` array that holds a schema, is read as the schema
  `{"type": name}` at its pointer, so every member of either is one (see `draft3.py`); any
  other member of such a `type` array is an `invalid-schema` error at its pointer; a string
  value of `dependencies` is a property name, not a schema.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from ...support.errors import GrammarError
from ...support.limits import Limits
from .vocabularies import VOCABULARIES, dialect, in_force

SCHEMA_KEYWORDS = ("additionalProperties", "additionalItems", "items", "contains", "not",
                   "propertyNames", "unevaluatedItems", "unevaluatedProperties", "if", "then",
                   "else")
"""Keywords whose value is one subschema (`items` may also be an array, draft 4-2019)."""
SCHEMA_ARRAYS = ("allOf", "anyOf", "oneOf", "prefixItems")
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas",
               "dependencies")
LEGACY_DRAFTS = ("draft-03", "draft-04", "draft-06", "draft-07")
STRUCTURAL = frozenset(("$defs", "definitions"))
"""Keywords holding subschemas in every draft (only a reference reaches them)."""
DRAFT3_TYPES = ("null", "boolean", "object", "array", "string", "number", "integer", "any")
"""The type names of draft 03 (`any`: every value)."""
DRAFT3_SCHEMAS = ("extends", "type", "disallow")
"""Draft-03 keywords whose value is a schema or an array (of schemas, or type names)."""
_DEFAULT_BASE = "https://grammask.invalid/schema.json"


def escape(token: str) -> str:
    """A JSON pointer reference token for `token` (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


def join(pointer: str, *tokens: str | int) -> str:
    """`pointer` extended by reference tokens."""
    return pointer + "".join("/" + escape(str(t)) for t in tokens)


_MADE = re.compile(r"~(?![01])")
_SCOPE = re.compile(r"~scope([0-9]+)~")


def unscoped(pointer: str) -> tuple[int, str]:
    """(binding number, pointer without its scope prefix) of a pointer (`scoped`)."""
    found = _SCOPE.match(pointer)
    return (0, pointer) if found is None else (int(found.group(1)), pointer[found.end():])


def scoped(binding: int, pointer: str) -> str:
    """`pointer` (unscoped) read under binding number `binding` (module docstring)."""
    return f"~scope{binding}~{pointer}" if binding else pointer


def made_origin(pointer: str) -> str:
    """The pointer of the document's subschema that a made pointer (`make`) was made from:
    what comes before its first `~` not followed by `0` or `1` (a real pointer itself), read
    without its scope prefix (`scoped`)."""
    pointer = unscoped(pointer)[1]
    found = _MADE.search(pointer)
    return pointer if found is None else pointer[:found.start()]


def is_made(pointer: str) -> bool:
    """Whether `pointer` names a schema made while translating (`make`)."""
    return made_origin(pointer) != unscoped(pointer)[1]


def _resolve_uri(base: str, ref: str, where: str) -> tuple[str, str]:
    """(URI, fragment) of `ref` resolved against `base` (RFC 3986), also for non-hierarchical
    bases (`urn:`); a GrammarError at `where` for a malformed URI reference."""
    try:
        if ref.startswith("#"):
            return urldefrag(urldefrag(base)[0] + ref)
        return urldefrag(urljoin(base, ref))
    except ValueError as exc:
        raise GrammarError(f"{ref!r} is not a valid URI reference ({exc})",
                           pointer=where, code="invalid-schema") from None


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


class SchemaDocument:
    """An indexed schema document, with its dialect read from the root `$schema`: `dialect`
    (one of `vocabularies.DRAFTS`) and its `vocabulary` (the keywords in force); `legacy` is
    true for drafts 3-7 (where `$ref` siblings are ignored), `plain_integers` for drafts 3-4
    (where an integer has no fraction: `1.0` is not one, and `exclusiveMinimum` is a flag of
    `minimum`), `draft3` for draft 03 (its `divisibleBy`, `extends`, `disallow`, boolean
    `required`, schemas and `any` in `type`)."""

    def __init__(self, root: Any, limits: Limits,
                 resources: Mapping[str, Any] | None = None) -> None:
        if not isinstance(root, (dict, bool)):
            raise GrammarError(f"a schema must be an object or a boolean, got {type(root).__name__}",
                               code="invalid-schema")
        self.root = root
        self._roots: dict[str, Any] = {"": root}
        """The document (the root, or a resource) of each pointer prefix."""
        self.limits = limits
        self.schemas: dict[str, Any] = {}
        self.base: dict[str, str] = {}
        self.resources: dict[str, str] = {}
        self.anchors: dict[tuple[str, str], str] = {}
        self.dynamic_anchors: dict[tuple[str, str], str] = {}
        """The `$dynamicAnchor`s, by (resource URI, name)."""
        self.dynamic = False
        """Whether a subschema holds `$dynamicRef` (module docstring)."""
        self._bindings: list[tuple[tuple[str, str], ...]] = [()]
        """Each binding, (name, resource URI) pairs sorted, by its number."""
        self._binding_numbers: dict[tuple[tuple[str, str], ...], int] = {(): 0}
        self.aliases: dict[str, str] = {}
        """Made pointers that stand for another subschema (module docstring)."""
        self.made: set[str] = set()
        """The pointers of schemas made while translating (`make`)."""
        self.dialect = dialect(root)
        self.vocabulary = VOCABULARIES[self.dialect]
        self.legacy = self.dialect in LEGACY_DRAFTS
        self.plain_integers = self.dialect in LEGACY_DRAFTS[:2]
        self.draft3 = self.dialect == LEGACY_DRAFTS[0]
        self._index("", root, _DEFAULT_BASE, 0)
        for uri, schema in (resources or {}).items():
            self._add_resource(uri, schema)

    def _add_resource(self, uri: Any, schema: Any) -> None:
        url, fragment = urldefrag(uri) if isinstance(uri, str) else ("", "")
        if not url or fragment or ":" not in url:
            raise GrammarError(f"a resource is named by an absolute URI without a fragment, "
                               f"got {uri!r}", code="invalid-schema")
        prefix = url + "#"
        if not isinstance(schema, (dict, bool)):
            raise GrammarError(f"a schema must be an object or a boolean, got "
                               f"{type(schema).__name__}", pointer=prefix, code="invalid-schema")
        if isinstance(schema, dict) and "$schema" in schema and dialect(schema) != self.dialect:
            raise GrammarError(f"resource {url} declares another draft than the document "
                               f"({schema['$schema']!r})", pointer=join(prefix, "$schema"),
                               code="unsupported-ref")
        self._roots[prefix] = schema
        self.resources.setdefault(url, prefix)
        self._index(prefix, schema, url, 0)

    def make(self, pointer: str, schema: Any) -> None:
        """Register a schema made while translating at `pointer`, where the document has no
        subschema; the first one made there stays."""
        if pointer not in self.schemas:
            self.schemas[pointer] = schema
            self.made.add(pointer)

    def without(self, pointer: str, keywords: frozenset[str]) -> str:
        """The pointer of a made copy of the subschema at `pointer` without `keywords` (its
        other subschemas copied beneath it with their base URIs, so references inside resolve
        as in the original)."""
        made = pointer + "~without-" + "-".join(sorted(keywords))
        if made in self.schemas:
            return made
        schema = self.at(pointer)
        self.make(made, {k: v for k, v in schema.items() if k not in keywords}
                  if isinstance(schema, dict) else schema)
        self.base[made] = self.base_of(pointer)
        dropped = tuple(join(pointer, k) for k in keywords)
        binding, plain = unscoped(pointer)
        subs = [p for p in self.schemas if p.startswith(pointer + "/")]
        if binding:
            subs += [scoped(binding, p) for p in self.schemas if p.startswith(plain + "/")]
        for sub in dict.fromkeys(subs):
            if not any(sub == d or sub.startswith(d + "/") for d in dropped):
                copy = made + sub[len(pointer):]
                self.make(copy, self.at(sub))
                self.base[copy] = self.base_of(sub)
        for sub in [p for p in self.aliases if p.startswith(pointer + "/")]:
            self.aliases.setdefault(made + sub[len(pointer):], self.aliases[sub])
        return made

    def at(self, pointer: str) -> Any:
        """The subschema at `pointer`, as the document's draft reads it."""
        schema = self.schemas.get(pointer)
        if schema is None:
            schema = self.schemas[pointer] = self.schemas[unscoped(pointer)[1]]
            self.base[pointer] = self.base[unscoped(pointer)[1]]
        return schema

    def base_of(self, pointer: str) -> str:
        """The base URI of the subschema at `pointer` (a made schema without one: the
        document's default)."""
        return self.base.get(pointer) or self.base.get(unscoped(pointer)[1], _DEFAULT_BASE)

    def enter(self, pointer: str) -> str:
        """`pointer`, under its binding extended by the resource whose root it is, if it is
        one (module docstring)."""
        if not self.dynamic:
            return pointer
        binding, plain = unscoped(pointer)
        url = self.base.get(plain)
        if url is None or self.resources.get(url) != plain:
            return pointer  # not a resource's root (or a made schema)
        return scoped(self._bind(binding, url), plain)

    def _bind(self, binding: int, url: str) -> int:
        """The number of `binding` extended by the dynamic anchors of the resource `url`."""
        bound = dict(self._bindings[binding])
        for (resource, name) in self.dynamic_anchors:
            if resource == url:
                bound.setdefault(name, url)
        key = tuple(sorted(bound.items()))
        number = self._binding_numbers.get(key)
        if number is None:
            number = self._binding_numbers[key] = len(self._bindings)
            self._bindings.append(key)
        return number

    def _indexed(self, key: str) -> bool:
        """Whether the subschemas under keyword `key` are indexed eagerly."""
        return key in self.vocabulary or key in STRUCTURAL

    def _index(self, pointer: str, schema: Any, base: str, depth: int) -> None:
        stack: list[tuple[str, Any, str, int]] = [(pointer, schema, base, depth)]
        self.resources.setdefault(_DEFAULT_BASE, "")
        while stack:
            pointer, schema, base, depth = stack.pop()
            if depth > self.limits.max_schema_depth:
                raise self.limits.exceeded("max_schema_depth", depth,
                                           f"schema nesting at {pointer or '/'}")
            self.schemas[pointer] = in_force(schema, self.vocabulary)
            if not isinstance(schema, dict):
                if not isinstance(schema, bool):
                    raise GrammarError(f"a schema must be an object or a "
                                       f"boolean, got {type(schema).__name__}",
                                       pointer=pointer or '/', code="invalid-schema")
                self.base[pointer] = base
                continue
            base = self._enter(pointer, schema, base)
            self.base[pointer] = base
            self.dynamic = self.dynamic or "$dynamicRef" in self.schemas[pointer]
            for key in SCHEMA_KEYWORDS:
                if key in schema and self._indexed(key):
                    value = schema[key]
                    if key == "items" and isinstance(value, list):
                        stack.extend((join(pointer, key, i), v, base, depth + 1)
                                     for i, v in enumerate(value))
                    else:
                        stack.append((join(pointer, key), value, base, depth + 1))
            for key in SCHEMA_ARRAYS:
                if key in schema and self._indexed(key):
                    value = schema[key]
                    if not isinstance(value, list):
                        raise GrammarError(f"{key} must be an array of "
                                           "schemas",
                                           pointer=join(pointer, key), code="invalid-schema")
                    stack.extend((join(pointer, key, i), v, base, depth + 1)
                                 for i, v in enumerate(value))
            for key in SCHEMA_MAPS:
                if key in schema and self._indexed(key):
                    value = schema[key]
                    if not isinstance(value, dict):
                        raise GrammarError(f"{key} must be an object",
                                           pointer=join(pointer, key), code="invalid-schema")
                    stack.extend((join(pointer, key, name), v, base, depth + 1)
                                 for name, v in value.items()
                                 if not (key == "dependencies" and (isinstance(v, list) or (
                                     self.draft3 and isinstance(v, str)))))
            if self.draft3:
                stack.extend((p, v, base, depth + 1)
                             for p, v in self._draft3(pointer, schema, base))

    def _draft3(self, pointer: str, schema: dict[str, Any], base: str) -> list[tuple[str, Any]]:
        """The subschemas of the draft-03 keywords of `schema`, to index; a type name in
        `disallow`, or in a `type` union that holds a schema, is recorded here as the schema
        `{"type": name}`, so that each member of either is a subschema."""
        found: list[tuple[str, Any]] = []
        for key in DRAFT3_SCHEMAS:
            value = schema.get(key)
            if isinstance(value, list):
                members = [(join(pointer, key, i), v) for i, v in enumerate(value)]
            elif key == "extends" and key in schema or key == "disallow" and isinstance(value, str):
                members = [(join(pointer, key), value)]
            elif key == "disallow" and key in schema:
                raise GrammarError(f"disallow must be a type name or an "
                                   f"array of type names and schemas, got {value!r}",
                                   pointer=join(pointer, key), code="invalid-schema")
            else:
                continue  # a `type` that is no array holds no schema (a lone one is invalid)
            union = key == "disallow" or (key == "type" and any(isinstance(v, dict)
                                                                for v in value))
            for where, member in members:
                if isinstance(member, dict) or (key == "extends" and isinstance(member, bool)):
                    found.append((where, member))
                elif key == "extends" or (union and member not in DRAFT3_TYPES):
                    raise GrammarError(f"{key} must be " + ("a schema or an array of schemas"
                        if key == "extends" else "a type name (one of "
                        f"{', '.join(DRAFT3_TYPES)}) or a schema") + f", got {member!r}",
                        pointer=where, code="invalid-schema")
                elif union:
                    self.schemas[where] = {"type": member}
                    self.base[where] = base
        return found

    def _enter(self, pointer: str, schema: dict[str, Any], base: str) -> str:
        """Record the ids and anchors of `schema`; its base URI."""
        if self.dialect in LEGACY_DRAFTS[:2]:  # `id` before draft 06, `$id` from it on
            ident = schema.get("id") if "$ref" not in schema else None
        else:  # drafts 06/07 ignore every keyword beside `$ref`
            ident = schema.get("$id") if not self.legacy or "$ref" not in schema else None
        if isinstance(ident, str):
            if ident.startswith("#"):
                self.anchors[(base, ident[1:])] = pointer
            else:
                url, fragment = _resolve_uri(base, ident, join(pointer, "$id"))
                base = url
                self.resources.setdefault(url, pointer)
                if fragment:
                    self.anchors[(base, fragment)] = pointer
        for key in ("$anchor", "$dynamicAnchor"):
            anchor = schema.get(key)
            if isinstance(anchor, str):
                self.anchors.setdefault((base, anchor), pointer)
                if key == "$dynamicAnchor":
                    self.dynamic_anchors.setdefault((base, anchor), pointer)
        return base

    def resolve(self, ref: Any, pointer: str, keyword: str = "$ref") -> str:
        """The pointer of the target of `ref`, the value of `keyword` (`$ref` or
        `$dynamicRef`) in the subschema at `pointer`, under the binding of `pointer` extended
        by the resource the target is in (module docstring)."""
        binding = unscoped(pointer)[0]
        target = self._static(ref, pointer, keyword)
        if not self.dynamic:
            return target
        if keyword == "$dynamicRef":
            url, fragment = _resolve_uri(self.base_of(pointer), ref, join(pointer, keyword))
            fragment = unquote(fragment)
            if (url, fragment) in self.dynamic_anchors:
                outermost = dict(self._bindings[binding]).get(fragment)
                if outermost is not None:
                    target = self.dynamic_anchors[(outermost, fragment)]
        return scoped(self._bind(binding, self.base[target]), target)

    def _static(self, ref: Any, pointer: str, keyword: str) -> str:
        """The unscoped pointer of the target of `ref` in the subschema at `pointer`, by its
        URI alone."""
        where = join(pointer, keyword)
        if not isinstance(ref, str):
            raise GrammarError(f"{keyword} must be a string", pointer=where,
                               code="invalid-schema")
        url, fragment = _resolve_uri(self.base_of(pointer), ref, where)
        if url not in self.resources:
            raise GrammarError(f"reference {ref!r} points outside this document "
                               f"({url}); give that document in resources={{uri: schema}} "
                               "(nothing is fetched)",
                               pointer=where, code="unsupported-ref")
        fragment = unquote(fragment)
        if fragment and not fragment.startswith("/"):
            target = self.anchors.get((url, fragment))
            if target is None:
                raise GrammarError(f"no anchor {fragment!r} for reference {ref!r}",
                                   pointer=where, code="invalid-ref")
            return target
        target = self.resources[url]
        for token in fragment.split("/")[1:] if fragment else ():
            target = join(target, _unescape(token))
        if target not in self.schemas:
            target = self._pointer_into_value(target, where, ref)
        return target

    def _pointer_into_value(self, target: str, where: str, ref: str) -> str:
        """Index a pointer into a part of the document that is not a known subschema (a
        reference into `properties` of an unknown keyword, say), if it holds a schema."""
        prefix = max((p for p in self._roots if target.startswith(p)), key=len)
        node: Any = self._roots[prefix]
        for token in target[len(prefix):].split("/")[1:]:
            token = _unescape(token)
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                raise GrammarError(f"reference {ref!r} does not resolve in this "
                                   "document", pointer=where, code="invalid-ref")
        if not isinstance(node, (dict, bool)):
            raise GrammarError(f"reference {ref!r} points at a "
                               f"{type(node).__name__}, not a schema",
                               pointer=where, code="invalid-ref")
        parent = target.rsplit("/", 1)[0]
        while parent not in self.base:
            parent = parent.rsplit("/", 1)[0]
        self._index(target, node, self.base[parent], target.count("/"))
        return target
