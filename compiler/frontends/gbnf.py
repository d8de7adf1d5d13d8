"""The GBNF frontend: llama.cpp grammar text to grammar IR (printing back is `gbnf_printer`).

The meta-grammar lives in `grammask/specs/gbnf.lark` (LALR(1), contextual lexer, a post-lexer for
line breaks); the language, its exact semantics and what is rejected are documented in
`grammask/specs/gbnf.md`. The IR is built by parser callbacks (`_Builder`) while Lark parses.
Text the direct reader (`gbnf_reader.py`) is sure of is read by it instead, through the same
callbacks and about twice as fast; everything else, every error included, is Lark's. `simplify`
and `to_gbnf` walk the IR with explicit stacks, so nesting depth never becomes Python recursion.
"""
from __future__ import annotations

import contextvars
import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

from lark import Lark, Token, UnexpectedInput, UnexpectedToken
from lark.lark import PostLex

from ..ir.nodes import (
    CharClass,
    Grammar,
    Literal,
    Node,
    Ranges,
    Repeat,
    Rule,
    RuleRef,
    Seq,
    TokenRef,
    complement_ranges,
)
from ..ir.normalize import alternation, concat, cover, simplify
from ..support import deadline
from ..support.caches import memo
from ..support.diagnostics import Span
from ..support.errors import GrammarError
from ..support.limits import DEFAULT_LIMITS, Limits
from .gbnf_macros import TupleArg, expand_macro
from .gbnf_options import strip_options, with_options
from .gbnf_printer import is_gbnf_name, to_gbnf
from .gbnf_reader import Unread, read

__all__ = ["BUILDER", "PARSE_CONTEXT", "Lines", "ParseContext", "is_gbnf_name", "parse_gbnf",
           "parse_gbnf_with", "simplify", "to_gbnf"]


_ANY: Ranges = complement_ranges(())
_SIMPLE_ESCAPES = {"n": 0x0A, "t": 0x09, "r": 0x0D, "\\": 0x5C, '"': 0x22, "[": 0x5B, "]": 0x5D}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_ESCAPE_LIST = r'\n \t \r \\ \" \[ \] \xNN \uNNNN \UNNNNNNNN'
_CONTINUATION = ("a rule ends at the end of its line, unless the line ends with '::=' or '|' "
                 "or is inside parentheses")
_TOKEN_REF = re.compile(r"!?<(?:\[[0-9]*\]>?|[^>\r\n]{0,40}>?)")
_ID_RANGE = re.compile(r"\s*([0-9]{1,9})\s*(?:-\s*([0-9]{1,9})\s*)?")
_RULE_OPTIONS = re.compile(r"\[[a-z_]+(=[^\]]*)?(,\s*[a-z_]+(=[^\]]*)?)*\]")
_DEFINITION = re.compile(r"^[ \t]*[A-Za-z0-9_-]+[ \t]*::=", re.MULTILINE)
_DISPLAY = {"NAME": "a rule name", "DEFINE": "'::='", "BAR": "'|'", "LPAR": "'('", "RPAR": "')'",
            "DOT": "'.'", "OP": "'*', '+', '?'", "LBRACE": "'{'", "RBRACE": "'}'", "COMMA": "','",
            "INT": "a number", "STRING": 'a string "..."', "CLASS": "a class [...]",
            "MACRO": "a macro such as Regex(", "TOKEN_REF": "a token reference <...>",
            "EQUALS": "'='",
            "_NL": "a line break", "$END": "the end of the grammar"}
_RULE_START = ("; expected a rule name", "; expected one of: a rule name, the end of the grammar")


@dataclass
class ParseContext:
    """What the parser callbacks of one parse read: its text, source name and limits, and the
    empty-string nodes built so far."""

    text: str
    source: str | None
    limits: Limits
    empty_strings: dict[int, Seq] = field(default_factory=dict)


_Quant = tuple[int, "int | None", tuple[int, int]]  # min, max, (line, column) of its last character
PARSE_CONTEXT: contextvars.ContextVar[ParseContext] = contextvars.ContextVar("grammask_gbnf_context")
"""The `ParseContext` of the parse under way (set around every parse)."""




def _err(message: str, line: int | None, column: int | None, code: str = "gbnf-syntax") -> GrammarError:
    return GrammarError(message, line=line, column=column, source=PARSE_CONTEXT.get().source, code=code)


def _show(text: str) -> str:
    text = text if len(text) <= 40 else text[:40] + "..."
    return f"'{text}'" if text.isprintable() else repr(text)


def _first(tok: Token) -> tuple[int, int]:
    return tok.line or 1, tok.column or 1


def _last(tok: Token) -> tuple[int, int]:
    return tok.end_line or 1, max((tok.end_column or 2) - 1, 1)


def _tok_span(tok: Token) -> Span:
    return Span(*_first(tok), *_last(tok), PARSE_CONTEXT.get().source)




def _at(tok: Token, offset: int) -> tuple[int, int]:
    """Line and column of character `offset` of a token (which may span lines)."""
    text, (line, column) = str(tok), _first(tok)
    newlines = text.count("\n", 0, offset)
    if not newlines:
        return line, column + offset
    return line + newlines, offset - text.rindex("\n", 0, offset)


def _char(tok: Token, text: str, i: int) -> tuple[int, int]:
    """Decode the character or escape at offset `i` of a string or class token `tok` whose text is
    `text`: (code point, offset after it)."""
    if text[i] != "\\":
        return ord(text[i]), i + 1
    letter = text[i + 1]
    if letter in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[letter], i + 2
    if letter in _HEX_ESCAPES:
        size = _HEX_ESCAPES[letter]
        digits = text[i + 2:i + 2 + size]
        if len(digits) != size or not _HEX_DIGITS.issuperset(digits):
            raise _err(f"escape '\\{letter}' needs exactly {size} hex digits, e.g. "
                       f"\\{letter}{'0041'[-size:].rjust(size, '0')}", *_at(tok, i))
        cp = int(digits, 16)
        if cp > 0x10FFFF:
            raise _err(f"escape {_show(text[i:i + 2 + size])} is above U+10FFFF", *_at(tok, i))
        return cp, i + 2 + size
    raise _err(f"unknown escape {_show(text[i:i + 2])}; GBNF escapes are {_ESCAPE_LIST}", *_at(tok, i))






class Lines(PostLex):
    """Drops the line breaks llama.cpp skips; the remaining ones end rules."""

    always_accept = ("_NL",)

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        return self.lines(deadline.checked(stream))

    @staticmethod
    def lines(stream: Iterator[Token]) -> Iterator[Token]:
        """The tokens of `stream` but the line breaks llama.cpp skips (no deadline checks:
        the stream makes its own)."""
        depth, previous = 0, None
        for tok in stream:
            if tok.type == "_NL":
                if depth > 0 or previous in (None, "_NL", "BAR", "DEFINE"):
                    continue
            elif tok.type in ("LPAR", "MACRO"):
                depth += 1
            elif tok.type == "RPAR":
                depth = max(depth - 1, 0)
            previous = tok.type
            yield tok


class _Builder:
    """Parser callbacks: terminals become IR leaves, rules combine them bottom-up."""

    def STRING(self, tok: Token) -> Node:
        text, i, cps = str(tok), 1, []
        while i < len(text) - 1:
            cp, j = _char(tok, text, i)
            if 0xD800 <= cp <= 0xDFFF:
                raise _err(f"lone surrogate U+{cp:04X} in a string: only Unicode scalar values can "
                           "be matched", *_at(tok, i))
            cps.append(cp)
            i = j
        if not cps:
            node = Seq((), _tok_span(tok))
            PARSE_CONTEXT.get().empty_strings[id(node)] = node
            return node
        return Literal("".join(map(chr, cps)).encode("utf-8"), _tok_span(tok))

    def CLASS(self, tok: Token) -> CharClass:
        text = str(tok)
        negated = text.startswith("[^")
        i, end = 1 + negated, len(text) - 1
        if i == end:
            raise _err(f"empty character class {_show(text)}: llama.cpp reads it as the empty "
                       "string; write \"\" for the empty string or . for any character", *_first(tok))
        ranges: list[tuple[int, int]] = []
        while i < end:
            lo, j = _char(tok, text, i)
            if text[j] == "-" and j + 1 < end:
                hi, k = _char(tok, text, j + 1)
                if lo > hi:
                    raise _err(f"reversed character range {_show(text[i:k])}: U+{lo:04X} is after "
                               f"U+{hi:04X}", *_at(tok, i))
                ranges.append((lo, hi))
                i = k
            else:
                ranges.append((lo, lo))
                i = j
        return CharClass.of(ranges, negated, _tok_span(tok))

    def macro(self, children: list) -> Node:
        ctx = PARSE_CONTEXT.get()
        node = expand_macro(children[0], [c for c in children[1:] if not (
            isinstance(c, Token) and c.type in ("COMMA", "RPAR"))], ctx.limits, ctx.source)
        return dataclasses.replace(node, span=cover(_tok_span(children[0]),
                                                    _tok_span(children[-1])))

    def named(self, children: list) -> tuple[str, Any]:
        return (str(children[0]), children[2])

    def tuple(self, children: list) -> TupleArg:
        return TupleArg([c for c in children if not (isinstance(c, Token) and c.type in
                                                     ("LPAR", "RPAR", "COMMA"))])

    def DOT(self, tok: Token) -> CharClass:
        return CharClass(_ANY, _tok_span(tok))

    def TOKEN_REF(self, tok: Token) -> TokenRef:
        text = str(tok)
        negated = text.startswith("!")
        body = text[negated:]
        if not body.startswith("<["):
            return TokenRef(texts=(body,), negated=negated, span=_tok_span(tok))
        ranges: list[tuple[int, int]] = []
        for part in body[2:-2].split(","):
            m = _ID_RANGE.fullmatch(part)
            if m is None:
                raise _err(f"malformed token id list {_show(body)}: expected ids and ranges "
                           f"such as <[151657]> or <[100-200,300]>", *_first(tok),
                           "gbnf-syntax")
            lo = int(m.group(1))
            hi = int(m.group(2)) if m.group(2) is not None else lo
            if hi < lo:
                raise _err(f"reversed token id range {part.strip()!r} in {_show(body)}",
                           *_first(tok), "gbnf-syntax")
            ranges.append((lo, hi))
        return TokenRef(ids=tuple(ranges), negated=negated, span=_tok_span(tok))

    def ref(self, children: list[Token]) -> RuleRef:
        return RuleRef(str(children[0]), _tok_span(children[0]))

    def bounds(self, children: list[Token]) -> _Quant:
        lbrace, close = children[0], children[-1]
        ints = [t for t in children if t.type == "INT"]
        if children[1].type == "COMMA":
            raise _err("a repetition needs its minimum: llama.cpp requires a number after '{'; "
                       "write {0,n} instead of {,n}", *_first(lbrace))
        lo = _count(ints[0])
        has_comma = any(t.type == "COMMA" for t in children)
        hi = (_count(ints[1]) if len(ints) == 2 else None) if has_comma else lo
        if hi is not None and lo > hi:
            raise _err(f"bad repetition {{{lo},{hi}}}: minimum {lo} is greater than maximum {hi}",
                       *_first(lbrace))
        return lo, hi, _last(close)

    def repeat(self, children: list) -> Node:
        item: Node = children[0]
        quant: Token | _Quant = children[1]
        if isinstance(quant, Token):
            quant = {"*": (0, None), "+": (1, None), "?": (0, 1)}[str(quant)] + (_last(quant),)
        (lo, hi, (end_line, end_column)), span = quant, item.span
        assert span is not None
        if PARSE_CONTEXT.get().empty_strings.get(id(item)) is item:
            raise _err('nothing to repeat: llama.cpp rejects a repetition of the empty string ""; '
                       "write ()* or drop it", span.line, span.column)
        if lo == hi == 1:
            return item
        return Repeat(item, lo, hi, Span(span.line, span.column, end_line, end_column, span.source))

    def sequence(self, items: list[Node]) -> Node:
        return concat(items)

    def alternatives(self, children: list) -> Node:
        alts: list[Node] = children[0::2]
        bars: list[Token] = children[1::2]
        for k, alt in enumerate(alts):
            if alt.span is None and bars:
                alts[k] = dataclasses.replace(alt, span=_tok_span(bars[min(k, len(bars) - 1)]))
        return alternation(alts, cover(alts[0].span, alts[-1].span))

    def group(self, children: list) -> Node:
        lpar, node, rpar = children
        return dataclasses.replace(node, span=cover(_tok_span(lpar), _tok_span(rpar)))

    def rule(self, children: list) -> Rule:
        name, define, body = children
        if body.span is None:
            body = dataclasses.replace(body, span=_tok_span(define))
        return Rule(str(name), body, cover(_tok_span(name), body.span))

    def start(self, rules: list[Rule]) -> Grammar:
        seen: dict[str, Rule] = {}
        for r in rules:
            first = seen.setdefault(r.name, r)
            if first is not r:
                assert r.span is not None and first.span is not None
                raise _err(f"rule {r.name!r} is defined twice; first at {first.span.line}:"
                           f"{first.span.column}", r.span.line, r.span.column, "gbnf-duplicate-rule")
        return Grammar(tuple(rules))


def _count(tok: Token) -> int:
    digits, limits = str(tok), PARSE_CONTEXT.get().limits
    if len(digits) > 9 or int(digits) > limits.max_repeat:
        shown = digits if len(digits) <= 20 else f"{digits[:12]}... ({len(digits)} digits)"
        budget = limits.exceeded("max_repeat", int(digits) if len(digits) <= 20 else shown,
                                 "repetition count", shown=shown)
        line, column = _first(tok)
        raise budget.located(line=line, column=column, source=PARSE_CONTEXT.get().source)
    return int(digits)


def _token_ref_error(tok: Token) -> GrammarError:
    ctx = PARSE_CONTEXT.get()
    m = _TOKEN_REF.match(ctx.text, tok.start_pos or 0)
    shown = m.group() if m else str(tok)
    return _err(f"malformed or misplaced token reference {_show(shown)}: write <[id]>, "
                "<[lo-hi,id]>, <text> (the token whose text is exactly that) or !<...>, where "
                "a string could stand", *_first(tok), "gbnf-syntax")


def _read(text: str, source: str | None, limits: Limits, direct: bool) -> Grammar:
    """The grammar of `text`: by the direct reader (`gbnf_reader`) where it is sure of the
    text (and `direct`), else by Lark's parser, which reports every error."""
    if direct:
        try:
            return read(text, BUILDER, Lines.lines)
        except (Unread, GrammarError):
            if deadline.expired():
                raise
        PARSE_CONTEXT.set(ParseContext(text, source, limits))
    return _parser().parse(text)


BUILDER = _Builder()
"""The parser callbacks, shared by Lark's parser and the direct reader."""


@memo(maxsize=1, static=True)
def _parser() -> Lark:
    grammar = (files("grammask.specs") / "gbnf.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", lexer="contextual", postlex=Lines(),
                transformer=BUILDER, maybe_placeholders=False)


def _end_position(text: str) -> tuple[int, int]:
    return text.count("\n") + 1, len(text) - text.rfind("\n")


def _expected(e: UnexpectedInput) -> str:
    names = set(getattr(e, "expected", None) or getattr(e, "allowed", None) or ())
    state = getattr(e, "state", None)
    try:
        names = set(state.parse_conf.parse_table.states[state.position])  # type: ignore[union-attr]
    except (AttributeError, KeyError, TypeError):
        names.discard("_NL")
    stack = getattr(state, "value_stack", None) or []
    nested = any(isinstance(v, Token) and v.type == "LPAR" for v in stack)
    names -= {"_NL", "$END"} if nested else {"RPAR"}
    shown = sorted({_DISPLAY[n] for n in names if n in _DISPLAY})
    if not shown:
        return ""
    return f"; expected {shown[0]}" if len(shown) == 1 else f"; expected one of: {', '.join(shown)}"


def _syntax_error(e: UnexpectedInput, text: str) -> GrammarError:
    """A readable GrammarError for a Lark parse failure."""
    token = getattr(e, "token", None)
    if not isinstance(e, UnexpectedToken) or token is None:
        line, column = getattr(e, "line", None), getattr(e, "column", None)
        pos = getattr(e, "pos_in_stream", None) or 0
        char = text[pos:pos + 1]
        if char == '"':
            return _err("unterminated string: '\"' is never closed", line, column)
        if char == "[":
            return _err("unterminated character class: '[' is never closed by ']'", line, column)
        if char in ("<", "!"):
            return _token_ref_error(Token("TOKEN_REF", char, pos, line, column))
        return _err(f"unexpected character {_show(char)}{_expected(e)}", line, column)
    kind, (line, column), shown = token.type, _first(token), _show(str(token))
    stack = getattr(getattr(e, "state", None), "value_stack", None) or []
    opener = next((v for v in reversed(stack) if isinstance(v, Token) and v.type == "LPAR"), None)
    if kind == "TOKEN_REF":
        return _token_ref_error(token)
    if kind == "$END" and opener is not None:
        return _err("unbalanced parenthesis: '(' is never closed by ')'", *_first(opener))
    if kind == "CLASS" and _RULE_OPTIONS.fullmatch(str(token)):
        return _err(f"rule options {shown} (XGrammar's EBNF) are not supported", line, column)
    message = {
        "$END": f"unexpected end of the grammar{_expected(e)}",
        "RPAR": "unbalanced parenthesis: ')' has no matching '('",
        "OP": f"nothing to repeat: {shown} must follow a string, class, '.', rule name or group",
        "DEFINE": f"unexpected '::=': a rule definition 'name ::= ...' starts a new line ({_CONTINUATION})",
        "_NL": f"unexpected line break{_expected(e)} ({_CONTINUATION})",
    }.get("OP" if kind == "LBRACE" else kind)
    if message is None and _expected(e) in _RULE_START:
        message = f"unexpected {shown}; expected a rule definition 'name ::= ...' ({_CONTINUATION})"
    where = _end_position(text) if kind == "$END" else (line, column)
    return _err(message or f"unexpected {shown}{_expected(e)}", *where)


def parse_gbnf(text: str, *, source: str | None = None, start: str = "root",
               limits: Limits = DEFAULT_LIMITS) -> Grammar:
    """Parse llama.cpp GBNF text into a Grammar whose start rule is `start`.

    Undefined references and a missing start rule are left to the analyses. Raises GrammarError
    (1-based `.line`/`.column`) for malformed or unsupported syntax, BudgetExceeded for text or
    repetition counts over `limits`, TypeError for arguments of the wrong type.
    """
    return parse_gbnf_with(text, source, start, limits, direct=True)


def parse_gbnf_with(text: str, source: str | None, start: str, limits: Limits,
                    direct: bool) -> Grammar:
    """`parse_gbnf`; with `direct` False, every text is parsed by Lark alone (the definition
    the direct reader is tested against)."""
    if not isinstance(text, str):
        raise TypeError(f"parse_gbnf() needs a str grammar, got {type(text).__name__}")
    if not isinstance(start, str):
        raise TypeError(f"parse_gbnf() needs start to be a str, got {type(start).__name__}")
    if not isinstance(limits, Limits):
        raise TypeError(f"parse_gbnf() needs limits to be a Limits, got {type(limits).__name__}")
    if len(text) > limits.max_pattern_length:
        raise limits.exceeded("max_pattern_length", len(text), "GBNF grammar length")
    # Counted before parsing, which takes seconds for 10,000 rules.
    defined = len(_DEFINITION.findall(text))
    if defined > limits.max_rules:
        raise limits.exceeded("max_rules", defined, "rule definitions")
    token = PARSE_CONTEXT.set(ParseContext(text, source, limits))
    try:
        nul = text.find("\0")
        if nul >= 0:
            raise _err("NUL character in the grammar: llama.cpp stops reading there; write \\x00 "
                       "inside a string or class", *_end_position(text[:nul]))
        text, options = strip_options(text)
        with deadline.compile_deadline(limits):
            grammar = _read(text, source, limits, direct)
            assert isinstance(grammar, Grammar)
            rules = with_options(grammar, text, options, limits) if options else grammar.rules
        return Grammar(rules, start=start, source=source)
    except UnexpectedInput as e:
        raise _syntax_error(e, text) from None
    except RecursionError:
        raise _err("grammar is too deeply nested", None, None) from None
    finally:
        PARSE_CONTEXT.reset(token)
