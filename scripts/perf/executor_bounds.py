"""The least wall time the two fixed BigCodeBench subsets of ../shared/perf can take on this
machine, from the costs a run cannot avoid, measured here: what executor_subsets.py's walls
(and issue 33's targets, raising runs 15x faster than BigCodeBench's evaluate and ground truth
within 1.1x of its floor) are to be held against.

A run needs its task's libraries imported in its own interpreter, and ``--jobs`` runs go at
once, each in a sandbox of its own (an import made in one is not seen in another; forking one
interpreter that imported everything into every slot would only move the import onto one core
while the others wait for it). Measured, medians of ``--repeats``:

- ``start``: a zygote's start in the sandbox, per profile (light: the standard library; full:
  numpy, pandas and matplotlib), through Executor.warm_up.
- ``import``: what importing a set of heavy libraries adds to a running full zygote, through a
  run that names them (its run time taken away).
- ``per run``: what a run costs beyond its tests (fork, compile, load the module, report,
  exit): for ground truth the median of run time minus the tests' own time, for raising
  solutions the median run time.

The bound, for J slots, tests' time T, N runs (shards counted) and the batch's order and shards
as run_many makes them: every slot that serves a profile starts it (at most one a request of
that profile); the heavy libraries of the whole subset are imported once, in one slot, except
those of a request that must be split (expected over T / J, or it alone would outlast the
floor), which every slot imports; and the rest balances perfectly:

    wall >= (T + starts + imports + N * per run) / J

It is optimistic everywhere (no slot ever waits, no library imported twice beyond those
forced), so no executor of this design beats it. ``--bcb`` takes evaluate's median walls
(seconds, e.g. from executor_subsets.py --bcb-python) and gives the best ratio they allow.

Run: python scripts/perf/executor_bounds.py [--repeats 5] [--jobs 2]
     [--bcb stdlib=14.08,pandas=21.91] [--json out.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time
from pathlib import Path

from convtui.core.catalog.loaders import load_catalog
from convtui.core.execution import executor as local
from convtui.core.execution.batch import shard_batch
from convtui.core.execution.executor import Executor
from convtui.core.execution.requests import broken_solution
from convtui.core.execution.testplan import plan_tests
from convtui.core.execution.types import ExecRequest
from convtui.core.projects.checkout import exec_request

HERE = Path(__file__).resolve()
PERF_DIR = HERE.parents[2].parent / "shared" / "perf"


def start_s(profile: str, repeats: int) -> float:
    """Median start of one zygote of ``profile``, sandbox included."""
    times = []
    for _ in range(repeats):
        with Executor(jobs=1) as executor:
            began = time.monotonic()
            executor.warm_up([profile])
            times.append(time.monotonic() - began)
    return statistics.median(times)


def import_s(request: ExecRequest, repeats: int) -> float:
    """Median of what ``request``'s heavy libraries add to a started full zygote: its first
    run there less the same run again."""
    extra = []
    for _ in range(repeats):
        with Executor(jobs=1) as executor:
            executor.warm_up(["full"])
            began = time.monotonic()
            first = executor.run(request)
            cold = time.monotonic() - began
            began = time.monotonic()
            executor.run(request)
            extra.append(cold - (time.monotonic() - began))
            assert first.status != "crash", first.detail
    return statistics.median(extra)


def subset_bound(ids: list[str], catalog, jobs: int, repeats: int, costs: dict) -> dict:
    tasks = [catalog.get(i) for i in ids]
    truth = [exec_request(t, t.ground_truth) for t in tasks]
    raising = [exec_request(t, broken_solution(t)) for t in tasks]
    with Executor(jobs=jobs) as executor:
        executor.run_many(truth)  # warm: zygotes and imports, so the next runs time only runs
        done = executor.run_many(truth)
        failed = executor.run_many(raising)
    tests = [sum(t.duration_s for t in r.tests) for r in done]
    total = sum(tests)
    expected = dict(enumerate(tests))
    shards = len(shard_batch([plan_tests(r.tests) for r in truth], expected, jobs))
    per_run = {
        "ground-truth": statistics.median(
            r.duration_s - t for r, t in zip(done, tests, strict=True)
        ),
        "raising": statistics.median(r.duration_s for r in failed),
    }
    profiles = [local._profile(r) for r in truth]
    starts = 0.0
    for profile in ("light", "full"):
        if profile not in costs["start"]:
            costs["start"][profile] = start_s(profile, repeats)
        starts += min(jobs, profiles.count(profile)) * costs["start"][profile]
    # One (raising, so quick) run that names every heavy library the subset does: what
    # importing them all once costs.
    heavy = [i for i, r in enumerate(raising) if local._heavy_needs(r)]
    once = 0.0
    if heavy:
        names = frozenset().union(*(raising[i].task_imports for i in heavy))
        once = import_s(dataclasses.replace(raising[heavy[0]], task_imports=names), repeats)
    # A ground truth longer than a slot's share must be split, or it alone would outlast the
    # floor: every slot imports its libraries. A raising run is never that long.
    split = [i for i in heavy if tests[i] > total / jobs]
    again = sum((jobs - 1) * import_s(raising[i], repeats) for i in split)
    truth_s = total + starts + once + shards * per_run["ground-truth"]
    bound = {
        "ground-truth": (truth_s + again) / jobs,
        # Were one slot's imports shared with the others for free (they are not: a slot is a
        # sandbox of its own), the split ground truth would import once.
        "ground-truth-shared-imports": truth_s / jobs,
        "raising": (starts + once + shards * per_run["raising"]) / jobs,
    }
    return {
        "tests_s": total,
        "floor_s": total / jobs,
        "runs": shards,
        "per_run_s": per_run,
        "starts_s": starts,
        "imports_s": {"once": once, "again_in_other_slots": again},
        "split": [ids[i] for i in split],
        "bound_s": bound,
        "bound_over_floor": bound["ground-truth"] / (total / jobs),
        "shared_imports_bound_over_floor": bound["ground-truth-shared-imports"] / (total / jobs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--subsets", default="stdlib,pandas")
    parser.add_argument("--bcb", default="", help="evaluate's raising walls, e.g. pandas=21.9")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    bcb = {k: float(v) for k, v in (p.split("=") for p in args.bcb.split(",") if p)}
    catalog = load_catalog("bigcodebench")
    costs: dict = {"start": {}}
    report = {}
    for subset in args.subsets.split(","):
        ids = (PERF_DIR / f"subset-{subset}.txt").read_text().split()
        row = subset_bound(ids, catalog, args.jobs, args.repeats, costs)
        if subset in bcb:
            row["best_raising_ratio"] = bcb[subset] / row["bound_s"]["raising"]
        report[subset] = row
        versus = (
            f", evaluate's {bcb[subset]:.2f} s allows at most {row['best_raising_ratio']:.1f}x"
            if subset in bcb
            else ""
        )
        print(
            f"{subset:7} tests {row['tests_s']:.2f} s in {row['runs']} runs; zygote starts "
            f"{row['starts_s']:.2f} s, heavy imports {row['imports_s']['once']:.2f} s once "
            f"and {row['imports_s']['again_in_other_slots']:.2f} s again for the ground truth "
            f"split over every slot ({', '.join(row['split']) or 'none'}), per run "
            f"{row['per_run_s']['ground-truth'] * 1000:.1f} ms (ground truth) / "
            f"{row['per_run_s']['raising'] * 1000:.1f} ms (raising)\n"
            f"        ground truth: floor {row['floor_s']:.2f} s, bound "
            f"{row['bound_s']['ground-truth']:.2f} s = {row['bound_over_floor']:.3f}x the "
            f"floor ({row['shared_imports_bound_over_floor']:.3f}x were imports shared across "
            f"slots); raising: bound "
            f"{row['bound_s']['raising']:.2f} s{versus}",
            flush=True,
        )
    print(f"zygote start: {', '.join(f'{p} {s:.3f} s' for p, s in costs['start'].items())}")
    if args.json:
        args.json.write_text(json.dumps({"costs": costs, "subsets": report}, indent=2))


if __name__ == "__main__":
    main()
