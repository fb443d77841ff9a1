"""What convtui's errata change (issue 49, point 4): CodeIF-Bench's published completions scored
under ``--protocol codeif`` (the authors' verdicts, reproduced) and ``--protocol convtui``
(instruction tests repaired where the fix is certain, those that cannot judge an answer left
out, a skipped test never a pass), side by side: IA, CA and IFR per model, each model's
shift paired by task with its interval, and the models ranked under each protocol with rank
intervals over tasks.

The completions are the authors' (``function/Experiments`` of zhu-zhu-ding/CodeIF-Bench at
commit 93b17ef, graded on the v0 data); nothing of theirs is in this repository::

    git clone https://github.com/zhu-zhu-ding/CodeIF-Bench ref
    git -C ref worktree add ../ref-v0 93b17ef
    python scripts/codeif_protocols.py --experiments ref-v0 \\
        --data ../shared/data/CodeIF-Bench-L1-function-v0.jsonl --out protocols

Both protocols score under the authors' metric definition (``--metrics authors``), so the
protocol is the only difference. The numbers are ``convtui report``'s: this script only
scores each model's completions twice into one database (``<out>/protocols.db``) and runs
``report --json`` on it. Output: ``<out>/protocols.json`` (the report's groups and standings)
and a summary on stdout. A database already holding a model's two runs is not scored again.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from codeif_parity import completions_file, models
from codeif_scoring import convtui, score_only

PROTOCOLS = ("codeif", "convtui")


def scored(db: Path) -> set[tuple[str, str]]:
    """(model, protocol) pairs ``db`` already holds a finished CodeIF-Bench run of."""
    if not db.exists():
        return set()
    done = convtui("report", "--db", str(db), "--json", "--no-intervals", "--out", str(db.parent))
    if done.returncode != 0:
        return set()
    groups = json.loads(done.stdout).get("codeif", {}).get("groups", [])
    return {(g["model"], g["protocol"]) for g in groups}


def score(args: argparse.Namespace) -> None:
    db = args.out / "protocols.db"
    have = scored(db)
    for name, base, n_round in models(args.experiments):
        if args.model and name not in args.model:
            continue
        completions = completions_file(base, n_round, args.out / f"{name}.jsonl")
        for protocol in PROTOCOLS:
            if (f"scored:{name}", protocol) in have:
                continue
            print(f"scoring {name} under --protocol {protocol}", file=sys.stderr, flush=True)
            done = score_only(completions, args.data, db, protocol)
            if done.returncode != 0:
                raise SystemExit(f"bench codeif --score-only {completions}: {done.stderr}")


def summary(report: dict) -> list[str]:
    standings = report["codeif"].get("standings", {})
    lines = []
    for shift in standings.get("protocol_shifts", []):
        cells = []
        for metric in ("ia", "ca", "ifr"):
            c = shift.get(metric)
            if c is None:
                continue
            d = c["difference"]
            interval = (
                "n/a" if d["low"] is None else f"[{100 * d['low']:+.1f}, {100 * d['high']:+.1f}]"
            )
            cells.append(
                f"{metric.upper()} {100 * c['second']:.1f} -> {100 * c['first']:.1f} "
                f"({100 * d['value']:+.1f} {interval}, p {c['p_value']:.3g})"
            )
        lines.append(f"{shift['model']} · {shift['level'] or 'all'}: " + "; ".join(cells))
    for ranking in standings.get("rankings", []):
        order = ", ".join(
            f"#{r['rank']:g} {r['side']} ({r['low']:g}-{r['high']:g})" for r in ranking["ranks"]
        )
        lines.append(
            f"ranked by CA under {ranking['protocol']} ({ranking['tasks']} tasks): {order}"
        )
    for moves in standings.get("rank_moves", []):
        if not moves["moved"]:
            lines.append("ranking: the same under both protocols")
        for m in moves["moved"]:
            lines.append(f"rank moved: {m['model']} #{m['codeif']:g} -> #{m['convtui']:g}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiments", type=Path, required=True, help="the 93b17ef checkout")
    parser.add_argument("--data", type=Path, required=True, help="the v0 function-level data")
    parser.add_argument("--out", type=Path, default=Path("protocols"))
    parser.add_argument("--model", action="append", help="only these model folders")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    score(args)
    db = args.out / "protocols.db"
    done = convtui(
        "report", "--db", str(db), "--metrics", "authors", "--json", "--out", str(args.out)
    )
    if done.returncode != 0:
        raise SystemExit(f"report: {done.stderr}")
    report = json.loads(done.stdout)
    (args.out / "protocols.json").write_text(json.dumps(report["codeif"], indent=2) + "\n")
    print("\n".join(summary(report)))


if __name__ == "__main__":
    main()
