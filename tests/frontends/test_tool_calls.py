"""compile_tool_calls: each family's calls, tool_choice, parallel calls, reasoning, a JSON
answer, control-token markers, and errors that name the tool."""
from __future__ import annotations

import json

import numpy as np
import pytest

from grammask.compiler import GrammarError, compile_tool_calls
from grammask.compiler.frontends.tool_calls import FORMATS
from grammask.runtime import Matcher, Vocabulary
from tests.support.m3_reference import render as m3_render
from tests.support.xml_reference import render

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TIME = {"type": "object", "properties": {"zone": {"enum": ["utc", "local"]}},
        "required": ["zone"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}},
         {"type": "function", "function": {"name": "get_time", "parameters": TIME}}]
QWEN = Vocabulary.default(eos_token_ids=[151643, 151645])

MARKERS = ["[TOOL_CALLS]", "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>",
           "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>",
           "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
           "<|tool_call_argument_begin|>", "<|tool_call_end|>"]


def _vocabulary() -> Vocabulary:
    """Bytes, a few pieces, the families' markers as control tokens, EOS."""
    tokens: list[bytes | None] = [bytes([b]) for b in range(256)]
    tokens += [b'{"', b'": ', b"get_", b"weather", b"</think>", b"```json\n"]
    first = len(tokens)
    tokens += [m.encode() for m in MARKERS]
    tokens.append(b"</s>")
    return Vocabulary.from_token_bytes(tokens, len(tokens) - 1,
                                       special_token_ids=range(first, len(tokens)))


SMALL = _vocabulary()


def _ids(vocab: Vocabulary, text: str) -> list[int]:
    """`text` as tokens, each control-token marker as its one token."""
    ids: list[int] = []
    controls = {t.decode(): i for i, t in vocab.special_token_text}
    while text:
        marker = next((m for m in controls if text.startswith(m)), None)
        if marker is not None:
            ids.append(controls[marker])
            text = text[len(marker):]
            continue
        cut = min([text.find(m) for m in controls if m in text] or [len(text)])
        ids.extend(vocab.encode(text[:cut]))
        text = text[cut:]
    return ids


def _accepts(compiled, vocab: Vocabulary, text: str) -> bool:  # type: ignore[no-untyped-def]
    m = Matcher(compiled)
    return all(m.accept_token(t) for t in _ids(vocab, text)) and m.can_terminate()


def _call(fmt: str, name: str, args: dict) -> str:
    style = FORMATS[fmt].style
    if style == "qwen_xml":
        raw = {k: v if isinstance(v, str) else json.dumps(v) for k, v in args.items()}
        rendered = "\n".join(f"<parameter={k}>\n{v}\n</parameter>" for k, v in raw.items())
    elif style == "minimax_m3_xml":
        rendered = m3_render(args)
    elif style != "json":
        rendered = render(style, args)
    else:
        rendered = json.dumps(args)
    return FORMATS[fmt].call.replace("$name", name).replace("$index", "0").replace(
        "$args", rendered)


def _body(fmt: str, text: str = "", calls: tuple[str, ...] = ()) -> str:
    """What follows the reasoning block: text, then the calls as the family writes them."""
    f = FORMATS[fmt]
    if fmt == "kimi_k3":
        tools = f.section[0] + "".join(calls) + f.section[1] if calls else ""  # type: ignore
        return f"{text}<|close|>response<|sep|>{tools}<|close|>message<|sep|>"
    if not calls:
        return text
    if f.section is None:
        return text + "\n".join(calls)
    return text + f.section_prefix + f.section[0] + f.separator.join(calls) + f.section[1]


def _message(fmt: str, calls: list[str]) -> str:
    """A whole output without reasoning: the calls."""
    return FORMATS[fmt].without_reasoning + _body(fmt, "", tuple(calls))


def _text(fmt: str, text: str) -> str:
    """A whole output without reasoning: text only."""
    return FORMATS[fmt].without_reasoning + _body(fmt, text)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_calls_in_each_format(fmt: str) -> None:
    vocab = QWEN if fmt.startswith("qwen") else SMALL
    auto = compile_tool_calls(TOOLS, vocab, format=fmt)
    weather = _call(fmt, "get_weather", {"city": "Oslo"})
    time = _call(fmt, "get_time", {"zone": "utc"})
    assert _accepts(auto, vocab, _text(fmt, "Just text."))
    assert _accepts(auto, vocab, _message(fmt, [weather]))
    assert _accepts(auto, vocab, _message(fmt, [weather, time]))
    assert not _accepts(auto, vocab, _message(fmt, [_call(fmt, "get_weather", {"town": "x"})]))
    assert not _accepts(auto, vocab, _message(fmt, [_call(fmt, "get_news", {})]))
    if fmt != "kimi_k3":  # its tools block follows the response block, not free text
        opening = FORMATS[fmt].trigger or FORMATS[fmt].section[0]  # type: ignore[index]
        assert not _accepts(auto, vocab, _text(fmt, f"text {opening}! more")), \
            "a trigger must open a call"
    required = compile_tool_calls(TOOLS, vocab, format=fmt, tool_choice="required")
    assert not _accepts(required, vocab, _text(fmt, "Just text."))
    assert _accepts(required, vocab, _message(fmt, [time]))
    single = compile_tool_calls(TOOLS, vocab, format=fmt, tool_choice="required",
                                parallel_tool_calls=False)
    assert _accepts(single, vocab, _message(fmt, [time]))
    assert not _accepts(single, vocab, _message(fmt, [weather, time]))
    named = compile_tool_calls(TOOLS, vocab, format=fmt, tool_choice={
        "type": "function", "function": {"name": "get_time"}})
    assert _accepts(named, vocab, _message(fmt, [time]))
    assert not _accepts(named, vocab, _message(fmt, [weather]))
    none = compile_tool_calls(TOOLS, vocab, format=fmt, tool_choice="none")
    assert _accepts(none, vocab, _text(fmt, "Just text."))
    marker = FORMATS[fmt].think_markers[0]
    assert not _accepts(none, vocab, _text(fmt, f"a {marker} b"))
    section = FORMATS[fmt].section
    if section is not None and any(section[0].startswith(m) for m in MARKERS):
        assert not _accepts(none, vocab, _message(fmt, [weather]))  # control tokens


@pytest.mark.parametrize("fmt", [f for f in sorted(FORMATS) if FORMATS[f].reasoning])
def test_reasoning_comes_first(fmt: str) -> None:
    vocab = QWEN if fmt.startswith("qwen") else SMALL
    compiled = compile_tool_calls(TOOLS, vocab, format=fmt, reasoning=True)
    opening, end, after = FORMATS[fmt].reasoning  # type: ignore[misc]
    call = _body(fmt, "", (_call(fmt, "get_time", {"zone": "local"}),))
    opened = opening if FORMATS[fmt].opens else ""  # the model writes the opening itself
    assert _accepts(compiled, vocab, f"{opened}Let me think.{end}{after}{call}")
    assert FORMATS[fmt].opens != _accepts(compiled, vocab, f"Let me think.{end}{after}{call}")
    assert _accepts(compiled, vocab, f"{opening}Hmm.{end}{after}{_body(fmt, 'Answer.')}")
    assert not _accepts(compiled, vocab, call)
    assert not _accepts(compiled, vocab, f"a{end}b{end}{after}c") or FORMATS[fmt].section
    # (a section opened by a control token makes the answer's text token-level: its text
    # is not checked for the reasoning markers)


def test_qwen_added_tokens_and_response_format() -> None:
    compiled = compile_tool_calls(TOOLS, QWEN, format="qwen_3", reasoning=True,
                                  response_format={"type": "object", "properties": {
                                      "answer": {"type": "integer"}}, "required": ["answer"]})
    m = Matcher(compiled)
    ids = [151667, *QWEN.encode("\nok"), 151668, *QWEN.encode("\n\n"), 151657,
           *QWEN.encode('\n{"name": "get_time", "arguments": {"zone": "utc"}}\n'), 151658]
    assert all(m.accept_token(t) for t in ids) and m.can_terminate()
    assert _accepts(compiled, QWEN, 'x</think>\n\n{"answer": 42}')
    assert not _accepts(compiled, QWEN, "x</think>\n\nThe answer is 42.")


def test_128_tools_compile() -> None:
    tools = [{"type": "function", "function": {"name": f"tool_{i}", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["q"]}}} for i in range(128)]
    compiled = compile_tool_calls(tools, QWEN, format="qwen_3")
    assert _accepts(compiled, QWEN, _call("qwen_3", "tool_77", {"q": "x", "n": 3}))
    assert not _accepts(compiled, QWEN, _call("qwen_3", "tool_128", {"q": "x"}))


HARMONY_MARKERS = ["<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>",
                   "<|return|>", "<|call|>"]


def _harmony_vocabulary(stops: list[str]) -> Vocabulary:
    tokens: list[bytes | None] = [bytes([b]) for b in range(256)]
    first = len(tokens)
    tokens += [m.encode() for m in HARMONY_MARKERS]
    ids = {m: first + k for k, m in enumerate(HARMONY_MARKERS)}
    return Vocabulary.from_token_bytes(tokens, [ids[s] for s in stops],
                                       special_token_ids=range(first, len(tokens)))


@pytest.mark.parametrize("stops", [["<|return|>", "<|call|>"], ["<|return|>"]])
def test_harmony(stops: list[str]) -> None:
    vocab = _harmony_vocabulary(stops)
    compiled = compile_tool_calls(TOOLS, vocab, format="harmony", reasoning=True)
    call = ('<|channel|>commentary to=functions.get_time<|constrain|>json<|message|>'
            '{"zone": "utc"}<|call|>')
    analysis = "<|channel|>analysis<|message|>Need the time.<|end|><|start|>assistant"
    final = "<|channel|>final<|message|>It is noon.<|return|>"

    def accepts(text: str) -> bool:
        """The whole text is accepted, a stop token only as its last token."""
        m = Matcher(compiled)
        for t in _ids(vocab, text):
            if m.is_terminated() or not m.accept_token(t):
                return False
        return m.is_terminated() or m.can_terminate()

    assert accepts(call) and accepts(final) and accepts(analysis + call)
    assert accepts(analysis + analysis + final)
    assert accepts(' to=functions.get_weather<|channel|>commentary json<|message|>'
                   '{"city": "Rome"}<|call|>')
    assert not accepts('<|channel|>commentary to=functions.get_news<|constrain|>json'
                       '<|message|>{}<|call|>')
    assert not accepts(call[:-len("<|call|>")] + "<|end|>")
    assert not accepts(final + "<|start|>assistant" + final)
    required = compile_tool_calls(TOOLS, vocab, format="harmony", tool_choice="required")
    assert not _accepts(required, vocab, final)


@pytest.mark.parametrize("kwargs,pointer,message", [
    (dict(format="nope"), "/format", "unknown tool-call format 'nope'"),
    (dict(format="minimax_m1"), "/format", "unknown tool-call format"),
    (dict(format="llama", reasoning=True), "/reasoning", "has no reasoning block"),
    (dict(format="qwen_3", tool_choice="sometimes"), "/tool_choice", "tool_choice is"),
    (dict(format="qwen_3", tool_choice={"type": "function", "function": {"name": "x"}}),
     "/tool_choice", "names no listed function"),
    (dict(format="qwen_3", tools=[{"type": "function", "function": {"name": "a b"}}]),
     "/tools/0/function/name", "a function name is"),
    (dict(format="qwen_3", tools=[*TOOLS, TOOLS[0]]), "/tools/2/function/name",
     "listed twice"),
    (dict(format="qwen_3", tools=[TOOLS[0], {"type": "function", "function": {
        "name": "f", "parameters": {"type": "object", "maxLength": -1}}}]),
     "/tools/1/function/parameters/maxLength", ""),
    (dict(format="qwen_3", tools=[], tool_choice="required"), "/tools", "at least one tool"),
])
def test_errors_name_the_request(kwargs: dict, pointer: str, message: str) -> None:
    tools = kwargs.pop("tools", TOOLS)
    with pytest.raises(GrammarError) as info:
        compile_tool_calls(tools, QWEN, **kwargs)
    assert info.value.pointer == pointer, str(info.value)
    assert message in str(info.value)


def _allowed(m: Matcher) -> list[int]:
    from grammask.runtime import allocate_token_bitmask
    bm = allocate_token_bitmask(1, m.vocab_size)
    m.fill_next_token_bitmask(bm)
    bits = np.unpackbits(bm[0].view(np.uint8), bitorder="little")[:m.vocab_size]
    return np.flatnonzero(bits).tolist()


@pytest.mark.parametrize("bound", [0, 3])
def test_reasoning_tokens_are_bounded(bound: int) -> None:
    compiled = compile_tool_calls(TOOLS, SMALL, format="qwen_3", reasoning=True,
                                  max_reasoning_tokens=bound)
    m = Matcher(compiled)
    for t in _ids(SMALL, "<think>\n"):  # the opening, then thought text
        assert m.accept_token(t)
    thought = _ids(SMALL, "\nHmm")
    for t in thought[:bound]:
        assert m.accept_token(t)
    end = _ids(SMALL, "</think>")[0]
    # its bound used, the text ends: only the reasoning's end may come (whole, or its "<")
    assert set(_allowed(m)) == {end, ord("<")}
    assert _accepts(compiled, SMALL, "<think>\n" + "\nHmm"[:bound] + "</think>\n\nHi")
    assert not _accepts(compiled, SMALL, "<think>\nHmm, let me think</think>\n\nHi")


def test_harmony_bounds_its_one_analysis_message() -> None:
    vocab = Vocabulary.default()
    compiled = compile_tool_calls(TOOLS, vocab, format="harmony", reasoning=True,
                                  max_reasoning_tokens=2)
    m = Matcher(compiled)
    head = "<|channel|>analysis<|message|>"
    assert all(m.accept_token(t) for t in _ids(vocab, head + " a b"))
    allowed = _allowed(m)
    assert all(vocab.token_bytes(t).startswith(b"<") or t in vocab.special_token_ids.tolist()
               for t in allowed)


def test_a_reasoning_bound_needs_reasoning() -> None:
    with pytest.raises(GrammarError, match="needs reasoning=True") as info:
        compile_tool_calls(TOOLS, SMALL, format="qwen_3", max_reasoning_tokens=5)
    assert info.value.pointer == "/max_reasoning_tokens"
