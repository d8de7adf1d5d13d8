"""`transformers.generate` on a small random model (built from a config: nothing downloaded)
over a byte-level BPE vocabulary, each batch row under its own grammar through
`GrammaskLogitsProcessor`: greedy and sampled, every finished output is in its language."""
from __future__ import annotations

import json
import re

import jsonschema
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from grammask.compiler import compile_gbnf, compile_json_schema, compile_regex  # noqa: E402
from grammask.runtime import Vocabulary  # noqa: E402
from grammask.integrations.transformers import GrammaskLogitsProcessor  # noqa: E402

from ..support.paths import DATA  # noqa: E402

REGEX = r"[a-z]{1,6}( [a-z]{1,6}){0,3}\."
SCHEMA = {"type": "object", "properties": {"id": {"type": "integer", "minimum": 0, "maximum": 999},
                                           "tag": {"enum": ["ab", "cd"]}},
          "required": ["id", "tag"], "additionalProperties": False}
GBNF = r'''root ::= list
list ::= "[" ( item ( "," item )* )? "]"
item ::= [0-9] | list
'''


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    return Vocabulary.from_huggingface(str(DATA / "tokenizers" / "byte_level_bpe.json"))


@pytest.fixture(scope="module")
def model(vocab: Vocabulary):  # type: ignore[no-untyped-def]
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=vocab.size + 9,  # wider logits than the vocabulary: the extra ids are masked
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=2, max_position_embeddings=512,
        eos_token_id=int(vocab.eos_token_ids[0]), pad_token_id=int(vocab.eos_token_ids[0]),
        bos_token_id=None)
    return transformers.LlamaForCausalLM(config).eval()


def _in_language(kind: str, text: bytes, vocab: Vocabulary) -> bool:
    s = text.decode("utf-8")
    if kind == "regex":
        return re.fullmatch(REGEX, s) is not None
    if kind == "schema":
        return jsonschema.Draft202012Validator(SCHEMA).is_valid(json.loads(s))
    depth = 0
    for ch in s:  # balanced lists of digits
        depth += (ch == "[") - (ch == "]")
        if depth < 0:
            return False
    return depth == 0 and re.fullmatch(r"[\[\],0-9]+", s) is not None and "[," not in s


@pytest.mark.parametrize("sample", [False, True])
def test_generate_with_a_grammar_per_row(model, vocab: Vocabulary, sample: bool) -> None:  # type: ignore[no-untyped-def]
    kinds = ["regex", "schema", "gbnf", "regex", "schema", "gbnf"]
    compiled = {"regex": compile_regex(REGEX, vocab), "gbnf": compile_gbnf(GBNF, vocab),
                "schema": compile_json_schema(SCHEMA, vocab, whitespace="compact")}
    eos = int(vocab.eos_token_ids[0])
    finished = 0
    for seed in range(3):
        torch.manual_seed(seed)
        processor = GrammaskLogitsProcessor([compiled[k] for k in kinds])
        prompt = torch.randint(0, vocab.size - 3, (len(kinds), 3))
        out = model.generate(
            input_ids=prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=48,
            do_sample=sample, top_k=0 if sample else None, temperature=1.0 if sample else None,
            logits_processor=transformers.LogitsProcessorList([processor]))
        for row, kind in enumerate(kinds):
            new = out[row, prompt.shape[1]:].tolist()
            if eos not in new:
                assert not processor.matchers[row].is_terminated()
                continue
            finished += 1
            text = vocab.decode(new[:new.index(eos)])
            assert _in_language(kind, text, vocab), (kind, text)
    assert finished >= 6


def test_outputs_cut_at_max_new_tokens_are_complete(model, vocab: Vocabulary) -> None:  # type: ignore[no-untyped-def]
    kinds = ["schema", "gbnf", "regex", "schema", "gbnf", "regex"]
    compiled = {"regex": compile_regex(REGEX, vocab), "gbnf": compile_gbnf(GBNF, vocab),
                "schema": compile_json_schema(SCHEMA, vocab, whitespace="compact")}
    eos = int(vocab.eos_token_ids[0])
    cut = 0
    for seed, budget in [(0, 24), (1, 30), (2, 40)]:
        torch.manual_seed(seed)
        processor = GrammaskLogitsProcessor([compiled[k] for k in kinds], max_new_tokens=budget)
        prompt = torch.randint(0, vocab.size - 3, (len(kinds), 3))
        out = model.generate(
            input_ids=prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=budget,
            do_sample=True, top_k=0, temperature=1.0,
            logits_processor=transformers.LogitsProcessorList([processor]))
        for row, kind in enumerate(kinds):
            new = out[row, prompt.shape[1]:].tolist()
            cut += eos not in new
            text = vocab.decode(new[:new.index(eos)] if eos in new else new)
            assert _in_language(kind, text, vocab), (kind, budget, text)
    assert cut >= 3  # the budget, not EOS, ended some rows


def test_beam_search_and_reuse_are_refused(model, vocab: Vocabulary) -> None:  # type: ignore[no-untyped-def]
    processor = GrammaskLogitsProcessor(compile_regex(REGEX, vocab))
    prompt = torch.tensor([[1, 2, 3]])
    model.generate(input_ids=prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=4,
                   do_sample=False, logits_processor=transformers.LogitsProcessorList([processor]))
    with pytest.raises(ValueError, match="do not extend"):
        model.generate(input_ids=prompt, attention_mask=torch.ones_like(prompt),
                       max_new_tokens=4, do_sample=False,
                       logits_processor=transformers.LogitsProcessorList([processor]))
    with pytest.raises(ValueError, match="2 grammars for a batch of 1"):
        GrammaskLogitsProcessor([compile_regex(REGEX, vocab)] * 2)(
            prompt, torch.zeros(1, vocab.size))
    with pytest.raises(TypeError):
        GrammaskLogitsProcessor(["x"])  # type: ignore[list-item]
