"""The grammar as a graph of rules: references, reachability, dependency order, cycles and
strongly connected components, each without recursion.

The rules each rule refers to are computed once per grammar (`rule_uses`, remembered for the
grammar last asked about through `per_grammar`); every other question is answered from them.
`check_references` is the one check that a grammar's start and references are defined.
"""
from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from ..support import deadline
from ..support.caches import cache_name, register
from ..support.diagnostics import Span
from ..support.errors import GrammarError
from .nodes import Choice, Grammar, Node, Repeat, RuleRef, Seq, TokenRef

T = TypeVar("T")


def _error(message: str, span: Span | None, code: str) -> GrammarError:
    return GrammarError(
        message,
        line=span.line if span else None,
        column=span.column if span else None,
        source=span.source if span else None,
        code=code,
    )


_FIRST: dict[int, tuple[weakref.ref[Node], tuple[RuleRef, ...], tuple[TokenRef, ...], int]] = {}
_MAX_FIRST = 16384
register(cache_name(__name__, "first_references"), _FIRST.clear, lambda: len(_FIRST), _MAX_FIRST)


def first_references(node: Node, tokens: list[TokenRef] | None = None) -> list[RuleRef]:
    """The first reference to each rule name in `node`, in source order (a shared
    sub-expression is visited once); with `tokens`, every token reference met is appended to
    it as well (the same walk). Remembered per expression object (IR nodes are immutable):
    a rule body is asked again when its grammar is merged into another (`merge.py`) and
    when the merged grammar is compiled."""
    if type(node) not in (Seq, Choice, Repeat):
        return _first_references(node, tokens)
    entry = _walked(node)
    if tokens is not None:
        tokens.extend(entry[2])
    return list(entry[1])


def expression_size(node: Node) -> int:
    """The number of distinct sequences, choices and repetitions in `node` (a shared
    sub-expression once), counted by the walk of `first_references`."""
    return _walked(node)[3] if type(node) in (Seq, Choice, Repeat) else 0


def _walked(node: Node) -> tuple[weakref.ref[Node], tuple[RuleRef, ...], tuple[TokenRef, ...],
                                 int]:
    entry = _FIRST.get(id(node))
    if entry is None or entry[0]() is not node:
        found: list[TokenRef] = []
        size: list[int] = []
        refs = _first_references(node, found, size)
        if len(_FIRST) >= _MAX_FIRST:
            _FIRST.clear()
        entry = _FIRST[id(node)] = (weakref.ref(node), tuple(refs), tuple(found), size[0])
    return entry


def _first_references(node: Node, tokens: list[TokenRef] | None,
                      size: list[int] | None = None) -> list[RuleRef]:
    seen: set[int] = set()
    names: set[str] = set()
    found: list[RuleRef] = []
    stack = [node]
    pop, push = stack.pop, stack.extend
    while stack:
        n = pop()
        kind = type(n)
        if kind is RuleRef:
            if n.name not in names:  # type: ignore[attr-defined]
                names.add(n.name)  # type: ignore[attr-defined]
                found.append(n)  # type: ignore[arg-type]
            continue
        if kind is Seq:
            kids = n.items  # type: ignore[attr-defined]
        elif kind is Choice:
            kids = n.alternatives  # type: ignore[attr-defined]
        elif kind is Repeat:
            kids = (n.item,)  # type: ignore[attr-defined]
        else:
            if kind is TokenRef and tokens is not None:
                tokens.append(n)  # type: ignore[arg-type]
            continue
        if id(n) in seen:
            continue
        seen.add(id(n))
        if not len(seen) & 4095:
            deadline.check()
        push(kids[::-1])
    if size is not None:
        size.append(len(seen))
    return found


class _LastGrammar:
    """One thread's values for the grammar it last asked about, dropped when that grammar is
    freed: a cache bounded by one grammar per live thread."""

    __slots__ = ("grammar", "values", "__weakref__")

    def __init__(self) -> None:
        self.grammar: weakref.ref[Grammar] | None = None
        self.values: dict[str, Any] = {}

    def forget(self, ref: object = None) -> None:
        """Drop the values (those of the grammar `ref` refers to, when given)."""
        if ref is None or self.grammar is ref:
            self.grammar, self.values = None, {}


_memo = threading.local()
_last_grammars: weakref.WeakSet[_LastGrammar] = weakref.WeakSet()
_last_lock = threading.Lock()


def _held() -> list[_LastGrammar]:
    with _last_lock:
        return list(_last_grammars)


def _forget_all() -> None:
    for last in _held():
        last.forget()


register(cache_name(__name__, "per_grammar"), _forget_all,
         lambda: sum(len(last.values) for last in _held()), None)


def per_grammar(grammar: Grammar, name: str, compute: Callable[[Grammar], T]) -> T:
    """`compute(grammar)`, remembered under `name` for the grammar last asked about (per
    thread, until it is freed): one compile asks the same questions of one grammar many times."""
    last: _LastGrammar | None = getattr(_memo, "last", None)
    if last is None:
        last = _memo.last = _LastGrammar()
        with _last_lock:
            _last_grammars.add(last)
    ref, values = last.grammar, last.values
    if ref is None or ref() is not grammar:
        values = {}
        last.grammar, last.values = weakref.ref(grammar, last.forget), values
    if name not in values:
        values[name] = compute(grammar)
    value: T = values[name]
    return value


def _references(grammar: Grammar) -> tuple[dict[str, list[RuleRef]], list[TokenRef]]:
    tokens: list[TokenRef] = []
    return {r.name: first_references(r.body, tokens) for r in grammar.rules}, tokens


def rule_uses(grammar: Grammar) -> dict[str, list[RuleRef]]:
    """Per rule name, `first_references` of its body."""
    return per_grammar(grammar, "references", _references)[0]


def token_references(grammar: Grammar) -> list[TokenRef]:
    """Every token reference in the rules of `grammar` (found by the walk of `rule_uses`)."""
    return per_grammar(grammar, "references", _references)[1]


def reachable_rules(grammar: Grammar) -> list[str]:
    """Names of the defined rules reachable from the start, in discovery order."""
    rules = grammar.by_name
    if grammar.start not in rules:
        return []
    uses = rule_uses(grammar)
    order = [grammar.start]
    seen = {grammar.start}
    i = 0
    while i < len(order):
        for ref in uses[order[i]]:
            if ref.name in rules and ref.name not in seen:
                seen.add(ref.name)
                order.append(ref.name)
        i += 1
    return order


def grammar_size(grammar: Grammar) -> int:
    """`expression_size` summed over the rules reachable from the start."""
    rules = grammar.by_name
    return per_grammar(grammar, "size", lambda g: sum(
        expression_size(rules[name].body) for name in reachable_rules(g)))


def dependency_order(grammar: Grammar) -> list[str]:
    """Reachable rules, each after the rules it references (back edges of cycles ignored)."""
    rules = grammar.by_name
    refs = rule_uses(grammar)

    def uses(name: str) -> Iterator[str]:
        return iter([r.name for r in refs[name]])

    if grammar.start not in rules:
        return []
    order: list[str] = []
    state = {grammar.start: 1}
    stack = [(grammar.start, uses(grammar.start))]
    while stack:
        name, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            stack.pop()
            state[name] = 2
            order.append(name)
        elif nxt in rules and nxt not in state:
            state[nxt] = 1
            stack.append((nxt, uses(nxt)))
    return order


def find_cycle(grammar: Grammar) -> list[str] | None:
    """A cycle of rule references reachable from the start (first name repeated at the end),
    or None when the reachable rules are not recursive."""
    rules = grammar.by_name
    uses = rule_uses(grammar)
    state: dict[str, int] = {}
    for root in reachable_rules(grammar):
        if root in state:
            continue
        path: list[str] = [root]
        iters = [iter(uses[root])]
        state[root] = 1
        while iters:
            ref = next(iters[-1], None)
            if ref is None:
                state[path.pop()] = 2
                iters.pop()
                continue
            name = ref.name
            if name not in rules:
                continue
            if state.get(name) == 1:
                return path[path.index(name):] + [name]
            if name not in state:
                state[name] = 1
                path.append(name)
                iters.append(iter(uses[name]))
    return None


def cyclic_components(graph: dict[str, list[str]], order: list[str]) -> list[list[str]]:
    """The strongly connected components of `graph` that contain a cycle (Tarjan's algorithm,
    without recursion), roots visited in `order`."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in order:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(graph[w])))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in graph[v]:
                    found.append(comp)
    return found


def check_references(grammar: Grammar) -> None:
    """Raise GrammarError for a missing start rule or a reachable undefined reference."""
    rules = grammar.by_name
    if grammar.start not in rules:
        raise _error(f"start rule '{grammar.start}' is not defined", None, "missing-start")
    uses = rule_uses(grammar)
    for name in reachable_rules(grammar):
        for ref in uses[name]:
            if ref.name not in rules:
                raise _error(f"rule '{ref.name}' is not defined (referenced in '{name}')",
                             ref.span, "undefined-rule")
