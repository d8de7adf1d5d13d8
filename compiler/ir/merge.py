"""Several grammars in one rule set: each grammar's rules added under names that keep different
rules apart and equal rules shared.

Invariant of a `MergedRules`: no two rules share a name, no rule takes a reserved name, and
every reference in an added rule names a rule added with it (or shared with an earlier one) that
has the very body it had in its own grammar. A rule is shared when a rule of that name was
added before with an equal body and every rule it uses is shared too (JSON's string and number
rules, a schema given twice); every other rule of the grammar gets the grammar's own prefix
(`j3_root`), and the bodies that refer to a renamed rule are rewritten once.
"""
from __future__ import annotations

from collections.abc import Iterable

from .graph import first_references
from .nodes import Grammar, Literal, Node, Rule, RuleRef
from .rewrite import substitute

__all__ = ["MergedRules"]


class MergedRules:
    """The rules added so far (`rules`, in order), by name."""

    def __init__(self, reserved: Iterable[str] = ()) -> None:
        self.rules: list[Rule] = []
        self.known: dict[str, Rule] = {name: Rule(name, Literal(b"\x00")) for name in reserved}
        self.added = 0

    def add(self, grammar: Grammar, kind: str) -> RuleRef:
        """`grammar`'s rules added (the prefix of its own rules `kind` and a count); a
        reference to its start rule."""
        self.added += 1
        prefix = f"{kind}{self.added}_"
        known, rules = self.known, grammar.by_name
        own = {n for n, r in rules.items()
               if n in known and (known[n].body, known[n].max_tokens) != (r.body, r.max_tokens)}
        users: dict[str, list[str]] = {}
        for r in grammar.rules:
            for ref in first_references(r.body):
                users.setdefault(ref.name, []).append(r.name)
        stack = list(own)
        while stack:
            for user in users.get(stack.pop(), ()):
                if user not in own:
                    own.add(user)
                    stack.append(user)
        rename = {n: prefix + n for n in own}
        if grammar.start not in rules:
            rename[grammar.start] = prefix + grammar.start
        refs: dict[str, Node] = {old: RuleRef(new) for old, new in rename.items()}
        rewritten = {user for name in rename for user in users.get(name, ())}
        for r in grammar.rules:
            if r.name in own or r.name not in known:
                body = substitute(r.body, refs) if r.name in rewritten else r.body
                rule = Rule(rename.get(r.name, r.name), body, r.span, r.kept, r.max_tokens)
                known[rule.name] = rule
                self.rules.append(rule)
        return RuleRef(rename.get(grammar.start, grammar.start))
