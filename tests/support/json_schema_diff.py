"""The JSON Schema frontend judged instance TEXT by instance text against the exact reference
(`json_schema_exact.exact_validator`).

`Differential(schema, vocab)` compiles a schema (a dict, or a JSON text whose numbers the
reference reads exactly) and judges texts: a finding when the frontend accepts a text the
reference finds invalid (unsound), or rejects a valid text in the documented form (see
`json_schema_oracle.documented_form`; incomplete). Texts whose verdict hangs on a pattern that
Python and ECMA-262 may read differently, or that the reference does not judge, are skipped.
Unsound findings are sorted into classes by what explains them (`classify`), and `shrink`
makes a finding smaller while its class stays.
"""
from __future__ import annotations

import copy
import itertools
import json
import random
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import jsonschema
from grammask.compiler import GrammarError
from grammask.compiler import compile_json_schema
from grammask.compiler.support.limits import DEFAULT_LIMITS, Limits
from grammask.runtime import Vocabulary

from .json_schema_exact import NotJudged, exact_validator, exact_verdict, parse_instance
from .json_schema_oracle import documented_form, ecma_safe
from .json_schema_spellings import (MAX_DOCUMENTED_GAP, WHITESPACE, documented_texts,
                                    exotic_texts, has_exponent, minimal_number, respell_numbers,
                                    write)
from .json_schema_suite import accepts

ESCAPED = re.compile(r"\\[u/]")
"""A `\\u` or `\\/` escape: outside the `string-escapes` domain."""
STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
INCOMPLETE = "rejects a valid documented instance"
LATER_KEYWORDS = "rejects by a keyword its draft does not have"
REJECTIONS = (INCOMPLETE, LATER_KEYWORDS)
CLASSES = ("draft-03 keywords", "draft-03/04 integers", "schema-text numbers",
           "exponent spellings", "number spellings", "propertyNames", "object/array enum",
           "other")
"""The classes of unsound findings, in the order `classify` tries them."""
DRAFT3_ONLY = frozenset(["divisibleBy", "disallow", "extends"])


@dataclass
class Finding:
    """A text the frontend and the reference disagree on."""

    kind: str
    """One of CLASSES for an unsound finding, or INCOMPLETE or LATER_KEYWORDS."""
    schema: Any
    """As the frontend got it: JSON data, or a JSON text."""
    text: str

    def __str__(self) -> str:
        verb = "rejects the valid" if self.kind in REJECTIONS else "accepts the invalid"
        given = "text" if isinstance(self.schema, str) else "dict"
        schema = self.schema if isinstance(self.schema, str) else json.dumps(self.schema)
        return (f"[{self.kind}] the frontend {verb} instance {self.text!r} of the schema "
                f"(given as a {given}) {schema}")


def _dialect(data: Any) -> str:
    d = data.get("$schema") if isinstance(data, dict) else None
    return d if isinstance(d, str) else ""


def _keys(node: Any) -> set[str]:
    """Every member name in the data."""
    if isinstance(node, dict):
        return set(node).union(*map(_keys, node.values()))
    return set().union(*map(_keys, node)) if isinstance(node, list) else set()


def _without(node: Any, keyword: str) -> Any:
    """The schema data with every member named `keyword` removed."""
    if isinstance(node, dict):
        return {k: _without(v, keyword) for k, v in node.items() if k != keyword}
    if isinstance(node, list):
        return [_without(v, keyword) for v in node]
    return node


def _containers_in_values(node: Any) -> bool:
    """Whether an enum or const of the schema holds an object or array."""
    if isinstance(node, list):
        return any(map(_containers_in_values, node))
    if not isinstance(node, dict):
        return False
    values = [node.get("const")] + (node["enum"] if isinstance(node.get("enum"), list) else [])
    return (any(isinstance(v, (dict, list)) for v in values)
            or any(_containers_in_values(v) for k, v in node.items() if k not in ("enum", "const")))


def _integral(token: str) -> str:
    d = Decimal(token)
    return str(int(d)) if d == d.to_integral_value() and abs(d.adjusted()) < 100 else token


class Differential:
    """A compiled schema and its exact reference (see the module docstring). NotJudged when
    the reference does not judge the schema, GrammarError when the frontend refuses it."""

    def __init__(self, schema: Any, vocab: Vocabulary, limits: Limits = DEFAULT_LIMITS) -> None:
        self.schema, self.vocab, self.limits = schema, vocab, limits
        self.check = exact_validator(schema)
        self.data = self.check.schema
        self.compiled = compile_json_schema(schema, vocab, limits=limits)
        self.compiled.automaton  # every rule built: a budget error is the compile's
        self.raw_only = any("(relaxation string-escapes)" in n for n in self.compiled.notes)
        """Some string takes the `string-escapes` subset: escaped texts are not documented."""

    def accepts(self, text: str) -> bool:
        return accepts(self.compiled, text)

    def verdict(self, text: str) -> tuple[bool, Any] | None:
        """(valid, value) by the reference, None where it does not judge (the value is None
        for a text that is not JSON)."""
        try:
            value = parse_instance(text)
        except ValueError:
            return False, None
        except NotJudged:
            return None
        if not ecma_safe(self.data, value):
            return None
        try:
            return exact_verdict(self.check, text), value
        except NotJudged:
            return None

    def documented(self, text: str) -> bool:
        """Whether a text is in the documented form: no exponent, no whitespace around the
        value or over MAX_DOCUMENTED_GAP per gap, a valid value in member order."""
        if has_exponent(text) or text != text.strip(WHITESPACE) or re.search(
                f"[{WHITESPACE}]{{{MAX_DOCUMENTED_GAP + 1},}}", STRING.sub('""', text)):
            return False
        try:
            value = parse_instance(text)
            arranged = documented_form(self.check, value)
        except Exception:  # noqa: BLE001 - not JSON, or not judged
            return False
        return arranged is not None and json.dumps(arranged, default=str) == json.dumps(
            value, default=str)

    def judge(self, text: str, documented: bool = False) -> Finding | None:
        """The finding on `text`, if any; `documented`: the text is in the documented form
        (so a valid one must be accepted)."""
        judged = self.verdict(text)
        if judged is None:
            return None
        documented = documented and not (self.raw_only and ESCAPED.search(text))
        valid, _ = judged
        ours = self.accepts(text)
        if ours and not valid:
            return Finding(self.classify(text), self.schema, text)
        if documented and valid and not ours and not self.other_order_accepted(judged[1]):
            return Finding(self.classify_rejection(text), self.schema, text)
        return None

    def other_order_accepted(self, value: Any, tries: int = 300) -> bool:
        """Whether the value is accepted, written compactly, with the members of one of its
        objects in some other order (so a rejection was one of key order, a declared subset
        whose order `MemberOrder` did not foresee)."""
        for path in _paths(value):
            node = _get(value, path)
            if not isinstance(node, dict) or len(node) < 2:
                continue
            for order in itertools.islice(itertools.permutations(node), 1, None):
                tries -= 1
                if tries < 0:
                    return False
                reordered = {k: node[k] for k in order}
                if self.accepts(_plain_text(_edited(value, path, reordered) if path
                                            else reordered)):
                    return True
        return False

    def classify_rejection(self, text: str) -> str:
        """LATER_KEYWORDS where the schema's draft lacks a keyword of 2020-12 that the schema
        uses (which the frontend applies in every draft), else INCOMPLETE."""
        own = set(self.check.VALIDATORS) | set(self.check.META_SCHEMA.get("properties", {}))
        later = set(jsonschema.Draft202012Validator.VALIDATORS) - own - {"$ref"}
        return LATER_KEYWORDS if _keys(self.data) & later else INCOMPLETE

    def classify(self, text: str) -> str:
        """What explains an accepted invalid text (the first of CLASSES that applies)."""
        dialect = _dialect(self.data)
        if "draft-03" in dialect and (_keys(self.data) & DRAFT3_ONLY or '"required": true'
                                      in json.dumps(self.data, default=str)):
            return CLASSES[0]
        if "draft-04" in dialect or "draft-03" in dialect:
            respelled = respell_numbers(text, _integral)
            if respelled != text and (self.verdict(respelled) or (False,))[0]:
                return CLASSES[1]
        if isinstance(self.schema, str):
            try:
                floats = exact_validator(json.loads(self.schema))
                if exact_verdict(floats, text):
                    return CLASSES[2]
            except (NotJudged, ValueError):
                pass
        minimal = respell_numbers(text, minimal_number)
        if minimal != text and not self.accepts(minimal):
            return CLASSES[3] if has_exponent(text) else CLASSES[4]
        value = (self.verdict(text) or (None, None))[1]
        if "propertyNames" in json.dumps(self.data, default=str):
            try:
                if exact_validator(_without(self.data, "propertyNames")).is_valid(value):
                    return CLASSES[5]
            except Exception:  # noqa: BLE001 - a schema the reference cannot judge
                pass
        if _containers_in_values(self.data) and isinstance(value, (dict, list)):
            return CLASSES[6]
        return CLASSES[7]

    def texts(self, values: list[Any], rng: random.Random,
              exotic: int = 3) -> list[tuple[str, bool]]:
        """Texts of the values, each flagged whether it is in the documented form: those of
        a valid value in member order, then a plain one and `exotic` others of each value."""
        out: list[tuple[str, bool]] = []
        for value in values:
            try:
                arranged = documented_form(self.check, value)
            except Exception:  # noqa: BLE001 - the reference cannot judge it: no claim
                arranged = None
            if arranged is not None:
                out.extend((t, True) for t in documented_texts(arranged, rng))
            out.append((write(value, rng, varied_numbers=False), False))
            out.extend((t, False) for t in exotic_texts(value, rng, exotic))
        return out

    def first_finding(self, texts: list[tuple[str, bool]]) -> Finding | None:
        for text, documented in texts:
            finding = self.judge(text, documented)
            if finding is not None:
                return finding
        return None


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    children = node.items() if isinstance(node, dict) else enumerate(node) \
        if isinstance(node, list) else ()
    for k, child in children:
        out.extend(_paths(child, (*path, k)))
    return out


def _get(root: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        root = root[k]
    return root


def _plain_text(value: Any) -> str:
    """A compact JSON text of an instance value, `Decimal` numbers without exponent."""
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + _plain_text(v)
                              for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(map(_plain_text, value)) + "]"
    return json.dumps(value, ensure_ascii=False)


def _edited(root: Any, path: tuple[Any, ...], replacement: Any) -> Any:
    """A copy of root with the node at `path` removed (replacement None) or replaced."""
    root = copy.deepcopy(root)
    parent = root
    for k in path[:-1]:
        parent = parent[k]
    if replacement is None:
        del parent[path[-1]]
    else:
        parent[path[-1]] = replacement
    return root


def exact_text(data: Any) -> str:
    """A JSON text of schema data, `Decimal` numbers as they print (exactly their value)."""
    if isinstance(data, Decimal):
        return str(data)
    if isinstance(data, dict):
        return "{" + ",".join(json.dumps(k) + ":" + exact_text(v) for k, v in data.items()) + "}"
    if isinstance(data, list):
        return "[" + ",".join(map(exact_text, data)) + "]"
    return json.dumps(data)


def shrink(finding: Finding, vocab: Vocabulary, limits: Limits = DEFAULT_LIMITS,
           compiles: int = 60, tries: int = 200) -> Finding:
    """A smaller finding of the same kind: schema members and items dropped or replaced by
    `{}` (at most `compiles` compilations), then chunks of the text dropped (`tries`)."""
    as_text = isinstance(finding.schema, str)
    data = json.loads(finding.schema, parse_float=Decimal) if as_text else finding.schema
    text = finding.text

    def still(candidate: Any, text: str) -> Differential | None:
        try:
            diff = Differential(exact_text(candidate) if as_text else candidate, vocab, limits)
        except (GrammarError, NotJudged, RecursionError):
            return None
        found = diff.judge(text, finding.kind in REJECTIONS and diff.documented(text))
        return diff if found is not None and found.kind == finding.kind else None

    budget = compiles
    progress = True
    while progress and budget > 0:
        progress = False
        for path in _paths(data)[1:]:
            for replacement in (None, {}):
                if budget <= 0:
                    break
                try:
                    candidate = _edited(data, path, replacement)
                except (KeyError, IndexError, TypeError):
                    break
                if candidate == data:
                    continue
                budget -= 1
                if still(candidate, text) is not None:
                    data, progress = candidate, True
                    break
            if progress:
                break
    diff = still(data, text)
    if diff is None:  # flaky under a changed compile budget: keep the original
        return finding
    chunk = max(1, len(text) // 2)
    while chunk >= 1 and tries > 0:
        i = 0
        while i < len(text) and tries > 0:
            candidate = text[:i] + text[i + chunk:]
            tries -= 1
            found = diff.judge(candidate, finding.kind in REJECTIONS and diff.documented(
                candidate)) if candidate else None
            if found is not None and found.kind == finding.kind:
                text = candidate
            else:
                i += chunk
        chunk //= 2
    return Finding(finding.kind, diff.schema, text)
