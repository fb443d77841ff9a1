"""Check `bench codeif --score-only` + `report --metrics authors` against CodeIF-Bench's
published static numbers, model by model and cell by cell.

The reference side is the authors' own: their published completions and verdicts
(``function/Experiments`` of zhu-zhu-ding/CodeIF-Bench at commit 93b17ef, graded on the v0
data) and their ``IA_CA.py`` (branch v1, ``static_conversation/function/test/``), run
unmodified on those verdicts. Nothing of theirs is in this repository: check the two
commits out yourself, e.g.::

    git clone https://github.com/zhu-zhu-ding/CodeIF-Bench ref
    git -C ref worktree add ../ref-v0 93b17ef
    git -C ref worktree add ../ref-v1 v1
    python scripts/codeif_parity.py --experiments ref-v0 --scripts ref-v1 \\
        --data ../shared/data/CodeIF-Bench-L1-function-v0.jsonl --out parity

For each model it writes a completions file in the published layout (the base rows, then the
``n_round`` rows, as published), scores it (``convtui bench codeif --score-only … --protocol
codeif``), reads ``convtui report --metrics authors --json``, and compares:

- accumulated verdicts (the CA rows: base answer, then every follow-up but Functionality
  Extension) task by task with the published ``passed`` of ``base/*_results.jsonl`` and
  ``n_round/*_<category>_results.jsonl``;
- the CA table per round with what ``IA_CA.py`` prints on the published verdicts (its
  ``base_results.jsonl`` and ``CA.jsonl``, laid out as ``evaluation.py``'s ``way == 6``
  writes them: one row per non-Functionality-Extension follow-up, in each task's order).

IA cannot be compared the same way: the authors published no per-instruction (``way == 5``)
verdicts of the ``n_round`` conversations, only the accumulated ones. Round 1 of IA is the
base verdict and is compared; later IA rounds are reported as ours only.

Output: ``<out>/parity.json`` and a summary on stdout; every differing verdict is listed
with task, round, category and our test failures, so each can be explained.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from codeif_scoring import convtui, score_only

from convtui.core.codeif.programs import first_python_block

FE = "Functionality Extension"
ROUND_LINE = re.compile(r"Round (\d+): Correct = (\d+), Total = (\d+)")


def models(experiments: Path) -> list[tuple[str, Path, Path]]:
    """(name, base folder, n_round folder) of every model with both."""
    base_root = experiments / "function" / "Experiments" / "base"
    n_root = experiments / "function" / "Experiments" / "n_round"
    return [
        (d.name, d, n_root / d.name)
        for d in sorted(base_root.iterdir())
        if d.is_dir() and (n_root / d.name).is_dir()
    ]


def _one(folder: Path, pattern: str) -> Path:
    found = sorted(p for p in folder.glob(pattern) if "_results" not in p.name)
    if len(found) != 1:
        raise SystemExit(f"expected one {pattern} in {folder}, found {found}")
    return found[0]


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def completions_file(base: Path, n_round: Path, out: Path) -> Path:
    """Base rows then n_round rows, as published (nothing else changed)."""
    text = _one(base, "*.jsonl").read_text("utf-8")
    text = text if text.endswith("\n") else text + "\n"
    out.write_text(text + _one(n_round, "*.jsonl").read_text("utf-8"), "utf-8")
    return out


def published_verdicts(base: Path, n_round: Path) -> tuple[dict, list[dict], dict]:
    """{task: base passed}, the CA rows (task_id, requirement, result, passed) in each task's
    order (the follow-ups of the n_round completions file, Functionality Extension left out,
    each with the verdict the published per-category file holds for it), and {task: the
    base row as graded} (its completion and result)."""
    base_rows = read_lines(next(base.glob("*_results.jsonl")))
    base_passed = {r["task_id"]: r["result"] == "passed" for r in base_rows}
    graded_base = {r["task_id"]: r for r in base_rows}
    completions = _one(n_round, "*.jsonl")
    by_category: dict[str, list[dict]] = {}
    for path in n_round.glob("*_results.jsonl"):
        category = path.name[len(completions.name) + 1 : -len("_results.jsonl")]
        by_category[category] = read_lines(path)
    taken: dict[str, int] = defaultdict(int)
    rows = []
    for sample in read_lines(completions):
        category = sample["requirement"]
        if category == FE:
            continue
        found = by_category.get(category, [])
        # evaluation.py's combine_results pops a category's results in file order.
        i = taken[category]
        taken[category] += 1
        if i >= len(found):
            continue
        verdict = found[i]
        if verdict["task_id"] != sample["task_id"]:
            raise SystemExit(f"{category}: result {i} is task {verdict['task_id']}, not {sample}")
        rows.append(
            {
                "task_id": sample["task_id"],
                "requirement": category,
                "result": verdict["result"],
                "passed": verdict["result"] == "passed",
            }
        )
    return base_passed, rows, graded_base


def cause(difference: dict, result: str, graded: dict, base_file: Path, data: Path) -> str:
    """Why a published verdict differs from ours, where the files themselves show it."""
    task = difference["task"]
    if difference["category"] == "Base":
        published = {r["task_id"]: r for r in read_lines(_one(base_file, "*.jsonl"))}
        if first_python_block(published[task]["completion"]) != graded[task]["completion"]:
            return (
                "the base completion graded (its _results.jsonl row) is not the one in the "
                "published completions file, which we score"
            )
    if "SyntaxError" in result:
        quoted = [line.strip() for line in result.splitlines()[1:2]]
        tests = json.dumps(
            next(r for r in read_lines(data) if r["task_id"] == task), ensure_ascii=False
        )
        if quoted and json.dumps(quoted[0], ensure_ascii=False)[1:-1] not in tests:
            return (
                f"the published verdict is a SyntaxError in a test line that the v0 data "
                f"does not hold ({quoted[0]!r}): the verdicts were graded on other test text"
            )
    return "unexplained"


def ia_ca_script(scripts: Path, base_passed: dict, rows: list[dict]) -> list[tuple[int, int]]:
    """(correct, total) per round as the authors' IA_CA.py prints them, run unmodified."""
    test_dir = scripts / "static_conversation" / "function" / "test"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "base_results.jsonl").write_text(
            "".join(
                json.dumps({"task_id": t, "result": "passed" if ok else "failed"}) + "\n"
                for t, ok in base_passed.items()
            )
        )
        (folder / "CA.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        env = {**os.environ, "PYTHONPATH": str(test_dir)}
        done = subprocess.run(
            [sys.executable, str(test_dir / "IA_CA.py")],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    return [(int(c), int(t)) for _, c, t in ROUND_LINE.findall(done.stdout)]


def ours(completions: Path, data: Path, db: Path) -> tuple[dict, list[dict]]:
    """Score the file, then read the report's authors tables and sessions."""
    scored = score_only(completions, data, db)
    if scored.returncode != 0:
        raise SystemExit(f"bench codeif --score-only {completions}: {scored.stderr}")
    run_id = json.loads(scored.stdout)["run_id"]
    report = convtui(
        "report", "--db", str(db), "--run", run_id, "--metrics", "authors", "--json",
        "--out", str(db.parent),
    )  # fmt: skip
    if report.returncode != 0:
        raise SystemExit(f"report: {report.stderr}")
    data_json = json.loads(report.stdout)["codeif"]
    (group,) = data_json["groups"]
    return group, data_json["sessions"]


def compare(name: str, base: Path, n_round: Path, args: argparse.Namespace) -> dict:
    work = args.out / name
    work.mkdir(parents=True, exist_ok=True)
    completions = completions_file(base, n_round, work / f"{name}.jsonl")
    base_passed, rows, graded_base = published_verdicts(base, n_round)
    theirs = ia_ca_script(args.scripts, base_passed, rows)
    group, sessions = ours(completions, args.data, work / "scored.db")
    ours_ca = [
        (round(r["ca"] * r["ca_tasks"]), r["ca_tasks"]) for r in group["rounds"] if "ca" in r
    ]
    ours_ia = [(round(r["ia"] * r["ia_tasks"]), r["ia_tasks"]) for r in group["rounds"]]
    # Accumulated verdicts, task by task: ours from each session's positional CA row.
    by_task = {int(s["task_id"].split("/")[1]): s for s in sessions}
    theirs_by_task: dict[int, list[tuple[str, bool, str]]] = defaultdict(list)
    for t, ok in base_passed.items():
        theirs_by_task[t].append(("Base", ok, graded_base[t]["result"]))
    for r in rows:
        theirs_by_task[r["task_id"]].append((r["requirement"], r["passed"], r["result"]))
    agree, total, differ = 0, 0, []
    for task, expected in sorted(theirs_by_task.items()):
        got = by_task[task]["scores"]["ca"] if task in by_task else []
        for position, (category, passed, result) in enumerate(expected):
            mine = bool(got[position]) if position < len(got) else None
            total += 1
            if mine == passed:
                agree += 1
            else:
                found = {"task": task, "round": position + 1, "category": category,
                         "published": passed, "ours": mine}  # fmt: skip
                found["cause"] = cause(found, result, graded_base, base, args.data)
                differ.append(found)
    cells = [
        {"round": i + 1, "theirs": t, "ours": o, "equal": t == o}
        for i, (t, o) in enumerate(zip(theirs, ours_ca, strict=False))
    ]
    return {
        "model": name,
        "accumulated_agreement": [agree, total],
        "ca_cells": cells,
        "ca_cells_equal": sum(c["equal"] for c in cells),
        "ca_rounds": [len(theirs), len(ours_ca)],
        "ia_round1": {"theirs": theirs[0] if theirs else None, "ours": ours_ia[0]},
        "ia_ours": ours_ia,
        "differing_verdicts": differ,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiments", type=Path, required=True, help="checkout of 93b17ef")
    parser.add_argument("--scripts", type=Path, required=True, help="checkout of branch v1")
    parser.add_argument("--data", type=Path, required=True, help="the v0 data file")
    parser.add_argument("--out", type=Path, default=Path("codeif-parity"))
    parser.add_argument("--model", action="append", help="only these model folders")
    args = parser.parse_args()
    results = []
    for name, base, n_round in models(args.experiments):
        if args.model and name not in args.model:
            continue
        found = compare(name, base, n_round, args)
        results.append(found)
        agree, total = found["accumulated_agreement"]
        for d in found["differing_verdicts"]:
            print(f"  task {d['task']} round {d['round']} ({d['category']}): {d['cause']}")
        print(
            f"{name}: accumulated verdicts {agree}/{total} ({100 * agree / total:.1f}%), "
            f"CA cells {found['ca_cells_equal']}/{len(found['ca_cells'])} equal, "
            f"IA round 1 theirs {found['ia_round1']['theirs']} ours {found['ia_round1']['ours']}"
        )
    (args.out / "parity.json").write_text(json.dumps(results, indent=1), "utf-8")


if __name__ == "__main__":
    main()
