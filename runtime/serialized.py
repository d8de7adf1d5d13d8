"""The byte container of a serialized grammar: a header of plain values, arrays, a digest.

Layout (integers little-endian):

    offset 0   MAGIC (8 bytes: b"\\x89GMASK\\r\\n"; the high byte and the line ending catch a
               transfer in text mode)
    8          FORMAT_VERSION, uint32
    12         n, the header's length in bytes, uint32
    16         header: n bytes of UTF-8 JSON, an object; its "arrays" entry lists each array as
               [name, dtype, shape, offset] with offset from the payload's start
    16 + n     padding to a multiple of 8, then the payload: the arrays' bytes, each at an
               offset that is a multiple of 8
    end - 32   BLAKE2b-256 of every byte before it

Invariant of `unpack`: what it returns was checked here, in this order, each failure a
`SerializedGrammarError` naming what and where (a byte offset): the length, the magic, the
version, the header's length, the digest (so a flipped, dropped or repeated byte is caught
before anything is read: an accident is never a different valid table), the header's JSON and
its types, and each array's dtype (from `DTYPES`), shape and bounds within the payload. The
values themselves (state numbers in range and so on) are the tables' to check, by their
constructors, exactly as at compile time. The arrays returned are read-only views of `data`.
"""
from __future__ import annotations

import hashlib
import json
import math
import struct
from typing import Any

import numpy as np

from .errors import SerializedGrammarError

MAGIC = b"\x89GMASK\r\n"
FORMAT_VERSION = 2
_PREFIX = struct.Struct("<8sII")
_DIGEST = 32
DTYPES = {"<i4": np.dtype("<i4"), "<i8": np.dtype("<i8"), "|b1": np.dtype(np.bool_),
          "|u1": np.dtype(np.uint8)}
"""The array types a container may hold."""


def _digest(data: bytes | memoryview) -> bytes:
    return hashlib.blake2b(data, digest_size=_DIGEST).digest()


def _aligned(n: int) -> int:
    return (n + 7) // 8 * 8


def pack(header: dict[str, Any], arrays: dict[str, np.ndarray]) -> bytes:
    """The container of `header` (JSON-able values; the key "arrays" is set here) and
    `arrays` (of the `DTYPES`)."""
    entries, blobs, offset = [], [], 0
    for name, a in arrays.items():
        dt = a.dtype.newbyteorder("<") if a.dtype.byteorder == ">" else a.dtype
        if dt.str not in DTYPES:
            raise TypeError(f"array {name!r} has dtype {a.dtype}, not one of {sorted(DTYPES)}")
        raw = np.ascontiguousarray(a, dtype=dt).tobytes()
        entries.append([name, dt.str, list(a.shape), offset])
        blobs.append(raw + b"\0" * (_aligned(len(raw)) - len(raw)))
        offset += _aligned(len(raw))
    text = json.dumps({**header, "arrays": entries}, ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8")
    head = _PREFIX.pack(MAGIC, FORMAT_VERSION, len(text)) + text
    body = b"".join([head, b"\0" * (_aligned(len(head)) - len(head)), *blobs])
    return body + _digest(body)


def unpack(data: Any) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The header and the arrays of a container, checked (module docstring)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"a serialized grammar is bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) < _PREFIX.size + _DIGEST:
        raise SerializedGrammarError(f"{len(data)} bytes is too short for a serialized grammar "
                                     f"(at least {_PREFIX.size + _DIGEST})", 0)
    magic, version, n = _PREFIX.unpack_from(data)
    if magic != MAGIC:
        raise SerializedGrammarError("not a serialized grammask grammar (wrong magic bytes)", 0)
    if version != FORMAT_VERSION:
        raise SerializedGrammarError(f"format version {version}; this grammask reads version "
                                     f"{FORMAT_VERSION} (serialize the grammar again)", 8)
    end = len(data) - _DIGEST
    payload = _aligned(_PREFIX.size + n)
    if payload > end:
        raise SerializedGrammarError(f"header length {n} runs past the data ({len(data)} bytes)",
                                     12)
    if _digest(memoryview(data)[:end]) != data[end:]:
        raise SerializedGrammarError("the digest does not match: the bytes were changed, cut "
                                     "or extended after serialization", end)
    try:
        header = json.loads(data[_PREFIX.size:_PREFIX.size + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise SerializedGrammarError(f"header is not JSON: {exc}", _PREFIX.size) from None
    if not isinstance(header, dict) or not isinstance(header.get("arrays"), list):
        raise SerializedGrammarError("header must be an object with an 'arrays' list",
                                     _PREFIX.size)
    arrays = {}
    for i, entry in enumerate(header.pop("arrays")):
        name, array = _array(entry, i, data, payload, end)
        if name in arrays:
            raise SerializedGrammarError(f"array {name!r} is listed twice", _PREFIX.size)
        arrays[name] = array
    return header, arrays


def _array(entry: Any, i: int, data: bytes, payload: int, end: int) -> tuple[str, np.ndarray]:
    where = f"header arrays[{i}]"
    if not (isinstance(entry, list) and len(entry) == 4 and isinstance(entry[0], str)
            and entry[1] in DTYPES and isinstance(entry[2], list)
            and all(type(d) is int and d >= 0 for d in entry[2])
            and type(entry[3]) is int and entry[3] >= 0 and entry[3] % 8 == 0):
        raise SerializedGrammarError(f"{where} must be [name, dtype in {sorted(DTYPES)}, shape "
                                     f"of non-negative ints, offset a multiple of 8]",
                                     _PREFIX.size)
    name, dtype, shape, offset = entry[0], DTYPES[entry[1]], entry[2], entry[3]
    size = math.prod(shape) * dtype.itemsize
    begin = payload + offset
    if begin + size > end:
        raise SerializedGrammarError(f"array {name!r} ({size} bytes at payload offset {offset}) "
                                     f"runs past the payload", begin)
    return name, np.frombuffer(data, dtype=dtype, count=math.prod(shape),
                               offset=begin).reshape(shape)
