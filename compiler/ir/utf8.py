"""UTF-8 encoding of code-point ranges as sequences of byte ranges.

A code-point range [lo, hi] (no surrogates) is split into sub-ranges whose encodings all have
the same length and differ only in a suffix of continuation bytes, so that each sub-range is
exactly the cross product of per-position byte ranges. The union of the sequences matches the
UTF-8 encoding of every scalar value in [lo, hi] and nothing else (no overlong forms, no
surrogates, nothing above U+10FFFF).
"""
from __future__ import annotations

from typing import Iterator

ByteRangeSeq = tuple[tuple[int, int], ...]

_LENGTH_LIMITS = (0x7F, 0x7FF, 0xFFFF)


def encode_scalar(cp: int) -> bytes:
    """The UTF-8 bytes of a scalar value (surrogates are rejected by the codec)."""
    return chr(cp).encode("utf-8")


def utf8_sequences(lo: int, hi: int) -> Iterator[ByteRangeSeq]:
    """Byte-range sequences that together match exactly the UTF-8 encodings of [lo, hi]."""
    stack = [(lo, hi)]
    while stack:
        lo, hi = stack.pop()
        if lo > hi:
            continue
        if lo <= 0xDFFF and hi >= 0xD800:
            stack.append((0xE000, hi))
            stack.append((lo, 0xD7FF))
            continue
        split = next((m for m in _LENGTH_LIMITS if lo <= m < hi), None)
        if split is not None:
            stack.append((split + 1, hi))
            stack.append((lo, split))
            continue
        if hi <= 0x7F:
            yield ((lo, hi),)
            continue
        for i in (1, 2, 3):
            mask = (1 << (6 * i)) - 1
            if lo & ~mask != hi & ~mask:
                if lo & mask:
                    stack.append(((lo | mask) + 1, hi))
                    stack.append((lo, lo | mask))
                    break
                if hi & mask != mask:
                    stack.append((hi & ~mask, hi))
                    stack.append((lo, (hi & ~mask) - 1))
                    break
        else:
            a, b = encode_scalar(lo), encode_scalar(hi)
            yield tuple(zip(a, b))
