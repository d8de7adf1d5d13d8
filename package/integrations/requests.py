"""What serving engines send, compiled: a request kind and its text, to a `CompiledGrammar`.

The kinds are vLLM's `StructuredOutputOptions` and SGLang's key types, by name (lower case):

| kind | text | grammar |
|---|---|---|
| `json` | a JSON Schema (JSON text); `""` or SGLang's `"$$ANY$$"`: any JSON value | `compile_json_schema` |
| `json_object` | ignored | any JSON object |
| `regex` | a regex | `compile_regex` |
| `grammar`, `ebnf` | GBNF (XGrammar's EBNF) if it holds `::=`, else Lark | `compile_gbnf` / `compile_lark` |
| `choice` | a JSON list of strings | exactly one of them |
| `structural_tag` | a structural tag (JSON text; XGrammar's format or the older `structures` form) | `compile_structural_tag` |

Any problem with the text (bad JSON, a grammar error, a budget) is a `ValueError` naming the
kind, with the compiler's message.
"""
from __future__ import annotations

import json
from typing import Any

from ..compiler import (
    BudgetExceeded,
    CompileCache,
    GrammarError,
    compile_gbnf,
    compile_json_schema,
    compile_lark,
    compile_regex,
    compile_structural_tag,
)
from ..runtime import CompiledGrammar, Vocabulary

KINDS = ("json", "json_object", "regex", "grammar", "ebnf", "choice", "structural_tag")


def compile_request(kind: str, text: str, vocab: Vocabulary,
                    cache: CompileCache | None = None) -> CompiledGrammar:
    """The grammar of one request (module docstring)."""
    kind = kind.lower()
    if kind not in KINDS:
        raise ValueError(f"unknown request kind {kind!r}; known: {', '.join(KINDS)}")
    if not isinstance(text, str):
        raise ValueError(f"{kind}: the request text must be a str, got {type(text).__name__}")
    try:
        return _compiled(kind, text, vocab, cache)
    except (GrammarError, BudgetExceeded, json.JSONDecodeError) as exc:
        raise ValueError(f"{kind}: {exc}") from None


def _compiled(kind: str, text: str, vocab: Vocabulary, cache: CompileCache | None) -> CompiledGrammar:
    if kind == "json_object" or (kind == "json" and text.strip() in ("", "$$ANY$$")):
        schema: Any = {"type": "object"} if kind == "json_object" else {}
        return compile_json_schema(schema, vocab, cache=cache)
    if kind == "json":
        return compile_json_schema(json.loads(text), vocab, cache=cache)
    if kind == "regex":
        return compile_regex(text, vocab, cache=cache)
    if kind in ("grammar", "ebnf"):
        if "::=" in text:
            return compile_gbnf(text, vocab, cache=cache)
        return compile_lark(text, vocab, cache=cache)
    if kind == "choice":
        choices = json.loads(text)
        if not isinstance(choices, list) or not choices or \
                not all(isinstance(c, str) for c in choices):
            raise ValueError("choice: the text must be a non-empty JSON list of strings")
        spec = {"type": "structural_tag", "format": {"type": "or", "elements": [
            {"type": "const_string", "value": c} for c in choices]}}
        return compile_structural_tag(spec, vocab, cache=cache)
    return compile_structural_tag(text, vocab, cache=cache)


def vocabulary_of(tokenizer: Any, vocab_size: int | None = None) -> Vocabulary:
    """`tokenizer` (a `Vocabulary`, a `tokenizers.Tokenizer`, a transformers tokenizer or a
    tokenizer.json path) as a `Vocabulary` of `vocab_size` ids (the model's logits, which may
    be more than the tokenizer's ids; default: the tokenizer's)."""
    if isinstance(tokenizer, Vocabulary):
        vocab = tokenizer
        if vocab_size is not None and vocab_size != vocab.size:
            raise ValueError(f"the vocabulary has {vocab.size} ids, the model {vocab_size}")
        return vocab
    return Vocabulary.from_huggingface(tokenizer, size=vocab_size)
