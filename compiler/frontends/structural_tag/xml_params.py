"""XGrammar's XML argument styles of a `json_schema` item: the top-level object's properties as
XML elements instead of JSON members (Qwen3-Coder's `<parameter=city>\\nParis\\n</parameter>`).

The language (`specs/structural_tags.md`): whitespace, then each property present, in the
schema's order (any order with `any_order`, each at most once), followed by whitespace; every
required property present, no other. A property
is its head (the style's `head` with the name and, for the typed styles, a label of the
value's kind), the value, then the style's closing marker. A value is one of the *branches* of
its schema (`_branches`): a string value is raw text (no quotes, no escapes: any text without
the closing marker when unconstrained, else exactly the decoded strings the string keywords
allow); a string `enum`/`const` member is its raw text with whitespace around it; any other
value is JSON with whitespace around it, compiled as `compile_json_schema` would (the root's
`$defs` kept for its references). A schema that allows strings and other values (a `type`
list, an `anyOf` of typed options, a mixed `enum`, no constraint at all in a typed style)
gives one branch per kind. `cohere_xml` writes objects and arrays nested as elements too: a
`dict` holds its properties as elements, a `list` its items as elements without a name.

Labels: `deepseek_xml` writes `string="true"` for a raw value and `"false"` for JSON;
`kimi_k3_xml` the value's type (`string`, `number` for integers too, `boolean`, `null`,
`object`, `array`; any of them for a value of no single type); `cohere_xml` `raw`, `json`,
`dict` or `list`. Marker texts that are control tokens of the vocabulary (Kimi-K3's `<|open|>`)
are matched as those tokens (`marker`). What the styles cannot express exactly is an error
naming the keyword (`unsupported-structural-tag`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...automata.language_ops import as_dfa, intersect
from ...ir.nodes import EMPTY, NOTHING, Automaton, Choice, Literal, Node, Repeat, Seq
from ...support import deadline
from ...support.errors import BudgetExceeded, GrammarError
from ...support.limits import Limits
from ..free_text import free_text
from ..json_schema.any_order import INLINED_UP_TO
from ..json_schema.document import join
from ..json_schema.options import JSON_WHITESPACE
from ..json_schema.relaxations import format_language
from ..json_schema.strings import ANY_STRING, counted, ecma_pattern, excluding

__all__ = ["XML_STYLES", "XmlStyle", "xml_parameters"]


@dataclass(frozen=True)
class XmlStyle:
    """One style: a property's head (`{name}`, `{label}` filled in), what opens its value
    after whitespace (`<arg_value>`), its closing marker, and how labels are written."""

    head: str
    closing: str
    value_prefix: str = ""
    labels: str = ""
    """"" (no label), "string" (deepseek), "type" (kimi_k3) or "cohere"."""
    item_head: str = ""
    """The head of a list item (cohere, minimax_m3)."""
    namespace: str = ""
    """minimax_m3: the prefix of every marker. Closings name their element (`{name}`, an item
    `item`); values stand without whitespace; objects and arrays nest as elements; an empty
    object or array is nothing at all; raw strings exclude the namespace."""


_M3 = "]<]minimax[>["

XML_STYLES: dict[str, XmlStyle] = {
    "qwen_xml": XmlStyle("<parameter={name}>", "</parameter>"),
    "minimax_xml": XmlStyle('<parameter name="{name}">', "</parameter>"),
    "glm_xml": XmlStyle("<arg_key>{name}</arg_key>", "</arg_value>", "<arg_value>"),
    "deepseek_xml": XmlStyle('<｜DSML｜parameter name="{name}" string="{label}">',
                             "</｜DSML｜parameter>", labels="string"),
    "deepseek_v4_1_xml": XmlStyle('<｜DSML｜ parameter name="{name}" string="{label}">',
                                  "</｜DSML｜ parameter>", labels="string"),
    "kimi_k3_xml": XmlStyle('<|open|>argument key="{name}" type="{label}"<|sep|>',
                            "<|close|>argument<|sep|>", labels="type"),
    "cohere_xml": XmlStyle('<cofl:value name="{name}" type="{label}">', "</cofl:value>",
                           labels="cohere", item_head='<cofl:value type="{label}">'),
    "minimax_m3_xml": XmlStyle(_M3 + "<{name}>", _M3 + "</{name}>", item_head=_M3 + "<item>",
                               namespace=_M3),
}

_ANNOTATIONS = frozenset(("description", "title", "default", "examples", "$comment",
                          "deprecated", "readOnly", "writeOnly"))
_OBJECT_KEYS = _ANNOTATIONS | {"type", "properties", "required", "additionalProperties",
                               "$defs", "definitions", "$schema", "$id"}
_STRING_KEYS = frozenset(("minLength", "maxLength", "pattern", "format"))
_TYPES = ("string", "number", "integer", "boolean", "null", "object", "array")


def _unsupported(pointer: str, message: str) -> GrammarError:
    return GrammarError(message, pointer=pointer, code="unsupported-structural-tag")


@dataclass(frozen=True)
class _Branch:
    kind: str  # a JSON type, "any" (JSON of no single type), "dict" or "list" (cohere)
    value: Node
    raw: bool
    spaced: bool = True  # whitespace around the value (not where the value holds its own)


class _Params:
    """The translation of one schema in one style."""

    def __init__(self, schema: dict[str, Any], style: str, max_whitespace: int,
                 json_value: Callable[[Any, str], Node], marker: Callable[[str], Node],
                 limits: Limits, excludes: tuple[str, ...]) -> None:
        self.style, self.name = XML_STYLES[style], style
        self.ws: Node = Repeat(JSON_WHITESPACE, 0, max_whitespace) if max_whitespace else EMPTY
        self.defs = {k: schema[k] for k in ("$defs", "definitions") if k in schema}
        self.json_value, self.marker, self.limits = json_value, marker, limits
        self.excludes = excludes
        self.expanding: list[str] = []  # the references whose nested values are being built
        self.any_order = False
        self.rule: Callable[[str, Node], Node] = lambda name, body: body

    # ------------------------------------------------------------------ objects

    def properties(self, schema: Any, pointer: str) -> Node:
        """Whitespace, then the properties of object `schema` as elements."""
        if not isinstance(schema, dict):
            raise _unsupported(pointer, f"the {self.name} style needs an object schema")
        extra = sorted(set(schema) - _OBJECT_KEYS)
        if extra:
            raise _unsupported(join(pointer, extra[0]), f"{extra[0]!r} beside an object's "
                               f"properties is not supported in the {self.name} style")
        if schema.get("type", "object") != "object":
            raise _unsupported(join(pointer, "type"), f"the {self.name} style needs type "
                                                      "object")
        if schema.get("additionalProperties", False) is not False:
            raise _unsupported(join(pointer, "additionalProperties"), "only additionalProperties"
                               f" false (or absent) is supported in the {self.name} style")
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        if not isinstance(properties, dict) or not isinstance(required, list):
            raise GrammarError("properties must be an object and required an array",
                               pointer=pointer, code="invalid-schema")
        missing = [r for r in required if r not in properties]
        if missing:
            raise _unsupported(join(pointer, "required"), f"required property {missing[0]!r} "
                               "is not listed in properties (no other property is allowed)")
        elements = [(Seq((self.element(name, sub, join(pointer, "properties", name)), self.ws)),
                     name in required) for name, sub in properties.items()]
        bare = bool(self.style.namespace) and not any(req for _, req in elements)
        if self.any_order and len(elements) > 1:
            body = self.unordered(elements, pointer, nonempty=bare)
        elif bare:  # at least one element: the first one present, then the rest
            body = Choice(tuple(Seq((e, *(Repeat(f, 0, 1) for f, _ in elements[i + 1:])))
                                for i, (e, _) in enumerate(elements))) if elements else NOTHING
        else:
            body = Seq(tuple(e if req else Repeat(e, 0, 1) for e, req in elements))
        if bare:  # an empty object is nothing at all, not whitespace
            return EMPTY if body is NOTHING else Choice((EMPTY, Seq((self.ws, body))))
        return Seq((self.ws, body))

    def unordered(self, elements: list[tuple[Node, bool]], pointer: str,
                  nonempty: bool = False) -> Node:
        """The elements in any order, each at most once, every required one present: the
        state is the set of elements written so far (as `json_schema/any_order.py` does for
        members); past `INLINED_UP_TO` elements each state and each element is a rule."""
        k = len(elements)
        if k > self.limits.max_unordered_properties:
            raise self.limits.exceeded(
                "max_unordered_properties", k, f"properties of the object at {pointer or '/'} "
                "in any order (one automaton state per subset of them)").located(pointer=pointer)
        required = sum(1 << i for i, (_, req) in enumerate(elements) if req)
        ruled = k > INLINED_UP_TO
        tag = f"xml{pointer}"
        nodes = [self.rule(f"{tag}-element-{i}", e) if ruled else e
                 for i, (e, _) in enumerate(elements)]
        states: dict[int, Node] = {}
        for seen in range((1 << k) - 1, -1, -1):  # supersets first: each state's successors
            deadline.check()
            alts = [Seq((nodes[i], states[seen | 1 << i])) for i in range(k)
                    if not seen >> i & 1 and states[seen | 1 << i] is not NOTHING]
            if seen & required == required and (seen or not nonempty):
                alts.append(EMPTY)
            body = NOTHING if not alts else alts[0] if len(alts) == 1 else Choice(tuple(alts))
            states[seen] = self.rule(f"{tag}-any-{seen:x}", body) \
                if ruled and body is not NOTHING and seen else body
        return states[0]

    def element(self, name: str | None, schema: Any, pointer: str) -> Node:
        """One element: each branch of `schema` with its head and closing marker."""
        out = []
        for branch in self.branches(schema, pointer):
            head = self.head(name, branch)
            opened = Seq((self.ws, self.marker(self.style.value_prefix))) \
                if self.style.value_prefix else EMPTY
            value = Seq((self.ws, branch.value, self.ws)) \
                if branch.spaced and not self.style.namespace else branch.value
            closing = self.style.closing.format(name=name if name is not None else "item")
            out.append(Seq((head, opened, value, self.marker(closing))))
        return out[0] if len(out) == 1 else Choice(tuple(out))

    def head(self, name: str | None, branch: _Branch) -> Node:
        template = self.style.head if name is not None else self.style.item_head
        if name is not None and self.style.labels == "type":  # Kimi-K3 escapes attributes
            name = name.replace("&", "&amp;").replace('"', "&quot;")
        labels = self.labels(branch)
        if "{label}" not in template:
            return self.marker(template.format(name=name))
        before, after = template.split("{label}")
        return Seq((self.marker(before.format(name=name)),
                    Choice(tuple(Literal(x.encode()) for x in labels)),
                    self.marker(after)))

    def labels(self, branch: _Branch) -> tuple[str, ...]:
        kind, labels = branch.kind, self.style.labels
        if labels == "string":
            return ("true",) if branch.raw else ("false",)
        if labels == "type":
            if branch.raw:
                return ("string",)
            return ("number",) if kind == "integer" else \
                tuple(t for t in _TYPES if t != "integer") if kind == "any" else (kind,)
        if labels == "cohere":
            return ("raw",) if branch.raw else (kind,) if kind in ("dict", "list") else ("json",)
        return ()

    # ------------------------------------------------------------------ branches

    def resolve(self, schema: Any, pointer: str) -> Any:
        """`schema` with a local `$ref` at its top followed (annotations beside it ignored)."""
        seen: set[str] = set()
        while isinstance(schema, dict) and "$ref" in schema:
            ref = schema["$ref"]
            parts = ref.split("/") if isinstance(ref, str) else []
            if len(parts) != 3 or parts[0] != "#" or parts[2] not in self.defs.get(parts[1], {}):
                raise _unsupported(join(pointer, "$ref"), f"only a local reference "
                                   f"#/$defs/NAME is followed in the {self.name} style")
            if ref in seen:
                raise _unsupported(join(pointer, "$ref"), f"the reference {ref} refers to "
                                   "itself without a value in between")
            seen.add(ref)
            schema = self.defs[parts[1]][parts[2]]
        return schema

    def branches(self, schema: Any, pointer: str) -> list[_Branch]:
        """The branches of a property's schema; a reference is followed once per nesting
        path (a schema that contains itself is an error: values are built inline here)."""
        ref = schema.get("$ref") if isinstance(schema, dict) else None
        if ref is None:
            return self.kinds(schema, pointer)
        if ref in self.expanding:
            raise _unsupported(pointer, f"a recursive schema ({ref} inside itself) is not "
                                        f"supported in the {self.name} style")
        self.expanding.append(ref)
        try:
            return self.kinds(schema, pointer)
        finally:
            self.expanding.pop()

    def kinds(self, schema: Any, pointer: str) -> list[_Branch]:
        schema = self.resolve(schema, pointer)
        typed = self.style.labels != ""
        if schema is True or schema == {} or (isinstance(schema, dict) and
                                              not set(schema) - _ANNOTATIONS):
            if self.style.namespace:
                raise _unsupported(pointer, f"a value of any type is not supported in the "
                                            f"{self.name} style (give it a type)")
            raw = [_Branch("string", self.raw_string({}, pointer), True, False)]
            if not typed:
                return raw
            if self.style.labels == "type":
                return raw + [_Branch(t, self.json({"type": t}, pointer), False)
                              for t in _TYPES if t not in ("string", "integer")]
            return raw + [_Branch("any", self.json(
                {"type": [t for t in _TYPES if t != "string"]}, pointer), False)]
        if not isinstance(schema, dict):
            raise _unsupported(pointer, "a property's schema must be an object or true")
        keys = set(schema) - _ANNOTATIONS
        if keys & {"enum", "const"} and keys <= {"enum", "const", "type"}:
            return self.members(schema, pointer)
        kind = schema.get("type")
        if isinstance(kind, list):
            if not kind or not all(isinstance(t, str) for t in kind):
                raise GrammarError("type must be a type name or a non-empty list of them",
                                   pointer=join(pointer, "type"), code="invalid-schema")
            return [b for t in dict.fromkeys(kind)
                    for b in self.branches({**schema, "type": t}, pointer)]
        if keys == {"anyOf"} or keys == {"oneOf"}:
            return self.options(schema, pointer)
        if kind == "string" or (kind is None and keys <= _STRING_KEYS):
            extra = keys - _STRING_KEYS - {"type"}
            if extra:
                word = sorted(extra)[0]
                raise _unsupported(join(pointer, word), f"{word!r} beside a raw string value is "
                                   f"not supported in the {self.name} style")
            if keys & _STRING_KEYS and self.style.namespace:
                word = sorted(keys & _STRING_KEYS)[0]
                raise _unsupported(join(pointer, word), f"{word!r} on a raw string is not "
                                   f"supported in the {self.name} style (XGrammar's reading)")
            return [_Branch("string", self.raw_string(schema, pointer), True,
                            bool(keys & _STRING_KEYS))]
        nested = self.style.labels == "cohere" or bool(self.style.namespace)
        if nested and kind == "object":
            if self.style.namespace and "properties" not in schema:
                raise _unsupported(pointer, f"an object without properties is not supported "
                                            f"in the {self.name} style")
            return [_Branch("dict", self.properties(schema, pointer), False, False)]
        if nested and kind == "array":
            return [_Branch("list", self.items(schema, pointer), False, False)]
        if kind is None and typed:
            raise _unsupported(pointer, f"give this property a 'type': the {self.name} style "
                                        "labels each value with its kind")
        return [_Branch(kind if isinstance(kind, str) else "any", self.json(schema, pointer),
                        False)]

    def members(self, schema: dict[str, Any], pointer: str) -> list[_Branch]:
        """A branch per `enum`/`const` member: raw text for a string, JSON for the rest."""
        values = schema["enum"] if "enum" in schema else [schema["const"]]
        if "enum" in schema and "const" in schema or not isinstance(values, list) or not values:
            raise _unsupported(pointer, "an enum must be a non-empty list (and not beside const)")
        kind = schema.get("type")
        allowed = (kind if isinstance(kind, list) else [kind]) if kind else None
        out: list[_Branch] = []
        for v in values:
            name = _type_of(v)
            if allowed is not None and name not in allowed and not (
                    name == "number" and "integer" in allowed and float(v).is_integer()):
                continue
            if name == "string":
                if self.style.namespace and self.style.namespace in v:
                    raise _unsupported(pointer, f"a string holding {self.style.namespace!r} is "
                                                f"not supported in the {self.name} style")
                out.append(_Branch("string", Literal(v.encode()) if v else EMPTY, True))
            else:
                out.append(_Branch(name, self.json({"const": v}, pointer), False))
        if not out:
            raise GrammarError("no enum member has the schema's type", pointer=pointer,
                               code="empty-language")
        return out

    def options(self, schema: dict[str, Any], pointer: str) -> list[_Branch]:
        """The branches of an `anyOf`/`oneOf` whose options have distinct single types (so
        that `oneOf` is exact)."""
        word = "anyOf" if "anyOf" in schema else "oneOf"
        options = schema[word]
        if not isinstance(options, list) or not options:
            raise GrammarError(f"{word} must be a non-empty list", pointer=join(pointer, word),
                               code="invalid-schema")
        resolved = [self.resolve(o, join(pointer, word, i)) for i, o in enumerate(options)]
        types = [o.get("type") if isinstance(o, dict) else None for o in resolved]
        if not all(isinstance(t, str) for t in types) or len(set(types)) != len(types):
            if all(isinstance(t, (str, list)) and "string" not in (
                    t if isinstance(t, list) else [t]) for t in types):
                return [_Branch("any", self.json(schema, pointer), False)]
            raise _unsupported(join(pointer, word), f"{word} options that are not of distinct "
                               f"single types are not supported in the {self.name} style")
        return [b for i, o in enumerate(options)
                for b in self.branches(o, join(pointer, word, i))]

    def items(self, schema: dict[str, Any], pointer: str) -> Node:
        """A cohere list: whitespace, then its items as elements without a name."""
        extra = sorted(set(schema) - _ANNOTATIONS - {"type", "items", "minItems", "maxItems"})
        if extra:
            raise _unsupported(join(pointer, extra[0]), f"{extra[0]!r} on an array is not "
                               f"supported in the {self.name} style")
        lo, hi = schema.get("minItems", 0), schema.get("maxItems")
        if not isinstance(lo, int) or not (hi is None or isinstance(hi, int)) or lo < 0 or \
                hi is not None and hi < lo:
            raise GrammarError("minItems and maxItems must be integers, min ≤ max",
                               pointer=pointer, code="invalid-schema")
        if max(lo, hi or 0) > self.limits.max_repeat:
            raise self.limits.exceeded("max_repeat", max(lo, hi or 0), "array length bound"
                                       ).located(pointer=pointer)
        item = Seq((self.element(None, schema.get("items", True), join(pointer, "items")),
                    self.ws))
        if self.style.namespace and lo == 0:  # an empty array is nothing at all
            return Choice((EMPTY, Seq((self.ws, Repeat(item, 1, hi))))) if hi != 0 else EMPTY
        return Seq((self.ws, Repeat(item, lo, hi)))

    # ------------------------------------------------------------------ values

    def raw_string(self, schema: dict[str, Any], pointer: str) -> Node:
        """A string value as raw text: any text without the closing marker, or exactly the
        strings the keywords allow."""
        contents: list[Node] = []
        if "pattern" in schema:
            contents.append(ecma_pattern(schema["pattern"], pointer=join(pointer, "pattern"),
                                         limits=self.limits))
        if "format" in schema:
            contents.append(format_language(schema["format"], removed=False,
                                            span_pointer=join(pointer, "format")))
        lo, hi = schema.get("minLength", 0), schema.get("maxLength")
        for word, bound in (("minLength", lo), ("maxLength", hi)):
            if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int)
                                      or bound < 0):
                raise GrammarError(f"{word} must be a non-negative integer, got {bound!r}",
                                   pointer=join(pointer, word), code="invalid-schema")
        if max(lo, hi or 0) > self.limits.max_repeat:
            raise self.limits.exceeded("max_repeat", max(lo, hi or 0), "string length bound"
                                       ).located(pointer=pointer)
        if not contents and (lo, hi) == (0, None):
            return free_text(frozenset((self.style.namespace or self.style.closing,
                                        *self.excludes)), "", None, self.limits)
        try:
            values = as_dfa(intersect(ANY_STRING, *contents, limits=self.limits,
                                      label="string value") if contents else ANY_STRING,
                            self.limits)
            if (lo, hi) != (0, None):
                values = counted(values, lo, hi, self.limits)
        except BudgetExceeded as exc:
            raise exc.located(pointer=pointer) from None
        if values.is_empty_language:
            raise GrammarError("no string satisfies the length bounds, format and pattern "
                               "together", pointer=pointer, code="empty-language")
        if contents:  # excluded texts bind strings without pattern and format only
            return Automaton(values, label="raw string")
        return excluding(Automaton(values, label="raw string"), self.excludes, self.limits)

    def json(self, schema: Any, pointer: str) -> Node:
        return self.json_value({**schema, **self.defs} if isinstance(schema, dict) else schema,
                               pointer)


def _type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}[type(value)]


def xml_parameters(schema: Any, style: str, pointer: str, max_whitespace: int,
                   json_value: Callable[[Any, str], Node], limits: Limits,
                   marker: Callable[[str], Node] | None = None,
                   excludes: tuple[str, ...] = (), any_order: bool = False,
                   rule: Callable[[str, Node], Node] | None = None) -> Node:
    """The language of `schema`'s instances in `style`; `json_value(subschema, pointer)` gives
    a JSON value's expression, `marker(text)` a marker's (default: the text); no raw string
    without pattern or format contains a text of `excludes`. With `any_order`, an object's
    properties in any order, each at most once; `rule(name, body)` names a shared expression
    (a reference to it; default: the body inlined)."""
    params = _Params(schema if isinstance(schema, dict) else {}, style, max_whitespace,
                     json_value, marker or (lambda text: Literal(text.encode()) if text
                                            else EMPTY), limits, excludes)
    params.any_order = any_order
    if excludes and XML_STYLES[style].namespace:
        raise _unsupported(pointer, f"excludes are not supported in the {style} style")
    if rule is not None:
        params.rule = rule
    if not isinstance(schema, dict):
        raise _unsupported(pointer, f"the {style} style needs an object schema")
    return params.properties(schema, pointer)
