"""What a process keeps across compiles: rule automata cached by their flattened bodies, every
cache in the one registry (`support/caches.py`) with its bound, and `clear_caches`. A cached
compile must give the same tables as a cold one."""
from __future__ import annotations

import ast
import gc
import importlib
from pathlib import Path

import numpy as np
import pytest

import grammask.compiler
from grammask.compiler import (
    clear_caches,
    compile_gbnf,
    compile_json_schema,
    compile_lark,
    compile_regex,
)
from grammask.compiler.analyses.size import compile_structure
from grammask.compiler.frontends.gbnf import parse_gbnf
from grammask.compiler.ir.graph import reachable_rules
from grammask.compiler.ir.nodes import CharClass, Choice, Literal, Node, Repeat, RuleRef, Seq
from grammask.compiler.support.diagnostics import Span
from grammask.compiler.support.limits import DEFAULT_LIMITS
from grammask.compiler.automata.flat_ir import flatten
import grammask.compiler.support.caches as caches

from .support.vocabularies import small_vocabulary


def _node(name: str, span: Span | None = None) -> Seq:
    return Seq((Literal(b"["), Repeat(Choice((CharClass(((0x61, 0x7A),)), RuleRef(name))), 0,
                                      None), Literal(b"]")), span)


def _key(node: Node) -> tuple[object, ...]:
    return flatten(node, DEFAULT_LIMITS, None).key()


def test_rule_automata_are_cached_by_structure() -> None:
    assert _key(_node("a")) == _key(_node("a", Span(1, 2, 3, 4)))
    assert _key(_node("a")) != _key(_node("b"))
    assert _key(Repeat(Literal(b"x"), 0, 3)) != _key(Repeat(Literal(b"x"), 0, 4))
    assert _key(Seq((Literal(b"ab"), Literal(b"c")))) != _key(Seq((Literal(b"a"), Literal(b"bc"))))
    assert _key(CharClass(((0x61, 0x62),))) != _key(CharClass(((0x61, 0x63),)))
    # Sharing is part of the structure: the same construction run twice gives one key.
    twice = [Seq((Choice((Literal(b"ab"), RuleRef("r"))),) * 2) for _ in range(2)]
    assert _key(twice[0]) == _key(twice[1])


SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}, "b": {}}}


def _tables(schema: object) -> list[np.ndarray]:
    table = compile_json_schema(schema, small_vocabulary()).pushdown
    assert table is not None
    return [table.transitions, table.call_offsets, table.call_rule, table.call_next,
            table.accepting, table.rule_start, table.byte_class]


def _rule_dfas() -> int:
    return caches.stats()["lowering.rule_automata.rule_dfa"].entries


def test_cached_rule_automata_give_the_tables_of_a_cold_compile() -> None:
    clear_caches()
    assert not _rule_dfas()
    cold = _tables(SCHEMA)
    cached = _rule_dfas()
    assert cached >= 2
    warm = _tables(SCHEMA)
    assert _rule_dfas() == cached
    assert all(np.array_equal(a, b) for a, b in zip(cold, warm, strict=True))
    # Another schema reuses the "any JSON value" rule: one new rule automaton, not two.
    _tables({"type": "object", "properties": {"c": {"type": "integer"}, "d": {}}})
    assert _rule_dfas() == cached + 1
    clear_caches()
    assert not _rule_dfas()


# The registry ------------------------------------------------------------------------------

COMPILER = Path(grammask.compiler.__file__).parent

# Caches the compiles below fill: each must be non-empty after them and empty after
# `clear_caches`, so that the counting proves the clearing.
FILLED = [
    "automata.flat_ir.automaton_edges", "automata.flat_ir.class_edges",
    "automata.language_ops._node_dfa", "automata.language_ops._product",
    "automata.language_ops.interned", "frontends.json_schema.ecma_regex._pattern_node",
    "frontends.json_schema.excluded_names._without", "frontends.json_schema.formats._built",
    "frontends.json_schema.literals.character", "frontends.json_schema.numbers._number_leaf",
    "frontends.json_schema.strings.string_literals", "frontends.lark_terminals._fold_ranges",
    "ir.summaries._class_ends", "lowering.rule_automata.rule_dfa",
]

SCHEMAS: list[object] = [
    {"type": "object", "additionalProperties": False, "required": ["p"], "properties": {
        "p": {"type": "string", "pattern": "^\\p{L}+[0-9]{2}$"},
        "d": {"type": "string", "format": "date-time"},
        "e": {"type": "string", "format": "email"},
        "n": {"type": "number", "minimum": 1.5, "maximum": 1000, "multipleOf": 0.5},
        "i": {"type": "integer", "exclusiveMinimum": -3},
        "s": {"type": "string", "minLength": 2, "maxLength": 5, "not": {"const": "abc"}},
        "m": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"},
              "additionalProperties": {"type": "integer"}},
        "x": {"enum": ["héllo", "wörld", 3]}}},
    {"type": "object", "properties": {"a": {"type": "string"}},
     "propertyNames": {"not": {"enum": ["b", "c"]}}},
]


def _compile_every_kind() -> None:
    vocab = small_vocabulary()
    compile_regex(r"[a-z]+\d{2,4}(foo|bar)", vocab)
    compile_gbnf('root ::= "[" (x ("," x)*)? "]"\nx ::= [0-9]+ | root', vocab)
    compile_lark('start: WORD+\nWORD: /(?i:[a-zé]+)/ | /\\w\\d/\n%ignore " "', vocab)
    for schema in SCHEMAS:
        compile_json_schema(schema, vocab)
    compile_structure(parse_gbnf('root ::= "a" root | "b"'), DEFAULT_LIMITS)


def test_clear_caches_empties_every_registered_cache() -> None:
    _compile_every_kind()
    stats = caches.stats()
    assert len(stats) >= 30
    assert all(s.bound is None or s.entries <= s.bound for s in stats.values())
    assert all(stats[name].entries > 0 for name in FILLED), \
        {name: stats[name].entries for name in FILLED}
    static = {name for name, s in stats.items() if s.static}
    assert {"frontends.regex._parser", "frontends.json_schema.ecma_regex._category_ranges",
            "frontends.lark_terminals._universe"} <= {n for n in static if stats[n].entries}
    clear_caches()
    after = caches.stats()
    assert all(s.entries == 0 for name, s in after.items() if name not in static), after
    # The static caches (parsers, Unicode tables: nothing derived from an input) are kept by
    # clear_caches, and forgotten too on request.
    assert all(after[name].entries == stats[name].entries for name in static)
    caches.clear_all(static=True)
    assert all(s.entries == 0 for s in caches.stats().values())
    _compile_every_kind()  # everything rebuilds as in a fresh process
    assert all(caches.stats()[name].entries > 0 for name in FILLED)


def test_per_grammar_values_live_with_their_grammar() -> None:
    grammar = parse_gbnf('root ::= "a" x\nx ::= "b" | root')
    before = caches.stats()["ir.graph.per_grammar"]
    assert before.bound is None  # one grammar per live thread, dropped when it is freed
    assert reachable_rules(grammar) == ["root", "x"]
    assert caches.stats()["ir.graph.per_grammar"].entries >= 1
    clear_caches()
    assert caches.stats()["ir.graph.per_grammar"].entries == 0
    assert reachable_rules(grammar) == ["root", "x"]
    assert caches.stats()["ir.graph.per_grammar"].entries >= 1
    del grammar
    gc.collect()
    assert caches.stats()["ir.graph.per_grammar"].entries == 0


def test_bounds_are_required() -> None:
    with pytest.raises(ValueError):
        caches.memo(maxsize=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        caches.register("tests.unbounded", lambda: None, lambda: 0, 0)


def _modules() -> list[tuple[str, ast.Module]]:
    out = []
    for path in sorted(COMPILER.rglob("*.py")):
        parts = path.relative_to(COMPILER).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out.append((".".join(parts), ast.parse(path.read_text(encoding="utf-8"))))
    return out


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


CACHE_FACTORIES = {"lru_cache", "functools.lru_cache", "cache", "functools.cache"}
HOLDERS = {"dict", "OrderedDict", "collections.OrderedDict", "defaultdict",
           "collections.defaultdict", "weakref.WeakKeyDictionary", "weakref.WeakValueDictionary",
           "WeakKeyDictionary", "WeakValueDictionary", "weakref.WeakSet", "threading.local"}
# Module-level holders that are not caches: the deadline of the compile running in each thread.
NOT_CACHES = {("support.deadline", "_local")}


def test_every_cache_in_the_source_is_registered() -> None:
    """Every function cache in compiler/ is a registered `memo`, never a bare lru_cache, and a
    module holding a dict, weak mapping or thread-local at module level registers a cache."""
    registered = set(caches.stats())
    memos, bare, holders = [], [], []
    for module, tree in _modules():
        if module == "support.caches":
            continue
        importlib.import_module(f"grammask.compiler.{module}" if module else "grammask.compiler")
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for deco in node.decorator_list:
                    if _dotted(deco) in ("memo", "caches.memo"):
                        memos.append(f"{module}.{node.name}")
                    elif _dotted(deco) in CACHE_FACTORIES:
                        bare.append(f"{module}:{deco.lineno}")
            elif isinstance(node, ast.Call) and _dotted(node) in CACHE_FACTORIES:
                bare.append(f"{module}:{node.lineno}")
        for stmt in tree.body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
                name = _dotted(target)
                empty = isinstance(stmt.value, ast.Dict) and not stmt.value.keys
                if (empty or isinstance(stmt.value, ast.Call) and _dotted(stmt.value) in HOLDERS
                        and not stmt.value.args) and (module, name) not in NOT_CACHES:
                    holders.append((module, name))
    assert not bare, f"use support.caches.memo (registered, bounded), not functools: {bare}"
    assert len(memos) >= 25
    assert not set(memos) - set(caches.stats())
    assert holders, "the dict caches of language_ops and rule_automata are found"
    unregistered = [h for h in holders if not any(r.startswith(h[0] + ".") for r in registered)]
    assert not unregistered, f"module-level caches not in support/caches.py: {unregistered}"
