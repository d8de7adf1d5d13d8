"""Tool calls in each model family's own format: OpenAI-style tools → one structural tag.

A `ToolFormat` is the family's call template (`$name`, `$index` and `$args` in the text its
chat template renders around a call), the section that wraps the calls where there is one, the
separator between calls and the end of its reasoning block. `tool_calls_spec` builds the
structural tag (`specs/structural_tags.md`) for a request: free text or calls (`tool_choice`
"auto"), at least one call ("required"), text only ("none"), or one named function; one call
or several (`parallel_tool_calls`); a reasoning block first (`reasoning`); a JSON answer
instead of free text (`response_format`). Marker strings that the vocabulary has as control
tokens (`<|tool_calls_section_begin|>`, `[TOOL_CALLS]`, DeepSeek's `<｜tool▁call▁begin｜>`)
become token references, since a model emits them as single tokens that never spell text;
markers that are text in the vocabulary (Qwen's non-special `<tool_call>`) stay text.
`specs/structural_tags.md` documents every format with an example.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..support.errors import GrammarError
from .json_schema.document import join

__all__ = ["FORMATS", "ToolFormat", "tool_calls_spec"]


@dataclass(frozen=True)
class ToolFormat:
    """One family's tool-call layout."""

    call: str
    """One call, with `$name`, `$args` (the arguments as JSON) and optionally `$index`."""
    trigger: str = ""
    """What opens a call in free text (the free text cannot contain it otherwise); without a
    section, a prefix of `call` before `$name`."""
    excludes: tuple[str, ...] = ()
    """Markers the free text cannot contain either (a call's closing marker)."""
    style: str = "json"
    """How `$args` is written: JSON, or an XML style of `structural_tag.xml_params`."""
    reasoning_excludes: tuple[str, ...] = ()
    """Markers the reasoning text cannot contain (besides its end)."""
    section: tuple[str, str] | None = None
    """Text around all calls of a message, when the family wraps them."""
    separator: str = ""
    """Between two calls inside the section (without a section, calls lie in free text)."""
    reasoning: tuple[str, str, str] | None = None
    """The reasoning block: (an opening the model may write, the end, what follows the end);
    its text cannot contain the end. None: the family has none."""
    opens: bool = False
    """Whether the model writes the reasoning block's opening (else the prompt may have)."""
    without_reasoning: str = ""
    """What opens the output when `reasoning` is off (MiniMax closes an empty block)."""
    section_prefix: str = ""
    """Text before the section when no free text precedes it ("required", a named call)."""
    think_markers: tuple[str, ...] = ("<think>", "</think>")
    """The reasoning markers the free text cannot contain."""


_GLM_ARGS = ("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>")
_M3 = "]<]minimax[>["
"""MiniMax-M3's namespace, before each of its markers."""

FORMATS: dict[str, ToolFormat] = {
    "qwen_3": ToolFormat(
        call='<tool_call>\n{"name": "$name", "arguments": $args}\n</tool_call>',
        trigger="<tool_call>", excludes=("</tool_call>",), reasoning=("<think>\n", "</think>", "\n\n")),
    "qwen_3_5": ToolFormat(
        call="<tool_call>\n<function=$name>\n$args\n</function>\n</tool_call>",
        trigger="<tool_call>\n<function=", excludes=("</tool_call>",), style="qwen_xml",
        reasoning=("<think>\n", "</think>", "\n\n")),
    "glm_4_7": ToolFormat(
        call="<tool_call>$name$args</tool_call>", trigger="<tool_call>",
        excludes=("</tool_call>", *_GLM_ARGS), style="glm_xml", reasoning=("", "</think>", ""),
        reasoning_excludes=("<think>", "<tool_call>", "</tool_call>", *_GLM_ARGS)),
    "exaone": ToolFormat(
        call='<tool_call>{"name": "$name", "arguments": $args}</tool_call>',
        trigger="<tool_call>", excludes=("</tool_call>",), reasoning=("", "</think>", "\n\n")),
    "llama": ToolFormat(call='{"name": "$name", "parameters": $args}', trigger='{"name": '),
    "mistral": ToolFormat(call='{"name": "$name", "arguments": $args}',
                          section=("[TOOL_CALLS][", "]"), separator=", "),
    "deepseek_r1": ToolFormat(
        call="<｜tool▁call▁begin｜>function<｜tool▁sep｜>$name\n```json\n$args\n```"
             "<｜tool▁call▁end｜>",
        section=("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"), separator="\n",
        reasoning=("", "</think>", "")),
    "deepseek_v3_1": ToolFormat(
        call="<｜tool▁call▁begin｜>$name<｜tool▁sep｜>$args<｜tool▁call▁end｜>",
        section=("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"), reasoning=("", "</think>", "")),
    "kimi": ToolFormat(
        call="<|tool_call_begin|>functions.$name:$index<|tool_call_argument_begin|>$args"
             "<|tool_call_end|>",
        section=("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"),
        excludes=("<|tool_call_begin|>",), reasoning=("", "</think>", "")),
    "deepseek_v3_2": ToolFormat(
        call='<｜DSML｜invoke name="$name">\n$args</｜DSML｜invoke>\n', style="deepseek_xml",
        section=("<｜DSML｜function_calls>\n", "</｜DSML｜function_calls>"),
        trigger="<｜DSML｜function_calls>", section_prefix="\n\n",
        reasoning=("", "</think>", "")),
    "deepseek_v4": ToolFormat(
        call='<｜DSML｜invoke name="$name">\n$args</｜DSML｜invoke>\n', style="deepseek_xml",
        section=("<｜DSML｜tool_calls>\n", "</｜DSML｜tool_calls>"),
        trigger="<｜DSML｜tool_calls>", section_prefix="\n\n", reasoning=("", "</think>", "")),
    "deepseek_v4_1": ToolFormat(
        call='<｜DSML｜ invoke name="$name">\n$args</｜DSML｜ invoke>\n',
        style="deepseek_v4_1_xml", section=("<｜DSML｜ calls>\n", "</｜DSML｜ calls>"),
        trigger="<｜DSML｜ calls>", section_prefix="\n\n", reasoning=("", "</think>", "")),
    "mimo": ToolFormat(
        call="<tool_call><function=$name>$args</function></tool_call>", trigger="<tool_call>",
        excludes=("</tool_call>", "<function="), style="qwen_xml",
        reasoning=("<think>", "</think>", ""), opens=True,
        reasoning_excludes=("<think>", "<tool_call>", "</tool_call>", "<function=")),
    "minimax": ToolFormat(
        call='<invoke name="$name">\n$args</invoke>\n', style="minimax_xml",
        section=("<minimax:tool_call>\n", "</minimax:tool_call>"),
        trigger="<minimax:tool_call>", section_prefix="\n",
        reasoning=("", "</think>", "\n\n"), without_reasoning="\n</think>\n\n"),
    "minimax_m3": ToolFormat(
        call=f'{_M3}<invoke name="$name">$args{_M3}</invoke>\n', style="minimax_m3_xml",
        section=(f"{_M3}<tool_call>\n", f"{_M3}</tool_call>"), trigger=f"{_M3}<tool_call>",
        excludes=(f"{_M3}</tool_call>", f"{_M3}<invoke", f"{_M3}</invoke>"),
        reasoning=("", "</mm:think>", ""), think_markers=("<mm:think>", "</mm:think>"),
        reasoning_excludes=(f"{_M3}<tool_call>", "<mm:think>", f"{_M3}</tool_call>",
                            f"{_M3}<invoke", f"{_M3}</invoke>")),
    "cohere": ToolFormat(
        call='<cofl:tool_call id="$index" name="$name">$args</cofl:tool_call>',
        style="cohere_xml", section=("<cofl:tool_calls>", "</cofl:tool_calls>"),
        reasoning=("", "<|END_THINKING|>", ""),
        think_markers=("<|START_THINKING|>", "<|END_THINKING|>")),
}

HARMONY = "harmony"
"""gpt-oss's channels (`_harmony`): not a call template, a list of channel messages."""

KIMI_K3 = "kimi_k3"
"""Kimi-K3's blocks (`_kimi_k3`): reasoning, response and tools blocks, then the message end."""

FORMATS["qwen_3_coder"] = FORMATS["qwen_3_5"]  # XGrammar's two names of one format
FORMATS[KIMI_K3] = ToolFormat(
    call='<|open|>call tool="$name" index="$index"<|sep|>$args<|close|>call<|sep|>',
    style="kimi_k3_xml", section=("<|open|>tools<|sep|>", "<|close|>tools<|sep|>"),
    reasoning=("", "<|close|>think<|sep|>", "<|open|>response<|sep|>"),
    reasoning_excludes=("<|open|>", "<|close|>"), think_markers=("<|open|>", "<|close|>"))

_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
_PIECES = re.compile(r"\$(name|args|index)")


def _error(pointer: str, message: str) -> GrammarError:
    return GrammarError(message, pointer=pointer, code="invalid-tools")


class _Builder:
    """Structural-tag pieces, with control-token texts turned into token references."""

    def __init__(self, controls: frozenset[str], options: dict[str, Any]) -> None:
        self.controls = controls
        self.split = re.compile("|".join(map(re.escape, sorted(controls, key=len, reverse=True)))
                                ) if controls else None
        self.options = options
        self.schemas: list[dict[str, Any]] = []  # each call's json_schema item, in order

    def pieces(self, text: str) -> list[dict[str, Any]]:
        """`text` as const_string and token formats."""
        out: list[dict[str, Any]] = []
        at = 0
        for m in self.split.finditer(text) if self.split else ():
            if m.start() > at:
                out.append({"type": "const_string", "value": text[at:m.start()]})
            out.append({"type": "token", "token": m.group()})
            at = m.end()
        if at < len(text) or not out:
            out.append({"type": "const_string", "value": text[at:]})
        return out

    def literal(self, text: str) -> dict[str, Any]:
        parts = self.pieces(text)
        return parts[0] if len(parts) == 1 else {"type": "sequence", "elements": parts}

    def tag(self, begin: str, content: list[dict[str, Any]], end: str) -> dict[str, Any]:
        """A tag `begin` + content + `end`, markers as tokens: a token or text begins it and
        ends it, the rest of `begin` and `end` joins the content."""
        head, tail = self.pieces(begin), self.pieces(end)
        first, last = head[0], tail[-1]
        inner = [*head[1:], *content, *tail[:-1]]
        body = inner[0] if len(inner) == 1 else {"type": "sequence", "elements": inner}
        return {"type": "tag", "begin": _tag_end(first), "content": body, "end": _tag_end(last)}

    def call(self, fmt: ToolFormat, name: str, schema: Any) -> dict[str, Any]:
        """One call of function `name`: a tag whose begin is the template up to the first
        piece that varies after the name."""
        template = fmt.call.replace("$name", name)
        parts = _PIECES.split(template)
        begin, rest, end = parts[0], parts[1:-1], parts[-1]
        content: list[dict[str, Any]] = []
        for i, piece in enumerate(rest):
            if i % 2:
                if piece:
                    content.extend(self.pieces(piece))
            elif piece == "index":
                content.append({"type": "regex", "pattern": "[0-9]+"})
            else:
                item = {"type": "json_schema", "json_schema": schema, **self.options}
                if fmt.style != "json":
                    item["style"] = fmt.style
                self.schemas.append(item)
                content.append(item)
        return self.tag(begin, content, end)


def _tag_end(piece: dict[str, Any]) -> Any:
    return piece["value"] if piece["type"] == "const_string" else piece


def _tools(tools: Any) -> list[tuple[str, Any, str]]:
    """(name, parameters schema, pointer) of each OpenAI-style function tool."""
    if not isinstance(tools, list):
        raise _error("/tools", "tools must be a list of {'type': 'function', 'function': {...}}")
    out, seen = [], set()
    for i, tool in enumerate(tools):
        where = f"/tools/{i}"
        if not isinstance(tool, dict) or tool.get("type", "function") != "function" \
                or not isinstance(tool.get("function"), dict):
            raise _error(where, "expected {'type': 'function', 'function': {'name': ..., "
                                "'parameters': {...}}}")
        function = tool["function"]
        name = function.get("name")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise _error(join(where, "function", "name"),
                         f"a function name is 1 to 128 of A-Z a-z 0-9 _ . : -, got {name!r}")
        if name in seen:
            raise _error(join(where, "function", "name"), f"function {name!r} is listed twice")
        seen.add(name)
        schema = function.get("parameters", True)
        if not isinstance(schema, (dict, bool)):
            raise _error(join(where, "function", "parameters"),
                         "parameters must be a JSON Schema object or a boolean")
        out.append((name, schema, join(where, "function", "parameters")))
    return out


def tool_calls_spec(tools: Any, controls: frozenset[str], *, format: str,
                    tool_choice: Any = "auto", parallel_tool_calls: bool = True,
                    reasoning: bool = False, response_format: Any = None,
                    max_whitespace: int | None = None, stops: frozenset[str] = frozenset(),
                    max_reasoning_tokens: int | None = None
                    ) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The structural tag of a tool-calling request in `format`, and where each tool's
    schema lies in it (a prefix of the spec's pointers → the request's pointer). `controls`
    are the vocabulary's control-token texts, `stops` its stop tokens' texts.
    `max_reasoning_tokens` bounds the tokens that begin inside the reasoning text (its
    `any_text`'s `max_tokens`; with `harmony`, the output then has at most one analysis
    message)."""
    fmt = FORMATS.get(format, ToolFormat(call="") if format == HARMONY else None)
    if fmt is None:
        known = ", ".join(sorted([*FORMATS, HARMONY]))
        raise _error("/format", f"unknown tool-call format {format!r}; expected one of {known}")
    listed = _tools(tools)
    if isinstance(tool_choice, dict):
        name = (tool_choice.get("function") or {}).get("name")
        if tool_choice.get("type") != "function" or name not in {n for n, _, _ in listed}:
            raise _error("/tool_choice", f"tool_choice names no listed function: "
                                         f"{tool_choice!r}")
        listed, choice = [t for t in listed if t[0] == name], "named"
    elif tool_choice in ("auto", "required", "none"):
        choice = tool_choice
    else:
        raise _error("/tool_choice", "tool_choice is 'auto', 'required', 'none' or "
                                     f"{{'type': 'function', 'function': {{'name': ...}}}}, "
                                     f"got {tool_choice!r}")
    if choice != "none" and not listed:
        if choice != "auto":
            raise _error("/tools", f"tool_choice {tool_choice!r} needs at least one tool")
        choice = "none"  # "auto" with no tool: text only
    if reasoning and fmt.reasoning is None and format != HARMONY:
        raise _error("/reasoning", f"the {format!r} format has no reasoning block")
    if max_reasoning_tokens is not None and (
            type(max_reasoning_tokens) is not int or max_reasoning_tokens < 0 or not reasoning):
        raise _error("/max_reasoning_tokens", "max_reasoning_tokens is an int >= 0 and needs "
                                              f"reasoning=True, got {max_reasoning_tokens!r}")
    bound = {} if max_reasoning_tokens is None else {"max_tokens": max_reasoning_tokens}
    options = {} if max_whitespace is None else {"max_whitespace_cnt": max_whitespace}
    b = _Builder(controls, options)
    if format == HARMONY:
        body = _harmony(b, listed, choice, reasoning, response_format, stops, bound)
        found = _pointers(body)
        return {"type": "structural_tag", "format": body}, [
            (found[id(item)], where) for item, (_, _, where) in zip(b.schemas, listed)
            if id(item) in found]
    calls = [b.call(fmt, name, schema) for name, schema, _ in listed]
    excludes = [t for t in (*fmt.think_markers, *fmt.excludes) if t not in controls]
    answer: dict[str, Any] = ({"type": "json_schema", "json_schema": response_format, **options}
                              if response_format is not None
                              else {"type": "any_text", "excludes": excludes})
    if format == KIMI_K3:
        body = _kimi_k3(b, fmt, calls, choice, parallel_tool_calls, excludes, answer)
    else:
        body = answer if choice == "none" else _calls(
            b, fmt, calls, choice, parallel_tool_calls, excludes, response_format is not None)
        if choice == "auto" and response_format is not None:
            body = {"type": "or", "elements": [answer, body]}
    if not reasoning and fmt.without_reasoning:
        body = {"type": "sequence", "elements": [b.literal(fmt.without_reasoning), body]}
    if reasoning:
        opening, closing, after = fmt.reasoning  # type: ignore[misc]
        think = [] if not opening else [b.literal(opening)] if fmt.opens else [
            {"type": "optional", "content": b.literal(opening)}]
        then = [b.literal(after)] if after else []
        text = {"type": "any_text",
                "excludes": [t for t in fmt.reasoning_excludes if t not in controls], **bound}
        body = {"type": "sequence", "elements": [
            *think, b.tag("", [text], closing), *then, body]}
    found = _pointers(body)
    mapping = [(found[id(item)], where) for item, (_, _, where) in zip(b.schemas, listed)
               if id(item) in found]  # with tool_choice "none" no call is in the body
    return {"type": "structural_tag", "format": body}, mapping


def _harmony(b: _Builder, listed: list[tuple[str, Any, str]], choice: str, reasoning: bool,
             response_format: Any, stops: frozenset[str], bound: dict[str, int]
             ) -> dict[str, Any]:
    """gpt-oss's output: analysis messages (when `reasoning`), each
    `<|channel|>analysis<|message|>` … `<|end|><|start|>assistant`, then one call or the final
    answer. A call of function N is `<|channel|>commentary to=functions.N<|constrain|>json
    <|message|>` (or the two other header orders its template writes), the arguments and
    `<|call|>`; the final answer `<|channel|>final<|message|>` … `<|return|>`. A closing
    marker that is a stop token of the vocabulary is left to the matcher, which allows the
    stop tokens where the output is complete. `parallel_tool_calls` does not apply: a message
    holds one call and the output ends after it. With a reasoning `bound` (`max_tokens`), at
    most one analysis message, its text bounded."""
    def close(marker: str) -> list[dict[str, Any]]:
        return [] if marker in stops else [b.literal(marker)]

    last: list[dict[str, Any]] = []
    for name, schema, _ in listed if choice != "none" else []:
        item = {"type": "json_schema", "json_schema": schema, **b.options}
        b.schemas.append(item)
        heads = [f"<|channel|>commentary to=functions.{name}<|constrain|>json<|message|>",
                 f" to=functions.{name}<|channel|>commentary <|constrain|>json<|message|>",
                 f" to=functions.{name}<|channel|>commentary json<|message|>"]
        last.append({"type": "sequence", "elements": [
            {"type": "or", "elements": [b.literal(h) for h in heads]}, item,
            *close("<|call|>")]})
    if choice in ("auto", "none"):
        answer = ({"type": "json_schema", "json_schema": response_format, **b.options}
                  if response_format is not None
                  else {"type": "any_text", "excludes": sorted(stops | {"<|return|>"})})
        last.append({"type": "sequence", "elements": [
            b.literal("<|channel|>final<|message|>"), answer, *close("<|return|>")]})
    body: dict[str, Any] = last[0] if len(last) == 1 else {"type": "or", "elements": last}
    if not reasoning:
        return body
    analysis = {"type": "sequence", "elements": [
        b.literal("<|channel|>analysis<|message|>"),
        {"type": "any_text", "excludes": ["<|end|>"], **bound},
        b.literal("<|end|><|start|>assistant")]}
    many = "optional" if bound else "star"
    return {"type": "sequence", "elements": [{"type": many, "content": analysis}, body]}


def _calls(b: _Builder, fmt: ToolFormat, calls: list[dict[str, Any]], choice: str,
           parallel: bool, excludes: list[str], answer_instead: bool) -> dict[str, Any]:
    """The calls part: free text and calls ("auto"), at least one call ("required", or "auto"
    when a JSON answer is the alternative), or one call of the named function. Without a
    section, calls lie in free text as the model writes them; with one, the section holds one
    call or (parallel) several, separated."""
    if fmt.section is not None:
        section = _section(b, fmt, calls, choice, parallel)
        if choice == "auto" and not answer_instead:
            return _triggered([section], excludes, False, True, fmt.trigger or fmt.section[0])
        if fmt.section_prefix:
            return {"type": "sequence", "elements": [b.literal(fmt.section_prefix), section]}
        return section
    one = choice == "named" or not parallel
    if choice == "named":
        return calls[0]
    return _triggered(calls, excludes, choice == "required" or answer_instead, one,
                      fmt.trigger)


def _section(b: _Builder, fmt: ToolFormat, calls: list[dict[str, Any]], choice: str,
             parallel: bool) -> dict[str, Any]:
    """The section holding one call or (parallel) several, separated."""
    listed = {"type": "tags_with_separator", "tags": calls, "separator": fmt.separator,
              "at_least_one": True, "stop_after_first": choice == "named" or not parallel}
    return b.tag(fmt.section[0], [listed], fmt.section[1])  # type: ignore[index]


def _kimi_k3(b: _Builder, fmt: ToolFormat, calls: list[dict[str, Any]], choice: str,
             parallel: bool, excludes: list[str], answer: dict[str, Any]) -> dict[str, Any]:
    """Kimi-K3's output after its reasoning block: the response block's text (the prompt
    opened it when there is no reasoning), its end, the tools block (optional with "auto"),
    and the message end. With a JSON answer and "auto": the answer and no tools block, or text
    and the tools block."""
    text = {"type": "any_text", "excludes": excludes}
    response_end, message_end = (b.literal("<|close|>response<|sep|>"),
                                 b.literal("<|close|>message<|sep|>"))
    if choice == "none":
        return {"type": "sequence", "elements": [answer, response_end, message_end]}
    section = _section(b, fmt, calls, choice, parallel)
    if choice == "auto" and answer["type"] == "json_schema":
        return {"type": "or", "elements": [
            {"type": "sequence", "elements": [answer, response_end, message_end]},
            {"type": "sequence", "elements": [text, response_end, section, message_end]}]}
    tools = {"type": "optional", "content": section} if choice == "auto" else section
    return {"type": "sequence", "elements": [text, response_end, tools, message_end]}


def _triggered(tags: list[dict[str, Any]], excludes: list[str], at_least_one: bool,
               stop_after_first: bool, trigger: str) -> dict[str, Any]:
    """Free text in which `trigger` starts one of the tags; where the tags begin with a control
    token (the trigger's text is one in the vocabulary), free tokens in which it does."""
    flags = {"at_least_one": at_least_one, "stop_after_first": stop_after_first}
    if all(isinstance(t["begin"], dict) for t in tags):
        tokens = sorted({t["begin"]["token"] for t in tags})
        return {"type": "token_triggered_tags", "trigger_tokens": tokens, "tags": tags,
                **flags}
    return {"type": "triggered_tags", "triggers": [trigger], "tags": tags,
            "excludes": excludes, **flags}


def _pointers(body: dict[str, Any]) -> dict[int, str]:
    """The spec pointer (under /format) of the schema of every json_schema item, by the
    item's identity."""
    found: dict[int, str] = {}
    stack: list[tuple[Any, str]] = [(body, "/format")]
    while stack:
        node, pointer = stack.pop()
        if isinstance(node, dict):
            if node.get("type") == "json_schema":
                found[id(node)] = join(pointer, "json_schema")
                continue  # a schema holds no formats
            stack.extend((v, join(pointer, k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, join(pointer, i)) for i, v in enumerate(node))
    return found
