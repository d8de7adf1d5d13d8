"""Token references → spellings: the one pass that needs the vocabulary before automata.

A `TokenRef` names tokens by id ranges or by text. Against a vocabulary each named token is
resolved to an id and the reference to the *spellings* of `runtime.vocab.spelling`: a control
token is its marker, a text token named by a reference (or excluded by a repeated negated one)
is its marker followed by its text (such a token is read as a reference everywhere in this
grammar), so

- a reference `<[ids]>` is the choice of the named tokens' spellings: exactly one of them;
- a negated reference repeated without an upper bound, `!<[S]>*` or `!<[S]>+`, is any sequence
  of tokens not in S: the spelling of every control and named text token not in S, or any
  character (every other text token spells text), repeated. This is exact: a token of S is
  never allowed there (its spelling starts with a marker the repetition does not offer), any
  other token is, and any text is a sequence of such tokens.

A negated reference anywhere else (`!<x>` alone, `!<x>{2,5}`) is exactly one token of almost
the whole vocabulary, which bytes cannot say (a text token's text can also be written by
several tokens). It becomes a *one-token step*: the spelling `MARKER` + (vocabulary size + j),
an id no token has, for the j-th distinct excluded set S_j (`CompiledGrammar.one_token`). The
matcher reads a token t not in S_j (nor EOS, nor padding) there as that step as well as by its
own spelling (`runtime/pushdown/one_token.py`), so such a grammar always runs on the pushdown
backend; S_j's text tokens are not named by it (they still write text elsewhere). EOS ids cannot be referenced (the matcher allows EOS where the text may end), nor ids
that spell nothing (padding).
"""
from __future__ import annotations

import dataclasses

from ...runtime.vocab.spelling import MAX_REFERENCE_ID, marker, token_spelling
from ...runtime.vocab.vocabulary import Vocabulary
from ..automata.derivative import TokenSymbol
from ..ir.graph import token_references
from ..ir.nodes import CharClass, Choice, Grammar, Literal, Node, Repeat, TokenRef
from ..ir.rewrite import rewrite
from ..support.errors import GrammarError
from ..support.limits import Limits

__all__ = ["resolve_tokens", "trigger_token"]

ANY_CHARACTER = CharClass.of((), negated=True)


def _error(ref: TokenRef, message: str) -> GrammarError:
    span = ref.span
    return GrammarError(message, line=span.line if span else None,
                        column=span.column if span else None,
                        source=span.source if span else None, code="token-reference")


def _show(ref: TokenRef) -> str:
    parts = [f"{lo}" if lo == hi else f"{lo}-{hi}" for lo, hi in ref.ids]
    named = ([f"<[{','.join(parts)}]>"] if parts else []) + [f"<{t}>" if not t.startswith("<")
                                                               else t for t in ref.texts]
    return ("!" if ref.negated else "") + " ".join(named)


class _Resolver:
    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab
        self.eos = set(vocab.eos_token_ids.tolist())
        self.control = set(vocab.special_token_ids.tolist()) - self.eos
        self.text = vocab.grammar_token_list
        self._by_text: dict[bytes, list[int]] | None = None

    def by_text(self, text: str) -> list[int]:
        if self._by_text is None:
            index: dict[bytes, list[int]] = {}
            for i, spelled in enumerate(self.text):
                if spelled:
                    index.setdefault(spelled, []).append(i)
            self._by_text = index
        return self._by_text.get(text.encode("utf-8"), [])

    def ids(self, ref: TokenRef) -> set[int]:
        """The ids `ref` names, each checked."""
        size = self.vocab.size
        out: set[int] = set()
        for lo, hi in ref.ids:
            if hi >= size:
                raise _error(ref, f"token {_show(ref)}: id {hi} is outside the vocabulary "
                                  f"[0, {size})")
            out.update(range(lo, hi + 1))
        for text in ref.texts:
            try:
                out.add(self.vocab.special_token_id(text))
                continue
            except ValueError:
                pass
            found = self.by_text(text)
            if len(found) != 1:
                raise _error(ref, f"token {_show(ref)}: {text!r} is "
                                  + ("not the text of any token of the vocabulary" if not found
                                     else f"the text of {len(found)} tokens ({found[:4]})"))
            out.update(found)
        for i in sorted(out):
            if i in self.eos:
                raise _error(ref, f"token {_show(ref)}: id {i} is a stop (EOS) token of this "
                                  "vocabulary; the matcher allows it wherever the text may end")
            if i > MAX_REFERENCE_ID:
                raise _error(ref, f"token {_show(ref)}: id {i} is past the {MAX_REFERENCE_ID} "
                                  "a reference can name")
            if not ref.negated and i not in self.control and not self.text[i]:
                raise _error(ref, f"token {_show(ref)}: id {i} spells nothing (padding)")
        return out


def trigger_token(vocab: Vocabulary, token: int | str) -> tuple[TokenSymbol, bool]:
    """A trigger token given by id or by text, as the one token it names (checked as a
    reference is), and whether it spells its text (a text token) or not (a control token)."""
    if isinstance(token, bool) or not isinstance(token, (int, str)):
        raise GrammarError(f"a trigger token is an id or a token's text, got {token!r}",
                           code="invalid-trigger")
    ref = TokenRef(ids=((token, token),)) if isinstance(token, int) and token >= 0 else \
        TokenRef(texts=(token,)) if isinstance(token, str) and token else None
    if ref is None:
        raise GrammarError(f"a trigger token is an id ≥ 0 or a non-empty text, got {token!r}",
                           code="invalid-trigger")
    resolver = _Resolver(vocab)
    (found,) = resolver.ids(ref)
    text = dict(vocab.special_token_text).get(found)
    spelled = text if text is not None else vocab.token_bytes(found)
    return (TokenSymbol(found, spelled.decode("utf-8", "replace")),
            found not in resolver.control)


def resolve_tokens(grammar: Grammar, vocab: Vocabulary, limits: Limits
                   ) -> tuple[Grammar, tuple[int, ...], tuple[tuple[int, ...], ...]]:
    """`grammar` with every token reference replaced by spellings, the text tokens it names
    (read as references: `CompiledGrammar.named_tokens`) and the excluded sets of its
    one-token steps (`CompiledGrammar.one_token`). A grammar without token references is
    returned as is."""
    refs = token_references(grammar)
    if not refs:
        return grammar, (), ()
    resolver = _Resolver(vocab)
    named_ids = {ref: resolver.ids(ref) for ref in refs}
    spelled_refs: set[TokenRef] = set()  # the references read by spellings, not as steps
    steps: set[tuple[int, ...]] = set()  # the excluded sets of the one-token steps

    def any_sequence(n: Node) -> bool:
        return isinstance(n, Repeat) and isinstance(n.item, TokenRef) and n.item.negated and \
            n.min <= 1 and n.max is None

    def spelled_by(n: Node) -> Node | None:
        if any_sequence(n):
            spelled_refs.add(n.item)  # type: ignore[attr-defined]
            return n
        if isinstance(n, TokenRef):
            if n.negated:
                steps.add(tuple(sorted(named_ids[n])))
            else:
                spelled_refs.add(n)
        return None

    for r in grammar.rules:
        rewrite(r.body, spelled_by)
    named = sorted({i for ref in spelled_refs for i in named_ids[ref]
                    if i not in resolver.control and resolver.text[i]})
    if len(named) > limits.max_named_tokens:
        raise limits.exceeded("max_named_tokens", len(named), "text tokens named by token "
                                                              "references")
    spelled = token_spelling(vocab, tuple(named)).list
    referable = sorted(resolver.control | set(named))

    def choice(ids: list[int]) -> Node:
        return Choice(tuple(Literal(spelled[i]) for i in ids))

    one_token = {excluded: j for j, excluded in enumerate(sorted(steps))}

    def step(ref: TokenRef) -> Node:
        """The one-token step of `ref`'s excluded set (module docstring)."""
        j = one_token[tuple(sorted(named_ids[ref]))]
        if vocab.size + j > MAX_REFERENCE_ID:
            raise _error(ref, f"{_show(ref)}: a vocabulary of {vocab.size} ids leaves no marker "
                              f"id for a one-token step (at most {MAX_REFERENCE_ID})")
        return Literal(marker(vocab.size + j))

    def replace(n: Node) -> Node | None:
        if any_sequence(n):
            excluded = named_ids[n.item]
            kept = [i for i in referable if i not in excluded]
            return Repeat(Choice((choice(kept), ANY_CHARACTER)), n.min, None, n.span)
        if isinstance(n, TokenRef):
            return step(n) if n.negated else choice(sorted(named_ids[n]))
        return None

    rules = tuple(dataclasses.replace(r, body=rewrite(r.body, replace)) for r in grammar.rules)
    return Grammar(rules, grammar.start, grammar.source), tuple(named), tuple(one_token)
