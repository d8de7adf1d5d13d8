"""Linting JSON Schemas: what does not compile, and what compiles but tends to hurt structured
output, each located by JSON pointer and by line:column in the schema's text.

Errors come from the frontend itself (the schema is translated as `compile_json_schema` would,
with the given options), so lint and compile never disagree on what compiles. When the
translation stops at an unsupported keyword or format, it is run again leniently to report
every other unsupported construct in the same pass. A schema none of whose values exist is an
`empty-language` error.

Findings on a schema that compiles (codes in `SCHEMA_CODES`, documented with examples in
specs/diagnostics.md) are read off the conjunctions of subschemas the translator compiled, so
`allOf`, `$ref` and `anyOf` are seen merged as they are generated; each is reported once per
location (code and pointer). Two are notes rather than warnings: a required value without a
`null` escape and an enum without an "other" member are often exactly what is meant, and lint
cannot know whether the model always has the value; the first becomes a warning when the
property's description itself suggests the value may be missing.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Any

from ..frontends.json_schema import load_schema
from ..frontends.json_schema.conjunctions import (
    LENIENT_SUFFIXES,
    NEGATED,
    TYPES,
    Conjunction,
    Constraints,
    conjunction,
    location,
)
from ..frontends.json_schema.constraints import Collector
from ..frontends.json_schema.document import SchemaDocument, join
from ..frontends.json_schema.locate import JsonPositions
from ..frontends.json_schema.options import JsonSchemaOptions
from ..frontends.json_schema.translate import Translator
from ..ir.nodes import Grammar
from ..ir.summaries import productive_node, productive_rules
from ..support.diagnostics import Diagnostic, Span
from ..support.errors import GrammarError
from ..support.limits import DEFAULT_LIMITS, Limits
from . import sort_diagnostics
from .size import analyse_backend

__all__ = ["SCHEMA_CODES", "lint_schema", "lenient_warnings", "located_error"]

SCHEMA_CODES: dict[str, tuple[str, str]] = {
    "schema-required-not-nullable": (
        "info", "A required property that cannot be null: a model may have to invent it."),
    "schema-closed-enum": (
        "info", "A string enum with no member for 'other' or 'unknown' and no alternative."),
    "schema-unbounded-string": (
        "warning", "A string without maxLength, pattern, format or enum."),
    "schema-unbounded-array": ("warning", "An array without maxItems."),
    "schema-additional-absent": (
        "warning", "With --strict: an object schema without additionalProperties."),
    "schema-unused-def": ("warning", "A definition no $ref reachable from the root uses."),
    "schema-oneof-as-anyof": ("warning", "A oneOf read as anyOf (lenient)."),
    "schema-lenient-ignored": ("warning", "An unsupported keyword or format ignored (lenient)."),
    "schema-unknown-format": (
        "warning", "A format grammask does not know, read as an annotation: any string."),
    "schema-sound-subset": (
        "info", "A declared sound subset taken where the exact language is over budget."),
}

_LENIENT_ADVICE = {
    "schema-lenient-ignored": "; compile with lenient=True (CLI: --lenient) to ignore it (the "
                              "output may then violate it)",
    "schema-oneof-as-anyof": "; make them disjoint (for example with a const discriminator "
                             "property), use anyOf, or compile with lenient=True (CLI: "
                             "--lenient) to read it as anyOf",
}
"""What lint says instead of a lenient warning's `LENIENT_SUFFIXES` when lenient is off."""
_OPTIONAL_HINT = re.compile(
    r"\b(optional(ly)?|if (known|any|available|applicable|present|given|stated|mentioned|"
    r"provided)|when (known|available)|may be (omitted|missing|absent|empty|unknown|null)|"
    r"not always|unknown)\b", re.IGNORECASE)
_ESCAPE_MEMBERS = frozenset(("other", "others", "unknown", "none", "na", "notapplicable",
                             "unspecified", "notspecified", "notstated", "undetermined",
                             "unsure", "undefined", "null"))
_ALL_TYPES = frozenset(TYPES)
_NULL_SEARCH = 256
_SHOWN = 4


def _diagnostic(error: GrammarError, positions: JsonPositions | None) -> Diagnostic:
    pointer, message = error.pointer, error.message
    if pointer == "/":
        pointer = ""
    if "(CLI: --lenient)" not in message:
        message = message.replace("with lenient=True", "with lenient=True (CLI: --lenient)")
    span = None
    if positions is not None and pointer is not None:
        if error.column is not None and error.code in ("invalid-pattern", "unsupported-pattern"):
            span = positions.string_span(pointer, error.column - 1)
        span = span or positions.span(pointer)
    elif error.line is not None:
        column = error.column or 0
        span = Span(error.line, column, error.line, column)
    return Diagnostic("error", error.code or "invalid-schema", message, span, pointer)


def _positions(text: str) -> JsonPositions | None:
    """The positions of `text` (None if it is not JSON)."""
    try:
        return JsonPositions(text)
    except ValueError:
        return None


def located_error(error: GrammarError, schema_text: str) -> GrammarError:
    """`error` (raised for the schema `schema_text`) located in the text: line and column of
    its JSON pointer (of the offending character, for a pattern), the pointer on its own and
    the message without it."""
    diag = _diagnostic(error, _positions(schema_text))
    line = column = None
    if diag.span is not None:
        line, column = diag.span.line, diag.span.column or None
    return error.located(message=diag.message, line=line, column=column,
                         pointer=diag.pointer or None, code=diag.code)


def _located(found: Sequence[Diagnostic], positions: JsonPositions | None) -> list[Diagnostic]:
    """The frontend's diagnostics (lenient warnings, relaxations) with the severity of their
    code and the span of their pointer."""
    return [Diagnostic(SCHEMA_CODES[d.code][0], d.code, d.message,
                       positions.span(d.pointer or "") if positions is not None else None,
                       d.pointer or "")
            for d in found]


def lenient_warnings(found: Sequence[Diagnostic], schema_text: str) -> list[Diagnostic]:
    """What lenient mode ignored and which relaxations were taken (`schema_to_grammar`'s
    diagnostics), located in `schema_text`."""
    return _located(found, _positions(schema_text))


def _translate(doc: SchemaDocument, options: JsonSchemaOptions,
               limits: Limits) -> tuple[Translator, Grammar]:
    translator = Translator(doc, options, limits)
    return translator, translator.grammar()


def lint_schema(schema_text: str, path: str, options: JsonSchemaOptions | None = None, *,
                limits: Limits = DEFAULT_LIMITS, stats: bool = False) -> list[Diagnostic]:
    """Lint the JSON Schema `schema_text` read from `path` (the `source` of every span):
    errors for what does not compile under `options`, then the findings of `SCHEMA_CODES`;
    with `stats`, a note on the backend and sizes of its automata. Sorted by position."""
    options = options or JsonSchemaOptions()
    try:
        data = load_schema(schema_text, limits)
    except GrammarError as exc:
        return [_diagnostic(exc, None)]
    except RecursionError:
        return [Diagnostic("error", "invalid-schema", "the JSON text is nested too deeply to "
                           "read")]
    positions = _positions(schema_text)
    try:
        found = _lint(data, options, limits, stats, positions)
    except RecursionError:
        return [Diagnostic("error", "invalid-schema", "the schema is nested too deeply")]
    except Exception as exc:  # noqa: BLE001 - a frontend bug must not become a traceback
        return [Diagnostic("error", "internal-error",
                           f"the JSON Schema frontend failed on this input "
                           f"({type(exc).__name__}: {exc}); this is a bug in grammask, please "
                           "report it with the input")]
    return sort_diagnostics([
        d if d.span is None else dataclasses.replace(d, span=dataclasses.replace(d.span,
                                                                                source=path))
        for d in found])


def _lint(data: Any, options: JsonSchemaOptions, limits: Limits, stats: bool,
          positions: JsonPositions | None) -> list[Diagnostic]:
    try:
        doc = SchemaDocument(data, limits)
    except GrammarError as exc:
        return [_diagnostic(exc, positions)]
    found: list[Diagnostic] = []

    def add(severity: str, code: str, message: str, pointer: str) -> None:
        span = positions.span(pointer) if positions is not None else None
        found.append(Diagnostic(severity, code, message, span, pointer))

    try:
        translator, grammar = _translate(doc, options, limits)
    except GrammarError as exc:
        found.append(_diagnostic(exc, positions))
        if options.lenient or exc.code not in ("unsupported-keyword", "unsupported-format"):
            return found
        first = found[0].pointer
        lenient = dataclasses.replace(options, lenient=True)
        try:
            translator, _ = _translate(doc, lenient, limits)
        except GrammarError as again:
            diag = _diagnostic(again, positions)
            return found + ([diag] if diag.pointer != first else [])
        for warning in translator.warnings:
            pointer, message = warning.pointer or "", warning.message
            if pointer == first:
                continue
            if warning.code == "schema-sound-subset":
                add("info", warning.code, message, pointer)
                continue
            message = message.removesuffix(LENIENT_SUFFIXES[warning.code]) + \
                _LENIENT_ADVICE[warning.code]
            code = "unsupported-format" if pointer.endswith("/format") else "unsupported-keyword"
            add("error", code, message, pointer)
        found.extend(_findings(translator, doc, options, positions))
        return _unique(found)
    if grammar.start not in productive_rules(grammar):
        add("error", "empty-language", "no JSON value satisfies this schema, so nothing could "
            "be generated" + _empty_parts(translator, grammar), "")
    found.extend(_located(translator.warnings, positions))
    found.extend(_findings(translator, doc, options, positions))
    if stats:
        found.extend(analyse_backend(grammar, limits))
    return _unique(found)


def _unique(found: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple[str, str | None]] = set()
    out = []
    for d in found:
        if (d.code, d.pointer) not in seen:
            seen.add((d.code, d.pointer))
            out.append(d)
    return out


def _empty_parts(translator: Translator, grammar: Grammar) -> str:
    """Which subschemas admit no value on their own (their rule is empty whatever it uses)."""
    pointers = {name: conj[0][0] for (conj, _), name in translator.names.items() if conj}
    empty = [pointers[r.name] for r in grammar.rules
             if r.name in pointers and pointers[r.name]
             and not productive_node(r.body, set(), set())]
    empty = list(dict.fromkeys(empty))
    if not empty:
        return ""
    shown = ", ".join(empty[:_SHOWN]) + (", ..." if len(empty) > _SHOWN else "")
    return f" (no value satisfies {shown})"


def _pending(collector: Collector, parts: list) -> bool:
    """Whether a flattened conjunction still has alternatives to split (so it is not
    generated itself; its branches are)."""
    return any(NEGATED not in ignored and collector.alternative(p, ignored)
               for p, ignored in parts)


def _declares(doc: SchemaDocument, parts: list, type_name: str) -> str | None:
    """The first subschema of `parts` whose `type` names `type_name`."""
    for pointer, _ in parts:
        schema = doc.at(pointer)
        declared = schema.get("type") if isinstance(schema, dict) else None
        if declared == type_name or (isinstance(declared, list) and type_name in declared):
            return pointer
    return None


def _findings(translator: Translator, doc: SchemaDocument, options: JsonSchemaOptions,
              positions: JsonPositions | None) -> list[Diagnostic]:
    found: list[Diagnostic] = []

    def add(code: str, message: str, pointer: str, severity: str | None = None) -> None:
        span = positions.span(pointer) if positions is not None else None
        found.append(Diagnostic(severity or SCHEMA_CODES[code][0], code, message, span, pointer))

    collector = translator.collector
    for conj in dict.fromkeys(conj for conj, _ in translator.names):
        parts = collector.flatten(conj)
        if parts is None or _pending(collector, parts):
            continue
        try:
            c = collector.collect(parts)
        except GrammarError:
            continue
        restricted = c.types != _ALL_TYPES
        if restricted and c.values is None:
            _bounds(doc, parts, c, add)
        if c.values is not None:
            _enum(doc, conj, parts, c, add)
        if "object" in c.types:
            _required(translator, c, add)
            if options.strict:
                _additional(doc, parts, c, add)
    found.extend(_unused_definitions(doc, positions))
    return found


def _bounds(doc: SchemaDocument, parts: list, c: Constraints, add: Any) -> None:
    where = _declares(doc, parts, "string")
    if where is not None and c.max_length is None and not c.patterns and not c.formats:
        add("schema-unbounded-string", "this string has no maxLength, pattern, format or "
            "enum: a model can keep writing it until its token budget runs out; add a "
            "maxLength", where)
    where = _declares(doc, parts, "array")
    closed = any(a.rest is not None and doc.at(a.rest) is False for a in c.arrays)
    if where is not None and c.max_items is None and not closed:
        add("schema-unbounded-array", "this array has no maxItems: a model can keep adding "
            "items until its token budget runs out; add a maxItems", where)


def _enum(doc: SchemaDocument, conj: Conjunction, parts: list, c: Constraints,
          add: Any) -> None:
    members = list(c.values.values()) if c.values is not None else []
    strings = [m for m in members if isinstance(m, str)]
    if len(strings) < 2 or len(strings) != len(members):
        return
    if any(re.sub(r"[^a-z]", "", m.lower()) in _ESCAPE_MEMBERS for m in strings):
        return
    for pointer, ignored in parts:
        schema = doc.at(pointer)
        for keyword in ("anyOf", "oneOf"):
            if keyword not in ignored or not isinstance(schema.get(keyword), list):
                continue
            if c.value_pointer in (join(pointer, "enum"), join(pointer, "const")):
                continue
            others = [join(pointer, keyword, i) for i in range(len(schema[keyword]))
                      if location(join(pointer, keyword, i)) not in conj]
            if any(not _fixed(doc.at(b)) for b in others):
                return
    shown = ", ".join(repr(m) for m in strings[:_SHOWN]) + (", ..." if len(strings) > _SHOWN
                                                              else "")
    add("schema-closed-enum", f"this enum ({shown}) has no member for 'other' or 'unknown' and "
        "no anyOf alternative: a model must pick one of them even when none fits; add such a "
        "member if that can happen", c.value_pointer)


def _fixed(schema: Any) -> bool:
    return schema is False or (isinstance(schema, dict) and ("enum" in schema
                                                             or "const" in schema))


def _required(translator: Translator, c: Constraints, add: Any) -> None:
    doc = translator.doc
    for name in c.required:
        pointers = [part.properties[name] for part in c.objects if name in part.properties]
        if not pointers or _allows_null(translator, conjunction([location(p) for p in pointers])):
            continue
        where = pointers[0]
        schema = doc.at(where)
        declared = schema.get("type") if isinstance(schema, dict) else None
        fix = (f'"type": ["{declared}", "null"]' if isinstance(declared, str)
               else 'null among its types')
        message = (f"property {name!r} is required and cannot be null: a model that does not "
                   f"know it must invent a value; if it can be unknown, allow {fix} or make it "
                   "optional")
        hints = [_OPTIONAL_HINT.search(doc.at(p).get("description", ""))
                 for p in pointers if isinstance(doc.at(p), dict)
                 and isinstance(doc.at(p).get("description"), str)]
        hint = next((h for h in hints if h), None)
        if hint is not None:
            add("schema-required-not-nullable", message + f" (its description says "
                f"{hint.group()!r})", where, "warning")
        else:
            add("schema-required-not-nullable", message, where)


def _allows_null(translator: Translator, conj: Conjunction) -> bool:
    """Whether some value of `conj` is null (alternatives searched up to a bound; beyond it, or
    where a part cannot be read, such as a reference that the translation never followed and
    that does not resolve, assumed so, which only silences the finding). Each alternative adds
    its branch, flattened, to parts already flattened, so a reference is never expanded
    twice."""
    try:
        return _null_among(translator, conj)
    except GrammarError:
        return True


def _null_among(translator: Translator, conj: Conjunction) -> bool:
    collector, doc = translator.collector, translator.doc
    first = collector.flatten(conj)
    todo = [first] if first is not None else []
    searched = 0
    while todo:
        searched += 1
        if searched > _NULL_SEARCH:
            return True
        parts = todo.pop()
        split = next(((p, ig, k) for p, ig in parts if NEGATED not in ig
                      for k in (collector.alternative(p, ig),) if k is not None), None)
        if split is not None:
            pointer, ignored, keyword = split
            rest = [loc for loc in parts if loc != (pointer, ignored)]
            rest.append((pointer, ignored | {keyword}))
            for i in range(len(doc.at(pointer)[keyword])):
                branch = collector.flatten(conjunction([location(join(pointer, keyword, i))]))
                if branch is not None:
                    todo.append(rest + [loc for loc in branch if loc not in rest])
            continue
        c = collector.collect(parts)
        if c.values is not None:
            if any(v is None for v in c.values.values()):
                return True
        elif "null" in c.types:
            return True
    return False


def _additional(doc: SchemaDocument, parts: list, c: Constraints, add: Any) -> None:
    for pointer, _ in parts:
        schema = doc.at(pointer)
        if not isinstance(schema, dict) or "additionalProperties" in schema \
                or "unevaluatedProperties" in schema:
            continue
        declared = schema.get("type")
        if not ({"properties", "patternProperties", "required"} & schema.keys()
                or declared == "object" or (isinstance(declared, list) and "object" in declared)):
            continue
        listed = "properties" in schema or "patternProperties" in schema
        add("schema-additional-absent", "additionalProperties is absent: strict mode reads it "
            "as false, so only the properties listed here can appear"
            + ("" if listed else " (none are, so only {} is accepted)")
            + ", while a JSON Schema validator, and any API that reads the schema as written, "
            "allows any other property; write \"additionalProperties\": false to say so",
            pointer)


def _parent(pointer: str, schemas: dict[str, Any]) -> str:
    while pointer:
        pointer = pointer.rsplit("/", 1)[0]
        if pointer in schemas:
            return pointer
    return ""


def _unused_definitions(doc: SchemaDocument, positions: JsonPositions | None) -> list[Diagnostic]:
    """`schema-unused-def` for each outermost `$defs`/`definitions` entry that nothing
    reachable from the root refers into; none for a document with dynamic references, which
    resolve only while an instance is validated."""
    if any(isinstance(s, dict) and ("$dynamicRef" in s or "$recursiveRef" in s)
           for s in doc.schemas.values()):
        return []
    targets: dict[str, str] = {}
    for pointer, schema in list(doc.schemas.items()):
        if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            try:
                targets[pointer] = doc.resolve(schema["$ref"], pointer)
            except GrammarError:
                continue
    children: dict[str, list[str]] = {}
    definitions: list[str] = []
    for pointer in doc.schemas:
        if not pointer or pointer in doc.made:
            continue
        parent = _parent(pointer, doc.schemas)
        keyword = pointer[len(parent):].split("/")[1]
        if keyword in ("$defs", "definitions") and pointer.count("/") == parent.count("/") + 2:
            definitions.append(pointer)
        else:
            children.setdefault(parent, []).append(pointer)
    reached: set[str] = set()
    todo = [""]
    while todo:
        pointer = todo.pop()
        if pointer in reached:
            continue
        reached.add(pointer)
        todo.extend(children.get(pointer, ()))
        if pointer in targets:
            todo.append(targets[pointer])
    inside = {r[:m.start()] for r in reached for m in re.finditer("/", r)}
    out: list[Diagnostic] = []
    unused: list[str] = []
    for pointer in sorted(definitions):
        if any(pointer.startswith(u + "/") for u in unused):
            continue
        if pointer in reached or pointer in inside:
            continue
        unused.append(pointer)
        name = pointer.rsplit("/", 1)[1].replace("~1", "/").replace("~0", "~")
        span = positions.span(pointer) if positions is not None else None
        out.append(Diagnostic("warning", "schema-unused-def",
                              f"definition {name!r} is never used: no $ref reachable from the "
                              "root refers to it or into it", span, pointer))
    return out
