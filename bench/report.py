"""Plain-text tables for the benchmarks: one table per metric, engines side by side.

Ratio columns are `peer / grammask` of the metric (times or sizes), so a ratio above 1 means
grammask is faster (or smaller); the last row of a metric table is the geometric mean of each
ratio column over the workloads where both engines have a value.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from measure import CrossCheck, Masks, StepDiff

Cell = float | int | str | None


def fmt(x: Cell) -> str:
    """A number with precision that fits its size; '-' for missing."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if isinstance(x, str):
        return x
    if isinstance(x, int):
        return f"{x:,}"
    a = abs(x)
    if a >= 1000:
        return f"{x:,.0f}"
    if a >= 100:
        return f"{x:.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 0.1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def table(title: str, headers: Sequence[str], rows: Sequence[Sequence[Cell]]) -> str:
    """A titled table, first column left-aligned and the others right-aligned."""
    cells = [[str(h) for h in headers]] + [[fmt(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = [f"== {title}"]
    for n, r in enumerate(cells):
        lines.append("  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i])
                               for i, c in enumerate(r)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _ratio(peer: float | None, base: float | None) -> float | None:
    if peer is None or base is None or math.isnan(peer) or math.isnan(base) or base <= 0:
        return None
    return peer / base


def _geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x is not None and x > 0]
    return float(math.exp(sum(math.log(x) for x in xs) / len(xs))) if xs else None


def metric_table(title: str, values: dict[str, dict[str, float | None]], engines: list[str],
                 base: str = "grammask", extra: Sequence[str] = ()) -> str:
    """`values[workload][engine]`; columns: engines, then `peer/base` ratio per peer.

    `extra` names further grammask-side columns shown but not used as ratio bases.
    """
    peers = [e for e in engines if e != base and e not in extra]
    headers = ["workload", *engines, *[f"{p[:8]}/gm" for p in peers]]
    rows: list[list[Cell]] = []
    ratios: dict[str, list[float]] = {p: [] for p in peers}
    for wl, by_engine in values.items():
        row: list[Cell] = [wl, *[by_engine.get(e) for e in engines]]
        for p in peers:
            r = _ratio(by_engine.get(p), by_engine.get(base))
            if r is not None:
                ratios[p].append(r)
            row.append(None if r is None else f"{r:.2f}x")
        rows.append(row)
    geo = [_geomean(ratios[p]) for p in peers]
    if peers:
        rows.append(["geomean", *[None] * len(engines),
                     *[None if g is None else f"{g:.2f}x" for g in geo]])
    return table(title, headers, rows)


Summaries = dict[str, dict[str, dict[str, Any]]]


def pick(summaries: Summaries, engines: list[str], key: str,
         stat: str | None = None) -> dict[str, dict[str, float | None]]:
    """`summaries[workload][engine][key]` (its `stat` when it is a summary) for metric_table."""
    out: dict[str, dict[str, float | None]] = {}
    for wl, by in summaries.items():
        row: dict[str, float | None] = {}
        for e in engines:
            s = by.get(e)
            v = None if s is None else s.get(key)
            row[e] = v.get(stat) if isinstance(v, dict) and stat else v
        out[wl] = row
    return out


def _where(seq: int, step: int, multi: bool) -> str:
    return f"doc {seq} step {step}" if multi else f"step {step}"


def problems_report(summaries: Summaries, token_bytes: Callable[[int], bytes],
                    multi: bool = False, shown: int = 3) -> list[str]:
    """A line per grammar an engine does not support, and a `!!` line per engine error, rejected
    token, or taken token missing from the engine's own mask (EOS after the last one included)."""
    out: list[str] = []
    for wl, by in summaries.items():
        for e, s in by.items():
            if s.get("unsupported"):
                out.append(f"-- {e} on {wl}: unsupported ({s['unsupported']})")
            if s.get("error"):
                out.append(f"!! {e} on {wl}: {s['error']}")
            for key, what in (("rejected", "rejected the token"),
                              ("not_allowed", "its own mask lacks the token taken")):
                hits = s.get(key) or []
                if not hits:
                    continue
                listed = "; ".join(f"{_where(k, j, multi)} id {t} {token_bytes(t)!r}"
                                   for k, j, t in hits[:shown])
                more = f" (+{len(hits) - shown} more)" if len(hits) > shown else ""
                out.append(f"!! {e} on {wl}: {what} at {len(hits)} steps: {listed}{more}")
    return out


def _kind(d: StepDiff, eos: set[int], special: set[int]) -> str:
    og = [t for t in d.only_ref.tolist() if t not in special]
    op = [t for t in d.only_peer.tolist() if t not in special]
    eos_part = any(t in eos for t in [*d.only_ref.tolist(), *d.only_peer.tolist()])
    spec_part = any(t in special and t not in eos
                    for t in [*d.only_ref.tolist(), *d.only_peer.tolist()])
    tags = []
    if og and not op:
        tags.append("peer stricter")
    elif op and not og:
        tags.append("peer looser")
    elif og and op:
        tags.append("both differ")
    if eos_part:
        tags.append("EOS")
    if spec_part:
        tags.append("special ids")
    return ", ".join(tags)


def _forced(d: StepDiff, token_bytes: Callable[[int], bytes], special: set[int]) -> bool:
    """Whether the reference's allowed tokens at this step are all prefixes of one text: the
    grammar forces the next bytes (only its tokenization is open)."""
    if d.ref_allowed is None:
        return False
    texts = sorted((token_bytes(t) for t in d.ref_allowed.tolist() if t not in special), key=len)
    return all(b.startswith(a) for a, b in zip(texts, texts[1:], strict=False))


def _frequent(diffs: list[StepDiff], side: str, token_bytes: Callable[[int], bytes],
              n: int = 5) -> str:
    counts = Counter(t for d in diffs for t in getattr(d, side).tolist())
    return ", ".join(f"{token_bytes(t)!r} ({c})" for t, c in counts.most_common(n))


def crosscheck_report(per_workload: dict[str, list[CrossCheck]], masks: dict[str, Masks],
                      token_bytes: Callable[[int], bytes],
                      eos: set[int], special: set[int], max_steps: int = 3,
                      max_tokens: int = 3, multi: bool = False) -> str:
    """Summary table of equal steps per pair of engines, then the first differing steps of each
    pair, each differing token with the engines whose mask allows it.

    `multi`: workloads have several sequences, so steps are named `doc k step j`.
    """
    pairs = list(dict.fromkeys(f"{c.peer} vs {c.ref}" for cs in per_workload.values() for c in cs))
    rows: list[list[Cell]] = []
    for wl, checks in per_workload.items():
        by = {f"{c.peer} vs {c.ref}": f"{c.equal}/{c.steps}" for c in checks}
        rows.append([wl, *[by.get(p) for p in pairs]])
    title = "cross-check: steps whose allowed-token sets are equal (exact bitmask rows)"
    out = [table(title, ["workload", *pairs], rows)]
    touched = [d for checks in per_workload.values() for chk in checks for d in chk.diffs
               if any(t in special for t in [*d.only_ref.tolist(), *d.only_peer.tolist()])]
    out.append("EOS and special ids: " + (
        f"differ at {len(touched)} steps (listed below)" if touched else
        "no differences (EOS allowed at the same steps by every engine; no special id allowed)"))
    for wl, checks in per_workload.items():
        for chk in checks:
            if not chk.diffs:
                continue
            peer = chk.peer
            kinds = Counter(_kind(d, eos, special) for d in chk.diffs)
            n_forced = sum(_forced(d, token_bytes, special) for d in chk.diffs)
            forced = (f"; {n_forced} of them at steps where the grammar forces the next bytes"
                      if n_forced else "")
            out.append(f"-- {wl} / {peer} against {chk.ref}: {len(chk.diffs)} of {chk.steps} "
                       f"steps differ ({'; '.join(f'{k}: {n}' for k, n in sorted(kinds.items()))}"
                       f"{forced})")
            if multi:
                for side, label in (("only_ref", chk.ref), ("only_peer", peer)):
                    if any(len(getattr(d, side)) for d in chk.diffs):
                        out.append(f"   most often only {label}: "
                                   f"{_frequent(chk.diffs, side, token_bytes)}")
            for d in chk.diffs[:max_steps]:
                out.append(f"   {_where(d.seq, d.step, multi)}: {chk.ref} allows {d.n_ref:,}, "
                           f"{peer} allows {d.n_peer:,}")
                for label, ids in ((f"only {chk.ref}", d.only_ref), (f"only {peer}", d.only_peer)):
                    if not len(ids):
                        continue
                    shown = [f"{t} {token_bytes(t)!r} [allowed by: "
                             f"{', '.join(masks[wl].allowed_by(d.seq, d.step, t))}]"
                             for t in ids[:max_tokens].tolist()]
                    more = f" (+{len(ids) - max_tokens} more)" if len(ids) > max_tokens else ""
                    out.append(f"     {label} ({len(ids):,}): " + "; ".join(shown) + more)
            if len(chk.diffs) > max_steps:
                out.append(f"   ... {len(chk.diffs) - max_steps} more differing steps")
    return "\n".join(out)
