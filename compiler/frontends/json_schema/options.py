"""Options of the JSON Schema frontend, and the whitespace layout they select.

Layouts (what may appear between the tokens of a JSON value):
- `flexible` (default): any JSON whitespace (space, tab, CR, LF), at most `max_whitespace`
  characters per gap, around every `{ } [ ] , :`. This accepts compact output, Python's default
  separators (`", "`, `": "`) and `indent=N` output while newline plus indentation fits the gap
  (with the default 24: `indent=2` to depth 11, `indent=4` to depth 5), and bounds how long a
  model can emit whitespace.
- `compact`: no whitespace at all (`json.dumps(..., separators=(",", ":"))`).
- `indent`: exactly `json.dumps(..., indent=N)`: a newline and N spaces per depth inside
  non-empty containers, `", "` never, `": "` after keys. Depth is bounded by
  `max_indent_depth`; deeper values are not produced.
- `separators=(item, key)`: two regexes (this project's dialect) replacing the item and key
  separators; no other whitespace.
No layout allows text before or after the value.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ir.nodes import EMPTY, CharClass, Literal, Node, Repeat, Seq
from ...support.limits import DEFAULT_LIMITS, Limits
from ..regex import parse_regex

JSON_WHITESPACE = CharClass(((0x09, 0x0A), (0x0D, 0x0D), (0x20, 0x20)))
LAYOUTS = ("flexible", "compact", "indent")
PROPERTY_ORDERS = ("schema", "any")


@dataclass(frozen=True)
class JsonSchemaOptions:
    """How a schema compiles. `strict`: an absent `additionalProperties` means false (as
    structured-output APIs read schemas). `lenient`: an unsupported keyword or format is a
    warning and is ignored (the accepted language is then a superset), instead of an error.
    `string_excludes`: texts that no string literal without `pattern`/`format` and no key may
    contain, matched on the literal as written (escapes not decoded; XGrammar's `excludes` of a
    structural tag's `json_schema` item). `strict_formats`: a `format` grammask does not know
    is an error; by default it is an annotation, as the format-annotation vocabulary reads it
    (any string, with a `schema-unknown-format` warning); the formats it knows are asserted
    either way (`specs/json_schema.md`). `property_order`: `"schema"`, the listed properties
    in the order the schema lists them (what a model should write); `"any"`, in every order,
    each at most once (what documents written by others use; `any_order.py`)."""

    strict: bool = False
    lenient: bool = False
    whitespace: str = "flexible"
    max_whitespace: int = 24
    indent: int = 2
    max_indent_depth: int = 32
    separators: tuple[str, str] | None = None
    string_excludes: tuple[str, ...] = ()
    strict_formats: bool = False
    property_order: str = "schema"

    def __post_init__(self) -> None:
        if not isinstance(self.string_excludes, tuple) or not all(
                isinstance(x, str) and x for x in self.string_excludes):
            raise ValueError("string_excludes must be a tuple of non-empty strings")
        if self.property_order not in PROPERTY_ORDERS:
            raise ValueError(f"property_order must be one of {', '.join(PROPERTY_ORDERS)}, "
                             f"got {self.property_order!r}")
        if self.whitespace not in LAYOUTS:
            raise ValueError(f"whitespace must be one of {', '.join(LAYOUTS)}, "
                             f"got {self.whitespace!r}")
        for name in ("max_whitespace", "indent", "max_indent_depth"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a non-negative int, got {value!r}")
        if self.separators is not None and (
                len(self.separators) != 2 or not all(isinstance(s, str) for s in self.separators)):
            raise ValueError("separators must be a pair of regex strings (item, key)")


class Layout:
    """The whitespace and separators of one options object, per nesting depth."""

    def __init__(self, options: JsonSchemaOptions, limits: Limits = DEFAULT_LIMITS) -> None:
        self.options = options
        self.limits = limits
        self.indented = options.whitespace == "indent" and options.separators is None
        if options.separators is not None:
            item, key = (parse_regex(p, limits=limits) for p in options.separators)
            self._gap: Node = EMPTY
            self._item: Node = item
            self._key: Node = key
        elif options.whitespace == "compact":
            self._gap, self._item, self._key = EMPTY, Literal(b","), Literal(b":")
        elif self.indented:
            self._gap, self._item, self._key = EMPTY, Literal(b","), Literal(b": ")
        else:
            ws = Repeat(JSON_WHITESPACE, 0, options.max_whitespace) if options.max_whitespace else EMPTY
            self._gap = ws
            self._item = Seq((ws, Literal(b","), ws))
            self._key = Seq((ws, Literal(b":"), ws))

    def open(self, depth: int) -> Node:
        """After `{` or `[` of a non-empty container at `depth`."""
        return self._newline(depth + 1) if self.indented else self._gap

    def close(self, depth: int) -> Node:
        """Before `}` or `]` of a non-empty container at `depth`."""
        return self._newline(depth) if self.indented else self._gap

    def empty(self) -> Node:
        """Inside an empty container."""
        return EMPTY if self.indented else self._gap

    def item(self, depth: int) -> Node:
        """Between two members or elements of a container at `depth`."""
        return Seq((self._item, self._newline(depth + 1))) if self.indented else self._item

    def key(self) -> Node:
        """Between a key and its value."""
        return self._key

    def _newline(self, depth: int) -> Node:
        return Literal(b"\n" + b" " * (self.options.indent * depth))
