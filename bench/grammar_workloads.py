"""The context-free grammar workloads: a GBNF grammar and seeded documents in its language.

- `json`: llama.cpp's json.gbnf. The root is an object; `ws` is one of "", " ", or "\\n" and up
  to 20 spaces or tabs, and only one of them per place; the integer part has no leading zero
  and at most 16 digits; an exponent is one digit and then only digits 1-9; strings take the
  escapes \\" \\\\ \\b \\f \\n \\r \\t \\uXXXX (not \\/), and any other character but `"`,
  `\\`, DEL and controls.
- `arithmetic`: llama.cpp's arithmetic.gbnf: lines `expr=term\\n` over + - * /, identifiers,
  integers and nested parentheses; whitespace `[ \\t\\n]*` may follow a term, an opening
  parenthesis or `=`, never an operator or the start of a line.
- `json_flat`: a regular control, written here: json.gbnf's string, number and ws rules under
  an object with four fixed keys. It has no recursion, so grammask compiles it today.

Documents are generated from those rules (seeded, so every run and every engine gets the same
text); JSON documents are also checked with `json.loads`. The real check is the benchmark's:
every engine must accept every token of every document, and allow EOS after its last one.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[1]
GBNF_DIRS = (_ROOT / "tests" / "data" / "gbnf", _ROOT.parent / "shared" / "corpora" / "gbnf")

# llguidance's gbnf_to_lark turns `ident`, `num` and `ws` into greedy lexer terminals, and a
# terminal that ends in `[ \t\n]*` then swallows the line's closing "\n": that is another
# language. Same language as arithmetic.gbnf, with whitespace as separate tokens instead:
ARITHMETIC_LARK = r"""
start: line+
line: expr WS? "=" WS? term LINE_END
expr: term (WS? OP term)*
term: IDENT | NUM | "(" WS? expr WS? ")"
OP: /[-+*\/]/
IDENT: /[a-z][a-z0-9_]*/
NUM: /[0-9]+/
WS: /[ \t\n]+/
LINE_END: /[ \t\n]*\n/
"""

JSON_FLAT_GBNF = r"""# A regular control: json.gbnf's string, number and ws rules, four fixed keys.
root   ::= (
  "{" ws "\"id\"" ws ":" ws number "," ws "\"name\"" ws ":" ws string "," ws
  "\"tags\"" ws ":" ws "[" ws (string ("," ws string)*)? "]" ws "," ws
  "\"active\"" ws ":" ws ("true" | "false") ws "}" ws
)
string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4})
  )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}
"""


@dataclass(frozen=True)
class GrammarWorkload:
    """A grammar (GBNF), the documents every engine walks, and llguidance's Lark text when the
    library's own GBNF conversion does not give the same language (None: use the conversion)."""

    name: str
    label: str
    gbnf: str
    lark: str | None
    docs: list[str]


def load_gbnf(name: str) -> str:
    """The text of a vendored llama.cpp grammar (tests/data/gbnf, else ../shared/corpora/gbnf)."""
    for d in GBNF_DIRS:
        path = d / f"{name}.gbnf"
        if path.is_file():
            return path.read_text(encoding="utf-8")
    raise FileNotFoundError(f"{name}.gbnf not found in {', '.join(map(str, GBNF_DIRS))}")


# --------------------------------------------------------------------------- JSON

_KEYS = ("id", "name", "title", "value", "count", "items", "tags", "user", "price", "enabled",
         "created_at", "score", "data", "meta", "x", "description", "ratio", "children",
         "clé", "名前", "emoji 😀", "with space")
_TEXT = ("hello", "world", "grammar", "token mask", "the quick brown fox", "café", "naïve",
         "Zoë Brontë", "東京都", "Привет мир", "λ-calculus", "😀🎉", "α+β=γ", "a/b", "50%",
         "tab\tless", "{braces}", "[brackets]", "it's", "x: 1, y: 2", "<tag>", "")
_ESCAPES = ('\\"', "\\\\", "\\n", "\\t", "\\r", "\\b", "\\f", "\\u00e9", "\\u4E2D", "\\u0000",
            "\\uD83D\\uDE00", "\\u20AC")


def _digits(rng: random.Random, n: int, alphabet: str = "0123456789") -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def json_number(rng: random.Random) -> str:
    """A number of json.gbnf: -?, 1 to 16 integer digits, optional fraction and exponent."""
    sign = "-" if rng.random() < 0.25 else ""
    whole = "0" if rng.random() < 0.12 else (
        rng.choice("123456789") + _digits(rng, rng.choice((0, 0, 1, 2, 3, 5, 8, 15))))
    frac = "." + _digits(rng, rng.randint(1, 6)) if rng.random() < 0.35 else ""
    exp = (rng.choice("eE") + rng.choice(("", "-", "+")) + _digits(rng, 1)
           + _digits(rng, rng.randint(0, 2), "123456789")) if rng.random() < 0.15 else ""
    return sign + whole + frac + exp


def json_string(rng: random.Random) -> str:
    """A string literal of json.gbnf (quotes included): text, non-ASCII text and escapes."""
    parts = [rng.choice(_ESCAPES) if rng.random() < 0.2 else rng.choice(_TEXT)
             for _ in range(rng.randint(0, 5))]
    sep = "" if rng.random() < 0.3 else " "
    return '"' + sep.join(parts).replace("\t", "\\t") + '"'


def _json_value(rng: random.Random, need: int, room: int) -> Any:
    """A value as a tree (dict: object, list: array, str: source text of a scalar); `need`
    more levels of nesting are forced below it, `room` more are allowed at random."""
    if need > 0 or (room > 0 and rng.random() < 0.3):
        return _json_container(rng, rng.random() < 0.6, max(need - 1, 0), room - 1)
    return rng.choice((json_string, json_number, json_number, lambda r: r.choice(
        ("true", "false", "null"))))(rng)


def _json_container(rng: random.Random, is_object: bool, need: int, room: int) -> Any:
    n = rng.randint(1, 5) if need > 0 else rng.choice((0, 1, 2, 3, 4, 5))
    values = [_json_value(rng, need if i == 0 else 0, room) for i in range(n)]
    if not is_object:
        return values
    keys = rng.sample(_KEYS, n)
    return {json.dumps(k, ensure_ascii=False): v for k, v in zip(keys, values, strict=True)}


def dump_json(value: Any, style: str, rng: random.Random, depth: int = 0,
              unit: str = "  ") -> str:
    """JSON text of a value tree in one whitespace `style`, each `ws` of json.gbnf one unit:
    `pretty` (newline and `unit` indentation), `compact` (", " and ": "), `minified`, or
    `loose` ("" or " " at random in every place, a space before colons too)."""
    if isinstance(value, str):
        return value
    items = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
    if not items:
        return "{}" if isinstance(value, dict) else "[]"

    def ws(kind: str) -> str:
        if style == "pretty":
            return {"open": "\n" + unit * (depth + 1), "colon": " ",
                    "close": "\n" + unit * depth}.get(kind, "")
        if style == "compact":
            return " " if kind in ("sep", "colon") else ""
        if style == "loose":
            return rng.choice(("", " "))
        return ""

    body = []
    for key, v in items:
        inner = dump_json(v, style, rng, depth + 1, unit)
        body.append(inner if key is None else f"{key}{ws('key')}:{ws('colon')}{inner}")
    sep = "," + (ws("open") if style == "pretty" else ws("sep"))
    o, c = ("{", "}") if isinstance(value, dict) else ("[", "]")
    return o + ws("open") + sep.join(body) + ws("close") + c


def _style(rng: random.Random) -> tuple[str, str]:
    styles = ("pretty", "pretty", "compact", "minified", "loose")
    return rng.choice(styles), rng.choice(("  ", "\t"))


def json_docs(n: int, seed: int) -> list[str]:
    """`n` objects of json.gbnf, nested 1 to 6 levels deep (cycling), in varied whitespace."""
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        style, unit = _style(rng)
        docs.append(dump_json(_json_container(rng, True, i % 6, 2), style, rng, unit=unit))
    return _checked_json(docs)


def json_flat_docs(n: int, seed: int) -> list[str]:
    """`n` objects of JSON_FLAT_GBNF: keys id, name, tags, active in that order."""
    rng = random.Random(seed)
    docs = []
    for _ in range(n):
        style, unit = _style(rng)
        obj = {'"id"': json_number(rng), '"name"': json_string(rng),
               '"tags"': [json_string(rng) for _ in range(rng.randint(0, 4))],
               '"active"': rng.choice(("true", "false"))}
        docs.append(dump_json(obj, style, rng, unit=unit))
    return _checked_json(docs)


def _checked_json(docs: list[str]) -> list[str]:
    for d in docs:
        json.loads(d)
    return docs


# --------------------------------------------------------------------------- arithmetic

_IDENTS = ("x", "y", "n", "rate", "total_1", "a2", "base", "k9", "delta_t", "price", "z_")
_WS = ("", "", "", "", " ", " ", "  ", "\t", "\n")


def _term(rng: random.Random, need: int, room: int) -> str:
    """A term of arithmetic.gbnf with its trailing ws; `need` forced paren levels below it."""
    if need > 0 or (room > 0 and rng.random() < 0.2):
        inner = _expr(rng, max(need - 1, 0), room - 1)
        return "(" + rng.choice(_WS) + inner + ")" + rng.choice(_WS)
    if rng.random() < 0.5:
        return rng.choice(_IDENTS) + rng.choice(_WS)
    return rng.choice(("0", "7", "42", "1000", "007", "3141592", "65535")) + rng.choice(_WS)


def _expr(rng: random.Random, need: int, room: int) -> str:
    n = rng.randint(1, 4)
    deep = rng.randrange(n)
    terms = [_term(rng, need if i == deep else 0, room) for i in range(n)]
    out = terms[0]
    for t in terms[1:]:
        out += rng.choice("+-*/") + t
    return out


def arithmetic_docs(n: int, seed: int) -> list[str]:
    """`n` documents of 1 to 3 lines; the first line nests parentheses 1 to 10 deep (cycling)."""
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        lines = []
        for j in range(rng.randint(1, 3)):
            need = 1 + i % 10 if j == 0 else rng.randint(0, 2)
            lines.append(_expr(rng, need, 2) + "=" + rng.choice(_WS) + _term(rng, 0, 1) + "\n")
        docs.append("".join(lines))
    return docs


# --------------------------------------------------------------------------- all

GRAMMARS = ("json", "arithmetic", "json_flat")


def build_grammar_workloads(names: list[str], n_docs: int, seed: int = 0,
                            llguidance_converter: bool = False) -> list[GrammarWorkload]:
    """The named workloads with `n_docs` documents each. `llguidance_converter`: give
    llguidance gbnf_to_lark's output for every grammar, hand translations ignored."""
    out = []
    for name in names:
        if name == "json":
            w = GrammarWorkload(name, "llama.cpp json.gbnf (recursive)", load_gbnf("json"), None,
                                json_docs(n_docs, seed))
        elif name == "arithmetic":
            w = GrammarWorkload(name, "llama.cpp arithmetic.gbnf (recursive)",
                                load_gbnf("arithmetic"), ARITHMETIC_LARK,
                                arithmetic_docs(n_docs, seed))
        elif name == "json_flat":
            w = GrammarWorkload(name, "regular control: json.gbnf rules, fixed keys",
                                JSON_FLAT_GBNF, None, json_flat_docs(n_docs, seed))
        else:
            raise ValueError(f"unknown grammar {name!r}; known: {', '.join(GRAMMARS)}")
        if llguidance_converter:
            w = GrammarWorkload(w.name, w.label, w.gbnf, None, w.docs)
        out.append(w)
    return out
