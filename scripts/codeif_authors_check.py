"""Run CodeIF-Bench's own static evaluation on `sessions export --format codeif` of a run and
compare its IA, CA and IFR per round with `convtui report --metrics authors`.

The authors' pipeline (zhu-zhu-ding/CodeIF-Bench, branch v1,
``static_conversation/function/test/``), run unmodified from a checkout you make::

    git clone https://github.com/zhu-zhu-ding/CodeIF-Bench ref
    git -C ref worktree add ../ref-v1 v1
    python scripts/codeif_authors_check.py --scripts ref-v1 --db codeif.db --run RUN \\
        --data ../shared/data/CodeIF-Bench-L1-function.jsonl

1. ``evaluate_functional_correctness.py --way 1`` on ``base.jsonl`` (base verdicts),
2. ``--way 5`` on ``n_round.jsonl`` (IA: own asserts), ``--way 6`` (CA: accumulated),
   ``--way 7`` (IFR; it reads the base verdicts as ``base.jsonl`` in its folder),
3. ``IA_CA.py`` on the base verdicts and the CA rows, again on the IA rows, and ``IFR.py``.

Their evaluation runs each candidate with ``python`` in a subprocess, with no sandbox: use
it only on code you trust (a run of the scripted ``mock:`` model, say). Our numbers come
from the same run through ``convtui report --metrics authors --json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROUND_LINE = re.compile(r"Round (\d+): Correct = ([\d.]+), Total = (\d+)")


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    return done.stdout


def theirs(
    scripts: Path, files: Path, data: Path, keep: Path
) -> dict[str, list[tuple[float, int]]]:
    """Their IA, CA and IFR per round, as their scripts print them; their verdict files are
    kept in ``keep``."""
    test_dir = (scripts / "static_conversation" / "function" / "test").resolve()
    env = {
        **os.environ,
        "PYTHONPATH": str(test_dir),
        # Their execution.py runs `python`: the interpreter that has the tests' libraries.
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    evaluate = [sys.executable, str(test_dir / "evaluate_functional_correctness.py")]
    common = ["--problem_file", str(data.resolve()), "--timeout", "3.0", "--n_workers", "1"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        base, n_round = work / "base_answers.jsonl", work / "n_round.jsonl"
        shutil.copy(files / "base.jsonl", base)
        shutil.copy(files / "n_round.jsonl", n_round)
        run([*evaluate, "--sample_file", str(base), "--way", "1", *common], work, env)
        shutil.copy(work / "base_answers.jsonl_results.jsonl", work / "base_results.jsonl")
        shutil.copy(work / "base_results.jsonl", work / "base.jsonl")  # what way 7 reads
        for way in ("5", "6", "7"):
            run([*evaluate, "--sample_file", str(n_round), "--way", way, *common], work, env)
        found: dict[str, list[tuple[float, int]]] = {}
        for metric, rows in (("ca", "n_round.jsonl_CA.jsonl"), ("ia", "n_round.jsonl_IA.jsonl")):
            shutil.copy(work / rows, work / "CA.jsonl")
            out = run([sys.executable, str(test_dir / "IA_CA.py")], work, env)
            found[metric] = [(float(c), int(t)) for _, c, t in ROUND_LINE.findall(out)]
        shutil.copy(work / "n_round.jsonl_IFA_result.jsonl", work / "IFA_result.jsonl")
        out = run([sys.executable, str(test_dir / "IFR.py")], work, env)
        found["ifr"] = [(float(c), int(t)) for _, c, t in ROUND_LINE.findall(out) if int(t)]
        keep.mkdir(parents=True, exist_ok=True)
        for verdicts in work.glob("*.jsonl"):
            shutil.copy(verdicts, keep / verdicts.name)
    return found


def differing_ia(keep: Path, db: Path, run_id: str, out: Path) -> list[str]:
    """Follow-ups whose IA verdict differs: (task, requirement, theirs, ours)."""
    done = subprocess.run(
        [sys.executable, "-m", "convtui", "report", "--db", str(db), "--run", run_id,
         "--metrics", "authors", "--json", "--out", str(out)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    ours_own = {}
    for s in json.loads(done.stdout)["codeif"]["sessions"]:
        task = int(s["task_id"].split("/")[1])
        for r in s["rounds"][1:]:
            ours_own[(task, r["instruction"])] = r["own"][r["instruction"]]
    lines = []
    for row in map(json.loads, (keep / "n_round.jsonl_IA.jsonl").read_text().splitlines()):
        key = (row["task_id"], row["requirement"])
        if ours_own.get(key) != row["passed"]:
            theirs_said = row["result"].splitlines()[-1][:200] if row["result"] else ""
            lines.append(f"task {key[0]} {key[1]}: theirs {row['passed']} ({theirs_said})")
    return lines


def ours(db: Path, run_id: str, out: Path) -> dict[str, list[tuple[float, int]]]:
    """Our positional rows, as sums (their Correct) and tasks (their Total)."""
    done = subprocess.run(
        [sys.executable, "-m", "convtui", "report", "--db", str(db), "--run", run_id,
         "--metrics", "authors", "--json", "--out", str(out)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    (group,) = json.loads(done.stdout)["codeif"]["groups"]
    found: dict[str, list[tuple[float, int]]] = {}
    for metric in ("ia", "ca", "ifr"):
        found[metric] = [
            (round(r[metric] * r[f"{metric}_tasks"], 6), r[f"{metric}_tasks"])
            for r in group["rounds"]
            if metric in r
        ]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scripts", type=Path, required=True, help="checkout of branch v1")
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--run", required=True, help="a static bench codeif run of --db")
    parser.add_argument("--data", type=Path, required=True, help="the run's data file")
    parser.add_argument("--out", type=Path, default=Path("codeif-authors-check"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    exported = args.out / "export"
    subprocess.run(
        [sys.executable, "-m", "convtui", "sessions", "export", "--format", "codeif",
         "--db", str(args.db), "--run", args.run, "--out", str(exported)],
        check=True, capture_output=True,
    )  # fmt: skip
    manifest = json.loads((exported / "convtui-export.json").read_text("utf-8"))
    (found,) = manifest["codeif"]
    their = theirs(args.scripts, exported / found["folder"], args.data, args.out / "theirs")
    our = ours(args.db, args.run, args.out)
    same = True
    for metric in ("ia", "ca", "ifr"):
        agree = [(round(a[0], 6), a[1]) for a in their[metric]] == our[metric]
        same &= agree
        print(f"{metric.upper()}: theirs {their[metric]}")
        print(f"{'':>{len(metric) + 2}}ours   {our[metric]}  {'equal' if agree else 'DIFFER'}")
    for line in differing_ia(args.out / "theirs", args.db, args.run, args.out):
        print(f"  IA differs: {line}")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
