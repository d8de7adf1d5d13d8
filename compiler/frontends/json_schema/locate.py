"""Where each value of a JSON text is written, by JSON pointer.

`JsonPositions(text)` scans a JSON text (as `json.loads` accepts it, `NaN` and `Infinity`
included) and records, for the RFC 6901 pointer of every value (the root is ""), the offsets of
its member name when it is an object member and of the value itself. `span(pointer)` is where a
reader looks for that value: its member name, else the value's first character; a pointer that
is not in the text falls back to its nearest ancestor that is. `string_span(pointer, index)`
is the position of one character of a string value, escapes taken into account.

Lines and columns are 1-based; columns count code points and lines end at "\\n", the convention
of every diagnostic. A member name given twice resolves to its last occurrence, as `json.loads`
does. The scan uses an explicit stack, so nesting depth costs no Python recursion; text that is
not JSON raises ValueError.
"""
from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass

from ...support.diagnostics import Span
from .document import join

__all__ = ["JsonPositions", "Located"]

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(r"-?(?:Infinity|(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"
                     r"|true|false|null|NaN")
_SPACE = re.compile(r"[ \t\n\r]*")
_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}|\\.", re.DOTALL)


@dataclass(frozen=True)
class Located:
    """Offsets into the text: the member name token (None for the root and array elements)
    and the value (`value_end` is past its last character; for a container, its closer)."""

    key: tuple[int, int] | None
    value_start: int
    value_end: int


class JsonPositions:
    """The positions of every value of one JSON text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.located: dict[str, Located] = {}
        self._scan()

    def _skip(self, i: int) -> int:
        return _SPACE.match(self.text, i).end()  # type: ignore[union-attr]

    def _fail(self, i: int, what: str) -> ValueError:
        line, column = self.point(i)
        return ValueError(f"{line}:{column}: expected {what}")

    def _scan(self) -> None:
        text = self.text
        # frames: [pointer, is_object, start offset, elements seen]
        stack: list[list] = []
        pending: tuple[str, tuple[int, int] | None] = ("", None)
        i = self._skip(0)
        expect_value = True
        while True:
            if expect_value:
                pointer, key = pending
                if pointer in self.located:
                    self._forget(pointer)
                c = text[i:i + 1]
                if c in ("{", "["):
                    stack.append([pointer, c == "{", i, 0])
                    self.located[pointer] = Located(key, i, i + 1)
                    i = self._skip(i + 1)
                    if text[i:i + 1] == ("}" if c == "{" else "]"):
                        expect_value = False
                        continue
                    if c == "{":
                        pending, i = self._member(i, pointer)
                    else:
                        pending = (join(pointer, 0), None)
                    continue
                m = (_STRING if c == '"' else _SCALAR).match(text, i)
                if m is None:
                    raise self._fail(i, "a JSON value")
                self.located[pointer] = Located(key, i, m.end())
                i = self._skip(m.end())
                expect_value = False
            if not stack:
                if i != len(text):
                    raise self._fail(i, "the end of the text")
                return
            frame = stack[-1]
            c = text[i:i + 1]
            if c == ",":
                i = self._skip(i + 1)
                frame[3] += 1
                if frame[1]:
                    pending, i = self._member(i, frame[0])
                else:
                    pending = (join(frame[0], frame[3]), None)
                expect_value = True
            elif c == ("}" if frame[1] else "]"):
                stack.pop()
                old = self.located[frame[0]]
                self.located[frame[0]] = Located(old.key, old.value_start, i + 1)
                i = self._skip(i + 1)
            else:
                raise self._fail(i, "',' or '" + ("}" if frame[1] else "]") + "'")

    def _forget(self, pointer: str) -> None:
        """Drop what an earlier occurrence of a repeated member name recorded inside it."""
        inside = pointer + "/"
        for stale in [p for p in self.located if p.startswith(inside)]:
            del self.located[stale]

    def _member(self, i: int, parent: str) -> tuple[tuple[str, tuple[int, int]], int]:
        """The pointer and name span of the member whose name starts at `i`, and the offset
        of its value."""
        m = _STRING.match(self.text, i)
        if m is None:
            raise self._fail(i, "a member name")
        after = self._skip(m.end())
        if self.text[after:after + 1] != ":":
            raise self._fail(after, "':'")
        name = json.loads(m.group())
        return (join(parent, name), (m.start(), m.end())), self._skip(after + 1)

    def point(self, offset: int) -> tuple[int, int]:
        """The 1-based line and column of `offset`."""
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def _span(self, start: int, end: int) -> Span:
        line, column = self.point(start)
        end_line, end_column = self.point(max(end - 1, start))
        return Span(line, column, end_line, end_column)

    def find(self, pointer: str) -> tuple[str, Located]:
        """The pointer itself, or its nearest ancestor in the text, with its offsets."""
        while pointer not in self.located:
            pointer = pointer.rsplit("/", 1)[0] if "/" in pointer else ""
        return pointer, self.located[pointer]

    def span(self, pointer: str) -> Span:
        """Where the value at `pointer` (or its nearest ancestor in the text) is named: its
        member name, else its first character (a scalar: the whole token)."""
        _, found = self.find(pointer)
        if found.key is not None:
            return self._span(*found.key)
        if self.text[found.value_start] in "{[":
            return self._span(found.value_start, found.value_start + 1)
        return self._span(found.value_start, found.value_end)

    def _unit(self, i: int) -> int:
        """The UTF-16 unit of the `\\uXXXX` escape at `i`, or -1."""
        m = _ESCAPE.match(self.text, i)
        return int(self.text[i + 2:i + 6], 16) if m and m.end() - i == 6 else -1

    def string_span(self, pointer: str, index: int) -> Span | None:
        """The position of code point `index` (0-based) of the string at `pointer`, counting
        an escape (a surrogate pair of `\\u` escapes too) as the one character it stands for;
        None when `pointer` is not a string in the text or `index` is past its end."""
        found = self.located.get(pointer)
        if found is None or self.text[found.value_start] != '"' or index < 0:
            return None
        i, end, n = found.value_start + 1, found.value_end - 1, 0
        while i < end:
            m = _ESCAPE.match(self.text, i)
            width = m.end() - i if m else 1
            if width == 6 and 0xD800 <= self._unit(i) < 0xDC00 \
                    and 0xDC00 <= self._unit(i + 6) < 0xE000:
                width = 12
            if n == index:
                return self._span(i, i + width)
            i += width
            n += 1
        return None
