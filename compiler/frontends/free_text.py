"""Free text: what structural tags' `any_text` and the text between triggered tags match, and
the text before a lazy grammar's trigger, as one regular language.

Free text is any Unicode text (UTF-8 bytes of scalar values) in which no *stop* occurs: the
format's `excludes`, the end strings of the nearest enclosing tag, and, between triggered tags,
the triggers. Before a tag that a trigger `t` opens, the text must also not make a stop occur
across the boundary before `t` is complete: the stream `text + t` has its first stop ending
exactly where `t` ends, as a scanner that dispatches at the first trigger it sees would read it.
So text `T` is allowed before `t` iff no stop occurs in `T` and `T` does not end with a
non-empty proper prefix `p` of a stop `s = p + r` whose rest `r` is a prefix of `t` shorter
than `t`. Both conditions are regular; the language is built as one difference of automata
(`automata.language_ops`), and is small: about the total length of the stops in states.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..automata.language_ops import difference
from ..ir.nodes import Choice, Literal, Node, Repeat, Seq
from ..support.caches import memo
from ..support.limits import Limits
from .json_schema.ecma_regex import ANY_CHAR, ANY_STRING

__all__ = ["dispatched", "free_text"]


@memo(maxsize=256)
def free_text(stops: frozenset[str], before: str, max_chars: int | None, limits: Limits) -> Node:
    """Text with no occurrence of a stop, at most `max_chars` code points (None: unbounded),
    and, when `before` is not empty, no stop made across the boundary with `before`."""
    body: Node = ANY_STRING if max_chars is None else Repeat(ANY_CHAR, 0, max_chars)
    stops = frozenset(s for s in stops if s)
    if not stops:
        return body
    ordered = sorted(stops)
    removed: list[Node] = [Seq((ANY_STRING, Choice(tuple(Literal(s.encode()) for s in ordered)),
                                ANY_STRING))]
    across = sorted({s[:k] for s in ordered for k in range(1, len(s))
                     if len(s) - k < len(before) and before.startswith(s[k:])})
    if across:
        removed.append(Seq((ANY_STRING, Choice(tuple(Literal(p.encode()) for p in across)))))
    return difference(body, Choice(tuple(removed)), limits=limits, label="free text")


def dispatched(groups: dict[Any, list[Node]], free: Callable[[Any], Node], whole: list[Node],
               at_least_one: bool, stop_after_first: bool) -> Node:
    """Free text (or tokens) and the tags its triggers open: `groups` maps each trigger to the
    expressions (each starting with that trigger) it may open; `free(trigger)` is what may
    stand before that trigger, `free("")` what may stand at the end; `whole` every tag, for
    `at_least_one` (a tag first) and `stop_after_first` (one tag at most)."""
    if at_least_one and stop_after_first:
        return Choice(tuple(whole))
    opened = Choice(tuple(Seq((free(trigger), Choice(tuple(options))))
                          for trigger, options in groups.items() if options))
    rest = free("")
    body: Node = Choice((opened, rest)) if stop_after_first else Seq(
        (Repeat(opened, 0, None), rest))
    return Seq((Choice(tuple(whole)), body)) if at_least_one else body
