"""Agreement with XGrammar on its own built-in tool-calling structural tags.

    python bench/xgrammar_agreement.py [--texts 80] [--seed 1] [--formats qwen_3,kimi_k3,...]

For every built-in format XGrammar names (`xgrammar.builtin_structural_tag`), with
tool_choice "auto" and "required" and reasoning on and off, XGrammar builds its structural
tag for two tools; grammask compiles that very spec (`compile_structural_tag`) and XGrammar
compiles it too. Texts: samples of the spec written as the models write them (`Sampler`: free
text, calls with one fixed valid argument object per tool, in the format's argument style),
every other one then mutated (a character inserted, deleted or repeated). Each text's verdict
(complete match or not) is compared. A
disagreement is printed with its format and text; the summary counts them per format.
xgrammar is an optional peer: `pip install --no-deps xgrammar apache-tvm-ffi` (with torch,
transformers, pydantic), see the README.
"""
from __future__ import annotations

import argparse
import json
import random
from typing import Any

from grammask.compiler import GrammarError, compile_structural_tag
from grammask.runtime import Matcher, Vocabulary

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"},
                                         "days": {"type": "integer"}},
        "required": ["city"]}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {
        "type": "object", "properties": {"zone": {"enum": ["utc", "local"]}},
        "required": ["zone"]}}},
]
VOCAB = Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"</s>"], 256)


ARGS = {"get_weather": {"city": "Oslo", "days": 3}, "get_time": {"zone": "utc"}}
XML = {  # how each XML style writes one argument (name, value, raw: a string written raw)
    "qwen_xml": lambda k, v, raw: f"<parameter={k}>\n{v}\n</parameter>\n",
    "minimax_xml": lambda k, v, raw: f'<parameter name="{k}">{v}</parameter>\n',
    "glm_xml": lambda k, v, raw: f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>",
    "deepseek_xml": lambda k, v, raw:
        f'<｜DSML｜parameter name="{k}" string="{str(raw).lower()}">{v}</｜DSML｜parameter>\n',
    "deepseek_v4_1_xml": lambda k, v, raw:
        f'<｜DSML｜ parameter name="{k}" string="{str(raw).lower()}">{v}</｜DSML｜ parameter>\n',
    "kimi_k3_xml": lambda k, v, raw: f'<|open|>argument key="{k}" type="'
        f'{"string" if raw else "number"}"<|sep|>{v}<|close|>argument<|sep|>',
    "cohere_xml": lambda k, v, raw:
        f'<cofl:value name="{k}" type="{"raw" if raw else "json"}">{v}</cofl:value>',
    "minimax_m3_xml": lambda k, v, raw: f"]<]minimax[>[<{k}>{v}]<]minimax[>[</{k}>\n",
}
WORDS = ["Hi", "ok", "let me check", "sure.", "\n", "the weather", "1 2 3"]


class Sampler:
    """Random texts of a structural tag, written as the models write them (the arguments of
    every call one fixed valid object per tool)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def text(self, fmt: dict[str, Any], ends: tuple[str, ...] = ()) -> str:
        kind, rng = fmt["type"], self.rng
        if kind == "const_string":
            return fmt["value"]
        if kind == "sequence":
            return "".join(self.text(e, ends) for e in fmt["elements"])
        if kind == "or":
            return self.text(rng.choice(fmt["elements"]), ends)
        if kind in ("optional", "star", "plus", "repeat"):
            lo = {"optional": 0, "star": 0, "plus": 1}.get(kind, fmt.get("min", 0))
            hi = {"optional": 1, "star": 2, "plus": 2}.get(kind, fmt.get("max", 2))
            n = rng.randint(lo, max(lo, hi if hi >= 0 else lo + 2))
            return "".join(self.text(fmt["content"], ends) for _ in range(n))
        if kind == "tag":
            end = fmt["end"] if isinstance(fmt["end"], str) else fmt["end"][0]
            return fmt["begin"] + self.text(fmt["content"], (end,)) + end
        if kind == "any_text":
            stops = [*fmt.get("excludes", []), *ends]
            words = [w for w in WORDS if not any(s and s in w for s in stops)]
            return " ".join(rng.choice(words) for _ in range(rng.randint(0, 3)))
        if kind in ("triggered_tags", "tags_with_separator"):
            tags = fmt["tags"]
            least = 1 if fmt.get("at_least_one") else 0
            n = 1 if fmt.get("stop_after_first") else rng.randint(least, 2)
            n = max(n, least)
            parts = [self.text(rng.choice(tags), ends) for _ in range(n)]
            if kind == "tags_with_separator":
                return fmt.get("separator", "").join(parts)
            lead = self.text({"type": "any_text", "excludes": fmt.get("excludes", [])}, ends)
            return (lead if not least else "") + "".join(parts)
        if kind == "regex":
            return str(rng.randint(0, 3))
        if kind == "json_schema":
            names = [n for n in ARGS if set(ARGS[n]) <= set(
                fmt["json_schema"].get("properties", {}))]
            args = ARGS[names[0]] if names else {}
            style = fmt.get("style", "json")
            if style == "json":
                return json.dumps(args)
            return "".join(XML[style](k, v, isinstance(v, str)) for k, v in args.items())
        raise ValueError(f"no sample for {kind}")


def mutate(text: str, rng: random.Random) -> str:
    i = rng.randrange(len(text) + 1)
    op = rng.randrange(3)
    if op == 0:
        return text[:i] + rng.choice(' "<>/a\n1{}') + text[i:]
    if op == 1:
        return text[:i] + text[i + 1:]
    return text[:i] + text[i:i + 4] + text[i:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=80, help="texts per request")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--formats", default="", help="comma-separated (default: all)")
    args = parser.parse_args()
    import xgrammar as xgr
    from xgrammar import builtin_structural_tag as builtins
    from xgrammar.testing import _is_grammar_accept_string

    registry = getattr(builtins, "_structural_tag_registry", None) or {}
    names = sorted(registry) if registry else [
        n[4:-len("_structural_tag")] for n in dir(builtins)
        if n.startswith("get_") and n.endswith("_structural_tag")
        and n not in ("get_model_structural_tag", "get_builtin_structural_tag")]
    if args.formats:
        names = [n for n in names if n in args.formats.split(",")]
    rng = random.Random(args.seed)
    total = disagree = 0
    rows = []
    for name in names:
        for choice in ("auto", "required"):
            for reasoning in (False, True):
                try:
                    tag = builtins.get_model_structural_tag(name, tools=TOOLS,
                                                            tool_choice=choice,
                                                            reasoning=reasoning)
                except Exception as exc:  # noqa: BLE001 - the peer's own refusal
                    rows.append((name, choice, reasoning, f"xgrammar: {exc}"[:60], 0, 0))
                    continue
                spec = tag.model_dump_json()
                try:
                    ours = compile_structural_tag(spec, VOCAB)
                except GrammarError as exc:
                    rows.append((name, choice, reasoning, f"grammask: {exc}"[:60], 0, 0))
                    continue
                theirs = xgr.Grammar.from_structural_tag(spec)
                sampler = Sampler(rng)
                n = bad = good = 0
                for k in range(args.texts):
                    text = sampler.text(json.loads(spec)["format"])
                    if k % 2:
                        text = mutate(text, rng)
                    m = Matcher(ours)
                    a = m.accept_string(text.encode("utf-8", "surrogatepass")) and \
                        m.can_terminate()
                    b = _is_grammar_accept_string(theirs, text)
                    n += 1
                    good += a
                    if a != b:
                        bad += 1
                        print(f"{name} {choice} reasoning={reasoning}: grammask {a}, "
                              f"xgrammar {b}: {json.dumps(text)[:200]}")
                rows.append((name, choice, reasoning, f"{good} accepted", n, bad))
                total, disagree = total + n, disagree + bad
    print("\n| format | tool_choice | reasoning | texts | disagree | accepted, or the error |")
    print("|---|---|---|---|---|---|")
    for name, choice, reasoning, note, n, bad in rows:
        print(f"| {name} | {choice} | {reasoning} | {n} | {bad} | {note} |")
    print(f"\n{total} texts, {disagree} disagreements")


if __name__ == "__main__":
    main()
