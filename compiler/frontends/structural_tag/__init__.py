"""Structural tags: XGrammar's JSON format for outputs that mix free text, reasoning and tool
calls, as vLLM and SGLang pass it (`{"type": "structural_tag", "format": {...}}`, or the older
`{"structures": [{"begin", "schema", "end"}], "triggers": [...]}`), to grammar IR.

`specs/structural_tags.md` states the language of every format; `translate` builds it.
"""
from __future__ import annotations

from typing import Any

from ...support.deadline import compile_deadline
from ...support.limits import DEFAULT_LIMITS, Limits
from ..json_schema.loading import check_scalar_values, parse_schema_text
from ..parsed import Parsed
from .spec import Obj, invalid
from .translate import Translator

__all__ = ["load_structural_tag", "structural_tag_to_grammar"]


def load_structural_tag(spec: Any, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """The spec as JSON data: a dict as is, a JSON string (or bytes) parsed within `limits`;
    `GrammarError` for a string that is not Unicode scalar values (a lone surrogate)."""
    if isinstance(spec, (str, bytes)):
        spec = parse_schema_text(spec, limits)
    if not isinstance(spec, dict):
        raise invalid("", f"a structural tag must be a JSON object, got {type(spec).__name__}")
    check_scalar_values(spec, limits)
    return spec


def structural_tag_to_grammar(spec: Any, limits: Limits = DEFAULT_LIMITS,
                              controls: frozenset[str] = frozenset()) -> Parsed:
    """The grammar of the texts `spec` describes, with the embedded schemas' diagnostics (their
    pointers inside the spec); the markers of XML argument styles that are among `controls`
    (the vocabulary's control-token texts) are matched as those tokens."""
    with compile_deadline(limits):
        top = Obj(load_structural_tag(spec, limits), "", "a structural tag")
        translator = Translator(limits, controls)
        if "structures" in top.data or "triggers" in top.data:
            root = translator.format(Obj(_legacy(top), "", "a structural tag"))
        else:
            kind = top.raw("type", "structural_tag")
            if kind != "structural_tag":
                raise invalid("/type", f"expected type 'structural_tag', got {kind!r}")
            root = translator.format(top.object("format"))
        top.done()
        return translator.grammar(root)


def _legacy(top: Obj) -> dict[str, Any]:
    """The older form as the `triggered_tags` format it means: free text, and wherever a
    trigger occurs, one of the structures that begin with it."""
    top.raw("type", "structural_tag")
    triggers = top.strings("triggers")
    tags = []
    for item in top.objects("structures", "a structure"):
        tags.append({"type": "tag", "begin": item.string("begin"), "end": item.string("end"),
                     "content": {"type": "json_schema", "json_schema": item.raw("schema")}})
        item.done()
    return {"type": "triggered_tags", "triggers": list(triggers), "tags": tags}
