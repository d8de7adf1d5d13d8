"""Process setup shared by the benchmarks: one thread, one CPU, progress log, vocabulary, peers.

Importing this module sets the thread-count variables, so the bench scripts import it before
numpy, numba, torch or any peer loads its runtime.

Common method of the regex and grammar benchmarks (the others say where they differ): every
engine runs in one process, over the same vocabulary (Qwen2.5, 151,851 ids) and token bytes,
and their masks are compared step by step.

- Quiet as possible. One pinned CPU (`--no-pin` to skip), one thread per library
  (`*_NUM_THREADS=1`, xgrammar, torch), `gc.freeze()` after setup and the collector off in timed
  regions. Every figure is a median over repeats unless labelled p99/max.
- Per-call timing. Each fill, accept and baseline copy is timed alone with one
  `perf_counter_ns()` pair (overhead about 60-80 ns, printed and included), every engine through
  the same adapter (`fill()`, `accept()`, `reset()` on a preallocated one-row bitmask).
- A pass over a target: fill, accept token 0, fill, ..., accept the last token, fill (the final
  mask, where EOS must be allowed). A cold pass follows a compile; warm passes reuse the
  compiled grammar with `reset()` between them (bench/measure.py).
- Peers over our vocabulary. Regular tokens spell their bytes, special ids nothing; EOS is
  151643. outlines-core gets `Vocabulary(eos, {token_bytes: [ids]})` (`bytes` keys); llguidance
  an `LLTokenizer` from a `TokenizerWrapper` over the token bytes (special tokens prefixed with
  `0xFF`, `vocab.encode` as tokenizer); xgrammar `TokenizerInfo(encoded_vocab=...,
  vocab_type=RAW, stop_token_ids=[151643])`, special ids as empty bytes (bench/peers.py).
- Reading ratios. Ratio columns are `peer / grammask`: above 1, grammask is faster (or
  smaller). `max` (and short workloads' p99) mostly shows the machine: a preemption on a shared
  core costs one scheduler tick, about 4 ms. Compare medians.
- Cross-check. Each engine's mask must allow the token it then accepts, and EOS at the end; a
  rejected token (the rest of that target is then skipped) or a taken token missing from its own
  mask is reported. Masks are compared bit for bit; a differing step shows each side's count, the
  tokens only one side allows (with bytes) and which engines allow them (a majority check).
- llguidance, forced text (known, by design): where the grammar forces the next bytes (e.g.
  `{"age": `, fixed JSON keys, the rest of an unambiguous enum word), llguidance allows only the
  canonical tokenization (`{"` but not `{`); grammask, outlines-core and xgrammar allow every
  token that keeps the text in the language.
"""
from __future__ import annotations

import os

# One thread everywhere, set before numpy, numba, torch or the peers load their runtimes.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS",
             "RAYON_NUM_THREADS", "TOKENIZERS_PARALLELISM"):
    os.environ.setdefault(_var, "false" if _var == "TOKENIZERS_PARALLELISM" else "1")

import gc  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any  # noqa: E402

_T0 = time.perf_counter()


def log(msg: str) -> None:
    """Progress on stderr (seconds since start), so stdout holds only the report."""
    print(f"{time.perf_counter() - _T0:7.1f}s {msg}", file=sys.stderr, flush=True)


def pin_to_one_cpu() -> str:
    """Pin this process (and its children) to the last CPU it may run on."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpus[-1]})
        return f"pinned to CPU {cpus[-1]} of {len(cpus)}"
    except (AttributeError, OSError) as exc:
        return f"not pinned ({exc})"


@dataclass
class Setup:
    """The vocabulary, the peers that loaded, and what their one-time setup cost."""

    vocab: Any
    peers: list[Any]
    notes: list[str]
    vocab_s: float
    trie_s: float

    def setup_line(self) -> str:
        """One line: each engine's one-time per-vocabulary setup (not part of any compile)."""
        parts = [f"grammask Vocabulary.default() {self.vocab_s * 1e3:.0f} ms + token trie "
                 f"{self.trie_s * 1e3:.0f} ms",
                 *[f"{p.name} {p.version} {p.setup_s * 1e3:.0f} ms" for p in self.peers]]
        return "one-time setup per vocabulary: " + "; ".join(parts)

    def peers_json(self, means: str) -> dict[str, dict[str, Any]]:
        """Version, setup time and the `means` attribute (what compiling means) of each peer."""
        return {p.name: {"version": p.version, "setup_s": p.setup_s, means: getattr(p, means)}
                for p in self.peers}


def set_up(wanted: set[str], warm: Any = None) -> Setup:
    """Load the default vocabulary and its token trie, run `warm(vocab)` (one-time front-end
    setup, kept out of every timing), set up the wanted peers, then freeze what is alive out of
    the garbage collector so the collect before each timed region stays short."""
    from grammask.runtime import Vocabulary
    from grammask.runtime.vocab.trie import token_trie

    from peers import load_peers

    log("vocabulary")
    t0 = time.perf_counter()
    vocab = Vocabulary.default()
    t1 = time.perf_counter()
    token_trie(vocab)
    t2 = time.perf_counter()
    if warm is not None:
        warm(vocab)
    log("setting up peers")
    peers, notes = load_peers(vocab, wanted)
    gc.collect()
    gc.freeze()
    return Setup(vocab, peers, notes, t1 - t0, t2 - t1)
