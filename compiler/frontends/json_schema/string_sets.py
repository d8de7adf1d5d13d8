"""The decoded strings a conjunction of subschemas accepts, with every combinator: what
`propertyNames` needs, since a property name is a string and its subschema may say anything.

`strings_of(t, conj)` is the language, over decoded code points, of the strings that validate
against every subschema of `conj`, built by automaton operations on the schema's structure:
- `$ref` and `allOf` intersect (`Collector.flatten`); keywords of other types hold of every
  string; `type` without `string`, or `false`, accepts none;
- the string keywords (`enum`/`const`, `pattern`, `format`, lengths) of the merged subschemas
  give the plain language (`scalars.string_content_node`);
- `not S` removes the strings of S; `anyOf` (and a draft-03 `type` union) is a union;
  `oneOf` keeps the strings of exactly one branch (each branch minus the others);
  `if`/`then`/`else` is (I ∩ T) ∪ (E \\ I).
Every complement takes its operand on the other side of the `relaxations` rule: a language
that is removed is built with the supersets of the sound format subsets (`removed=True`), so
the result is always a subset of the exact strings, never more.

The evaluation is iterative over a work list of (conjunction, side) keys, memoized per
translation; a key met again while it is being built is a reference cycle that consumes no
input (`{"$defs": {"a": {"not": {"$ref": "#/$defs/a"}}}}`), an `invalid-schema` error.
"""
from __future__ import annotations

from ...automata.language_ops import as_dfa, difference, intersect
from ...ir.nodes import NOTHING, Choice, Node, Repeat
from ...support import deadline
from ...support.errors import GrammarError
from .conjunctions import NEGATED, Conjunction, conjunction, location
from .document import join
from .ecma_regex import ANY_CHAR, ANY_STRING
from .literals import string_content
from .scalars import enum_members, string_content_node
from .translation import Translation, remaining

Key = tuple[Conjunction, bool]


def strings_of(t: "Translation", conj: Conjunction, *, removed: bool = False) -> Node:
    """The decoded strings every subschema of `conj` accepts: `ANY_STRING` itself when they
    say nothing of strings, `NOTHING` when none. `removed`: the language will be removed by a
    complement, so sound format subsets are replaced by their supersets."""
    memo = t.string_sets
    root: Key = (conj, removed)
    todo: list[Key] = [root]
    plans: dict[Key, tuple] = {}
    while todo:
        deadline.check()
        key = todo[-1]
        if key in memo:
            todo.pop()
            continue
        if key not in plans:
            plans[key] = _plan(t, *key)
            pending = [k for k in _children(plans[key]) if k not in memo]
            for k in pending:
                if k in plans:
                    raise GrammarError("this subschema refers to itself through "
                                       "a reference cycle that consumes no input",
                                       pointer=_where(k), code="invalid-schema")
            todo.extend(pending)
            if pending:
                continue
        todo.pop()
        memo[key] = _evaluate(t, plans.pop(key), memo)
    return memo[root]


def _where(key: Key) -> str:
    return key[0][-1][0] if key[0] else "/"


def _plan(t: "Translation", conj: Conjunction, removed: bool) -> tuple:
    """How to build the language of `conj`: ('none',), ('any', [branch keys]),
    ('one', [(branch key, [other keys])]), ('if', [condition-and-then key, else key,
    condition key]) or ('plain', node, [keys to remove])."""
    parts = t.collector.flatten(conj)
    if parts is None:
        return ("none",)
    for loc in parts:
        pointer, ignored = loc
        if NEGATED in ignored:
            continue
        schema = t.doc.at(pointer)
        keyword = t.collector.alternative(pointer, ignored)
        if keyword is not None:
            rest = remaining(parts, loc, keyword)
            branches = [join(pointer, keyword, i) for i in range(len(schema[keyword]))]
            keys = [(conjunction(rest + [location(b)]), removed) for b in branches]
            if keyword != "oneOf":
                return ("any", keys)
            return ("one", [(k, [(conjunction([location(o)]), not removed)
                                 for o in branches if o != b])
                            for k, b in zip(keys, branches)])
        if "if" in schema and "if" not in ignored and ("then" in schema or "else" in schema):
            rest = remaining(parts, loc, "if", "then", "else")
            condition = location(join(pointer, "if"))
            then = [location(join(pointer, "then"))] if "then" in schema else []
            otherwise = [location(join(pointer, "else"))] if "else" in schema else []
            return ("if", [(conjunction(rest + [condition, *then]), removed),
                           (conjunction(rest + otherwise), removed),
                           (conjunction([condition]), not removed)])
    c = t.collector.collect(parts)
    for w in c.warnings:
        t.warn(w)
    return ("plain", _plain(t, c, removed),
            [(conjunction([location(p)]), not removed) for p in c.nots])


def _children(plan: tuple) -> list[Key]:
    kind = plan[0]
    if kind in ("any", "if"):
        return list(plan[1])
    if kind == "one":
        return [k for branch, others in plan[1] for k in (branch, *others)]
    if kind == "plain":
        return list(plan[2])
    return []


def _evaluate(t: "Translation", plan: tuple, memo: dict[Key, Node]) -> Node:
    kind = plan[0]
    if kind == "none":
        return NOTHING
    if kind == "any":
        return _union(t, [memo[k] for k in plan[1]])
    if kind == "one":
        return _union(t, [_minus(t, memo[branch], [memo[k] for k in others])
                          for branch, others in plan[1]])
    if kind == "if":
        then, otherwise, condition = (memo[k] for k in plan[1])
        return _union(t, [then, _minus(t, otherwise, [condition])])
    node = plan[1]
    return _minus(t, node, [memo[k] for k in plan[2]])


def _union(t: "Translation", nodes: list[Node]) -> Node:
    if any(n is ANY_STRING for n in nodes):
        return ANY_STRING
    kept = [n for n in nodes if n is not NOTHING]
    if not kept:
        return NOTHING
    return kept[0] if len(kept) == 1 else Choice(tuple(kept))


def _minus(t: "Translation", kept: Node, removed: list[Node]) -> Node:
    removed = [n for n in removed if n is not NOTHING]
    if kept is NOTHING or not removed:
        return kept
    if any(n is ANY_STRING for n in removed):
        return NOTHING
    node = difference(kept, removed[0] if len(removed) == 1 else Choice(tuple(removed)),
                      limits=t.limits, label="string")
    return NOTHING if node.dfa.is_empty_language else node


def _plain(t: "Translation", c, removed: bool) -> Node:  # type: ignore[no-untyped-def]
    """The strings the merged keywords of `c` accept, ignoring its negations."""
    if "string" not in c.types:
        return NOTHING
    if c.values is not None:
        c.types = {"string"}
        members = [v for v in enum_members(t, c, removed=removed) if isinstance(v, str)]
        return Choice(tuple(string_content(v) for v in members)) if members else NOTHING
    nodes = [n for n in (string_content_node(t, c, removed=removed),) if n is not None]
    if c.min_length or c.max_length is not None:
        if c.max_length is not None and c.max_length < c.min_length:
            return NOTHING
        nodes.append(Repeat(ANY_CHAR, c.min_length, c.max_length))
    if not nodes:
        return ANY_STRING
    node = nodes[0] if len(nodes) == 1 else intersect(*nodes, limits=t.limits)
    return NOTHING if as_dfa(node, t.limits).is_empty_language else node


__all__ = ["strings_of"]
