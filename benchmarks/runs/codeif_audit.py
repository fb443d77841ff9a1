"""``convtui doctor --suite codeif --audit``: every instruction test run on the task's reference
solution and on a placeholder answer under ``--protocol convtui`` (before the errata's repairs),
classed by core/codeif/audit.py, and the errata file written from the classes.

Two executions per task (each answer against every test of every instruction); a repository
task runs in its project where that is usable here, else its tests are classed from their text
alone (``not-run`` unless the text shows a defect)."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields, replace
from pathlib import Path

from convtui.core.catalog.loaders import TaskCatalog, codeif_files, load_codeif
from convtui.core.catalog.tasks import Task, TestSpec
from convtui.core.codeif.audit import (
    AUDIT_CLASSES,
    AuditRow,
    audit_row,
    instruction_tests,
    placeholder,
)
from convtui.core.codeif.instructions import BASE, CATEGORIES, Instruction, instructions
from convtui.core.codeif.programs import first_python_block, round_request
from convtui.core.codeif.repairs import REPAIRS
from convtui.core.codeif.test_defects import syntax_error
from convtui.core.execution.backend import ExecutionBackend
from convtui.core.execution.types import ExecRequest, ExecResult, Limits
from convtui.core.projects.checkout import task_problem

# A test that loops on the placeholder must not hold the audit: 10 s a test, 5 min a run.
AUDIT_LIMITS = Limits(per_test_s=10.0, wall_s=300.0)
LEVELS = ("L-1 function", "L-1 repository", "L-2", "L-3")


def audit_files(data: Path | None) -> list[Path]:
    """The files an audit reads: ``data`` when it names one file, else today's four files and
    the first release (``-v0``) of each that is beside it."""
    files = codeif_files(data)
    if data is not None and Path(data).is_file():
        return files
    v0 = [f.with_name(f.stem + "-v0" + f.suffix) for f in files]
    return files + [f for f in v0 if f.is_file()]


def audit_tasks(data: Path | None, ids: str | None) -> list[tuple[str, Task]]:
    """(data file name, task) for every task ``ids`` selects, file by file."""
    out: list[tuple[str, Task]] = []
    wanted = TaskCatalog([t for p in codeif_files(data) for t in load_codeif(p)]).select(ids)
    chosen = {t.id for t in wanted}
    for path in audit_files(data):
        out += [(path.name, t) for t in load_codeif(path) if t.id in chosen]
    return out


def published_completions(folder: Path) -> dict[str, list[str]]:
    """Task id -> the distinct codes of the function-level completions in ``folder``'s
    ``*.jsonl`` files (``function/Experiments`` of the benchmark's repository, or a part of
    it; verdict files, ``*_results.jsonl``, are skipped): the first ```` ```python ```` block
    of each, as the authors' harness reads it."""
    found: dict[str, dict[str, None]] = {}
    for path in sorted(folder.rglob("*.jsonl")):
        if "_results" in path.name:
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if not isinstance(row, dict) or not isinstance(row.get("task_id"), int):
                continue
            code = first_python_block(str(row.get("completion", "")))
            found.setdefault(f"CodeIF/{row['task_id']}", {})[code] = None
    return {task: list(codes) for task, codes in found.items()}


def _request(task: Task, code: str) -> ExecRequest:
    return round_request(
        task, code, audited_instructions(task), preprocess=False, limits=AUDIT_LIMITS, repair=False
    )


def audited_instructions(task: Task) -> tuple[Instruction, ...]:
    """``task``'s instructions as the audit runs them: in a repository task, without the
    tests whose text does not compile. Put into its module, such a test stops pytest from
    collecting it, so that no other test there would run (CodeIF/1018, /2020, /3006; v0's
    /1002 holds a lone surrogate no file can be written with); it is classed from its text
    (``syntax-error``) all the same. A function task's asserts run apart: nothing to do."""
    found = instructions(task)
    if task.site is None:
        return found
    return tuple(
        replace(i, tests=tuple((n, c) for n, c in i.tests if not c or syntax_error(c) is None))
        for i in found
    )


def run_audit(
    tasks: Sequence[tuple[str, Task]],
    executor: ExecutionBackend,
    progress: Callable[[str], None] | None = None,
    completions: Mapping[str, Sequence[str]] | None = None,
) -> list[AuditRow]:
    """Every instruction test of ``tasks`` classed, in task order; ``completions`` (task id
    -> codes, function tasks only) confirm tests that both answers fail."""
    runnable = [(data, t) for data, t in tasks if t.site is None or task_problem(t) is None]
    published = completions or {}
    codes = {
        index: [t.ground_truth, placeholder(t), *(published.get(t.id, ()) if not t.site else ())]
        for index, (_, t) in enumerate(runnable)
    }
    jobs = [(index, code) for index, found in codes.items() for code in found]
    requests = [_request(runnable[index][1], code) for index, code in jobs]
    left = {index: len(found) for index, found in codes.items()}
    results: list[ExecResult | None] = [None] * len(requests)

    def done(at: int, result: ExecResult) -> None:
        results[at] = result
        index = jobs[at][0]
        left[index] -= 1
        if progress is not None and not left[index]:
            progress(runnable[index][1].id)

    executor.run_many(requests, on_result=done)
    by_task: dict[int, list[ExecResult]] = {}
    for (index, _), result in zip(jobs, results, strict=True):
        assert result is not None
        by_task.setdefault(index, []).append(result)
    outcomes = {
        (runnable[index][0], runnable[index][1].id): [{t.name: t for t in r.tests} for r in found]
        for index, found in by_task.items()
    }
    rows = []
    for data, task in tasks:
        found = outcomes.get((data, task.id))
        if found is None and progress is not None:
            progress(task.id)
        for text in instruction_tests(task):
            ref = found[0].get(text.name) if found else None
            ph = found[1].get(text.name) if found else None
            others = [o.get(text.name) for o in (found or [])[2:]]
            passed = sum(o is not None and o.status == "pass" for o in others)
            rows.append(audit_row(data, text, ref, ph, (passed, len(others))))
    return _with_repairs_checked(rows, runnable, codes, executor)


def _with_repairs_checked(
    rows: list[AuditRow],
    runnable: Sequence[tuple[str, Task]],
    codes: Mapping[int, Sequence[str]],
    executor: ExecutionBackend,
) -> list[AuditRow]:
    """``rows`` with each repaired function-level test run again, repaired, on the same
    answers: it must fail on the placeholder and pass on some answer (``repaired``)."""
    where = {(data, t.id): index for index, (data, t) in enumerate(runnable) if t.site is None}
    fixes: dict[int, dict[str, str]] = {}
    texts = {(data, t.id, x.name): x.code for data, t in runnable for x in instruction_tests(t)}
    for row in rows:
        index = where.get((row.data, row.task))
        repair = REPAIRS.get(row.convtui)
        if index is not None and repair is not None:
            fixes.setdefault(index, {})[row.test] = repair(texts[(row.data, row.task, row.test)])
    jobs = [(index, code) for index in fixes for code in codes[index]]
    requests = [
        replace(
            _request(runnable[index][1], code),
            tests=TestSpec("snippets", snippets=tuple(fixes[index].items())),
        )
        for index, code in jobs
    ]
    results = executor.run_many(requests)
    found: dict[int, list[dict[str, str]]] = {}
    for (index, _), result in zip(jobs, results, strict=True):
        found.setdefault(index, []).append({t.name: t.status for t in result.tests})
    out = []
    for row in rows:
        index = where.get((row.data, row.task))
        if index is None or row.test not in fixes.get(index, {}):
            out.append(row)
            continue
        statuses = [f.get(row.test, "missing") for f in found[index]]
        published = statuses[2:]
        said = f"repaired: reference {statuses[0]}, placeholder {statuses[1]}"
        if published:
            said += f", passes on {published.count('pass')} of {len(published)} published"
        out.append(replace(row, repaired=said))
    return out


def write_errata(rows: Sequence[AuditRow], path: Path) -> None:
    """One CSV row per test: the audit's class, defect kind, evidence and what
    ``--protocol convtui`` does about it."""
    names = [f.name for f in fields(AuditRow)]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=names, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow(row.to_json())


def summary(rows: Sequence[AuditRow]) -> dict:
    """Counts per level and class, per level and defect kind, per level, category and class,
    and per task and class: what ``--json`` prints beside the rows."""

    def count(*keys: str) -> list[dict]:
        found: dict[tuple, int] = {}
        for row in rows:
            key = tuple(getattr(row, k) for k in keys)
            found[key] = found.get(key, 0) + 1
        return [{**dict(zip(keys, k, strict=True)), "tests": n} for k, n in sorted(found.items())]

    return {
        "by_class": count("data", "level", "verdict"),
        "by_defect": count("data", "level", "defect"),
        "by_category": count("data", "level", "category", "verdict"),
        "by_task": count("data", "task", "verdict"),
    }


def category_order(category: str) -> int:
    order = (BASE, *CATEGORIES)
    return order.index(category) if category in order else len(order)


__all__ = ["AUDIT_CLASSES", "LEVELS", "audit_tasks", "run_audit", "summary", "write_errata"]
