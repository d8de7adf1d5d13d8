"""JSON Schema frontend: a schema (draft 2020-12, with the older spellings real schemas use)
to grammar IR, then to a `CompiledGrammar` through the same pipeline as every grammar.

An instance is accepted exactly when it validates, for the supported keywords (see
`specs/json_schema.md`); an unsupported keyword is an error naming it and its JSON pointer, or,
with `lenient=True`, a warning in `CompiledGrammar.notes` and a documented relaxation.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from ....runtime.compiled import CompiledGrammar
from ....runtime.vocab.vocabulary import Vocabulary
from ...support.errors import GrammarError
from ...ir.nodes import Grammar
from ...support.limits import DEFAULT_LIMITS, Limits
from ...support.deadline import compile_deadline
from .document import SchemaDocument
from .loading import check_scalar_values, parse_schema_text
from .options import JsonSchemaOptions

__all__ = ["JsonSchemaOptions", "compile_json_schema", "load_schema", "schema_to_grammar"]


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
) -> tuple[Grammar, list[str]]:
    """The grammar of the instances of `schema`, and lenient mode's warnings (each keyword it
    ignored)."""
    from .translate import Translator

    with compile_deadline(limits):
        translator = Translator(SchemaDocument(load_schema(schema, limits), limits),
                                options or JsonSchemaOptions(), limits)
        grammar = translator.grammar()
        return grammar, translator.warnings


def compile_json_schema(
    schema: Any,
    vocab: Vocabulary,
    *,
    options: JsonSchemaOptions | None = None,
    limits: Limits = DEFAULT_LIMITS,
    precompute: bool = False,
    **option_fields: Any,
) -> CompiledGrammar:
    """Compile a JSON Schema against `vocab`. Options come as a `JsonSchemaOptions` or as its
    fields (`strict=True`, `lenient=True`, `whitespace="compact"`, ...)."""
    from ...pipeline import compile_grammar

    if options is None:
        options = JsonSchemaOptions(**option_fields)
    elif option_fields:
        raise TypeError("pass either options= or option fields, not both")
    with compile_deadline(limits):
        grammar, warnings = schema_to_grammar(schema, options, limits)
        try:
            compiled = compile_grammar(grammar, vocab, limits=limits, precompute=precompute)
        except GrammarError as exc:
            if exc.code != "empty-language":
                raise
            raise GrammarError("no JSON value satisfies this schema, so nothing could be "
                               "generated", code="empty-language", pointer="") from None
    if warnings:
        compiled = dataclasses.replace(compiled, notes=compiled.notes + tuple(warnings))
    return compiled
