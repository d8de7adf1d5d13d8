"""IR normal form: smart constructors that flatten nested sequences and choices and merge
adjacent literals, and `simplify`, which applies them to a whole tree without recursion.
Frontends build their IR with these, so equal source structure gives equal IR."""
from __future__ import annotations

from ..support.diagnostics import Span
from .nodes import CharClass, Choice, Literal, Node, Repeat, Seq, children

__all__ = ["alternation", "concat", "cover", "simplify"]


def cover(first: Span | None, last: Span | None) -> Span | None:
    """The span from the start of `first` to the end of `last`."""
    if first is None or last is None:
        return first or last
    return Span(first.line, first.column, last.end_line, last.end_column, first.source)


def concat(items: list[Node]) -> Node:
    """Concatenation with nested sequences flattened and adjacent literals merged."""
    if len(items) == 1 and not isinstance(items[0], Seq):
        return items[0]
    out: list[Node] = []
    run: list[Literal] = []

    def flush() -> None:
        if len(run) > 1:
            out.append(Literal(b"".join(r.data for r in run), cover(run[0].span, run[-1].span)))
        out.extend(run[:1] if len(run) == 1 else ())
        run.clear()

    for item in items:
        for part in item.items if isinstance(item, Seq) else (item,):
            if isinstance(part, Literal):
                run.append(part)
            else:
                flush()
                out.append(part)
    flush()
    if len(out) == 1:
        return out[0]
    return Seq(tuple(out), cover(items[0].span, items[-1].span) if items else None)


def alternation(alternatives: list[Node], span: Span | None) -> Node:
    """Alternation with nested choices flattened; a single alternative stands alone."""
    if len(alternatives) == 1:
        return alternatives[0]
    flat: list[Node] = []
    for alt in alternatives:
        flat.extend(alt.alternatives if isinstance(alt, Choice) and alt.alternatives else (alt,))
    return Choice(tuple(flat), span)


def simplify(node: Node) -> Node:
    """`node` with the simplifications the GBNF parser applies: nested sequences and choices
    flattened, adjacent literals merged, single-item sequences and choices unwrapped, `x{1}` as
    `x`, and `Choice(())` (never matches) as the empty class `CharClass(())`.

    For every IR tree t over valid rule names, `parse_gbnf(to_gbnf(t))` has body `simplify(t)`.
    """
    done: dict[int, Node] = {}
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        n, expanded = stack.pop()
        if id(n) in done:
            continue
        kids = children(n)
        if not expanded and kids:
            stack.append((n, True))
            stack.extend((c, False) for c in reversed(kids))
            continue
        parts = [done[id(c)] for c in kids]
        if isinstance(n, Seq):
            done[id(n)] = concat(parts) if parts else n
        elif isinstance(n, Choice):
            done[id(n)] = alternation(parts, n.span) if parts else CharClass((), n.span)
        elif isinstance(n, Repeat):
            done[id(n)] = parts[0] if n.min == n.max == 1 else Repeat(parts[0], n.min, n.max, n.span)
        else:
            done[id(n)] = n
    return done[id(node)]

