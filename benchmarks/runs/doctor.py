"""``convtui doctor``: run the ground-truth solutions of tasks to learn which are valid here.

Also runs deliberately broken solutions (``--solution broken``) to show the tests catch them."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

from convtui.benchmarks.runs import durations
from convtui.core.catalog.tasks import Task
from convtui.core.execution.backend import ExecutionBackend
from convtui.core.execution.isolation import verdict_warning
from convtui.core.execution.requests import Solution, broken_solution, task_modules
from convtui.core.execution.types import ExecResult, Limits
from convtui.core.projects.checkout import FETCH_HINT, exec_request, task_problem


@dataclass(frozen=True)
class TaskOutcome:
    id: str
    status: str
    detail: str
    failing_tests: tuple[str, ...]
    duration_s: float
    first_traceback: str = ""
    missing_module: str | None = None
    reason: str = ""


@dataclass
class DoctorReport:
    solution: Solution
    isolation: str
    python: str
    # The label plus where the sandbox comes from (which bwrap binary, or namespaces).
    isolation_detail: str = ""
    total: int = 0
    passed: int = 0
    failed: int = 0
    error: int = 0
    timeout: int = 0
    crash: int = 0
    env_error: int = 0
    missing_modules: dict[str, list[str]] = field(default_factory=dict)
    outcomes: list[TaskOutcome] = field(default_factory=list)
    wall_s: float = 0.0
    # On a cluster (--executor ray): per node, where it is, its slots, isolation and task
    # environment (RayExecutor.environment_info); empty for the local executor.
    nodes: list[dict] = field(default_factory=list)
    # CodeIF-Bench's repository tasks, one entry each: its level and project, whether it is
    # valid here (project usable and the reference passing its tests) and why not.
    repository: list[dict] = field(default_factory=list)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.total if self.total else 0.0

    def valid_pass_rate(self) -> float:
        """Pass rate over tasks whose libraries are installed (env errors left out)."""
        valid = self.total - self.env_error
        return self.passed / valid if valid else 0.0

    @property
    def unexpected(self) -> list[TaskOutcome]:
        """Outcomes that are not what the solution kind predicts."""
        want_pass = self.solution == "ground-truth"
        return [
            o
            for o in self.outcomes
            if o.status != "env_error" and (o.status == "pass") != want_pass
        ]

    def to_json(self) -> dict:
        return {
            "solution": self.solution,
            "isolation": self.isolation,
            "isolation_detail": self.isolation_detail,
            "isolation_warning": verdict_warning(self.isolation),
            "python": self.python,
            "total": self.total,
            "passed": self.passed,
            "failed": self.failed,
            "error": self.error,
            "timeout": self.timeout,
            "crash": self.crash,
            "env_error": self.env_error,
            "pass_rate": round(self.pass_rate, 4),
            "valid_pass_rate": round(self.valid_pass_rate(), 4),
            "missing_modules": self.missing_modules,
            "failing_ids": [o.id for o in self.outcomes if o.status != "pass"],
            "unexpected": [asdict(o) for o in self.unexpected],
            "wall_s": round(self.wall_s, 2),
            **({"nodes": self.nodes} if self.nodes else {}),
            **({"repository": self.repository} if self.repository else {}),
        }


_NETWORK_SIGNS = (
    "name resolution",
    "gaierror",
    "Name or service not known",
    "Network is unreachable",
    "No address associated with hostname",
    "nodename nor servname",
)


_NETWORK_MODULES = frozenset(
    {
        "socket",
        "urllib",
        "requests",
        "http",
        "ftplib",
        "smtplib",
        "ssl",
        "mechanize",
        "wikipedia",
        "geopy",
    }
)


def explain(result: ExecResult, task: Task | None = None) -> str:
    """A short reason for a non-pass, in words a user can act on."""
    if result.status == "pass":
        return ""
    if result.status == "env_error":
        return f"{result.detail}: install it in the task environment"
    text = result.detail + "".join(t.traceback for t in result.tests)
    if any(sign in text for sign in _NETWORK_SIGNS):
        return "needs the internet, which the sandbox does not give candidates"
    uses = sorted(_NETWORK_MODULES & task_modules(task)) if task is not None else []
    if uses and result.status == "fail":
        return (
            f"probably needs the internet (uses {', '.join(uses)}), which the sandbox "
            "does not give candidates; last error: " + _last_error(result)
        )
    if result.status == "timeout":
        return result.detail or "did not finish in time"
    if result.status == "crash":
        return result.detail
    if result.tampered:
        return result.detail
    return _last_error(result)


def _last_error(result: ExecResult) -> str:
    failing = [t for t in result.tests if t.status != "pass" and t.traceback.strip()]
    lines = failing[0].traceback.strip().splitlines() if failing else []
    error = next((ln for ln in reversed(lines) if not ln.startswith((" ", "+", "-", "?"))), "")
    return error or result.detail


def _outcome(task: Task, result: ExecResult) -> TaskOutcome:
    failing = [t for t in result.tests if t.status != "pass"]
    return TaskOutcome(
        id=task.id,
        status=result.status,
        detail=result.detail,
        failing_tests=tuple(f"{t.name} ({t.status})" for t in failing),
        duration_s=result.duration_s,
        first_traceback=failing[0].traceback if failing else "",
        missing_module=result.missing_module,
        reason=explain(result, task),
    )


def run_doctor(
    tasks: Sequence[Task],
    executor: ExecutionBackend,
    *,
    solution: Solution = "ground-truth",
    limits: Limits | None = None,
    progress: Callable[[TaskOutcome], None] | None = None,
) -> DoctorReport:
    info = executor.environment_info()
    report = DoctorReport(
        solution=solution,
        isolation=info["isolation"],
        python=f"{info['python']} ({info['executable']})",
        isolation_detail=executor.isolation.describe(),
        nodes=list(info.get("nodes", [])),
    )
    known = durations.load()
    # A repository task whose project is not usable here is not run: it is reported with
    # the reason, as a task whose library is missing is (not the solution's fault).
    unusable = {t.id: p for t in tasks if t.site and (p := task_problem(t)) is not None}
    order = durations.longest_first([t.id for t in tasks if t.id not in unusable], known)
    runnable = [t for t in tasks if t.id not in unusable]
    ordered = [runnable[i] for i in order]
    requests = [
        exec_request(
            t, t.ground_truth if solution == "ground-truth" else broken_solution(t), limits
        )
        for t in ordered
    ]
    outcomes: dict[int, TaskOutcome] = {}
    measured: dict[str, float] = {}

    def done(index: int, result: ExecResult) -> None:
        outcome = _outcome(ordered[index], result)
        outcomes[index] = outcome
        if solution == "ground-truth" and result.status != "timeout":
            measured[outcome.id] = outcome.duration_s
        if progress is not None:
            progress(outcome)

    started = time.monotonic()
    expected = {i: known[t.id] for i, t in enumerate(ordered) if t.id in known}
    executor.run_many(requests, on_result=done, expected_s=expected)
    report.wall_s = time.monotonic() - started
    durations.save(measured)
    for offset, task in enumerate(t for t in tasks if t.id in unusable):
        outcomes[len(ordered) + offset] = TaskOutcome(
            id=task.id,
            status="env_error",
            detail=unusable[task.id],
            failing_tests=(),
            duration_s=0.0,
            missing_module=f"project {task.site.project_path}" if task.site else None,
            reason=f"{unusable[task.id]}: {FETCH_HINT}",
        )
    position = {t.id: i for i, t in enumerate(tasks)}
    by_id = sorted(outcomes.values(), key=lambda o: position[o.id])
    missing: dict[str, list[str]] = defaultdict(list)
    for outcome in by_id:
        report.total += 1
        counter = {"pass": "passed", "fail": "failed"}.get(outcome.status, outcome.status)
        setattr(report, counter, getattr(report, counter) + 1)
        if outcome.status == "env_error":
            missing[outcome.missing_module or "?"].append(outcome.id)
    report.outcomes = by_id
    report.missing_modules = dict(sorted(missing.items()))
    report.repository = _repository(tasks, by_id, solution)
    return report


def _repository(
    tasks: Sequence[Task], outcomes: Sequence[TaskOutcome], solution: Solution
) -> list[dict]:
    """Per repository task: valid here when its project is usable and its solution did what
    the solution kind predicts (the reference passes, a broken one fails)."""
    by_id = {o.id: o for o in outcomes}
    found = []
    for task in tasks:
        if task.site is None:
            continue
        outcome = by_id[task.id]
        usable = outcome.status != "env_error"
        valid = usable and (outcome.status == "pass") == (solution == "ground-truth")
        found.append(
            {
                "id": task.id,
                "level": task.site.level,
                "project": task.site.project_path,
                "valid": valid,
                "why": ""
                if valid
                else (outcome.detail if not usable else outcome.reason or outcome.status),
                "usable": usable,
            }
        )
    return found
