"""The vLLM and SGLang backends driven the way those engines drive a grammar backend (the call
order of vLLM 0.34's StructuredOutputManager and scheduler, and of SGLang 0.5's scheduler and
speculative tree), with random logits over a padded byte-level BPE vocabulary: every request
kind compiles, bad ones fail as each engine expects, and every finished output is in its
language (checked by re, jsonschema and plain Python)."""
from __future__ import annotations

import enum
import json
import random
import re
from concurrent.futures import ThreadPoolExecutor

import jsonschema
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from grammask.integrations.sglang import GrammaskGrammarBackend, InvalidGrammarObject  # noqa: E402
from grammask.integrations.vllm import GrammaskBackend  # noqa: E402

from ..support.paths import DATA  # noqa: E402

TOKENIZER = str(DATA / "tokenizers" / "byte_level_bpe.json")
VOCAB_SIZE = 263 + 9  # the model's logits: more ids than the tokenizer's
EOS = 261
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0,
                                                 "maximum": 99}},
          "required": ["n"], "additionalProperties": False}
LIST_GBNF = 'root ::= "[" ( item ( "," item )* )? "]"\nitem ::= [0-9] | root\n'
TAG = {"type": "structural_tag", "format": {"type": "sequence", "elements": [
    {"type": "const_string", "value": "A:"}, {"type": "regex", "pattern": "[0-9]{1,3}"}]}}


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += (ch == "[") - (ch == "]")
        if depth < 0:
            return False
    return depth == 0 and re.fullmatch(r"\[([0-9\[\],]*)\]", s) is not None and "[," not in s \
        and ",]" not in s and ",," not in s


REQUESTS = [  # kind, spec, the language as a predicate on the text
    ("JSON", json.dumps(SCHEMA),
     lambda s: jsonschema.Draft202012Validator(SCHEMA).is_valid(json.loads(s))),
    ("JSON_OBJECT", "", lambda s: isinstance(json.loads(s), dict)),
    ("REGEX", r"[a-c]{1,4}(-[a-c]{1,4}){0,2}", lambda s: re.fullmatch(
        r"[a-c]{1,4}(-[a-c]{1,4}){0,2}", s) is not None),
    ("GRAMMAR", LIST_GBNF, _balanced),
    ("GRAMMAR", 'start: "x" start "y" | "z"', lambda s: re.fullmatch(r"(x*)z(y*)", s) is not None
     and s.count("x") == s.count("y")),
    ("CHOICE", json.dumps(["yes", "no", "maybe"]), lambda s: s in ("yes", "no", "maybe")),
    ("STRUCTURAL_TAG", json.dumps(TAG), lambda s: re.fullmatch(r"A:[0-9]{1,3}", s) is not None),
]


class Options(enum.Enum):  # vLLM's StructuredOutputOptions, by name
    JSON = enum.auto()
    JSON_OBJECT = enum.auto()
    REGEX = enum.auto()
    GRAMMAR = enum.auto()
    CHOICE = enum.auto()
    STRUCTURAL_TAG = enum.auto()


def _allowed(row) -> np.ndarray:  # type: ignore[no-untyped-def]
    bits = np.unpackbits(np.asarray(row).view(np.uint8), bitorder="little")[:VOCAB_SIZE]
    return np.flatnonzero(bits)


def _sample(rng: random.Random, row) -> int:  # type: ignore[no-untyped-def]
    """A token of the row: EOS half the time it is allowed (outputs end), else any."""
    allowed = _allowed(row).tolist()
    assert allowed, "an empty mask"
    return EOS if EOS in allowed and rng.random() < 0.5 else rng.choice(allowed)


@pytest.mark.parametrize("seed", range(3))
def test_vllm_call_order(seed: int) -> None:
    rng = random.Random(seed)
    backend = GrammaskBackend(None, TOKENIZER, VOCAB_SIZE)
    k = 2  # speculative tokens per step
    with ThreadPoolExecutor(2) as pool:  # vLLM compiles on a thread pool, polled by schedule()
        futures = [pool.submit(backend.compile_grammar, Options[kind], spec, {EOS})
                   for kind, spec, _ in REQUESTS]
        grammars = [f.result() for f in futures]
    bitmask = backend.allocate_token_bitmask(len(grammars) * (1 + k))
    assert tuple(bitmask.shape) == (len(grammars) * (1 + k), (VOCAB_SIZE + 31) // 32)
    outputs: list[list[int]] = [[] for _ in grammars]
    drafts: list[list[int]] = [[] for _ in grammars]
    for _step in range(60):
        active = [i for i, g in enumerate(grammars) if not g.is_terminated()]
        if not active:
            break
        # grammar_bitmask(): rows for each draft position, advancing, then rolling back.
        for i in active:
            g, base, advanced = grammars[i], i * (1 + k), 0
            for j in range(len(drafts[i]) + 1):
                if g.is_terminated():
                    bitmask[base + j].fill_(-1)
                    continue
                g.fill_bitmask(bitmask, base + j)
                if j < len(drafts[i]) and g.accept_tokens(str(i), [drafts[i][j]]):
                    advanced += 1
                elif j < len(drafts[i]):
                    break
            g.rollback(advanced)
        # The model samples under the masks; drafts are verified; accept_tokens must hold.
        for i in active:
            g, base, new = grammars[i], i * (1 + k), []
            for j in range(len(drafts[i]) + 1):
                token = drafts[i][j] if j < len(drafts[i]) and rng.random() < 0.7 and \
                    drafts[i][j] in _allowed(bitmask[base + j]) else _sample(rng, bitmask[base + j])
                new.append(token)
                if j >= len(drafts[i]) or token != drafts[i][j] or token == EOS:
                    break
            assert g.accept_tokens(str(i), new), (i, new)
            outputs[i] += new
            # update_draft_token_ids(): drop drafts past termination, keep the valid prefix.
            proposed = [rng.randrange(VOCAB_SIZE) for _ in range(k)]
            drafts[i] = [] if g.is_terminated() else g.validate_tokens(proposed)
            assert drafts[i] == proposed[:len(drafts[i])]
    finished = 0
    for (kind, _, in_language), g, out in zip(REQUESTS, grammars, outputs):
        if g.is_terminated():
            finished += 1
            assert out[-1] == EOS and EOS not in out[:-1]
            text = backend.vocab.decode(out[:-1]).decode("utf-8")
            assert in_language(text), (kind, text)
    assert finished >= 4
    with pytest.raises(ValueError, match="regex"):
        backend.compile_grammar(Options.REGEX, "(", None)
    with pytest.raises(ValueError, match="json"):
        backend.compile_grammar(Options.JSON, "{not json", None)
    g = backend.compile_grammar(Options.CHOICE, json.dumps(["ab"]), {EOS})
    assert not g.accept_tokens("r", [EOS]) and g.num_processed_tokens == 0
    g.reset()
    backend.destroy()


@pytest.mark.parametrize("seed", range(3))
def test_sglang_call_order(seed: int) -> None:
    rng = random.Random(seed)
    backend = GrammaskGrammarBackend(TOKENIZER, VOCAB_SIZE, {EOS})
    dispatch = {"JSON": ("json", backend.dispatch_json), "JSON_OBJECT": ("json", None),
                "REGEX": ("regex", backend.dispatch_regex),
                "GRAMMAR": ("ebnf", backend.dispatch_ebnf),
                "STRUCTURAL_TAG": ("structural_tag", backend.dispatch_structural_tag)}
    cache: dict = {}
    grammars, checks = [], []
    for kind, spec, in_language in REQUESTS + REQUESTS[:2]:  # the last two hit the cache
        if kind == "CHOICE":
            continue  # SGLang has no choice requests
        key_type, fn = dispatch[kind]
        key = (key_type, spec if kind != "JSON_OBJECT" else '{"type": "object"}')
        if key in cache:
            grammar = cache[key].copy()
        else:
            grammar = (fn or backend.dispatch_json)(key[1])
            assert not isinstance(grammar, InvalidGrammarObject), grammar.error_message
            cache[key] = grammar.copy()
        grammar.maybe_init_reasoning(False)
        grammars.append(grammar)
        checks.append(in_language)
    outputs: list[list[int]] = [[] for _ in grammars]
    for _step in range(60):
        rows = [i for i, g in enumerate(grammars) if not g.finished and not g.is_terminated()]
        if not rows:
            break
        mask = grammars[0].allocate_vocab_mask(VOCAB_SIZE, len(grammars), "cpu")
        assert (mask == -1).all()
        for i in rows:
            grammars[i].fill_vocab_mask(mask, i)
        mask = grammars[0].move_vocab_mask(mask, "cpu")
        logits = torch.randn(len(grammars), VOCAB_SIZE)
        grammars[0].apply_vocab_mask(logits=logits, vocab_mask=mask)
        for i in rows:
            allowed = torch.isfinite(logits[i]).nonzero().flatten().tolist()
            assert allowed == _allowed(mask[i].numpy()).tolist()
            token = _sample(rng, mask[i].numpy())
            grammars[i].accept_token(token)
            outputs[i].append(token)
            grammars[i].finished = grammars[i].is_terminated()
            # A speculative tree node under this one: accept, fill, roll back.
            if not grammars[i].is_terminated():
                g = grammars[i]
                draft = rng.choice(_allowed(_row(g)).tolist())
                g.accept_token(draft)
                if not g.is_terminated():
                    g.fill_vocab_mask(mask, i)
                g.rollback(1)
    finished = 0
    for g, out, in_language in zip(grammars, outputs, checks):
        if g.is_terminated():
            finished += 1
            text = backend.vocab.decode(out[:-1]).decode("utf-8")
            assert out[-1] == EOS and in_language(text), text
    assert finished >= 4
    g = grammars[0].copy()
    assert not g.is_terminated() and g.matcher.num_rollback_steps == 0
    with pytest.raises(ValueError, match="not allowed"):
        g.accept_token(EOS)
    bad = backend.dispatch_regex("(")
    assert isinstance(bad, InvalidGrammarObject) and "regex" in bad.error_message
    assert isinstance(backend.dispatch_json("$$ANY$$"), type(g))
    backend.reset()


def _row(g):  # type: ignore[no-untyped-def]
    """The grammar's current mask, one row."""
    mask = g.allocate_vocab_mask(VOCAB_SIZE, 1, "cpu")
    g.fill_vocab_mask(mask, 0)
    return mask[0].numpy()


INTERFACES = {  # the methods each engine calls (vLLM 0.34, SGLang 0.5.23 sources)
    ("grammask.integrations.vllm", "GrammaskGrammar"): (
        "accept_tokens", "validate_tokens", "rollback", "fill_bitmask", "is_terminated", "reset"),
    ("grammask.integrations.vllm", "GrammaskBackend"): (
        "compile_grammar", "allocate_token_bitmask", "destroy"),
    ("grammask.integrations.sglang", "GrammaskGrammarObject"): (
        "accept_token", "rollback", "is_terminated", "allocate_vocab_mask", "fill_vocab_mask",
        "move_vocab_mask", "apply_vocab_mask", "copy", "maybe_init_reasoning"),
    ("grammask.integrations.sglang", "GrammaskGrammarBackend"): (
        "dispatch_json", "dispatch_regex", "dispatch_ebnf", "dispatch_structural_tag", "reset"),
}
ENGINE_BASES = {
    "grammask.integrations.vllm": ("vllm.v1.structured_output.backend_types", {
        "GrammaskBackend": "StructuredOutputBackend",
        "GrammaskGrammar": "StructuredOutputGrammar"}),
    "grammask.integrations.sglang": ("sglang.srt.constrained.base_grammar_backend", {
        "GrammaskGrammarBackend": "BaseGrammarBackend",
        "GrammaskGrammarObject": "BaseGrammarObject"}),
}


def test_the_backends_have_the_engines_interfaces() -> None:
    """Each backend defines every method its engine calls; where vLLM and SGLang import
    (`bench/README.md`, "Engine interfaces": their wheels unpacked with the few modules their
    base classes need) it subclasses their abstract classes, so the drivers above ran against
    them. GRAMMASK_REQUIRE_ENGINES=1 makes an engine's absence a failure."""
    import importlib
    import os

    for (module, cls), methods in INTERFACES.items():
        ours = getattr(importlib.import_module(module), cls)
        missing = [m for m in methods if not callable(getattr(ours, m, None))]
        assert not missing, (cls, missing)
    found = 0
    for module, (engine_module, bases) in ENGINE_BASES.items():
        try:
            engine = importlib.import_module(engine_module)
        except ImportError:
            continue
        found += 1
        mine = importlib.import_module(module)
        for cls, base in bases.items():
            assert issubclass(getattr(mine, cls), getattr(engine, base)), (cls, base)
        if hasattr(mine, "register"):  # SGLang's registry of grammar backends
            mine.register()
            assert "grammask" in engine.GRAMMAR_BACKEND_REGISTRY
    if os.environ.get("GRAMMASK_REQUIRE_ENGINES") == "1":
        assert found == 2, "vLLM or SGLang did not import"
