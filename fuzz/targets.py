"""The fuzz targets of the frontends (regex, GBNF, Lark, JSON Schema) and of the matcher."""
from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable
from typing import Any

import numpy as np

from grammask.compiler import BudgetExceeded, GrammarError, Limits, compile_grammar, compile_ir
import grammask.compiler.frontends.gbnf as gbnf
from grammask.compiler.frontends.gbnf import parse_gbnf
from grammask.compiler.ir.nodes import Grammar, Node
from grammask.compiler.frontends.json_schema import JsonSchemaOptions, schema_to_grammar
from grammask.compiler import compile_json_schema, compile_structural_tag
from grammask.compiler.frontends.lark_grammar import parse_lark
from grammask.compiler.frontends.regex import parse_regex
from grammask.runtime import Matcher, Vocabulary
from grammask.runtime.compiled import CompiledGrammar
from grammask.runtime.errors import SerializedGrammarError
from grammask.runtime.serialized import pack, unpack

from tests.support.parse_outcomes import outcome

from .common import (
    BYTES,
    LIMITS,
    FindingError,
    Target,
    budget_met,
    input_rng,
    reference_for,
    walk,
)
from .corpus import DATA, PATTERNS, grammar_seeds, schema_seeds
from .mutators import mutate_text, schema_mutator

LAYOUTS = ("flexible", "compact", "indent")


SEED_LIMITS = dataclasses.replace(LIMITS, max_compile_seconds=120.0)
"""For the fixed grammars a target starts from: their first compiles in a fresh process include
compiling the Numba kernels they reach (seconds), which the fuzzed inputs' deadline is not for."""


def _compile(ir: Grammar | Node, vocab: Vocabulary, limits: Limits = LIMITS) -> CompiledGrammar:
    if isinstance(ir, Grammar):
        return compile_grammar(ir, vocab, limits=limits)
    return compile_ir(ir, vocab, limits=limits)


def frontend(name: str, parse: Callable[[str], Grammar | Node], seeds: list[str]) -> Target:
    """A target that parses a mutated text, compiles it within LIMITS on a byte vocabulary and
    walks it a little, each mask checked against the reference recognizer of its IR."""

    def run(text: str) -> bool:
        try:
            ir = parse(text)
            compiled = _compile(ir, BYTES)
        except GrammarError:
            return False
        rng = input_rng(text)
        ref = reference_for(ir)
        m = Matcher(compiled)
        if ref is not None and rng.random() < 0.3:  # under a token budget
            shortest = ref.completion_bytes(b"")
            try:
                cost = m.completion_cost()
            except BudgetExceeded as exc:  # the costs build every rule
                budget_met(exc)
                return True
            if cost != shortest:
                raise FindingError(f"completion cost {cost}, reference {shortest}")
            if shortest is not None:
                m = Matcher(compiled, max_tokens=shortest + rng.randint(0, 6))
        walk(m, BYTES, rng, rng.randint(1, 16), ref)
        return True

    return Target(name, seeds, run, mutate_text)


def _schema_options(rng: random.Random) -> JsonSchemaOptions:
    return JsonSchemaOptions(strict=rng.random() < 0.3, lenient=rng.random() < 0.3,
                             whitespace=rng.choice(LAYOUTS))


def _validator(schema: Any) -> Callable[[Any], bool] | None:
    """jsonschema's verdict on instances of `schema`; None where it cannot judge (a schema it
    rejects or a $ref it cannot resolve offline) or where the dialects differ (regexes)."""
    import jsonschema

    text = json.dumps(schema)
    if any(k in text for k in ('"pattern', '"format', '"$dynamic', '"$id', '"$schema')):
        return None
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
        validator = cls(schema)
    except Exception:  # noqa: BLE001 - jsonschema judges only the schemas it accepts
        return None

    def valid(instance: Any) -> bool:
        try:
            return validator.is_valid(instance)
        except (KeyboardInterrupt, SystemExit):
            raise
        # Unresolvable references and the like; on a reference cycle jsonschema recurses until
        # its registry panics (pyo3's PanicException derives from BaseException).
        except BaseException:  # noqa: BLE001
            return True

    return valid


def json_schema_target(rng: random.Random) -> Target:
    """A target compiling mutated corpus schemas with random options; what it accepts is walked,
    and every text the matcher finishes must be JSON that jsonschema validates (outside
    lenient mode)."""
    schemas = schema_seeds(rng)

    def run(text: str) -> bool:
        choices = input_rng(text)
        options = _schema_options(choices)
        try:
            compiled = compile_json_schema(text, BYTES, options=options, limits=LIMITS)
        except GrammarError:
            return False
        check = None if options.lenient else _validator(json.loads(text))

        def finished(output: bytes) -> None:
            if check is None:
                return
            try:
                instance = json.loads(output)
            except ValueError as exc:
                raise FindingError(f"finished output {output!r} is not JSON: {exc}") from None
            if not check(instance):
                raise FindingError(f"finished output {output!r} does not validate")

        walk(Matcher(compiled), BYTES, choices, choices.randint(4, 60), finished=finished)
        return True

    return Target("jsonschema", [json.dumps(s) for s in schemas], run, schema_mutator(schemas))


def _matcher_grammars(vocab: Vocabulary) -> list[tuple[CompiledGrammar, Any, Any]]:
    """Compiled regexes, recursive grammars and schemas on `vocab`, each with its IR's
    reference recognizer (None for schemas) and its schema (None for grammars)."""
    out: list[tuple[CompiledGrammar, Any, Any]] = []
    for pattern in PATTERNS[:8]:
        ir = parse_regex(pattern, limits=LIMITS)
        out.append((_compile(ir, vocab, SEED_LIMITS), reference_for(ir), None))
    for name in ("json", "arithmetic", "list"):
        grammar = parse_gbnf((DATA / "gbnf" / f"{name}.gbnf").read_text(encoding="utf-8"),
                             limits=LIMITS)
        out.append((_compile(grammar, vocab, SEED_LIMITS), reference_for(grammar), None))
    lark_json = (DATA / "lark" / "examples" / "composition" / "json.lark")
    if lark_json.exists():
        grammar, _ = parse_lark(lark_json.read_text(encoding="utf-8"), start="value",
                                limits=LIMITS)
        out.append((_compile(grammar, vocab, SEED_LIMITS), reference_for(grammar), None))
    for line in (DATA / "json_schema_sample.jsonl").read_text(encoding="utf-8").split("\n")[:6]:
        schema = json.loads(line)["schema"]
        try:
            grammar, _ = schema_to_grammar(schema, limits=LIMITS)
            out.append((compile_grammar(grammar, vocab, limits=SEED_LIMITS), None, schema))
        except GrammarError:
            continue
    return out


def matcher_target(vocab: Vocabulary) -> Target:
    """A target whose input is a seed for one random session on a compiled grammar: accept,
    rollback, copy, reset and fill interleaved on the default vocabulary, every mask checked
    against accepting and the reference recognizer, finished schema outputs by jsonschema."""
    grammars = _matcher_grammars(vocab)

    def run(text: str) -> bool:
        rng = input_rng(text)
        compiled, ref, schema = rng.choice(grammars)
        check = _validator(schema) if schema is not None else None

        def finished(output: bytes) -> None:
            if check is not None and not check(json.loads(output)):
                raise FindingError(f"finished output {output!r} does not validate")

        m = Matcher(compiled)
        shortest = m.completion_cost()
        if shortest is not None and rng.random() < 0.25:  # under a token budget
            m = Matcher(compiled, max_tokens=shortest + rng.randint(0, 40))
        walk(m, vocab, rng, rng.randint(1, 30), ref, finished)
        return True

    def mutate(_text: str, rng: random.Random) -> str:
        return str(rng.getrandbits(48))

    return Target("matcher", ["0", "1", "2"], run, mutate)


def serialized_target() -> Target:
    """A target whose input is a seed for one change to a serialized grammar (corpus regexes,
    grammars and schemas on a byte vocabulary): bytes flipped, dropped, repeated, cut or
    appended, or a table value changed behind a recomputed digest. Loading must give
    `SerializedGrammarError` or a grammar; the unchanged bytes give the same masks as the
    grammar they came from, and any grammar that loads is walked."""
    grammars = [(g, ref) for g, ref, _ in _matcher_grammars(BYTES)]
    blobs = [g.to_bytes() for g, _ in grammars]

    def run(text: str) -> bool:
        rng = input_rng(text)
        i = rng.randrange(len(blobs))
        data = _changed(blobs[i], rng) if rng.random() < 0.9 else blobs[i]
        try:
            loaded = CompiledGrammar.from_bytes(data, BYTES)
        except SerializedGrammarError:
            return False
        if data == blobs[i]:
            a, b = Matcher(grammars[i][0]), Matcher(loaded)
            for _ in range(rng.randint(1, 8)):
                ma, mb = a.fork(), b.fork()
                tokens = [rng.randrange(BYTES.size) for _ in range(rng.randint(0, 6))]
                if ma.validate_tokens(tokens) != mb.validate_tokens(tokens):
                    raise FindingError(f"loaded grammar {i} differs on tokens {tokens}")
            walk(Matcher(loaded), BYTES, rng, rng.randint(1, 20), grammars[i][1])
        else:
            _probe(Matcher(loaded), rng, rng.randint(1, 20))
        return True

    def mutate(_text: str, rng: random.Random) -> str:
        return str(rng.getrandbits(48))

    return Target("serialized", ["0", "1", "2"], run, mutate)


def _probe(m: Matcher, rng: random.Random, steps: int) -> None:
    """Walk a grammar made from changed tables: it may need bytes no token of `BYTES`
    spells (an empty mask, which `walk` would call a finding), but every mask must agree
    with `accept_token` and no call may fail."""
    bitmask = np.zeros((1, (BYTES.size + 31) // 32), dtype=np.int32)
    for _ in range(steps):
        m.fill_next_token_bitmask(bitmask)
        bits = np.unpackbits(bitmask[0].view(np.uint8), bitorder="little")[:BYTES.size]
        allowed = np.flatnonzero(bits).tolist()
        tid = rng.choice(allowed) if allowed and rng.random() < 0.8 else rng.randrange(BYTES.size)
        if m.is_terminated():
            return
        if m.accept_token(tid) != bool(bits[tid]):
            raise FindingError(f"token {tid}: accept_token and the mask disagree")
        if not allowed:
            return


def _changed(data: bytes, rng: random.Random) -> bytes:
    """`data` with its bytes changed, or (one time in three) a table value changed and the
    container packed again (a valid digest)."""
    if rng.random() < 1 / 3:
        header, arrays = unpack(data)
        arrays = {k: np.array(a) for k, a in arrays.items()}
        name = rng.choice(sorted(arrays))
        a = arrays[name]
        if a.size:
            flat = a.reshape(-1)
            flat[rng.randrange(a.size)] = rng.choice([-2, -1, 0, 1, 255, 256, 1 << 20]) \
                if a.dtype != np.bool_ else not flat[0]
        elif rng.random() < 0.5:
            arrays[name] = np.zeros(rng.randint(1, 4), dtype=a.dtype)
        return pack(header, arrays)
    out = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(out))
        op = rng.randrange(4)
        if op == 0:
            out[i] ^= 1 << rng.randrange(8)
        elif op == 1:
            del out[i:i + rng.randint(1, 8)]
        elif op == 2:
            out[i:i] = out[i:i + rng.randint(1, 8)]
        else:
            del out[i:]
        if not out:
            break
    return bytes(out)


def _gbnf_as_lark_reads_it(text: str) -> Grammar:
    """`parse_gbnf(text)`, checked to be exactly what Lark's parser alone gives (the direct
    reader's grammar, spans and errors)."""
    ours = outcome(lambda: parse_gbnf(text, limits=LIMITS))
    lark = outcome(lambda: gbnf.parse_gbnf_with(text, None, "root", LIMITS, direct=False))
    if ours != lark:
        raise FindingError(f"the GBNF reader and Lark differ: {str(ours)[:300]} against "
                           f"{str(lark)[:300]}")
    return parse_gbnf(text, limits=LIMITS)


STRUCTURAL_SEEDS = [json.dumps(spec) for spec in (
    {"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<f="],
     "tags": [{"begin": "<f=a>", "content": {"type": "json_schema", "json_schema": {
         "type": "object", "properties": {"x": {"type": "integer"}}}}, "end": "</f>"}],
     "excludes": ["!!"]}},
    {"type": "structural_tag", "format": {"type": "sequence", "elements": [
        {"type": "tag", "begin": "<t>", "content": {"type": "any_text"}, "end": ["</t>", "."]},
        {"type": "or", "elements": [{"type": "regex", "pattern": "[0-9]{1,3}"},
                                    {"type": "grammar", "grammar": 'root ::= "(" root? ")"'}]},
        {"type": "tags_with_separator", "separator": ",", "tags": [
            {"begin": "[", "content": {"type": "const_string", "value": "y"}, "end": "]"}]}]}},
    {"type": "structural_tag", "format": {"type": "sequence", "elements": [
        {"type": "or", "elements": [{"type": "exclude_token", "exclude_tokens": [97]},
                                    {"type": "const_string", "value": "ab"}]},
        {"type": "exclude_token", "exclude_tokens": [98, 99]},
        {"type": "optional", "content": {"type": "const_string", "value": "c"}}]}},
    {"type": "structural_tag", "format": {"type": "dispatch", "loop": True, "excludes": ["zz"],
     "rules": [["#", {"type": "repeat", "min": 1, "max": 3,
                      "content": {"type": "any_text", "max_chars": 2}}]]}},
    {"structures": [{"begin": "<a>", "schema": {"enum": [1, "b"]}, "end": "</a>"}],
     "triggers": ["<a"]},
    *({"type": "structural_tag", "format": {
        "type": "json_schema", "style": style, "excludes": ["<|"], "json_schema": {
            "type": "object", "required": ["a"], "properties": {
                "a": {"type": "string"}, "n": {"type": ["integer", "null"]},
                "o": {"type": "object", "properties": {"x": {"enum": ["p", 2]}}},
                "l": {"type": "array", "items": {"type": "string", "maxLength": 2}}}}}}
      for style in ("qwen_xml", "deepseek_xml", "kimi_k3_xml", "cohere_xml")),
    {"type": "structural_tag", "format": {"type": "grammar", "syntax": "lark",
     "grammar": 'start: head "=x>" B\nhead[lazy]: TEXT "<c"\nB: /[0-9]+/ & ~"00"\n'
                'TEXT: /(.|\\n)*/\n'}},
)]


def structural_tag_target() -> Target:
    """A target compiling mutated structural tags (the JSON text) on a byte vocabulary and
    walking what compiles: errors are GrammarErrors at a pointer, never another exception."""

    def run(text: str) -> bool:
        try:
            compiled = compile_structural_tag(text, BYTES, limits=LIMITS)
        except GrammarError:
            return False
        rng = input_rng(text)
        walk(Matcher(compiled), BYTES, rng, rng.randint(1, 16))
        return True

    return Target("structural-tag", STRUCTURAL_SEEDS, run, mutate_text)


def frontend_targets() -> dict[str, Callable[[], Target]]:
    """The frontend targets by name, each built on demand."""
    return {
        "regex": lambda: frontend("regex", lambda t: parse_regex(t, limits=LIMITS), PATTERNS),
        "gbnf": lambda: frontend("gbnf", _gbnf_as_lark_reads_it, grammar_seeds("gbnf")),
        "lark": lambda: frontend("lark", lambda t: parse_lark(t, limits=LIMITS)[0],
                                 grammar_seeds("lark")),
        "structural-tag": structural_tag_target,
    }
