"""Context-free grammar IR for tests: Hypothesis strategies for random recursive grammars,
samplers of member strings (`sample_string`; `generate`, which can also report the tokens a
string was built from), and a few fixed grammars."""
from __future__ import annotations

import math
import random
from collections.abc import Callable

from grammask.compiler.ir.nodes import (
    EMPTY,
    CharClass,
    Choice,
    Grammar,
    Literal,
    Node,
    Repeat,
    Rule,
    RuleRef,
    Seq,
)
from hypothesis import strategies as st

ALPHABET = "ab()é中"  # what random grammars are built from; tests mutate strings with these
LETTERS = "abé"
CLASSES = (
    CharClass.of([(ord("a"), ord("b"))]),
    CharClass.of([(ord("b"), ord("b"))]),
    CharClass.of([(0xE9, 0xEA)]),
    CharClass.of([(0x4E2D, 0x4E2D)]),
    CharClass.of([(ord("a"), ord("a")), (0xE9, 0xE9), (0x4E2D, 0x4E2D)]),
)


def lit(text: str) -> Literal:
    """A literal for `text` as UTF-8."""
    return Literal(text.encode("utf-8"))


def ref(name: str) -> RuleRef:
    """A reference to the rule `name`."""
    return RuleRef(name)


def seq(*items: Node) -> Seq:
    """The concatenation of `items`."""
    return Seq(items)


def alt(*alternatives: Node) -> Choice:
    """A choice between `alternatives`."""
    return Choice(alternatives)


def rule_heights(grammar: Grammar) -> dict[str, float]:
    """Each rule's least derivation height; infinite for rules that derive no finite string."""
    heights = {r.name: math.inf for r in grammar.rules}
    changed = True
    while changed:
        changed = False
        for r in grammar.rules:
            h = node_height(r.body, heights)
            if h < heights[r.name]:
                heights[r.name] = h
                changed = True
    return heights


def node_height(node: Node, heights: dict[str, float]) -> float:
    """The least derivation height of `node`, given the rules' heights."""
    if isinstance(node, Literal):
        return 0
    if isinstance(node, CharClass):
        return 0 if node.ranges else math.inf
    if isinstance(node, RuleRef):
        return 1 + heights.get(node.name, math.inf)
    if isinstance(node, Seq):
        return max((node_height(x, heights) for x in node.items), default=0)
    if isinstance(node, Choice):
        return min((node_height(x, heights) for x in node.alternatives), default=math.inf)
    assert isinstance(node, Repeat)
    return node_height(node.item, heights) if node.min else 0


def sample_string(
    grammar: Grammar, rng: random.Random, max_depth: int = 6, max_length: int = 30
) -> str:
    """A random string of the grammar's language; raises ValueError when the language is empty.

    Past `max_depth` rule expansions or `max_length` characters, only derivations of least
    height are taken, so sampling terminates."""
    heights = rule_heights(grammar)
    if heights.get(grammar.start, math.inf) == math.inf:
        raise ValueError("the grammar's language is empty")
    rules = grammar.by_name
    out: list[str] = []

    def gen(node: Node, depth: int) -> None:
        minimal = depth > max_depth or len(out) > max_length
        if isinstance(node, Literal):
            out.append(node.data.decode("utf-8"))
        elif isinstance(node, CharClass):
            lo, hi = rng.choice(node.ranges)
            out.append(chr(rng.randint(lo, hi)))
        elif isinstance(node, RuleRef):
            gen(rules[node.name].body, depth + 1)
        elif isinstance(node, Seq):
            for item in node.items:
                gen(item, depth)
        elif isinstance(node, Choice):
            options = [(a, node_height(a, heights)) for a in node.alternatives]
            options = [(a, c) for a, c in options if c < math.inf]
            # Below the limits, half the time take a deepest alternative, so that strings are
            # not dominated by base cases.
            target = None
            if minimal:
                target = min(c for _, c in options)
            elif rng.random() < 0.5:
                target = max(c for _, c in options)
            gen(rng.choice([a for a, c in options if target is None or c == target]), depth)
        else:
            assert isinstance(node, Repeat)
            if minimal or node_height(node.item, heights) == math.inf:
                count = node.min
            else:
                count = rng.randint(node.min, node.min + 3 if node.max is None else node.max)
            for _ in range(count):
                gen(node.item, depth)

    gen(rules[grammar.start].body, 0)
    return "".join(out)


def generate_tokens(grammar: Grammar, rng: random.Random, terminals: set[str] = frozenset(),  # type: ignore[assignment]
                    depth: int = 8) -> tuple[str, list[tuple[str, str]]] | None:
    """One random string of the grammar's language (bounded: shallowest choices past `depth`)
    and the tokens it was built from (rules named in `terminals`, in order); None when the
    language is empty."""
    h = rule_heights(grammar)
    if h[grammar.start] == math.inf:
        return None
    out: list[str] = []
    tokens: list[tuple[str, str]] = []

    def go(node: Node, d: int) -> None:
        if isinstance(node, Literal):
            out.append(node.data.decode())
        elif isinstance(node, CharClass):
            ascii_ = [(max(lo, 32), min(hi, 126)) for lo, hi in node.ranges if lo <= 126 and hi >= 32]
            lo, hi = rng.choice(ascii_ if ascii_ and rng.random() < 0.8 else node.ranges)
            out.append(chr(rng.randint(lo, min(hi, lo + 2000))))
        elif isinstance(node, Seq):
            for item in node.items:
                go(item, d)
        elif isinstance(node, Choice):
            options = [a for a in node.alternatives if node_height(a, h) < math.inf]
            if d > depth:
                best = min(node_height(a, h) for a in options)
                options = [a for a in options if node_height(a, h) == best]
            go(rng.choice(options), d)
        elif isinstance(node, Repeat):
            top = node.min if d > depth or node_height(node.item, h) == math.inf else node.min + rng.randint(0, 2)
            count = top if node.max is None else min(top, node.max)
            for _ in range(count):
                go(node.item, d)
        elif node.name in terminals:
            mark = len(out)
            go(grammar.rule(node.name).body, d + 1)
            tokens.append((node.name, "".join(out[mark:])))
        else:
            go(grammar.rule(node.name).body, d + 1)

    go(grammar.rule(grammar.start).body, 0)
    return "".join(out), tokens


def generate(grammar: Grammar, rng: random.Random, depth: int = 8) -> str | None:
    """One random string of the grammar's language, None when it is empty."""
    result = generate_tokens(grammar, rng, depth=depth)
    return None if result is None else result[0]


def generated_strings(grammar: Grammar, rng: random.Random, n: int) -> list[str]:
    """Up to `n` random strings of the grammar's language (`generate`)."""
    out = [generate(grammar, rng) for _ in range(n)]
    return [s for s in out if s is not None]



def _leaves(names: list[str]) -> st.SearchStrategy[Node]:
    literals = st.text(LETTERS, min_size=1, max_size=3).map(lit)
    return st.one_of(literals, st.sampled_from(CLASSES), st.sampled_from(names).map(ref))


def _repeats(leaf: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
    bounds = st.tuples(st.integers(0, 2), st.one_of(st.none(), st.integers(0, 2)))
    return st.tuples(leaf, bounds).map(
        lambda t: Repeat(t[0], t[1][0], None if t[1][1] is None else t[1][0] + t[1][1])
    )


Template = Callable[[str, Node, Node], list[Rule]]

# Each template builds rules around an entry rule `n` from two leaves `x` and `y`.
TEMPLATES: dict[str, Template] = {
    "left": lambda n, x, y: [Rule(n, alt(seq(ref(n), x), y))],
    "right": lambda n, x, y: [Rule(n, alt(seq(x, ref(n)), y))],
    "mutual": lambda n, x, y: [
        Rule(n, alt(seq(x, ref(n + "-b")), y)),
        Rule(n + "-b", alt(seq(lit("("), ref(n), lit(")")), EMPTY)),
    ],
    "ambiguous": lambda n, x, y: [Rule(n, alt(seq(ref(n), ref(n)), x))],
    "brackets": lambda n, x, y: [Rule(n, Repeat(alt(seq(lit("("), ref(n), lit(")")), x), 0, None))],
    "nullable": lambda n, x, y: [
        Rule(n, seq(ref(n + "-b"), ref(n + "-b"), y)),
        Rule(n + "-b", alt(Repeat(x, 0, 2), EMPTY)),
    ],
    "unproductive": lambda n, x, y: [Rule(n, seq(x, ref(n)))],
    "repeat": lambda n, x, y: [Rule(n, seq(Repeat(x, 0, 3), Repeat(y, 1, 2)))],
}


@st.composite
def grammars(draw: st.DrawFn, max_rules: int = 4) -> Grammar:
    """A random context-free grammar over ALPHABET with a non-empty language; start rule `r0`,
    every rule reachable from it, every name writable in GBNF."""
    kinds = draw(st.lists(st.sampled_from(sorted(TEMPLATES)), max_size=3, unique=True))
    names = [f"r{i}" for i in range(draw(st.integers(1, max_rules)))]
    leaf = _leaves(names + kinds)
    item = st.one_of(leaf, leaf, _repeats(leaf))
    alternative = st.lists(item, min_size=1, max_size=3)
    empty: st.SearchStrategy[list[Node]] = st.just([])
    body = st.lists(st.one_of(alternative, alternative, alternative, empty), min_size=1, max_size=3)
    bodies = [draw(body) for _ in names]
    rules: list[Rule] = []
    for i, name in enumerate(names[1:] + kinds, start=1):
        if name in TEMPLATES:
            rules.extend(TEMPLATES[name](name, draw(leaf), draw(leaf)))
        # A reference from an earlier rule keeps every rule reachable from r0.
        alts = bodies[draw(st.integers(0, min(i, len(names)) - 1))]
        items = alts[draw(st.integers(0, len(alts) - 1))]
        items.insert(draw(st.integers(0, len(items))), ref(name))
    rules[:0] = [Rule(n, alt(*map(Seq, map(tuple, b))) if len(b) > 1 else Seq(tuple(b[0])))
                 for n, b in zip(names, bodies)]
    grammar = Grammar(tuple(rules), "r0")
    if rule_heights(grammar)["r0"] == math.inf:
        fallback = Rule("r0", alt(rules[0].body, lit(draw(st.text(LETTERS, min_size=1, max_size=3)))))
        grammar = Grammar((fallback, *rules[1:]), "r0")
    return grammar


def _grammar(start: str, **bodies: Node) -> Grammar:
    return Grammar(tuple(Rule(name, body) for name, body in bodies.items()), start)


def _chars(text: str, negated: bool = False) -> CharClass:
    return CharClass.of([(ord(c), ord(c)) for c in text], negated)


def _list_of(item: Node, sep: str) -> Seq:
    return seq(item, Repeat(seq(lit(sep), item), 0, None))


_DIGIT = CharClass.of([(ord("0"), ord("9"))])
_WS = Repeat(_chars(" \n"), 0, None)
_STRING_CHAR = alt(CharClass.of([(0, 0x1F)] + [(ord(c), ord(c)) for c in '"\\'], negated=True),
                   seq(lit("\\"), _chars('"\\/bfnrt')))

NAMED_GRAMMARS: dict[str, Grammar] = {
    "balanced": _grammar("s", s=Repeat(alt(seq(lit("("), ref("s"), lit(")")),
                                           seq(lit("["), ref("s"), lit("]"))), 0, None)),
    "anbn": _grammar("s", s=alt(seq(lit("a"), ref("s"), lit("b")), EMPTY)),
    "arithmetic": _grammar(
        "expr",
        expr=alt(seq(ref("expr"), lit("+"), ref("term")), ref("term")),
        term=alt(seq(ref("term"), lit("*"), ref("factor")), ref("factor")),
        factor=alt(seq(lit("("), ref("expr"), lit(")")), Repeat(_DIGIT, 1, None)),
    ),
    "json": _grammar(
        "value",
        value=seq(_WS, alt(ref("object"), ref("array"), ref("string"), ref("number"),
                           lit("true"), lit("false"), lit("null")), _WS),
        object=seq(lit("{"), alt(_list_of(ref("member"), ","), _WS), lit("}")),
        member=seq(_WS, ref("string"), _WS, lit(":"), ref("value")),
        array=seq(lit("["), alt(_list_of(ref("value"), ","), _WS), lit("]")),
        string=seq(lit('"'), Repeat(_STRING_CHAR, 0, None), lit('"')),
        number=seq(Repeat(lit("-"), 0, 1), alt(lit("0"), seq(_chars("123456789"), Repeat(_DIGIT, 0, None))),
                   Repeat(seq(lit("."), Repeat(_DIGIT, 1, None)), 0, 1)),
    ),
    "ambiguous": _grammar("e", e=alt(seq(ref("e"), ref("e")), seq(ref("e"), lit("+"), ref("e")), lit("a"),
                                     seq(lit("("), ref("e"), lit(")")))),
    "nullable_chain": _grammar(
        "root",
        root=seq(ref("opt"), ref("opt"), lit("x"), Repeat(ref("opt"), 1, 3)),
        opt=seq(ref("inner"), ref("inner")),
        inner=alt(ref("deep"), lit("y")),
        deep=Repeat(ref("leaf"), 0, None),
        leaf=alt(lit("z"), EMPTY),
    ),
    "unproductive_branch": _grammar(
        "root",
        root=alt(seq(lit("a"), ref("dead")), seq(lit("b"), ref("root")), lit("c")),
        dead=seq(lit("d"), ref("dead")),
    ),
    "unicode": _grammar("root", root=seq(Repeat(_chars("éê中😀"), 1, None), lit("!"))),
}


def prefix_grammar(grammar: Grammar) -> Grammar:
    """A grammar whose language is every (character-level) prefix of a string of `grammar`'s
    language; its start rule is the start rule's name plus "-p". Raises ValueError when the
    language is empty."""
    heights = rule_heights(grammar)
    if heights.get(grammar.start, math.inf) == math.inf:
        raise ValueError("the grammar's language is empty")

    def live(node: Node) -> bool:
        return node_height(node, heights) < math.inf

    def prefixes(node: Node) -> Node:
        if isinstance(node, Literal):
            text = node.data.decode("utf-8")
            return alt(EMPTY, *(lit(text[:i]) for i in range(1, len(text) + 1)))
        if isinstance(node, CharClass):
            return alt(EMPTY, node)
        if isinstance(node, RuleRef):
            return ref(node.name + "-p")
        if isinstance(node, Seq):
            if not node.items:
                return EMPTY
            return alt(*(Seq(node.items[:i] + (prefixes(x),)) for i, x in enumerate(node.items)))
        if isinstance(node, Choice):
            return alt(*(prefixes(a) for a in node.alternatives if live(a)))
        assert isinstance(node, Repeat)
        if node.max == 0 or not live(node.item):
            return EMPTY
        # A prefix of item^k: whole copies, then a prefix of one more (ε covers k = 0).
        whole = Repeat(node.item, 0, None if node.max is None else node.max - 1)
        return alt(EMPTY, seq(whole, prefixes(node.item)))

    extra = tuple(Rule(r.name + "-p", prefixes(r.body)) for r in grammar.rules if live(ref(r.name)))
    return Grammar(grammar.rules + extra, grammar.start + "-p")
