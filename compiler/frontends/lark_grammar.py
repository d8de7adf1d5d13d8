"""The Lark frontend: a grammar in Lark's dialect to grammar IR.

Lark's own loader reads the text (syntax, `%import`, `%override`, `%extend`, terminal
references, its consistency checks), Lark's own transformers build the terminals' patterns,
name the anonymous terminals and instantiate templates, so names and patterns are Lark's.
grammask then reads the EBNF rule trees itself, so `x*` stays a `Repeat` rather than one of
Lark's recursive helper rules (and Lark's exponential expansion into BNF never runs). Every
terminal becomes a rule of its own (`NUMBER`, `__ANON_0`, `COMMA`, ...) and `%ignore`d
terminals may appear between any two tokens. The language and every rewrite are documented in
`grammask/specs/lark.md`.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from lark import Token, Tree
from lark.exceptions import GrammarError as LarkGrammarError
from lark.grammar import NonTerminal, Terminal
from lark.lexer import Pattern, TerminalDef
from lark.load_grammar import (
    ApplyTemplates,
    GrammarBuilder,
    PrepareAnonTerminals,
    PrepareLiterals,
    TerminalTreeToPattern,
    ValidateSymbols,
    _parse_grammar,
    nr_deepcopy_tree,
)

from ..ir.nodes import Grammar, Node, Repeat, Rule, RuleRef, Seq, references
from ..support.diagnostics import Diagnostic, Span
from ..support.errors import GrammarError
from ..support.limits import DEFAULT_LIMITS, Limits
from .lark_support import SpanIndex, check_literals, lark_errors
from .lark_terminals import (
    check_lexable,
    choice,
    repeat_bounds,
    seq,
    terminal_ir,
    tree_size,
)
from .parsed import Parsed

__all__ = ["IGNORE_RULE", "MAX_TEMPLATE_INSTANCES", "parse_lark"]

IGNORE_RULE = "__ignore"
MAX_TEMPLATE_INSTANCES = 2_000
_UNREADABLE = re.compile("[\0\ud800-\udfff]")
_DEFINITION = re.compile(r"^[ \t]*[?!]?[_a-z][_a-z0-9]*(?:\{[^}\n]*\})?(?:\.-?[0-9]+)?[ \t]*:",
                         re.MULTILINE)


def _instantiate(lark_grammar: Any, terminals: list[TerminalDef], index: SpanIndex) -> list[tuple[str, Any, Any]]:
    """The non-template rules and every template instance as (name, tree, options), with
    anonymous terminals named and templates instantiated by Lark's own transformers, in Lark's
    order (so names are Lark's: `__ANON_0`, `COMMA`, `_sep{item,COMMA}`). Adds the anonymous
    terminals to `terminals`."""
    rule_defs = [(n, p, nr_deepcopy_tree(t), o) for n, p, t, o in lark_grammar.rule_defs]
    transformer = PrepareLiterals() * ValidateSymbols() * PrepareAnonTerminals(terminals) * ApplyTemplates(rule_defs)
    out: list[tuple[str, Any, Any]] = []
    i, defined = 0, len(rule_defs)
    while i < len(rule_defs):
        if len(rule_defs) - defined > MAX_TEMPLATE_INSTANCES:
            name = str(rule_defs[-1][0])
            raise index.error(
                f"template instantiation does not stop: more than {MAX_TEMPLATE_INSTANCES} instances "
                f"(the last one is {name[:80]}...); a template must not use itself with growing arguments",
                "lark-template", index.of_name(name))
        name, params, tree, options = rule_defs[i]
        i += 1
        if not params:
            with lark_errors(index):
                out.append((str(name), transformer.transform(tree), options))
    return out


class _Rules:
    """Lark's EBNF rule trees (after `_instantiate`) to IR."""

    def __init__(self, ignore: bool, index: SpanIndex) -> None:
        self.ignore = ignore
        self.index = index
        self.aliases: list[tuple[str, str]] = []
        self._current = ""
        self._tokens: dict[str, Node] = {}

    def body(self, name: str, tree: Any) -> Node:
        """The IR of rule `name`'s tree."""
        self._current = name
        return self._node(tree)

    def _token(self, name: str) -> Node:
        if name not in self._tokens:
            ref = RuleRef(name)
            self._tokens[name] = Seq((ref, RuleRef(IGNORE_RULE))) if self.ignore else ref
        return self._tokens[name]

    def _node(self, tree: Any) -> Node:
        if isinstance(tree, Terminal):
            return self._token(tree.name)
        if isinstance(tree, NonTerminal):
            return RuleRef(tree.name)
        if not isinstance(tree, Tree):
            raise self.index.error(f"unexpected {tree!r} in rule '{self._current}'", "lark-grammar")
        kids = tree.children
        kind = tree.data
        if kind == "expansions":
            return choice([self._node(k) for k in kids])
        if kind == "expansion":
            return seq([self._node(k) for k in kids])
        if kind == "alias":
            alias: Any = kids[1]
            if self._current.startswith("_"):
                raise self.index.error(f"rule {self._current} is inlined (its name starts with an "
                                       f"underscore) and cannot have an alias (-> {alias.name})",
                                       "lark-grammar", self.index.of_name(self._current))
            self.aliases.append((self._current, str(alias.name)))
            return self._node(kids[0])
        if kind == "expr":
            lo, hi = repeat_bounds(str(kids[1]), kids[2:], f"rule '{self._current}'",
                                   self.index.of_name(self._current))
            return Repeat(self._node(kids[0]), lo, hi)
        if kind == "maybe":
            return Repeat(self._node(kids[0]), 0, 1)
        raise self.index.error(f"'{kind}' cannot appear in rule '{self._current}'", "lark-grammar")


def _check_terminals(tree: Tree, index: SpanIndex, limits: Limits) -> None:
    """Refuse terminals of the main text that use a `%declare`d terminal (Lark's loader fails on
    them) or whose definitions, with every terminal they reference expanded, exceed
    `Limits.max_pattern_length` nodes (Lark's loader takes time exponential in the nesting of
    such references)."""
    local: dict[str, int] = {}
    refs: dict[str, list[str]] = {}
    declared = {s.name for stmt in tree.children if stmt.data == "declare" for s in stmt.children
                if isinstance(s, Terminal)}
    for stmt in tree.children:
        if stmt.data in ("override", "extend"):
            stmt = stmt.children[0]
        if stmt.data != "term":
            continue
        name = str(stmt.children[0])
        body = stmt.children[-1]
        nodes = list(body.iter_subtrees_topdown())
        local[name] = local.get(name, 0) + len(nodes)
        refs.setdefault(name, []).extend(
            c.name for t in nodes for c in t.children if isinstance(c, Terminal))
        for ref in refs[name]:
            if ref in declared:
                raise index.error(f"terminal {name} uses {ref}, which is declared with %declare and has "
                                  "no pattern; only rules may use declared terminals", "lark-declare",
                                  index.of_name(name))
    size: dict[str, int] = {}
    for root in local:
        stack = [root]
        while stack:
            name = stack[-1]
            todo = [r for r in refs.get(name, ()) if r in local and r not in size and r not in stack]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            size[name] = local[name] + sum(size.get(r, 1) for r in refs.get(name, ()))
            if size[name] > limits.max_pattern_length:
                _raise_budget(limits, size[name], f"terminal {name}, with the terminals it uses expanded",
                              index.of_name(name))


def _raise_budget(limits: Limits, measured: int, what: str, span: Span | None) -> None:
    e = limits.exceeded("max_pattern_length", measured, what)
    raise e.located(line=span.line if span else None, column=span.column if span else None,
                    source=span.source if span else None)


def _check_bounds(lark_grammar: Any, index: SpanIndex, limits: Limits) -> None:
    """Repetition counts (`~ n..m`) and expanded terminal sizes against `limits`."""
    memo: dict[int, int] = {}
    for name, (tree, _priority) in lark_grammar.term_defs:
        if tree is not None and tree_size(tree, memo) > limits.max_pattern_length:
            _raise_budget(limits, memo[id(tree)], f"terminal {name}, with the terminals it uses expanded",
                          index.of_name(name))
    trees = [(n, t) for n, (t, _p) in lark_grammar.term_defs] + [(r[0], r[2]) for r in lark_grammar.rule_defs]
    for name, tree in trees:
        if tree is None:
            continue
        for expr in tree.find_data("expr"):
            counts = [int(x) for x in expr.children[2:] if isinstance(x, Token)]
            if any(c > limits.max_repeat for c in counts):
                e = limits.exceeded("max_repeat", max(counts), f"repetition count in {name}")
                span = index.of_name(str(name))
                raise e.located(line=span.line if span else None,
                                column=span.column if span else None, source=index.source)


def _load(text: str, name: str, import_paths: Sequence[str], index: SpanIndex, limits: Limits) -> Any:
    """Lark's loaded grammar (rule_defs, term_defs, ignore), every failure a GrammarError."""
    check_literals(text, index)
    with lark_errors(index):
        tree = _parse_grammar(text, name)
    _check_terminals(tree, index, limits)
    builder = GrammarBuilder(False, list(import_paths))
    with lark_errors(index, builder.used_files):
        builder.load_grammar(text, name)
        return builder.build()


def _start_rule(lark_grammar: Any, start: str, index: SpanIndex) -> None:
    rules = {str(r[0]): r for r in lark_grammar.rule_defs}
    for rule_name, params, tree, _options in lark_grammar.rule_defs:
        if tree is None:
            raise index.error(f"rule '{rule_name}' is declared with %declare but has no definition; "
                              "only terminals can be declared", "lark-declare", index.of_name(str(rule_name)))
    if start in rules and not rules[start][1]:
        return
    available = sorted(n for n, r in rules.items() if not r[1])
    shown = ", ".join(available[:30]) + (", ..." if len(available) > 30 else "")
    why = "is a template" if start in rules else "is not defined"
    raise GrammarError(f"start rule '{start}' {why}; available rules: {shown or '(none)'}",
                       source=index.source, code="missing-start")


def _notes(rules: _Rules, options: dict[str, Any], reachable: list[str], compiled: dict[str, TerminalDef],
           used: list[str], declared: list[str], index: SpanIndex) -> list[Diagnostic]:
    notes: list[Diagnostic] = []
    for name in reachable:
        rule_options = options.get(name)
        if rule_options is not None and rule_options.priority is not None:
            notes.append(Diagnostic("info", "lark-ignored", f"priority .{rule_options.priority} of rule '{name}' is "
                              "ignored: priorities choose between parses, the accepted strings are the same",
                              index.of_name(name)))
    keep = set(reachable)
    for name, alias in dict.fromkeys(rules.aliases):
        if name not in keep:
            continue
        notes.append(Diagnostic("info", "lark-ignored", f"alias '-> {alias}' in rule '{name}' is ignored: "
                          "it only names parse-tree nodes", index.of_name(name)))
    for name in used:
        td = compiled.get(name)
        if td is not None and td.priority != 0:
            notes.append(Diagnostic("info", "lark-ignored", f"priority .{td.priority} of terminal {name} is "
                              "ignored: priorities choose between tokens, the accepted strings are the same",
                              index.of_name(name)))
    for name in declared:
        notes.append(Diagnostic("info", "lark-ignored", f"%declare {name} is ignored: the terminal has no "
                          "pattern and no rule reachable from the start uses it", index.of_name(name)))
    return notes


def parse_lark(
    text: str,
    *,
    start: str = "start",
    source: str | None = None,
    import_paths: Sequence[str] = (),
    limits: Limits = DEFAULT_LIMITS,
    keep: Sequence[str] = (),
    empty_terminals: bool = False,
) -> Parsed:
    """Parse a Lark grammar into grammar IR and notes about what was ignored (info diagnostics).

    Rules reachable from `start` become rules of the same name; each terminal they use becomes
    a rule named after the terminal; with `%ignore`, the rule `__ignore` (the ignored terminals,
    repeated) follows every token and opens the start rule. `source` names the grammar in
    errors and anchors relative `%import`s; `import_paths` are searched before Lark's bundled
    grammars; the terminals named in `keep` become rules even when no rule uses them, and
    with `empty_terminals` a terminal may match the empty string (llguidance's dialect). Raises
    GrammarError (BudgetExceeded for `limits`) for anything Lark rejects and for terminals
    grammask cannot match exactly.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_lark() needs a str grammar, got {type(text).__name__}")
    if not isinstance(limits, Limits):
        raise TypeError(f"parse_lark() needs limits to be a Limits, got {type(limits).__name__}")
    if not isinstance(start, str) or not isinstance(import_paths, Sequence) or isinstance(import_paths, str):
        raise TypeError("parse_lark() needs start to be a str and import_paths a sequence of paths")
    if len(text) > limits.max_pattern_length:
        raise limits.exceeded("max_pattern_length", len(text), "grammar length")
    # Counted before Lark's loader, which takes seconds for 10,000 rules.
    defined = len(_DEFINITION.findall(text))
    if defined > limits.max_rules:
        raise limits.exceeded("max_rules", defined, "rule definitions")
    index = SpanIndex(text, source)
    bad = _UNREADABLE.search(text)
    if bad is not None:
        char = bad.group()
        what = ("a NUL character: Lark cannot read it; write \\x00 in a string or regex"
                if char == "\0" else f"a lone surrogate U+{ord(char):04X} (invalid UTF-8 in the "
                "file): only Unicode scalar values can be matched")
        raise index.error(f"the grammar holds {what}", "lark-grammar", index.span(bad.start(), 1))
    try:
        return _parse(text, start, source, import_paths, limits, index, keep, empty_terminals)
    except RecursionError:
        raise index.error("the grammar is too deeply nested", "lark-grammar") from None


def _named_terminals(lark_grammar: Any) -> list[TerminalDef]:
    """Lark's patterns for the named terminals, built by Lark's own transformers as its compiler
    does (which also checks them: empty terminals, bad ranges, aliases)."""
    out: list[TerminalDef] = []
    to_pattern = PrepareLiterals() * TerminalTreeToPattern()
    for name, (tree, priority) in lark_grammar.term_defs:
        if tree is None:
            continue
        expansions = list(tree.find_data("expansion"))
        if len(expansions) == 1 and not expansions[0].children:
            raise LarkGrammarError(f"Terminals cannot be empty ({name})")
        pattern = to_pattern.transform(nr_deepcopy_tree(tree))
        if not isinstance(pattern, Pattern):
            raise LarkGrammarError(f"Templates cannot be used in terminals ({name})")
        out.append(TerminalDef(str(name), pattern, priority))
    return out


def _reachable(bodies: dict[str, Node], start: str, terminals: set[str], templates: set[str],
               index: SpanIndex) -> list[str]:
    """The rules reachable from `start`, in discovery order; a reference to no rule is an error
    (a template used without arguments: Lark's loader lets it through)."""
    order, seen = [start], {start}
    for name in order:
        for ref in references(bodies[name]):
            if ref.name in seen or ref.name in terminals or ref.name == IGNORE_RULE:
                continue
            if ref.name not in bodies:
                what = "is a template used without arguments" if ref.name in templates else "is not defined"
                raise index.error(f"rule '{ref.name}' {what} (in rule '{name}')", "lark-grammar",
                                  index.of_name(name))
            seen.add(ref.name)
            order.append(ref.name)
    return order


def _parse(text: str, start: str, source: str | None, import_paths: Sequence[str], limits: Limits,
           index: SpanIndex, keep: Sequence[str] = (), empty: bool = False) -> Parsed:
    lark_grammar = _load(text, source or "<grammar>", import_paths, index, limits)
    _start_rule(lark_grammar, start, index)
    _check_bounds(lark_grammar, index, limits)
    with lark_errors(index):
        terminals = _named_terminals(lark_grammar)
    named = {td.name for td in terminals}
    ignored = [n for n in dict.fromkeys(map(str, lark_grammar.ignore)) if n in named]
    rules = _Rules(bool(ignored), index)
    instances = _instantiate(lark_grammar, terminals, index)
    bodies = {name: rules.body(name, tree) for name, tree, _options in instances}
    options = {name: opts for name, _tree, opts in instances}
    compiled = {td.name: td for td in terminals}
    declared = {str(n) for n, (t, _p) in lark_grammar.term_defs if t is None}
    templates = {str(r[0]) for r in lark_grammar.rule_defs if r[1]}
    reachable = _reachable(bodies, start, set(compiled) | declared, templates, index)
    used = list(dict.fromkeys([ref.name for name in reachable for ref in references(bodies[name])
                               if ref.name not in bodies and ref.name != IGNORE_RULE] + ignored
                              + [k for k in keep if k in named]))
    for name in used:
        if name not in compiled:
            raise index.error(f"terminal {name} is declared with %declare and has no pattern (in Lark a "
                              "postlexer produces it); grammask cannot generate it: define it instead",
                              "lark-declare", index.of_name(name))
    out: list[Rule] = []
    for name in reachable:
        body = seq([RuleRef(IGNORE_RULE), bodies[name]]) if name == start and ignored else bodies[name]
        out.append(Rule(name, body, index.of_name(name)))
    warnings: list[Diagnostic] = []
    order = {name: i for i, name in enumerate(compiled)}
    for name in sorted(used, key=order.__getitem__):
        td = compiled[name]
        span = index.of_name(name) or index.of_text(td.pattern.raw)
        check_lexable(name, td.pattern, span, empty)
        result = terminal_ir(name, td.pattern, span, limits)
        out.append(Rule(name, result.node, span))
        warnings.extend(Diagnostic("warning", code, message, span) for code, message in result.warnings.items())
    if ignored:
        body = Repeat(choice([RuleRef(n) for n in ignored]), 0, None)
        out.append(Rule(IGNORE_RULE, body, index.ignores[0] if index.ignores else None))
    unused = sorted(declared - set(used))
    notes = _notes(rules, options, reachable, compiled, used, unused, index) + warnings
    return Parsed(Grammar(tuple(out), start, source), tuple(notes))
