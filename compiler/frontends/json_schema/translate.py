"""JSON Schema to grammar IR: one rule per conjunction of subschemas (and nesting depth, for
the exact-indent layout), built from a work list so that neither deep nor recursive schemas
recurse in Python.

- `anyOf` distributes over its siblings: (S ∧ anyOf[A, B]) = (S ∧ A) ∨ (S ∧ B), each a new
  conjunction, and so does a draft-03 `type` union holding a schema
  (`Collector.alternative`); `oneOf` does the same, each branch also carrying the negations
  of the others it is not provably disjoint from (`disjointness.py`),
  (S ∧ A ∧ ¬B) ∨ (S ∧ B ∧ ¬A), where those are expressible (`negation.py`); otherwise it is
  an error (or, lenient, read as `anyOf`).
- A negation that holds of objects or arrays only as a union of ways to break the negated
  subschema (`violations.py`) distributes like `anyOf` (`negation.split_negation`).
- `if`/`then`/`else` is (S ∧ I ∧ T) ∨ (S ∧ ¬I ∧ E), the two disjoint by construction; an
  `if` whose negation is not expressible is an error (lenient: (S ∧ I ∧ T) ∨ (S ∧ E)).
- A conjunction without pending alternatives is merged (`constraints.py`) and becomes a choice
  over the JSON types it allows; object and array members refer to the rules of their own
  conjunctions, which is how `$ref` recursion becomes grammar recursion.
- The number of rules is bounded by `Limits.max_schema_rules`.
- A conjunction of one scalar subschema (`leaves.py`) is translated once per content and
  process, and shared by every rule and schema that has it.
"""
from __future__ import annotations

import dataclasses
import re
from collections import deque
from itertools import combinations

from ...ir.nodes import NOTHING, Choice, Grammar, Literal, Node, Rule, RuleRef
from ...ir.rewrite import substitute
from ...support import deadline
from ...support.diagnostics import Diagnostic
from ...support.errors import GrammarError
from ...support.limits import Limits
from .arrays import array_node
from .conjunctions import (
    NEGATED,
    Conjunction,
    Constraints,
    conjunction,
    lenient_warning,
    location,
    negated,
)
from .constraints import Collector
from .dependent import dependent_branches, dependent_keyword
from .disjointness import overlapping
from .document import SchemaDocument, is_made, join, made_origin
from .leaves import cached_leaf, leaf_key, store_leaf
from .members import member_nodes
from .negation import NEGATABLE, apply_nots, negatable, split_negation
from .objects import object_node
from .options import JsonSchemaOptions, Layout
from .scalars import number_text, string_text
from .strings import spelling_notes
from .translation import remaining, unsupported
from .unevaluated import KEYWORDS as UNEVALUATED
from .unique import unique_array
from .values import canonical

Key = tuple[Conjunction, int]


class Translator:
    """Compiles the conjunctions of one schema document into grammar rules."""

    def __init__(self, doc: SchemaDocument, options: JsonSchemaOptions, limits: Limits) -> None:
        self.doc = doc
        self.options = options
        self.limits = limits
        self.layout = Layout(options, limits)
        self.collector = Collector(doc, options.lenient, options.strict_formats)
        self.names: dict[Key, str] = {}
        self.named: set[str] = set()
        self.bodies: dict[str, Node] = {}
        self.kept: dict[str, str] = {}
        self.queue: deque[Key] = deque()
        self.warnings: list[Diagnostic] = []
        """What lenient mode ignored and which relaxations were taken, in order, once each."""
        self.synthetic: dict[str, str] = {}
        """Pointers of the schemas `members.py` made, by the canonical value they stand for."""
        self.string_sets: dict = {}
        """`string_sets.strings_of`'s languages, by conjunction and side."""
        self._suffixes: dict[str, int] = {}
        """The last number `_fresh` appended to each stem."""
        self.references = 0
        """How many rule references `ref`, `kept_rule` and `rule` have handed out (a body
        that took one refers to a rule of this translation, so it is never shared)."""

    def grammar(self) -> Grammar:
        """The grammar of the whole document: its root value and nothing else."""
        start = self.ref(conjunction([location("")]), 0)
        while self.queue:
            deadline.check()
            key = self.queue.popleft()
            try:
                self.bodies[self.names[key]] = self._body(*key)
            except GrammarError as exc:
                if exc.pointer and is_made(exc.pointer):
                    raise exc.located(pointer=made_origin(exc.pointer), message=(
                        f"{exc.message} (in a schema made to negate this subschema)")) from None
                if exc.pointer and exc.pointer != made_origin(exc.pointer):
                    raise exc.located(pointer=made_origin(exc.pointer)) from None
                raise
        assert isinstance(start, RuleRef)
        kept = set(self.kept.values())
        return Grammar(tuple(Rule(name, body, kept=name in kept)
                             for name, body in self.bodies.items()), start=start.name)

    def ref(self, conj: Conjunction, depth: int) -> Node:
        """A reference to the rule of `conj` at `depth` (queued on first use)."""
        self.references += 1
        if self.layout.indented and depth > self.options.max_indent_depth:
            return NOTHING
        depth = depth if self.layout.indented else 0
        key = (conj, depth)
        name = self.names.get(key)
        if name is None:
            if len(self.names) >= self.limits.max_schema_rules:
                raise self.limits.exceeded("max_schema_rules", len(self.names) + 1,
                                           "grammar rules for the schema's subschemas")
            name = self._name(conj, depth)
            self.names[key] = name
            self.named.add(name)
            self.queue.append(key)
        return RuleRef(name)

    def member(self, pointers: list[str], depth: int) -> Node:
        """The rule of the conjunction of the subschemas at `pointers`."""
        return self.ref(conjunction([location(p) for p in pointers]), depth)

    def kept_rule(self, hint: str, body: Node) -> RuleRef:
        """The rule named `hint` with `body`, kept as a rule (`Rule.kept`); made once per
        translation, so every use of `hint` must mean the same body."""
        self.references += 1
        if hint not in self.kept:
            self.kept[hint] = self.rule(hint, body).name
        return RuleRef(self.kept[hint])

    def kept_grammar(self, hint: str, grammar: Grammar) -> RuleRef:
        """The start rule of `grammar` (whose rule names are its own), its rules added once
        per translation under fresh names starting with `hint`, all kept."""
        self.references += 1
        if hint not in self.kept:
            names = {r.name: self._fresh(f"{hint}-{r.name}", "") for r in grammar.rules}
            self.named.update(names.values())
            refs = {old: RuleRef(new) for old, new in names.items()}
            if len(self.names) + len(self.bodies) + len(names) > 2 * self.limits.max_schema_rules:
                raise self.limits.exceeded("max_schema_rules", len(self.bodies) + len(names),
                                           "grammar rules for the schema's subschemas")
            for r in grammar.rules:
                self.bodies[names[r.name]] = substitute(r.body, refs)
                self.kept[f"{hint}/{r.name}"] = names[r.name]
            self.kept[hint] = names[grammar.start]
        return RuleRef(self.kept[hint])

    def rule(self, hint: str, body: Node) -> RuleRef:
        """A new rule named after `hint` with the given body (for parts of a subschema that
        should stay apart, such as the members of a large object)."""
        self.references += 1
        if len(self.names) + len(self.bodies) >= 2 * self.limits.max_schema_rules:
            raise self.limits.exceeded("max_schema_rules", len(self.bodies) + 1,
                                       "grammar rules for the schema's subschemas")
        base = re.sub(r"[^a-zA-Z0-9]+", "-", hint).strip("-")[-40:].strip("-") or "part"
        name = self._fresh(base, "")
        self.bodies[name] = body
        return RuleRef(name)

    def warn(self, diagnostic: Diagnostic) -> None:
        """Record what lenient mode or a relaxation changed (once each)."""
        if diagnostic.pointer and made_origin(diagnostic.pointer) != diagnostic.pointer:
            diagnostic = dataclasses.replace(diagnostic, pointer=made_origin(diagnostic.pointer))
        if diagnostic not in self.warnings:
            self.warnings.append(diagnostic)

    def _name(self, conj: Conjunction, depth: int) -> str:
        pointer = conj[-1][0] if conj else ""
        tail = [t for t in pointer.split("/")[1:] if t not in ("properties", "items", "$defs",
                                                               "definitions")][-2:]
        base = re.sub(r"[^a-zA-Z0-9]+", "-", "-".join(tail)).strip("-")[-40:].strip("-")
        base = base or "value"
        if not self.names:
            base = "root"
        return self._fresh(base, f"-d{depth}" if depth else "")

    def _fresh(self, base: str, suffix: str) -> str:
        """`base + suffix`, or the first `base + suffix-n` (n = 2, 3, …) not taken; the count
        goes on from the last one handed out, so that naming many rules is linear."""
        stem = base + suffix
        name = stem
        n = self._suffixes.get(stem, 1)
        while name in self.bodies or name in self.named:
            n += 1
            name = f"{stem}-{n}"
        self._suffixes[stem] = n
        return name

    def _body(self, conj: Conjunction, depth: int) -> Node:
        key = leaf_key(self, conj)
        if key is None:
            return self._translate(conj, depth)
        body = cached_leaf(key)
        if body is None:
            before = (len(self.warnings), self.references)
            body = self._translate(conj, depth)
            if (len(self.warnings), self.references) == before:
                store_leaf(key, body)
        return body

    def _translate(self, conj: Conjunction, depth: int) -> Node:
        parts = self.collector.flatten(conj)
        if parts is None:
            return NOTHING
        for loc in parts:
            pointer, ignored = loc
            if NEGATED in ignored:
                continue
            keyword = self.collector.alternative(pointer, ignored)
            if keyword is not None:
                return self._alternatives(parts, loc, keyword, depth)
            schema = self.doc.at(pointer)
            if "if" in schema and "if" not in ignored and (
                    "then" in schema or "else" in schema or self._evaluates(parts)):
                return self._conditional(parts, loc, depth)
            keyword = dependent_keyword(self.collector, schema, ignored)
            if keyword is not None:
                return Choice(tuple(self.ref(conjunction(branch), depth)
                                    for branch in dependent_branches(self, parts, loc, keyword)))
        c = self.collector.collect(parts)
        for w in c.warnings:
            self.warn(w)
        split = split_negation(self, parts, c) if c.nots else None
        if split is not None:
            return Choice(tuple(self.ref(conjunction(b), depth) for b in split))
        return self._typed(c, depth)

    def _alternatives(self, parts: list, loc: tuple[str, frozenset[str]], keyword: str,
                      depth: int) -> Node:
        pointer = loc[0]
        branches = [join(pointer, keyword, i) for i in range(len(self.doc.at(pointer)[keyword]))]
        rest = remaining(parts, loc, keyword)
        others: dict[str, list] = {b: [] for b in branches}
        if keyword == "oneOf":
            overlaps = overlapping(self, branches, rest)
            if any(overlaps.values()):
                if all(negatable(self, b) for b in branches if overlaps[b]):
                    others = {b: [negated(o) for o in overlaps[b]] for b in branches}
                else:
                    where = join(pointer, "oneOf")
                    message = ("the branches of oneOf may overlap, and exactly-one-of is not "
                               "expressible here")
                    if not self.options.lenient:
                        raise GrammarError(message + "; make them disjoint (for example with a "
                                           "const discriminator property), use anyOf, or "
                                           "compile with lenient=True to read it as anyOf",
                                           pointer=where, code="unsupported-keyword")
                    self.warn(lenient_warning(where, message, "schema-oneof-as-anyof"))
        if keyword == "anyOf" and self._evaluates(parts):
            subsets = self._holding_together(pointer, branches, rest)
            if subsets is not None:
                return Choice(tuple(self.ref(conjunction(rest + b), depth) for b in subsets))
        alts = [self.ref(conjunction(rest + [location(b), *others[b]]), depth) for b in branches]
        return Choice(tuple(alts)) if alts else NOTHING

    def _evaluates(self, parts: list) -> bool:
        """Whether a positive part of `parts` holds `unevaluatedProperties`/`Items`."""
        return any(NEGATED not in ignored and isinstance(s := self.doc.at(p), dict)
                   and any(k in s and k not in ignored for k in UNEVALUATED)
                   for p, ignored in parts)

    def _holding_together(self, pointer: str, branches: list[str],
                          rest: list) -> list[list] | None:
        """An `anyOf` beside an unevaluated keyword: every branch that holds evaluates, so it
        is distributed over the sets of branches that hold together (the others negated),
        where some may overlap; None where none may (`unevaluated.py`)."""
        overlaps = overlapping(self, branches, rest)
        if not any(overlaps.values()):
            return None
        where = join(pointer, "anyOf")
        if len(branches) > self.limits.max_anyof_subsets:
            raise self.limits.exceeded(
                "max_anyof_subsets", len(branches), "branches of an anyOf that may hold "
                "together beside an unevaluated keyword (a conjunction per set of them)"
            ).located(pointer=where)
        if not all(negatable(self, b) for b in branches if overlaps[b]):
            unsupported(self, where, "the branches of this anyOf may hold together beside "
                        "an unevaluated keyword (each adds what it evaluates), which needs "
                        "their negations, and those are not expressible here")
            return None
        out = []
        for n in range(1, len(branches) + 1):
            for chosen in combinations(branches, n):
                if not all(b in overlaps[a] for a, b in combinations(chosen, 2)):
                    continue  # two of them cannot hold together
                out.append([*map(location, chosen),
                            *(negated(o) for o in branches if o not in chosen
                              and any(o in overlaps[a] for a in chosen))])
        return out

    def _conditional(self, parts: list, loc: tuple[str, frozenset[str]], depth: int) -> Node:
        pointer = loc[0]
        schema = self.doc.at(pointer)
        rest = remaining(parts, loc, "if", "then", "else")
        condition = join(pointer, "if")
        then = [location(join(pointer, "then"))] if "then" in schema else []
        otherwise = [location(join(pointer, "else"))] if "else" in schema else []
        if negatable(self, condition):
            otherwise.append(negated(condition))
        else:
            unsupported(self, condition, "the negation of this subschema is not expressible "
                        f"here, so neither is 'else' (supported: {NEGATABLE})")
        alts = (self.ref(conjunction(rest + [location(condition), *then]), depth),
                self.ref(conjunction(rest + otherwise), depth))
        return Choice(alts)

    def _typed(self, c: Constraints, depth: int) -> Node:
        if c.nots:
            apply_nots(self, c)
        if c.values is not None:
            alts = member_nodes(self, c, depth)
            return Choice(tuple(alts)) if alts else NOTHING
        alts: list[Node] = []
        if "null" in c.types:
            alts.append(Literal(b"null"))
        if "boolean" in c.types:
            alts.extend(Literal(b"true" if v else b"false") for v in (True, False)
                        if canonical(v) not in c.excluded_values)
        if c.numbers:
            node = number_text(self, c)
            if node is not None:
                alts.append(node)
        if "string" in c.types:
            node = string_text(self, c)
            if node is not None:
                alts.append(node)
                for note in spelling_notes(node, c.string_pointer):
                    self.warn(note)
        if "array" in c.types:
            node = unique_array(self, c, depth) if c.unique else array_node(self, c, depth)
            if node is not None:
                alts.append(node)
        if "object" in c.types:
            node = object_node(self, c, depth)
            if node is not None:
                alts.append(node)
        return Choice(tuple(alts)) if alts else NOTHING
