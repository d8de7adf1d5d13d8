"""What the analyses share: the registry of diagnostic codes, a bottom-up fold over IR
expressions without recursion, a monotone fixpoint over rules, and message helpers."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from ..support import deadline
from ..support.diagnostics import Diagnostic
from ..ir.nodes import (
    Automaton,
    CharClass,
    Choice,
    Grammar,
    Literal,
    Node,
    Repeat,
    RuleRef,
    Seq,
    Span,
)
from ..ir.graph import dependency_order, rule_uses

T = TypeVar("T")

CODES: dict[str, tuple[str, str]] = {
    "undefined-rule": ("error", "A rule is referenced but never defined."),
    "missing-start": ("error", "The start rule is not defined."),
    "unproductive": ("error", "A rule cannot derive any finite string."),
    "repeat-limit": ("error", "A repetition bound exceeds Limits.max_repeat."),
    "state-budget": ("warning", "The automaton would exceed (or exceeds) a state budget."),
    "unused-rule": ("warning", "A rule is defined but not reachable from the start rule."),
    "nullable-loop": ("warning", "A repetition whose item can match the empty string."),
    "unbounded-whitespace": ("warning", "An unbounded repetition that matches only whitespace."),
    "identical-alternatives": ("warning", "Two alternatives of one choice are identical."),
    "overlapping-literals": ("warning", "A literal alternative is a prefix of another."),
    "json-no-whitespace": ("warning", "A JSON-like grammar that never allows whitespace."),
    "left-recursion": ("info", "A rule can derive a string starting with itself."),
    "regular": ("info", "The grammar is regular: it compiles to a DFA."),
    "recursive": ("info", "The grammar is recursive: it needs the pushdown runtime."),
    "stats": ("info", "Rule and state counts."),
    "unreadable": ("error", "The input could not be read (missing file, directory, ...)."),
    "invalid-utf8": ("error", "The input is not valid UTF-8."),
    "nul-byte": ("error", "The input contains a NUL byte."),
    "budget": ("error", "A configured bound (input size, states, repetitions) was exceeded."),
    "syntax": ("error", "The grammar text could not be parsed."),
    "internal-error": ("error", "The linter failed on this input (a bug)."),
}

WHITESPACE = frozenset({0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20})


def diagnostic(code: str, message: str, span: Span | None = None,
               severity: str | None = None) -> Diagnostic:
    """A diagnostic with the registered severity of `code` (or `severity`)."""
    return Diagnostic(severity or CODES[code][0], code, message, span)


def fold(node: Node, combine: Callable[[Node, list[T]], T],
         memo: dict[int, T] | None = None) -> T:
    """`combine(n, values of n's children)` for every node, children first, computed once per
    shared sub-expression; an explicit stack, so nesting depth is not limited by recursion.
    `memo` (keyed by node id) receives every node's value when given."""
    memo = {} if memo is None else memo
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        n, ready = stack.pop()
        kind = type(n)
        kids = (n.items if kind is Seq else n.alternatives if kind is Choice  # type: ignore[union-attr]
                else (n.item,) if kind is Repeat else ())  # type: ignore[union-attr]
        if ready or not kids:
            if id(n) not in memo:
                memo[id(n)] = combine(n, [memo[id(k)] for k in kids])
                if not len(memo) & 4095:
                    deadline.check()
            continue
        if id(n) in memo:
            continue
        stack.append((n, True))
        stack.extend((k, False) for k in reversed(kids) if id(k) not in memo)
    return memo[id(node)]


def rule_worklist(grammar: Grammar, names: Iterable[str]
                  ) -> tuple[dict[str, list[str]], list[str]]:
    """(the rules of `names` that use each one, a work stack of `names` whose top is popped
    first: rules before the rules that use them, then the others) for fixpoints over rules;
    `names` must be closed under references (the reachable rules, or every rule)."""
    names = list(names)
    uses = rule_uses(grammar)
    users: dict[str, list[str]] = {name: [] for name in names}
    for name in names:
        for used in uses[name]:
            if used.name in users:
                users[used.name].append(name)
    ordered = [name for name in dependency_order(grammar) if name in users]
    placed = set(ordered)
    return users, [name for name in reversed(names) if name not in placed] + ordered[::-1]


def rule_fixpoint(grammar: Grammar, holds: Callable[[Node, set[str]], bool],
                  names: Iterable[str] | None = None) -> set[str]:
    """The least set S of rule names (of `names`, default every rule) with `holds(rule.body,
    S)` for every rule in S, where `holds` is monotone in S: a worklist that examines rules
    after the rules they use, and a rule again (once queued, not twice) when a rule it uses
    joins S."""
    rules = grammar.by_name
    users, work = rule_worklist(grammar, rules if names is None else names)
    queued = set(work)
    result: set[str] = set()
    while work:
        name = work.pop()
        queued.discard(name)
        if name in result or not holds(rules[name].body, result):
            continue
        result.add(name)
        for user in users[name]:
            if user not in result and user not in queued:
                queued.add(user)
                work.append(user)
    return result




def nullable_node(node: Node, nullable: set[str], memo: dict[int, bool] | None = None) -> bool:
    """Whether `node` can match the empty string, given the nullable rules (`memo` receives
    the answer for every sub-expression, keyed by id)."""

    def combine(n: Node, kids: list[bool]) -> bool:
        if isinstance(n, (Literal, CharClass)):
            return False
        if isinstance(n, Automaton):
            return bool(n.dfa.accepting[n.dfa.start])
        if isinstance(n, RuleRef):
            return n.name in nullable
        if isinstance(n, Repeat):
            return n.min == 0 or kids[0]
        return all(kids) if isinstance(n, Seq) else any(kids)

    return fold(node, combine, memo)


def nullable_rules(grammar: Grammar) -> set[str]:
    """Names of the rules that can derive the empty string."""
    return rule_fixpoint(grammar, nullable_node)


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def show_bytes(data: bytes) -> str:
    """`data` as a double-quoted literal, escaping quotes, backslashes, control characters and
    bytes that are not UTF-8."""
    out = []
    for ch in data.decode("utf-8", "surrogateescape"):
        code = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02X}")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def rule_span(grammar: Grammar, name: str) -> Span | None:
    """The span of the rule called `name`, if it is defined and has one."""
    rule = grammar.rule(name)
    return rule.span if rule is not None else None
