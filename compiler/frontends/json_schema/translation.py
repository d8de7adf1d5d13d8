"""What the keyword modules see of a translation in progress, and the helpers they share.

`translate.Translator` runs the work list of conjunctions and hands each merged one to the
keyword modules (`scalars`, `arrays`, `objects`, `members`, `negation`, `string_sets`,
`disjointness`). They read the document, the options and the limits, and make rules, through
the `Translation` interface below, never through `translate.py` itself: imports run one way,
translate → keyword modules → translation.
"""
from __future__ import annotations

from typing import Any, Protocol

from ...ir.nodes import Grammar, Node, RuleRef
from ...support.diagnostics import Diagnostic
from ...support.errors import GrammarError
from ...support.limits import Limits
from .conjunctions import NEGATED, Conjunction, lenient_warning
from .constraints import EXPANDED, Collector
from .document import SchemaDocument
from .options import JsonSchemaOptions, Layout


class Translation(Protocol):
    """One schema document being translated: what it reads and how it makes rules."""

    doc: SchemaDocument
    options: JsonSchemaOptions
    limits: Limits
    layout: Layout
    collector: Collector
    synthetic: dict[str, str]
    """Pointers of the schemas `members.py` made, by the canonical value they stand for."""
    string_sets: dict
    """`string_sets.strings_of`'s languages, by conjunction and side."""

    def ref(self, conj: Conjunction, depth: int) -> Node:
        """A reference to the rule of `conj` at `depth` (queued on first use)."""

    def member(self, pointers: list[str], depth: int) -> Node:
        """The rule of the conjunction of the subschemas at `pointers`."""

    def kept_rule(self, hint: str, body: Node) -> RuleRef:
        """The rule named `hint` with `body`, kept as a rule (made once per translation)."""

    def kept_grammar(self, hint: str, grammar: Grammar) -> RuleRef:
        """The start rule of `grammar`, its rules added once per translation (kept)."""

    def rule(self, hint: str, body: Node) -> RuleRef:
        """A new rule named after `hint` with the given body."""

    def warn(self, diagnostic: Diagnostic) -> None:
        """Record what lenient mode or a relaxation changed (once each)."""


def settled(parts: list) -> list:
    """The flattened conjunction `parts` with `$ref` and `allOf` ignored everywhere (they are
    expanded already), so that flattening it again adds nothing."""
    return [(p, i if NEGATED in i else i | EXPANDED) for p, i in parts]


def remaining(parts: list, loc: tuple[str, frozenset[str]], *keywords: str) -> list:
    """The flattened conjunction `parts` without `keywords` at `loc` (`settled`)."""
    pointer, ignored = loc
    rest = settled([part for part in parts if part != loc])
    rest.append((pointer, ignored | EXPANDED | set(keywords)))
    return rest


def unsupported(t: Translation, pointer: str, message: str,
                code: str = "unsupported-keyword") -> None:
    """Raise for an unsupported construct at `pointer`, or record a warning when lenient."""
    if not t.options.lenient:
        raise GrammarError(message + "; compile with lenient=True to ignore it (the output may "
                           "then violate it)", pointer=pointer, code=code)
    t.warn(lenient_warning(pointer, message))


def schema_value(t: Translation, pointer: str) -> Any:
    """The subschema at `pointer`."""
    return t.doc.at(pointer)
