"""Plain-text tables for the regex benchmark: one table per metric, engines side by side.

Ratio columns are `peer / grammask` of the metric (times or sizes), so a ratio above 1 means
grammask is faster (or smaller); the last row of a metric table is the geometric mean of each
ratio column over the workloads where both engines have a value.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from measure import CrossCheck, StepDiff

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


def _kind(d: StepDiff, eos: set[int], special: set[int]) -> str:
    og = [t for t in d.only_grammask.tolist() if t not in special]
    op = [t for t in d.only_peer.tolist() if t not in special]
    eos_part = any(t in eos for t in [*d.only_grammask.tolist(), *d.only_peer.tolist()])
    spec_part = any(t in special and t not in eos
                    for t in [*d.only_grammask.tolist(), *d.only_peer.tolist()])
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
    """Whether grammask's allowed tokens at this step are all prefixes of one text: the grammar
    forces the next bytes (only its tokenization is open)."""
    if d.gm_allowed is None:
        return False
    texts = sorted((token_bytes(t) for t in d.gm_allowed.tolist() if t not in special), key=len)
    return all(b.startswith(a) for a, b in zip(texts, texts[1:], strict=False))


def _allowed_by(peer: str, checks: dict[str, CrossCheck], step: int, token: int,
                gm_allows: bool) -> list[str]:
    """Which engines (grammask and other peers) allow `token` at `step`."""
    who = ["grammask"] if gm_allows else []
    for name, chk in checks.items():
        if name == peer:
            continue
        d = next((x for x in chk.diffs if x.step == step), None)
        if d is None:
            if gm_allows:
                who.append(name)
        elif gm_allows and token not in set(d.only_grammask.tolist()):
            who.append(name)
        elif not gm_allows and token in set(d.only_peer.tolist()):
            who.append(name)
    return who


def crosscheck_report(per_workload: dict[str, dict[str, CrossCheck]],
                      token_bytes: Callable[[int], bytes],
                      eos: set[int], special: set[int], max_steps: int = 3,
                      max_tokens: int = 3) -> str:
    """Summary table of equal steps, then the first differing steps of each pair, explained."""
    peers = sorted({p for checks in per_workload.values() for p in checks})
    rows: list[list[Cell]] = []
    for wl, checks in per_workload.items():
        rows.append([wl, *[f"{checks[p].equal}/{checks[p].steps}" if p in checks else None
                           for p in peers]])
    title = "cross-check: steps whose allowed-token set equals grammask's (exact bitmask rows)"
    out = [table(title, ["workload", *peers], rows)]
    touched = [d for checks in per_workload.values() for chk in checks.values()
               for d in chk.diffs
               if any(t in special for t in [*d.only_grammask.tolist(), *d.only_peer.tolist()])]
    out.append("EOS and special ids: " + (
        f"differ at {len(touched)} steps (listed below)" if touched else
        "no differences (EOS allowed exactly where grammask allows it; no special id allowed)"))
    for wl, checks in per_workload.items():
        for peer in peers:
            chk = checks.get(peer)
            if chk is None or not chk.diffs:
                continue
            kinds = sorted({_kind(d, eos, special) for d in chk.diffs})
            n_forced = sum(_forced(d, token_bytes, special) for d in chk.diffs)
            forced = (f"; {n_forced} of them at steps where the grammar forces the next bytes"
                      if n_forced else "")
            out.append(f"-- {wl} / {peer}: {len(chk.diffs)} of {chk.steps} steps differ "
                       f"({'; '.join(kinds)}{forced})")
            for d in chk.diffs[:max_steps]:
                out.append(f"   step {d.step}: grammask allows {d.n_grammask:,}, "
                           f"{peer} allows {d.n_peer:,}")
                for label, ids, gm_allows in (("only grammask", d.only_grammask, True),
                                              (f"only {peer}", d.only_peer, False)):
                    if not len(ids):
                        continue
                    shown = []
                    for t in ids[:max_tokens].tolist():
                        who = _allowed_by(peer, checks, d.step, t, gm_allows)
                        shown.append(f"{t} {token_bytes(t)!r} [allowed by: {', '.join(who)}]")
                    more = f" (+{len(ids) - max_tokens} more)" if len(ids) > max_tokens else ""
                    out.append(f"     {label} ({len(ids):,}): " + "; ".join(shown) + more)
            if len(chk.diffs) > max_steps:
                out.append(f"   ... {len(chk.diffs) - max_steps} more differing steps")
    return "\n".join(out)

