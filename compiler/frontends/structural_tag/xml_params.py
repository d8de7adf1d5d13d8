"""XGrammar's XML argument styles of a `json_schema` item: the top-level object's properties as
XML elements instead of JSON members (Qwen3-Coder's `<parameter=city>\\nParis\\n</parameter>`).

The language, as XGrammar's converter writes it (`specs/structural_tags.md`): whitespace, then
each property present, in the schema's order, followed by whitespace; every required property
present, no other. A property is the key wrapper (`<parameter=` name `>` for `qwen_xml`,
`<parameter name="` name `">` for `minimax_xml`, `<arg_key>` name `</arg_key>` whitespace
`<arg_value>` for `glm_xml`), its value, then the closing marker (`</parameter>`,
`</arg_value>`). A value whose schema is a plain string (or has no type) is raw text without the
closing marker; a string `enum`/`const` is one of its raw values with whitespace around it; any
other value is JSON with whitespace around it, compiled as `compile_json_schema` would (the root's `$defs` kept for its
references). Top-level shapes beyond an object with `properties` and `required` (unions,
`additionalProperties` other than false, pattern properties, a union type holding "string") are
an error naming the keyword.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...ir.nodes import EMPTY, Choice, Literal, Node, Repeat, Seq
from ...support.errors import GrammarError
from ...support.limits import Limits
from ..free_text import free_text
from ..json_schema.document import join
from ..json_schema.options import JSON_WHITESPACE

__all__ = ["XML_STYLES", "xml_parameters"]

XML_STYLES: dict[str, tuple[str, str, str, str]] = {
    "qwen_xml": ("<parameter=", ">", "", "</parameter>"),
    "minimax_xml": ('<parameter name="', '">', "", "</parameter>"),
    "glm_xml": ("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"),
}
"""Key prefix, key suffix, value prefix and closing marker of each supported style."""

_ANNOTATIONS = frozenset(("description", "title", "default", "examples", "$comment",
                          "deprecated", "readOnly", "writeOnly"))
_ROOT_KEYS = _ANNOTATIONS | {"type", "properties", "required", "additionalProperties", "$defs",
                             "definitions", "$schema", "$id"}


def _unsupported(pointer: str, message: str) -> GrammarError:
    return GrammarError(message, pointer=pointer, code="unsupported-structural-tag")


def _raw_strings(schema: Any) -> list[str] | None:
    """The raw values of a string `enum`/`const` schema, or None."""
    if not isinstance(schema, dict) or set(schema) - _ANNOTATIONS - {"type", "enum", "const"}:
        return None
    if schema.get("type", "string") != "string":
        return None
    values = schema["enum"] if "enum" in schema else [schema["const"]] if "const" in schema \
        else None
    return values if isinstance(values, list) and values and all(
        isinstance(v, str) for v in values) else None


def _is_raw_text(schema: Any) -> bool:
    """A plain string, or a value with no type and no constraint."""
    if schema is True:
        return True
    return isinstance(schema, dict) and not (set(schema) - _ANNOTATIONS - {"type"}) and \
        schema.get("type", "string") == "string"


def xml_parameters(schema: Any, style: str, pointer: str, max_whitespace: int,
                   json_value: Callable[[Any, str], Node], limits: Limits) -> Node:
    """The language of `schema`'s instances in `style`; `json_value(subschema, pointer)` gives
    a JSON value's expression."""
    key_prefix, key_suffix, value_prefix, closing = XML_STYLES[style]
    if not isinstance(schema, dict):
        raise _unsupported(pointer, f"the {style} style needs an object schema")
    extra = sorted(set(schema) - _ROOT_KEYS)
    if extra:
        raise _unsupported(join(pointer, extra[0]), f"{extra[0]!r} at the top of a {style} "
                                                    "schema is not supported yet")
    if schema.get("type", "object") != "object":
        raise _unsupported(join(pointer, "type"), f"the {style} style needs type object")
    if schema.get("additionalProperties", False) is not False:
        raise _unsupported(join(pointer, "additionalProperties"), "only additionalProperties "
                           f"false (or absent) is supported in the {style} style")
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(properties, dict) or not isinstance(required, list):
        raise GrammarError("properties must be an object and required an array",
                           pointer=pointer, code="invalid-schema")
    missing = [r for r in required if r not in properties]
    if missing:
        raise _unsupported(join(pointer, "required"), f"required property {missing[0]!r} is "
                           "not listed in properties (no other property is allowed)")
    ws: Node = Repeat(JSON_WHITESPACE, 0, max_whitespace) if max_whitespace else EMPTY
    defs = {k: schema[k] for k in ("$defs", "definitions") if k in schema}
    items: list[Node] = [ws]
    for name, sub in properties.items():
        where = join(pointer, "properties", name)
        raw = _raw_strings(sub)
        if raw is not None:
            value: Node = Seq((ws, Choice(tuple(Literal(v.encode()) if v else EMPTY
                                                for v in raw)), ws))
        elif _is_raw_text(sub):
            value = free_text(frozenset((closing,)), "", None, limits)
        else:
            if isinstance(sub, dict) and "string" in (sub.get("type") or []) and \
                    isinstance(sub.get("type"), list):
                raise _unsupported(join(where, "type"), "a union type holding \"string\" is "
                                   f"not supported yet in the {style} style")
            document = {**sub, **defs} if isinstance(sub, dict) else sub
            value = Seq((ws, json_value(document, where), ws))
        head = Literal(f"{key_prefix}{name}{key_suffix}".encode())
        opened = Seq((ws, Literal(value_prefix.encode()))) if value_prefix else EMPTY
        element = Seq((head, opened, value, Literal(closing.encode()), ws))
        items.append(element if name in required else Repeat(element, 0, 1))
    return Seq(tuple(items))
