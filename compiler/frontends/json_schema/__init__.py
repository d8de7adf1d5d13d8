"""JSON Schema frontend: a schema (draft 2020-12, with the older spellings real schemas use)
to grammar IR; `grammask.compiler.compile_json_schema` compiles it as every grammar.

An instance is accepted exactly when it validates, for the supported keywords (see
`specs/json_schema.md`); an unsupported keyword is an error naming it and its JSON pointer, or,
with `lenient=True`, a warning in `CompiledGrammar.notes` and a documented relaxation.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...support.deadline import compile_deadline
from ...support.errors import GrammarError
from ...support.limits import DEFAULT_LIMITS, Limits
from ..parsed import Parsed
from .document import SchemaDocument
from .loading import check_scalar_values, parse_schema_text
from .options import JsonSchemaOptions
from .translate import Translator

__all__ = ["JsonSchemaOptions", "load_schema", "schema_to_grammar"]


def load_schema(schema: Any, limits: Limits = DEFAULT_LIMITS) -> Any:
    """The schema as JSON data: a dict or bool as is, a JSON string parsed (within `limits`),
    a Pydantic model class through its `model_json_schema()`. `GrammarError` for a string
    that is not a Unicode scalar value sequence (a lone surrogate)."""
    if isinstance(schema, (dict, bool)):
        check_scalar_values(schema, limits)
        return schema
    if isinstance(schema, (str, bytes)):
        data = parse_schema_text(schema, limits)
        check_scalar_values(data, limits)
        return data
    if isinstance(schema, type) and hasattr(schema, "model_json_schema"):
        return schema.model_json_schema()
    raise GrammarError(f"a schema must be a dict, a bool, a JSON string or a Pydantic model "
                       f"class, got {type(schema).__name__}", code="invalid-schema")


def schema_to_grammar(
    schema: Any,
    options: JsonSchemaOptions | None = None,
    limits: Limits = DEFAULT_LIMITS,
    *,
    checked: bool = False,
    resources: Mapping[str, Any] | None = None,
) -> Parsed:
    """The grammar of the instances of `schema`, and what lenient mode ignored and which
    relaxations were taken, as diagnostics with their JSON pointers (`Parsed`). `checked`:
    `schema` is JSON data (a dict or a bool) inside a document whose values were checked
    whole (`check_scalar_values`, as a structural tag's are when it is loaded).
    `resources` maps absolute URIs to the schemas a `$ref` may reach outside `schema` (each
    loaded as `schema` is); nothing is fetched."""
    with compile_deadline(limits):
        data = schema if checked and isinstance(schema, (dict, bool)) else load_schema(schema,
                                                                                        limits)
        if resources is not None and not isinstance(resources, Mapping):
            raise GrammarError(f"resources must map URIs to schemas, got "
                               f"{type(resources).__name__}", code="invalid-schema")
        loaded = {uri: _resource(uri, s, limits) for uri, s in (resources or {}).items()}
        translator = Translator(SchemaDocument(data, limits, loaded),
                                options or JsonSchemaOptions(), limits)
        grammar = translator.grammar()
        return Parsed(grammar, tuple(translator.warnings))


def _resource(uri: Any, schema: Any, limits: Limits) -> Any:
    """A resource loaded as `load_schema` loads a schema; its errors name the resource (the
    `source` of a JSON text's line:col, the address `URI#...` of a pointer)."""
    try:
        return load_schema(schema, limits)
    except GrammarError as exc:
        if exc.line is not None:
            raise exc.located(source=str(uri)) from None
        raise exc.located(pointer=f"{uri}#{exc.pointer or ''}") from None
