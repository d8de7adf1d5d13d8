r"""Where things are in a Lark grammar's text, and Lark's exceptions as grammask GrammarErrors.

Lark's loaded grammar keeps no positions, so rule and terminal definitions are found again by
scanning the text (best effort: definitions, `%import` and `%declare` lines at line starts).

`check_literals` lexes a text before Lark's loader does: Lark's patterns for string and regex
literals (`"(\\"|\\\\|[^"\n])*?"`) read a backslash two ways, so on a literal that does not
close they backtrack in time exponential in its backslashes (a line of twenty `\\.` pairs
takes seconds). Here the literals are read without that ambiguity (a backslash escapes the
next character); every other terminal is Lark's own. A text Lark's lexer rejects is rejected
here first, as the same syntax error at its line:col; on any other text both read the same
tokens (a literal closes where its escapes say), so Lark's lexer never backtracks far. Lark
accepts a literal that closes only with a backslash read as a character (`"abc\"`) and then
refuses its escaping; here that is a syntax error at the literal.
"""
from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from contextlib import contextmanager

from lark.common import LexerConf
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.lexer import BasicLexer, LexerState, PatternRE, TerminalDef
from lark.load_grammar import TERMINALS
from lark.utils import TextSlice

from ..support.diagnostics import Span
from ..support.errors import GrammarError

__all__ = ["SpanIndex", "check_literals", "lark_errors"]

_LITERALS = {"STRING": r'"(?:[^"\\\n]|\\[^\n])*"i?',
             "REGEXP": r"/(?!/)(?:[^/\\]|\\[\s\S])*/[imslux]*"}
"""Lark's grammar-file literals without a second reading of a backslash (module docstring)."""
_LEXER: list[BasicLexer] = []

_NAME = r"_?[A-Za-z][_A-Za-z0-9]*"
_DEFINITION = re.compile(
    rf"^[ \t]*(?:%override[ \t]+|%extend[ \t]+)?[!?]*(?P<name>{_NAME})[ \t]*(?:\{{[^}}\n]*\}})?"
    r"[ \t]*(?:\.[ \t]*[+-]?[0-9]+)?[ \t]*:", re.MULTILINE)
_DIRECTIVE = re.compile(r"^[ \t]*%(?P<kind>import|declare|ignore)\b(?P<rest>.*)$", re.MULTILINE)
_WORD = re.compile(_NAME)
_QUOTED = re.compile(r"'([^'\s]+)'")
_AT = re.compile(r"at line (\d+) column (\d+)")


class SpanIndex:
    """Spans of definitions and directives in one grammar text."""

    def __init__(self, text: str, source: str | None) -> None:
        self.text = text
        self.source = source
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.definitions: dict[str, Span] = {}
        self.ignores: list[Span] = []
        for m in _DEFINITION.finditer(text):
            self.definitions.setdefault(m["name"], self.span(m.start("name"), len(m["name"])))
        for m in _DIRECTIVE.finditer(text):
            if m["kind"] == "ignore":
                self.ignores.append(self.span(m.start("kind") - 1, len(m.group().strip())))
                continue
            for w in _WORD.finditer(m["rest"]):
                self.definitions.setdefault(w.group(), self.span(m.start("rest") + w.start(), len(w.group())))

    def span(self, offset: int, length: int) -> Span:
        """The span of text[offset:offset+length] (1-based, inclusive columns)."""
        line = bisect.bisect_right(self._starts, offset)
        column = offset - self._starts[line - 1] + 1
        return Span(line, column, line, column + max(length, 1) - 1, self.source)

    def of_name(self, name: str) -> Span | None:
        """Where `name` is defined or imported; template instances `t{a,b}` point at `t`,
        Lark's helper names `__IGNORE_<n>` at the n-th `%ignore`."""
        base = name.split("{", 1)[0]
        if base in self.definitions:
            return self.definitions[base]
        m = re.fullmatch(r"__IGNORE_([0-9]+)", name)
        if m and int(m[1]) < len(self.ignores):
            return self.ignores[int(m[1])]
        return None

    def of_text(self, needle: str | None) -> Span | None:
        """The first occurrence of `needle` in the text, if any."""
        if not needle:
            return None
        i = self.text.find(needle)
        return self.span(i, len(needle)) if i >= 0 else None

    def of_word(self, word: str) -> Span | None:
        """Where `word` is defined, else its first whole-word occurrence."""
        if word in self.definitions:
            return self.definitions[word]
        m = re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", self.text)
        return self.span(m.start(), len(word)) if m else None

    def error(self, message: str, code: str, span: Span | None = None) -> GrammarError:
        """A GrammarError at `span`, or else where the first name the message mentions is."""
        if span is None:
            quoted = [w for w in _QUOTED.findall(message) if _WORD.fullmatch(w)]
            bare = [w for w in _WORD.findall(message) if w in self.definitions]
            for word in quoted + bare:
                span = self.of_word(word)
                if span is not None:
                    break
        return GrammarError(message, line=span.line if span else None,
                            column=span.column if span else None, source=self.source, code=code)


def _first_paragraph(message: str) -> str:
    return message.strip().split("\n\n", 1)[0].strip()


_FRIENDLY = {"RULE": "a rule name", "TERMINAL": "a terminal name", "STRING": "a string",
             "REGEXP": "a regexp", "NUMBER": "a number", "OP": "an operator", "_NL": "a new line",
             "_NL_OR": "'|' on a new line", "RULE_MODIFIERS": "'!' or '?'"}
_PUNCTUATION = {"_LPAR": "(", "_RPAR": ")", "_LBRA": "[", "_RBRA": "]", "_LBRACE": "{", "_RBRACE": "}",
                "_COLON": ":", "_COMMA": ",", "_OR": "|", "_DOT": ".", "_DOTDOT": "..", "TILDE": "~",
                "_TO": "->", "_IGNORE": "%ignore", "_OVERRIDE": "%override", "_DECLARE": "%declare",
                "_EXTEND": "%extend", "_IMPORT": "%import"}


def _friendly(name: str) -> str:
    if name in _PUNCTUATION:
        return f"'{_PUNCTUATION[name]}'"
    return _FRIENDLY.get(name, name)


_DIALECT_HINTS = {
    "[": " (rule options such as [lazy] go between a rule's name and its colon)",
    "@": " (@name, a named grammar, stands where a rule may stand, not in a terminal)",
    "&": " (& intersects terminals: use it in a terminal definition)",
}
"""What a character that is not Lark's syntax most likely is, as llguidance writes it."""


def _syntax(e: UnexpectedInput, index: SpanIndex) -> GrammarError:
    line = e.line if isinstance(e.line, int) and e.line > 0 else None
    column = e.column if isinstance(e.column, int) and e.column > 0 else None
    if isinstance(e, UnexpectedToken):
        token = e.token
        if token.type == "$END":
            what = "end of grammar"
        elif token.type.startswith("_NL"):
            what = "end of line"
        else:
            what = repr(str(token))
        expected = sorted({_friendly(n) for n in (e.accepts or e.expected) if not n.startswith("$")})
        hint = f"; expected one of: {', '.join(expected)}" if expected else ""
        message = f"syntax error: unexpected {what}{hint}" + _DIALECT_HINTS.get(str(token), "")
    elif isinstance(e, UnexpectedCharacters):
        message = f"syntax error: unexpected character {e.char!r}" + _DIALECT_HINTS.get(e.char, "")
    else:
        message = f"syntax error: {_first_paragraph(str(e))}"
    return GrammarError(message, line=line, column=column, source=index.source, code="lark-syntax")


def _lark_error(e: LarkError, index: SpanIndex) -> GrammarError:
    message = _first_paragraph(str(e)) or type(e).__name__
    at = _AT.search(message)
    if at:
        line, column = int(at[1]), int(at[2])
        text = message[: at.start()].rstrip(" ,")
        if text.lower().startswith("unexpected input"):
            lines = index.text.split("\n")
            row = lines[line - 1] if 0 < line <= len(lines) else ""
            char = row[column - 1] if 0 < column <= len(row) else ""
            text = (f"unexpected character {char!r}" + _DIALECT_HINTS.get(char, "")
                    if char else "unexpected input")
        return GrammarError(f"syntax error: {text}", line=line, column=column,
                            source=index.source, code="lark-syntax")
    return index.error(message, "lark-grammar")


def _missing_import(e: OSError, index: SpanIndex) -> GrammarError:
    path = str(e.filename or "")
    dotted = path.removesuffix(".lark").replace("\\", "/").replace("/", ".")
    m = re.search(rf"^[ \t]*%import[ \t]+\.?{re.escape(dotted)}\b", index.text, re.MULTILINE) if dotted else None
    span = index.span(m.start(), len(m.group().strip())) if m else None
    return index.error(f"cannot find the grammar '{path}' to import (searched the import paths, the "
                       "importing grammar's directory and Lark's bundled grammars)", "lark-import", span)


@contextmanager
def lark_errors(index: SpanIndex, imports: dict[str, str] | None = None) -> Iterator[None]:
    """Turn whatever Lark raises inside the block into a GrammarError.

    Without `imports`, the block parses the main text, so syntax errors are positioned in it.
    With `imports` (Lark's table of the files it has loaded, filled as it goes), the main text
    is known to parse, so a syntax error is in the imported file loaded last.
    """
    try:
        yield
    except GrammarError:
        raise
    except (UnexpectedInput, LarkError) as e:
        if imports is not None and (isinstance(e, UnexpectedInput) or _AT.search(str(e))):
            where = str(list(imports)[-1]) if imports else "an imported grammar"
            raise GrammarError(f"in the imported grammar {where}: {_first_paragraph(str(e))}",
                               source=index.source, code="lark-syntax") from None
        if isinstance(e, UnexpectedInput):
            raise _syntax(e, index) from None
        raise _lark_error(e, index) from None
    except RecursionError:
        raise index.error("the grammar is too deeply nested for Lark's loader", "lark-grammar") from None
    except FileNotFoundError as e:
        raise _missing_import(e, index) from None
    except (OSError, UnicodeDecodeError) as e:
        raise index.error(f"cannot read an imported grammar: {e}", "lark-import") from None
    except Exception as e:  # noqa: BLE001 - Lark's loader asserts and indexes on malformed input
        detail = f": {e}" if str(e) else ""
        raise index.error(f"Lark could not load the grammar ({type(e).__name__}{detail})", "lark-grammar") from None


def check_literals(text: str, index: SpanIndex) -> None:
    """Lex `text` as Lark's grammar loader will, its literals read without backtracking
    (module docstring); a GrammarError at line:col where that fails."""
    if not _LEXER:
        _LEXER.append(BasicLexer(LexerConf(
            [TerminalDef(name, PatternRE(_LITERALS.get(name, value)))
             for name, value in TERMINALS.items()], re, ("WS", "COMMENT", "BACKSLASH"))))
    with lark_errors(index):
        for _ in _LEXER[0].lex(LexerState(TextSlice.cast_from(text + "\n")), None):
            pass
