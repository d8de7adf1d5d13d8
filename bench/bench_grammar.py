r"""Context-free grammar benchmark: grammask against xgrammar and llguidance, same vocabulary.

    python bench/bench_grammar.py [--grammar json|arithmetic|json_flat|all] [--docs N]
                                  [--peers xgrammar,llguidance] [--quick] [--json out.json]

Per grammar (bench/grammar_workloads.py: llama.cpp's json.gbnf and arithmetic.gbnf, and a
regular control) every engine compiles the GBNF text and walks the same seeded documents,
tokenized with the vocabulary's own encoder: compile time, time to the first mask, per-token
mask fill (warm and first-pass) and accept times, and the compiled grammar's memory where the
library reports it. Each engine's mask must allow every token taken and EOS after the last;
every pair of engines is compared mask by mask. A grammar grammask cannot compile yet is
reported as unsupported, and the peers are still run and compared with each other. Method:
bench/harness.py docstring; commands and current results: bench/README.md. outlines-core takes
no context-free grammars and is skipped with a note.

Grammars and documents (bench/grammar_workloads.py; seeded, tokenized with `vocab.encode`, the
last mask of each must allow EOS, which is never accepted):

- json: llama.cpp's `json.gbnf` (`tests/data/gbnf`, else `../shared/corpora/gbnf`), narrower
  than JSON (object root; `ws` is "", " ", or a newline and at most 20 spaces or tabs; integers
  of at most 16 digits; `1e10` is out; no `\/` escape), and the documents keep to it: 1 to 6
  levels, four whitespace styles (pretty with two spaces or a tab, compact, minified, loose),
  non-ASCII text, emoji (tokens that split a UTF-8 character), every escape including `\u`
  surrogate pairs, 16-digit integers, fractions, exponents; also checked with `json.loads`.
- arithmetic: llama.cpp's `arithmetic.gbnf`: lines `expr=term\n` over `+ - * /`, identifiers,
  integers and parentheses; 1 to 3 lines, the first nesting parentheses 1 to 10 deep;
  whitespace only after terms, `(` and `=`.
- json_flat: a regular control: json.gbnf's `string`, `number` and `ws` rules under keys `id`,
  `name`, `tags` (array of strings), `active`; grammask compiles it to a DFA.

What is timed as compile:

- grammask: `compile_gbnf(text, vocab)` (token sets lazy). A `GrammarError` is reported as
  `unsupported (message)`; the peers still run and are compared with each other.
- xgrammar: `GrammarCompiler(max_threads=1, cache off).compile_grammar(Grammar.from_ebnf(text))`;
  `ws ::= | " "` is given as `ws ::= "" | " "` (its parser rejects an empty first alternative).
- llguidance: `LLMatcher(tokenizer, LLMatcher.grammar_from_lark(lark))` (lexer built lazily);
  the Lark text is made untimed: `llguidance.gbnf_to_lark(text)` for json and json_flat, a hand
  translation (`ARITHMETIC_LARK`) for arithmetic; `--llguidance-converter` uses the converter
  everywhere.

Memory: grammask `compiled.nbytes()` after all passes (it grows with the states visited),
xgrammar `memory_size_bytes`, llguidance none.

Repeats: a pass walks all documents. 5 to 11 compiles (2 s of compile + first mask), the first 3
each with a cold pass, then 5 warm passes; either kind stops after 20 s (one always runs). Most
of a full run is xgrammar walking the strings of json and json_flat; `--quick` saves only the
fast engines' repeats.

Report: as for regex, with each grammar's documents, a status table (`ok`, `unsupported`,
`error`, or problem steps) and the cross-check of every pair that ran.

Known differences (xgrammar 0.2.9, llguidance 1.9.1):

- llguidance, forced text, on json_flat's keys; on json and arithmetic equal to xgrammar.
- gbnf_to_lark on arithmetic.gbnf (`--llguidance-converter`): greedy lexer terminals let a
  term's trailing `[ \t\n]*` swallow the line's `\n`, so a second line's first token, and EOS
  after one line, are refused; the hand translation keeps whitespace as separate tokens.
- xgrammar inside json.gbnf strings: fills of about 0.1-0.2 s each (p99, max) against tens of
  µs elsewhere, from the `"u" [0-9a-fA-F]{4}` escape in the string body (without it, p90 fill
  0.2 ms); `ws`'s `[ \t]{0,20}` makes its compiled grammar about five times larger.
"""
from __future__ import annotations

from harness import Setup, log, pin_to_one_cpu, set_up  # first: sets the thread counts

# isort: split
import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from functools import partial  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from grammar_workloads import GRAMMARS, GrammarWorkload, build_grammar_workloads  # noqa: E402
from measure import (  # noqa: E402
    CrossCheck,
    GrammaskSession,
    Masks,
    Plan,
    Walk,
    run_engine,
    summary_of,
)
from report import (  # noqa: E402
    Summaries,
    crosscheck_report,
    metric_table,
    pick,
    problems_report,
    table,
)

GM = "grammask"
GM_MEANS = "clear_caches() then compile_gbnf(gbnf, vocab) (lazy token sets; cold caches)"
# A pass over every document can take minutes (xgrammar on json.gbnf), so passes are capped in
# time; compiles after the cold passes time only compile + first mask.
FULL = Plan(5, 11, 2.0, 5, 11, 2.0, 5, 0, cold_passes=3, pass_budget_s=20.0)
QUICK = Plan(1, 1, 0.0, 1, 1, 0.0, 1, 0, cold_passes=1, pass_budget_s=0.0)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grammar", default="all",
                    help=f"comma-separated grammars: {', '.join(GRAMMARS)}, or all")
    ap.add_argument("--docs", type=int, default=20, help="documents per grammar (default 20)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the documents (default 0)")
    ap.add_argument("--peers", default="xgrammar,llguidance",
                    help="comma-separated peers to try, in report order ('' for none)")
    ap.add_argument("--quick", action="store_true", help="one compile and one warm pass")
    ap.add_argument("--json", metavar="PATH", help="also write the summary numbers as JSON")
    ap.add_argument("--llguidance-converter", action="store_true",
                    help="give llguidance gbnf_to_lark's output even where it changes the "
                         "language (arithmetic)")
    ap.add_argument("--no-pin", action="store_true", help="do not pin to one CPU")
    args = ap.parse_args(argv)
    args.grammars = list(GRAMMARS) if args.grammar == "all" else args.grammar.split(",")
    if args.docs < 1:
        ap.error("--docs must be at least 1")
    return args


def bench_grammar(w: GrammarWorkload, vocab: Any, peers: list[Any], plan: Plan,
                  ) -> tuple[dict[str, dict[str, Any]], list[CrossCheck], Masks, Walk]:
    """Every engine on one grammar: summaries by engine, the masks of every pair of engines
    compared (earlier engine as the reference), all masks, and the token sequences."""
    from grammask.compiler import GrammarError, clear_caches, compile_gbnf

    def cold_compile(text: str, vocab: Any) -> Any:
        # Every compile as a process's first: nothing kept from the previous repeat.
        clear_caches()
        return compile_gbnf(text, vocab)

    walk = Walk([vocab.encode(d) for d in w.docs], vocab.size, vocab.eos_token_id)
    masks = Masks(vocab.size)
    log(f"[{w.name}] {len(walk.seqs)} documents, {sum(map(len, walk.seqs))} tokens: grammask")
    gm = run_engine(partial(cold_compile, w.gbnf, vocab), GrammaskSession, walk, plan,
                    grammask=True, nbytes=lambda c: int(c.nbytes()), unsupported=(GrammarError,))
    summaries = {GM: summary_of(gm)}
    if not (gm.error or gm.unsupported):
        masks.rows[GM] = gm.rows
    for peer in peers:
        log(f"[{w.name}] {peer.name}")
        run = run_engine(partial(peer.compile_grammar, peer.grammar_text(w.gbnf, w.lark)),
                         peer.session, walk, plan, grammask=False, nbytes=peer.nbytes)
        summaries[peer.name] = summary_of(run)
        if not run.error:
            masks.rows[peer.name] = run.rows
    names = list(masks.rows)
    checks = [masks.compare(ref, peer) for i, ref in enumerate(names) for peer in names[i + 1:]]
    return summaries, checks, masks, walk


def grammar_peers(peers: list[Any], order: list[str]) -> tuple[list[Any], list[str]]:
    """The peers that take context-free grammars, in `order`, and a note for each that does not."""
    ok, notes = [], []
    for p in sorted(peers, key=lambda p: order.index(p.name) if p.name in order else len(order)):
        try:
            p.grammar_text("root ::= \"a\"", None)
            ok.append(p)
        except NotImplementedError as exc:
            notes.append(f"{p.name}: skipped, {exc}")
    return ok, notes


def print_report(summaries: Summaries, engines: list[str]) -> None:
    """The per-metric tables, one row per grammar."""
    print(metric_table("compile time, ms (median; grammar text to a compiled grammar)",
                       pick(summaries, engines, "compile_ms"), engines))
    print()
    print(metric_table("time to first mask, ms (compile + matcher + first fill; median)",
                       pick(summaries, engines, "first_mask_ms"), engines))
    for key, label, stats in (
            ("warm_fill_us", "mask fill, warm (documents walked before), µs per token",
             ("median", "p99", "max")),
            ("cold_fill_us", "mask fill, first pass on a fresh compile, µs per token",
             ("median", "p99"))):
        for stat in stats:
            print()
            print(metric_table(f"{label}: {stat}", pick(summaries, engines, key, stat), engines))
    print()
    print(metric_table("accept_token / consume_token, µs per token: median",
                       pick(summaries, engines, "accept_us", "median"), engines))
    print()
    kib = {wl: {e: None if v is None else v / 1024 for e, v in row.items()}
           for wl, row in pick(summaries, engines, "nbytes").items()}
    print(metric_table("memory of the compiled grammar, KiB (grammask: nbytes() after the "
                       "passes, token sets are lazy; xgrammar: memory_size_bytes; llguidance: "
                       "not reported)", kib, engines))


def status_table(summaries: Summaries, engines: list[str]) -> str:
    """ok / unsupported / error / rejected per grammar and engine."""
    def status(s: dict[str, Any] | None) -> str:
        if s is None:
            return "-"
        if s["unsupported"]:
            return "unsupported"
        if s["error"]:
            return "error"
        bad = len(s["rejected"]) + len(s["not_allowed"])
        return f"ok, {bad} problem steps" if bad else "ok"

    return table("status (problems: rejected tokens, or taken tokens or EOS missing from the "
                 "engine's own mask; listed below)", ["grammar", *engines],
                 [[wl, *[status(by.get(e)) for e in engines]] for wl, by in summaries.items()])


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    plan = QUICK if args.quick else FULL
    pin = "not pinned (--no-pin)" if args.no_pin else pin_to_one_cpu()
    t_start = time.perf_counter()

    from grammask.compiler import compile_gbnf

    workloads = build_grammar_workloads(args.grammars, args.docs, args.seed,
                                        args.llguidance_converter)
    order = [p for p in args.peers.split(",") if p]
    # compile_gbnf of a one-rule grammar: the GBNF front end's one-time setup, outside timings.
    setup: Setup = set_up(set(order), warm=lambda v: compile_gbnf('root ::= "a"', v))
    vocab = setup.vocab
    peers, skipped = grammar_peers(setup.peers, order)
    engines = [GM, *[p.name for p in peers]]

    summaries: Summaries = {}
    checks: dict[str, list[CrossCheck]] = {}
    masks: dict[str, Masks] = {}
    walks: dict[str, Walk] = {}
    for w in workloads:
        summaries[w.name], checks[w.name], masks[w.name], walks[w.name] = bench_grammar(
            w, vocab, peers, plan)

    print(f"grammask grammar benchmark ({'quick' if args.quick else 'full'}); python "
          f"{platform.python_version()}, numpy {np.__version__}; {pin}; vocabulary "
          f"{vocab.size:,} ids, EOS {vocab.eos_token_id}")
    print(setup.setup_line())
    print(f"  {GM} compile = {GM_MEANS}")
    for p in peers:
        print(f"  {p.name} compile = {p.grammar_means}")
    for n in [*setup.notes, *skipped]:
        print(f"  {n}")
    print(f"  plan: {plan.compile_min}-{plan.compile_max} compiles (median shown), the first "
          f"{plan.cold_passes} each followed by a pass over every document, then "
          f"{plan.warm_passes} warm passes; passes stop after {plan.pass_budget_s:g} s (one "
          f"always runs)")
    print()
    for w in workloads:
        lens = [len(s) for s in walks[w.name].seqs]
        llg = ("" if "llguidance" not in engines else "; llguidance: hand-written Lark"
               if w.lark else "; llguidance: gbnf_to_lark")
        print(f"  {w.name:<11} {w.label}{llg}; {len(lens)} documents, {sum(lens):,} tokens "
              f"({min(lens)}-{max(lens)} per document); e.g. {w.docs[-1][:60]!r}")
    print()
    print(status_table(summaries, engines))
    for line in problems_report(summaries, vocab.token_bytes, multi=True):
        print(line)
    print()
    print_report(summaries, engines)
    print()
    special = {int(i) for i in vocab.special_token_ids}
    print(crosscheck_report(checks, masks, vocab.token_bytes,
                            {int(i) for i in vocab.eos_token_ids}, special, multi=True))
    print()
    print(f"total benchmark wall time {time.perf_counter() - t_start:.0f} s")

    if args.json:
        doc = {"mode": "quick" if args.quick else "full", "pin": pin, "seed": args.seed,
               "notes": [*setup.notes, *skipped], "grammask_means": GM_MEANS,
               "peers": setup.peers_json("grammar_means"),
               "grammars": {w.name: {
                   "label": w.label, "gbnf": w.gbnf, "llguidance_lark": w.lark,
                   "documents": len(w.docs), "tokens": sum(map(len, walks[w.name].seqs)),
                   "engines": summaries[w.name],
                   "crosscheck": {f"{c.peer} vs {c.ref}": {"steps": c.steps, "equal": c.equal}
                                  for c in checks[w.name]}} for w in workloads}}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
