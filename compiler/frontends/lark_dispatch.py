"""Tool-call dispatch written in Lark, read as XGrammar and llguidance read it.

Both peers document one shape for "free text with tool calls" in Lark:

    start: (tool_a | tool_b | ...)* tail      tail: TEXT     (or TEXT directly)
    tool_a: head_a <the call's grammar>
    head_a[lazy]: TEXT "<trigger>"             (or [suffix="<trigger>"] / [stop=...]: TEXT,
                                                or TEXT <|token|>, or inline: TEXT <|token|> ...)

with TEXT a terminal of any text. Read as a context-free grammar with committed-shortest heads
(`rule_options.py`), the tail could still hold a trigger; both peers instead commit to the call
when its trigger is complete (llguidance's lexer ends a lazy lexeme at its first match,
XGrammar lowers the shape to its `TagDispatch`). So a grammar of exactly this shape is read
their way: free text in which a complete trigger opens that trigger's calls (a trigger written
in part stays free text), calls and text in any number, the output ending in free text
(`free_text.dispatched`). A standalone head, `start: head`, is XGrammar's standalone lazy
rule: free text, or free text up to the first trigger, which ends the output.

Only the shape is recognized: every tool opens with a trigger head, all triggers are strings
or all are tokens, TEXT matches every text, and there is no `%ignore`. Any other grammar keeps
the committed-shortest reading.
"""
from __future__ import annotations

from ..automata.language_ops import difference
from ..ir.nodes import Choice, Literal, Node, Repeat, Rule, RuleRef, Seq, TokenRef
from ..support.errors import GrammarError
from ..support.limits import Limits
from .free_text import dispatched, free_text
from .json_schema.ecma_regex import ANY_STRING

__all__ = ["dispatch_pattern"]

Options = dict[str, tuple[int, dict[str, str | None]]]


class _Shape:
    def __init__(self, rules: dict[str, Rule], options: Options, markers: dict[str, Node],
                 limits: Limits) -> None:
        self.rules, self.options, self.markers, self.limits = rules, options, markers, limits
        self.any_text: dict[object, bool] = {}

    def is_text(self, node: Node) -> bool:
        """Whether `node` is (or names, directly or through one rule) any text."""
        if isinstance(node, RuleRef):
            if node.name not in self.rules:
                return False
            key: object = node.name
            if key not in self.any_text:
                self.any_text[key] = False  # a rule naming itself is no terminal
                self.any_text[key] = self.is_text(self.rules[node.name].body)
            return self.any_text[key]
        if id(node) not in self.any_text:
            try:
                rest = difference(ANY_STRING, node, limits=self.limits)
                self.any_text[id(node)] = rest.dfa.is_empty_language
            except (GrammarError, TypeError, AssertionError):
                self.any_text[id(node)] = False  # not regular: not a terminal
        return self.any_text[id(node)]

    def head(self, name: str) -> Node | None:
        """The trigger of head rule `name` (a Literal or a TokenRef), if it is one."""
        if name not in self.options or name not in self.rules:
            return None
        options = self.options[name][1]
        body = self.rules[name].body
        marker = options.get("suffix") or options.get("stop")
        if marker is not None:
            found = self.markers.get(marker)
            return _trigger(found) if isinstance(found, Literal) and self.is_text(body) \
                else None
        if "lazy" not in options:
            return None
        if isinstance(body, RuleRef) and body.name in self.rules:  # /(.|\n)*<call>/
            body = self.rules[body.name].body
            if isinstance(body, Seq) and len(body.items) == 2 and self.is_text(body.items[0]):
                return _trigger(body.items[1])
            return None
        if isinstance(body, Seq) and len(body.items) == 2 and self.is_text(body.items[0]):
            return _trigger(self.literal(body.items[1]))
        return None

    def literal(self, node: Node) -> Node:
        """A string terminal's text (Lark names each string literal a terminal)."""
        if isinstance(node, RuleRef) and node.name in self.rules and \
                isinstance(self.rules[node.name].body, Literal):
            return self.rules[node.name].body
        return node

    def tool(self, name: str) -> tuple[Node, Node] | None:
        """(trigger, the whole call from its trigger on) of tool rule `name`."""
        body = self.rules[name].body if name in self.rules else None
        items = body.items if isinstance(body, Seq) else (body,) if body is not None else ()
        if items and isinstance(items[0], RuleRef):
            trigger = self.head(items[0].name)
            if trigger is not None:
                return trigger, Seq((trigger, *items[1:]))
        if len(items) >= 2 and self.is_text(items[0]) and isinstance(items[1], TokenRef) and \
                _trigger(items[1]) is not None:
            return items[1], Seq(items[1:])
        return None


def _trigger(node: Node) -> Node | None:
    if isinstance(node, Literal) and node.data:
        return node
    if isinstance(node, TokenRef) and not node.negated and \
            len(node.texts) + sum(hi - lo + 1 for lo, hi in node.ids) == 1:
        return node
    return None


def dispatch_pattern(rules: dict[str, Rule], start: str, options: Options,
                     markers: dict[str, Node], limits: Limits) -> Node | None:
    """The start rule's language read as the peers' dispatch, or None when the grammar does
    not have that shape (module docstring)."""
    shape = _Shape(rules, options, markers, limits)
    body = rules[start].body
    if isinstance(body, RuleRef):  # standalone head
        trigger = shape.head(body.name)
        return None if trigger is None else _lower(shape, [(trigger, trigger)], True)
    if not (isinstance(body, Seq) and len(body.items) == 2 and
            isinstance(body.items[0], Repeat) and body.items[0].min == 0 and
            body.items[0].max is None and shape.is_text(body.items[1])):
        return None
    item = body.items[0].item
    names = item.alternatives if isinstance(item, Choice) else (item,)
    if not all(isinstance(n, RuleRef) for n in names):
        return None
    calls = [shape.tool(n.name) for n in names]  # type: ignore[union-attr]
    if any(c is None for c in calls):
        return None
    return _lower(shape, calls, False)  # type: ignore[arg-type]


def _lower(shape: _Shape, calls: list[tuple[Node, Node]], once: bool) -> Node | None:
    if len({type(t) for t, _ in calls}) != 1:
        return None  # string and token triggers mixed: neither peer dispatches these
    groups: dict[object, list[Node]] = {}
    for trigger, call in calls:
        groups.setdefault(trigger, []).append(call)
    if isinstance(calls[0][0], Literal):
        words = {t: t.data.decode("utf-8") for t in groups}  # type: ignore[attr-defined]
        stops = frozenset(words.values())
        return dispatched(groups, lambda t: free_text(stops, words.get(t, ""), None,
                                                      shape.limits), [], False, once)
    ids = tuple(r for t in groups for r in t.ids)  # type: ignore[attr-defined]
    texts = tuple(x for t in groups for x in t.texts)  # type: ignore[attr-defined]
    free = Repeat(TokenRef(ids=ids, texts=texts, negated=True), 0, None)
    return dispatched(groups, lambda _: free, [], False, once)
