"""XGrammar's EBNF macros, read in GBNF: `Regex`, `TagDispatch`, `Token`, `ExcludeToken` and
`Substring`.

A macro is `Name(arguments)` with no space before the parenthesis; arguments are strings,
numbers, `true`/`false`, rule names and tuples of them, then `name=value` options. Each macro
becomes ordinary IR with XGrammar's documented meaning:

| macro | IR |
|---|---|
| `Regex(pattern, json_string=false, flags=...)` | the regex's language (`specs/regex.md`); without `flags`, `.` matches every code point (each `.` read as `[\\s\\S]`), with `flags`, `s` does that and `u` changes nothing; `json_string=true` intersects it with the characters a JSON string holds unescaped |
| `TagDispatch((tag, rule), …, loop_after_dispatch=true, excludes=(), stop_eos=true, stop_str=())` | free text without a tag, an excluded or a stop string, and wherever a tag is first complete, that tag's rule (then free text again when looping) — the structural tags' `dispatch`; the text ends where it may (`stop_eos`) or with a stop string, which ends it (`stop_eos=false` needs one) |
| `Token(id, …)`, `ExcludeToken(id, …)` | a `TokenRef` (the latter negated: supported repeated with `*` or `+`) |
| `Substring(chunk, …)` | every run of whole consecutive chunks (`substring.py`) |

The flag `i` (ASCII-only case folding, which Python's `re` does not have) is an error naming the
macro.
"""
from __future__ import annotations

from typing import Any

from lark import Token

from ..automata.language_ops import intersect
from ..ir.nodes import CharClass, Choice, Literal, Node, Repeat, RuleRef, Seq, TokenRef
from ..support.diagnostics import Span
from ..support.errors import GrammarError
from ..support.limits import Limits
from .free_text import dispatched, free_text
from .regex import parse_regex
from .substring import substring

__all__ = ["TupleArg", "expand_macro"]

JSON_STRING_CHAR = CharClass.of(((0, 0x1F), (0x22, 0x22), (0x5C, 0x5C)), negated=True)


class TupleArg(list):  # type: ignore[type-arg]
    """A tuple argument: its values, in order."""


class _Call:
    def __init__(self, tok: Token, args: list[Any], source: str | None) -> None:
        self.tok, self.name, self.source = tok, str(tok)[:-1], source
        self.positional = [a for a in args if not isinstance(a, tuple)]
        self.options = dict(a for a in args if isinstance(a, tuple))

    def error(self, message: str) -> GrammarError:
        return GrammarError(f"{self.name}(...): {message}", line=self.tok.line,
                            column=self.tok.column, source=self.source, code="gbnf-macro")

    def option(self, name: str, default: Any, kind: str) -> Any:
        if name not in self.options:
            return default
        value = self.options[name]
        return self.string(value) if kind == "string" else self.boolean(value) \
            if kind == "bool" else self.tuple_of_strings(value)

    def check_options(self, allowed: tuple[str, ...]) -> None:
        extra = sorted(set(self.options) - set(allowed))
        if extra:
            raise self.error(f"unknown option {extra[0]!r}" + (
                f"; expected {', '.join(allowed)}" if allowed else "; it takes none"))

    def string(self, value: Any) -> str:
        if isinstance(value, Literal):
            return value.data.decode("utf-8")
        if isinstance(value, Seq) and not value.items:
            return ""
        raise self.error(f"expected a string, got {_shown(value)}")

    def boolean(self, value: Any) -> bool:
        if isinstance(value, Token) and str(value) in ("true", "false"):
            return str(value) == "true"
        raise self.error(f"expected true or false, got {_shown(value)}")

    def integer(self, value: Any) -> int:
        if isinstance(value, Token) and str(value).isdigit() and len(str(value)) < 10:
            return int(str(value))
        raise self.error(f"expected a token id, got {_shown(value)}")

    def rule(self, value: Any) -> RuleRef:
        if isinstance(value, Token) and not str(value).isdigit():
            return RuleRef(str(value), Span(value.line or 0, value.column or 0, value.line or 0,
                                            (value.column or 0) + len(str(value)), self.source))
        raise self.error(f"expected a rule name, got {_shown(value)}")

    def tuple_of_strings(self, value: Any) -> list[str]:
        if not isinstance(value, TupleArg):
            raise self.error(f"expected a tuple of strings, got {_shown(value)}")
        return [self.string(v) for v in value]


def _shown(value: Any) -> str:
    if isinstance(value, Literal):
        return repr(value.data.decode("utf-8", "replace"))
    if isinstance(value, TupleArg):
        return "a tuple"
    return repr(str(value)) if isinstance(value, Token) else type(value).__name__


def _dot_all(pattern: str) -> str:
    """`pattern` with every `.` that stands for any character but a newline (not escaped,
    not in a class) made to stand for any character."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]" or (pattern[i - 1] == "[" or pattern[i - 2:i] == "[^")
        elif c == "[":
            in_class = True
        elif c == ".":
            c = "[\\s\\S]"
        out.append(c)
        i += 1
    return "".join(out)


def expand_macro(tok: Token, args: list[Any], limits: Limits, source: str | None) -> Node:
    """The IR of the macro call `tok` (its name and parenthesis) with `args`."""
    call = _Call(tok, args, source)
    if call.name == "Regex":
        return _regex(call, limits)
    if call.name == "TagDispatch":
        return _tag_dispatch(call, limits)
    if call.name in ("Token", "ExcludeToken"):
        call.check_options(())
        if not call.positional:
            raise call.error("needs at least one token id")
        ids = tuple((i, i) for i in map(call.integer, call.positional))
        return TokenRef(ids=ids, negated=call.name == "ExcludeToken",
                        span=Span(tok.line or 0, tok.column or 0, tok.line or 0,
                                  (tok.column or 0) + len(call.name), source))
    if call.name == "Substring":
        call.check_options(())
        try:
            return substring([call.string(c) for c in call.positional], limits)
        except GrammarError as exc:
            raise call.error(exc.message) from None
    raise call.error("this macro is not supported yet")


def _regex(call: _Call, limits: Limits) -> Node:
    call.check_options(("json_string", "flags"))
    if len(call.positional) != 1:
        raise call.error("takes exactly one pattern")
    pattern = call.string(call.positional[0])
    flags = call.option("flags", None, "string")
    if flags is not None and (set(flags) - {"s", "u"}):
        raise call.error(f"flags {flags!r}: only 's' and 'u' are supported ('i' folds ASCII "
                         "only in XGrammar, which Python's re cannot say)")
    try:
        node = parse_regex(_dot_all(pattern) if flags is None or "s" in flags else pattern,
                           limits=limits)
    except GrammarError as exc:
        raise call.error(exc.message) from None
    if call.option("json_string", False, "bool"):
        return intersect(node, Repeat(JSON_STRING_CHAR, 0, None), limits=limits,
                         label="JSON string body")
    return node


def _tag_dispatch(call: _Call, limits: Limits) -> Node:
    call.check_options(("loop_after_dispatch", "excludes", "stop_eos", "stop_str"))
    groups: dict[str, list[Node]] = {}
    for pair in call.positional:
        if not (isinstance(pair, TupleArg) and len(pair) == 2):
            raise call.error(f"expected a (tag, rule) pair, got {_shown(pair)}")
        tag = call.string(pair[0])
        if not tag:
            raise call.error("a tag must not be empty")
        groups.setdefault(tag, []).append(Seq((Literal(tag.encode("utf-8")),
                                               call.rule(pair[1]))))
    excludes = call.option("excludes", [], "tuple")
    for text in excludes:
        if not text or any(tag.startswith(text) for tag in groups):
            raise call.error(f"excluded string {text!r} is empty or begins a tag")
    ends = call.option("stop_str", [], "tuple")
    for text in ends:
        if not text or any(tag.startswith(text) for tag in groups):
            raise call.error(f"stop string {text!r} is empty or begins a tag")
    stop_eos = call.option("stop_eos", True, "bool")
    if not stop_eos and not ends:
        raise call.error("stop_eos=false needs a stop_str: the text could never end")
    stops = frozenset((*groups, *excludes, *ends))
    rest = Choice(tuple([free_text(stops, "", None, limits)] if stop_eos else []) + tuple(
        Seq((free_text(stops, text, None, limits), Literal(text.encode("utf-8"))))
        for text in dict.fromkeys(ends)))
    return dispatched(groups, lambda tag: free_text(stops, tag, None, limits) if tag else rest,
                      [], False, not call.option("loop_after_dispatch", True, "bool"))
