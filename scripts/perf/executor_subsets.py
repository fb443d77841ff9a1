"""Executor speed on the two fixed BigCodeBench subsets of ../shared/perf.

For each subset (stdlib, pandas) and solution kind (ground truth, solutions that raise at
once) it runs the 60 tasks with --jobs workers, --repeats times, and reports the median wall
time *including the sandboxes' start-up* (nothing is started before the clock runs, as for a
user), the time to the first result, per-run overhead, the floor (the tests' own run time
summed over tasks, divided by jobs), verdicts and the peak memory of the harness plus all its
sandboxes.

With --executor local,ray:ADDRESS the executors take turns on every repeat, so both meet the
same load. The cluster connection is made once, before any clock (ray alone starts a cluster
on this machine, whose slots are its cores, so --jobs applies to local only); a Ray
executor's actors start inside the measured wall, as the local zygotes do. Since a fresh
actor is a fresh Ray worker process (most of a second here, paid once per command however
many runs follow), the overhead is also given after the executor is open (``open_s``, about
nothing for the local one): zygotes still start inside it for both. A cluster's peak memory
counts only what runs under this process.

With --bcb-python PATH, BigCodeBench's own ``evaluate`` (installed in the virtual environment
of PATH: see bcb_evaluate.py) runs the same tasks and solutions right after each of convtui's
runs, with as many workers, and the line gives its median wall and the ratio of the medians:
the two meet the same load, which on a shared machine moves both by tens of percent from hour
to hour (its raising runs took 12.7 s on stdlib when its figures in
docs/harness-notes.md#executor-reference-figures were taken, 21 to 22 s on 2026-11-29).

Run: python scripts/perf/executor_subsets.py [--repeats 3] [--jobs 2] [--json out.json]
     [--executor local,ray] [--kinds ground-truth,raising] [--bcb-python /tmp/bcb/bin/python]
     [--bcb-kinds raising]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import threading
import time
from collections import Counter
from pathlib import Path

from bcb_evaluate import BcbEvaluate

from convtui.benchmarks.runs import durations
from convtui.core.catalog.datasets import locate
from convtui.core.catalog.loaders import load_catalog
from convtui.core.execution.choice import parse_executor
from convtui.core.execution.requests import broken_solution
from convtui.core.projects.checkout import exec_request
from convtui.core.services import open_execution

HERE = Path(__file__).resolve()
PERF_DIR = HERE.parents[2].parent / "shared" / "perf"
PAGE = os.sysconf("SC_PAGE_SIZE")


def _tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and all its descendants."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes()
            fields = stat[stat.rfind(b")") + 2 :].split()
            parents[int(entry)] = int(fields[1])
            rss[int(entry)] = int(fields[21]) * PAGE
        except (OSError, IndexError, ValueError):
            continue
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(p for p, parent in parents.items() if parent == pid)
    return total


class PeakMemory:
    """Samples the process tree's resident memory every 100 ms."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, _tree_rss(os.getpid()))

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def solution(task, kind: str) -> str:
    return task.ground_truth if kind == "ground-truth" else broken_solution(task)


def run_once(tasks, kind: str, jobs: int, known: dict[str, float], executor: str = "local") -> dict:
    ordered = [tasks[i] for i in durations.longest_first([t.id for t in tasks], known)]
    requests = [exec_request(t, solution(t, kind)) for t in ordered]
    first: list[float] = []
    with PeakMemory() as memory:
        started = time.monotonic()
        # No warm-up: zygotes (and a cluster's actors) start when the first run needs them,
        # inside the measured wall.
        choice = parse_executor(executor)
        local = choice.kind == "local"
        with open_execution(
            choice, python=None, jobs=jobs if local else None, isolation="auto", model_code=False
        ) as backend:
            opened = time.monotonic()
            jobs = backend.jobs
            expected = {i: known[t.id] for i, t in enumerate(ordered) if t.id in known}
            results = backend.run_many(
                requests,
                expected_s=expected,
                on_result=lambda _i, _r: first.append(time.monotonic()) if not first else None,
            )
            finished = time.monotonic()
    test_time = sum(sum(t.duration_s for t in r.tests) for r in results)
    run_time = sum(r.duration_s for r in results)
    wall = finished - started
    return {
        "executor": executor,
        "jobs": jobs,
        "wall_s": wall,
        "first_result_s": first[0] - started,
        "open_s": opened - started,
        "overhead_per_run_s": max(wall * jobs - test_time, 0.0) / len(requests),
        "overhead_after_open_s": max((finished - opened) * jobs - test_time, 0.0) / len(requests),
        "test_time_s": test_time,
        "child_time_s": run_time,
        "longest_task_s": max(r.duration_s for r in results),
        "floor_s": test_time / jobs,
        "verdicts": dict(Counter(r.status for r in results)),
        "not_as_expected": sorted(
            t.id
            for t, r in zip(ordered, results, strict=True)
            if (r.status == "pass") != (kind == "ground-truth")
        ),
        "peak_rss_mb": memory.peak / 2**20,
        "durations": {t.id: r.duration_s for t, r in zip(ordered, results, strict=True)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--subsets", default="stdlib,pandas")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    parser.add_argument(
        "--executor", default="local", help="executors to compare, e.g. local,ray:auto"
    )
    parser.add_argument("--kinds", default="ground-truth,raising")
    parser.add_argument(
        "--bcb-python", help="interpreter of a venv with bigcodebench: run its evaluate alongside"
    )
    parser.add_argument(
        "--bcb-kinds", default="raising", help="the kinds BigCodeBench's evaluate runs too"
    )
    args = parser.parse_args()
    executors = args.executor.split(",")
    _connect_clusters(executors)
    catalog = load_catalog("bigcodebench")
    report = {}
    for subset in args.subsets.split(","):
        ids = (PERF_DIR / f"subset-{subset}.txt").read_text().split()
        tasks = [catalog.get(i) for i in ids]
        # A cold run first, not counted: it learns each task's duration, as `convtui doctor`
        # does, so that the measured runs can start the longest work first.
        cold = run_once(tasks, "ground-truth", args.jobs, {}, executors[0])
        known: dict[str, float] = cold["durations"]
        print(
            f"{subset:7} cold run (no durations known yet): wall {cold['wall_s']:.2f} s", flush=True
        )
        report[f"{subset}/cold"] = {k: v for k, v in cold.items() if k != "durations"}
        versus = None
        if args.bcb_python:
            versus = BcbEvaluate(args.bcb_python, locate("bigcodebench"), ids, args.jobs)
        for kind in args.kinds.split(","):
            solutions = {t.id: solution(t, kind) for t in tasks}
            bcb = versus if kind in args.bcb_kinds.split(",") else None
            if bcb is not None and kind == "ground-truth":
                bcb.run(solutions, no_gt=False)  # its cold run: fills its ground-truth cache
            # The executors take turns within each repeat, so a change of load meets all.
            rounds = []
            for _ in range(args.repeats):
                runs = {e: run_once(tasks, kind, args.jobs, known, e) for e in executors}
                if bcb is not None:
                    runs["bigcodebench"] = bcb.run(solutions, no_gt=kind == "raising")
                rounds.append(runs)
            for executor in executors:
                name = f"{subset}/{kind}" if executor == "local" else f"{subset}/{kind}/{executor}"
                report[name] = _summary(subset, kind, executor, [r[executor] for r in rounds])
            if bcb is not None:
                report[f"{subset}/{kind}/bigcodebench"] = _versus(
                    subset, kind, [r["bigcodebench"] for r in rounds], report[f"{subset}/{kind}"]
                )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


def _connect_clusters(executors: list[str]) -> None:
    """Join the one cluster that the ray executors name, before any clock runs."""
    clusters = {parse_executor(e).address for e in executors if parse_executor(e).kind == "ray"}
    if len(clusters) > 1:
        raise SystemExit("one Ray cluster per run: a process is the driver of one cluster")
    if clusters:
        from convtui.core.execution.cluster.connect import connect

        connect(clusters.pop())


def _versus(subset: str, kind: str, runs: list[dict], ours: dict) -> dict:
    """BigCodeBench's runs beside convtui's local executor's median, printed as one line."""
    walls = [r["wall_s"] for r in runs]
    median = statistics.median(walls)
    row = {
        "wall_s": median,
        "walls": walls,
        "verdicts": runs[-1]["verdicts"],
        "times_slower_than_convtui": median / ours["wall_s"],
    }
    print(
        f"{subset:7} {kind:13} {'bigcodebench':10} wall {median:6.2f} s (runs "
        f"{', '.join(f'{w:.2f}' for w in walls)}) verdicts {row['verdicts']}: "
        f"{row['times_slower_than_convtui']:.1f}x convtui's {ours['wall_s']:.2f} s",
        flush=True,
    )
    return row


def _summary(subset: str, kind: str, executor: str, runs: list[dict]) -> dict:
    """The medians of ``runs`` of one executor, printed as one line."""
    walls = [r["wall_s"] for r in runs]
    median = {
        k: statistics.median(r[k] for r in runs)
        for k in (
            "wall_s",
            "first_result_s",
            "open_s",
            "overhead_per_run_s",
            "overhead_after_open_s",
            "test_time_s",
            "floor_s",
            "longest_task_s",
            "peak_rss_mb",
        )
    }
    row = {
        **median,
        "executor": executor,
        "jobs": runs[-1]["jobs"],
        "walls": walls,
        "verdicts": runs[-1]["verdicts"],
        "not_as_expected": runs[-1]["not_as_expected"],
        "wall_over_floor": median["wall_s"] / median["floor_s"] if median["floor_s"] else None,
    }
    print(
        f"{subset:7} {kind:13} {executor:10} wall {median['wall_s']:6.2f} s (runs "
        f"{', '.join(f'{w:.2f}' for w in walls)}) "
        f"first result {median['first_result_s']:.2f} s "
        f"overhead/run {median['overhead_per_run_s']:.3f} s (open {median['open_s']:.2f} s, "
        f"after it {median['overhead_after_open_s']:.3f} s) floor "
        f"{median['floor_s']:.2f} s longest {median['longest_task_s']:.2f} s "
        f"peak {median['peak_rss_mb']:.0f} MiB verdicts {row['verdicts']} "
        f"unexpected {row['not_as_expected']}",
        flush=True,
    )
    return row


if __name__ == "__main__":
    main()
