"""How a big study's slow paths scale (issue 48, point 7): `convtui study init` of a study
file naming ``--annotators`` people (100,000 by default) over every BigCodeBench task, each
task to 3 of them; then ``--lookups`` sign-ins (`who_holds`, what the served study asks of
every request that carries a token) in the database it made.

Timed, each a new process: init (`python -m convtui study init FILE --db DB --json`), median
of ``--repeats``; the lookups all together, tokens taken evenly over the annotators (a
lookup that scans stops at its match, so an even spread costs what the average sign-in does)
and one wrong token last.

With ``--baseline DIR``, the same again with an earlier convtui, taken in turns with this one
(one of each, then again) so that a busier minute of the machine falls on both alike. DIR is
a folder on PYTHONPATH from which ``import convtui`` finds that commit's code; make one with

    git archive COMMIT | tar -x -C /tmp/base/src
    mkdir /tmp/base/pkg && cp -r /tmp/base/src/convtui /tmp/base/pkg/
    for d in core sessions tui benchmarks; do ln -s /tmp/base/src/$d /tmp/base/pkg/convtui/$d; done

Run: python scripts/perf/study_scale.py [--annotators 100000] [--repeats 3]
     [--lookups 1000] [--baseline /tmp/base/pkg] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_study_file(path: Path, annotators: int) -> None:
    names = ",\n".join(f'"annotator-{i:06d}"' for i in range(annotators))
    path.write_text(
        'name = "scale"\nmodel = "mock:replies.jsonl"\noverlap = 3\n'
        f'annotators = [\n{names}\n]\n[tasks]\nsuite = "bigcodebench"\n',
        encoding="utf-8",
    )


def environment(tree: str | None) -> dict[str, str]:
    """This process's environment; with ``tree``, one whose ``import convtui`` finds it."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = tree
    return env


def time_init(study_file: Path, db: Path, tree: str | None) -> tuple[float, dict]:
    db.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "convtui", "study", "init", str(study_file), "--db", str(db)]
    start = time.perf_counter()
    # Run from the study's folder: `python -m` puts the working folder first on sys.path,
    # and this checkout's would shadow the baseline's convtui.
    done = subprocess.run(
        [*argv, "--json"],
        capture_output=True,
        text=True,
        check=False,
        cwd=study_file.parent,
        env=environment(tree),
    )
    took = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"study init failed ({done.returncode}): {done.stderr.strip()}")
    return took, json.loads(done.stdout)


def time_lookups_in_process(db: Path, tokens: Path) -> float:
    from convtui.sessions import Store
    from convtui.sessions.studies.study_rows import load_study, who_holds

    wanted = json.loads(tokens.read_text())
    with Store.open(db) as store:
        study = load_study(store)
        start = time.perf_counter()
        for token, name in wanted:
            if who_holds(store, study.id, token) != name:
                sys.exit(f"who_holds did not find {name}")
        return time.perf_counter() - start


def time_lookups(db: Path, made: dict, lookups: int, tree: str | None) -> float:
    people = made["annotators"]
    step = max(1, len(people) // lookups)
    wanted = [(p["token"], p["name"]) for p in people[::step]][: lookups - 1]
    wanted.append(("not-anyones-token", None))
    tokens = db.with_name("tokens.json")
    tokens.write_text(json.dumps(wanted))
    argv = [sys.executable, __file__, "--time-lookups", str(db), str(tokens)]
    done = subprocess.run(
        argv, capture_output=True, text=True, check=False, cwd=db.parent, env=environment(tree)
    )
    if done.returncode != 0:
        sys.exit(f"lookups failed ({done.returncode}): {done.stderr.strip()}")
    return float(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--lookups", type=int, default=1000)
    parser.add_argument("--baseline", help="a PYTHONPATH folder holding an earlier convtui")
    parser.add_argument("--json", dest="json_out")
    parser.add_argument("--time-lookups", nargs=2, metavar=("DB", "TOKENS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.time_lookups:
        print(time_lookups_in_process(Path(args.time_lookups[0]), Path(args.time_lookups[1])))
        return
    trees = {"this": None} | ({"baseline": args.baseline} if args.baseline else {})
    inits: dict[str, list[float]] = {name: [] for name in trees}
    lookups: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="convtui-study-scale-") as tmp:
        study_file, db = Path(tmp) / "STUDY.toml", Path(tmp) / "study.db"
        write_study_file(study_file, args.annotators)
        for i in range(args.repeats):
            for name, tree in trees.items():
                took, made = time_init(study_file, db, tree)
                inits[name].append(took)
                print(f"{name}: study init {i + 1}/{args.repeats}: {took:.2f} s", file=sys.stderr)
                if i == args.repeats - 1:
                    lookups[name] = time_lookups(db, made, args.lookups, tree)
                    print(f"{name}: {args.lookups} lookups {lookups[name]:.3f} s", file=sys.stderr)
    report = {
        "annotators": args.annotators,
        "assignments": made["assignments"],
        "lookups": args.lookups,
        "trees": {
            name: {
                "init_s": [round(t, 3) for t in inits[name]],
                "init_median_s": round(statistics.median(inits[name]), 3),
                "lookups_s": round(lookups[name], 3),
            }
            for name in trees
        },
    }
    for name, row in report["trees"].items():
        print(
            f"{name}: {args.annotators:,} annotators, {made['assignments']:,} assignments: "
            f"study init median {row['init_median_s']} s of {row['init_s']}; "
            f"{args.lookups:,} who_holds calls {row['lookups_s']} s"
        )
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
