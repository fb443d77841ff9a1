"""Our verdicts on CodeIF-Bench's published repository-level completions against theirs, row by
row, for the tasks whose project is usable here.

The reference side is the authors' own: ``repo/Experiments/{level_1,level_2_part1,
level_2_part2,level_3}/<model>/<setting>/result_result.jsonl`` of zhu-zhu-ding/CodeIF-Bench at
commit 93b17ef, each row a completion and its ``Result`` (Pass, Error, TimeOut), graded on the
v0 data. Nothing of theirs is in this repository: check the commit out yourself, e.g.::

    git clone https://github.com/zhu-zhu-ding/CodeIF-Bench ref
    git -C ref worktree add ../ref-v0 93b17ef
    CONVTUI_PROJECTS_DIR=~/projects python scripts/codeif_repo_parity.py \\
        --experiments ref-v0 --data ../shared/data --out repo-parity

Which tests a row was run on is not certain from their code: the harness at 93b17ef
(``repo/test/run_pass@k.py``) runs the task's own tests only (its lines that add the row's
``test`` are commented out), while branch v1's static harness adds the row's test
(``run_pass@k_IACA.py``: accumulated over a task's rows, Functionality Extension left out).
Each row is checked under each reading and the agreement of each is reported:

- ``tests``: the task's own tests only;
- ``tests+own``: the task's tests and the row's instruction test (a Functionality Extension
  row: its own test only);
- ``accumulated`` (``n_round`` rows): the task's tests and every instruction test of the
  task's rows so far, Functionality Extension left out, as v1's IA/CA harness runs them.

Output: ``<out>/parity.json`` (every row: level, model, setting, task, type, theirs, ours per
reading, and our failing tests) and a summary on stdout.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from codeif_repo_inputs import LEVEL_1, check_parser

from convtui.core.catalog.tasks import Task
from convtui.core.codeif.data_file import load_codeif_data
from convtui.core.codeif.instructions import BASE, FUNCTIONALITY_EXTENSION, Instruction
from convtui.core.codeif.instructions import instructions as instructions_of
from convtui.core.codeif.programs import round_request
from convtui.core.execution.executor import Executor
from convtui.core.execution.types import ExecRequest, ExecResult
from convtui.core.projects.checkout import task_problem

LEVELS = {
    "level_1": LEVEL_1,
    "level_2_part1": "CodeIF-Bench-L2-repo-v0.jsonl",
    "level_2_part2": "CodeIF-Bench-L2-repo-v0.jsonl",
    "level_3": "CodeIF-Bench-L3-repo-v0.jsonl",
}
SETTINGS = ("base", "single_round", "multi_round", "n_round")
READINGS = ("tests", "tests+own", "accumulated")
EMPTY = "    pass\n"  # the harness scores this completion Error without running it


@dataclass(frozen=True)
class Row:
    level: str
    model: str
    setting: str
    index: int
    task: Task
    category: str
    test: str
    completion: str
    theirs: str


def extract_python(text: str) -> str:
    """The authors' ``extract_python``: the first ```` ```python ```` block, else the text."""
    start = text.find("```python")
    if start < 0:
        return text
    end = text.find("```", start + len("```python"))
    return text[start + len("```python") : end] if end >= 0 else text


def read_rows(experiments: Path, data: Path) -> list[Row]:
    rows = []
    for level, data_file in LEVELS.items():
        catalog = load_codeif_data(data / data_file).catalog
        by_namespace = {t.site.namespace: t for t in catalog if t.site}
        root = experiments / "repo" / "Experiments" / level
        for model_dir in sorted(p for p in root.rglob("result_result.jsonl")):
            setting = model_dir.parent.name
            model = str(model_dir.parent.parent.relative_to(root))
            if setting not in SETTINGS:
                continue
            lines = model_dir.read_text("utf-8").splitlines()
            for index, line in enumerate(lines):
                if not line.strip():
                    continue
                record = json.loads(line)
                task = by_namespace.get(record["namespace"])
                if task is None:
                    continue
                rows.append(
                    Row(
                        level,
                        model,
                        setting,
                        index,
                        task,
                        record.get("type") or BASE,
                        record.get("test") or "",
                        record["completion"],
                        record.get("Result", record.get("pass", "")),
                    )
                )
    return rows


def _instruction(row: Row, test: str) -> Instruction:
    return Instruction(row.category, "", ((test, _code_for(row.task, test)),))


def _code_for(task: Task, test_id: str) -> str:
    for requirement in task.requirements:
        for name, code in requirement.tests.snippets:
            if name == test_id:
                return code
    return ""


PRIMARY = {"base": "tests", "single_round": "tests+own", "multi_round": "tests+own"}


def primary(setting: str) -> str:
    """The reading v1's harness gives each setting (n_round: accumulated)."""
    return PRIMARY.get(setting, "accumulated")


def requests_for(rows: list[Row]) -> dict[tuple[int, str], ExecRequest]:
    """(row number, reading) -> the run that checks it."""
    found: dict[tuple[int, str], ExecRequest] = {}
    accumulated: dict[tuple[str, str, str], list[Instruction]] = defaultdict(list)
    for number, row in enumerate(rows):
        base = instructions_of(row.task)[0]
        code = extract_python(row.completion)
        found[(number, "tests")] = round_request(row.task, code, [base], preprocess=True)
        if row.category == BASE or not row.test:
            continue
        own = _instruction(row, row.test)
        given = [own] if row.category == FUNCTIONALITY_EXTENSION else [base, own]
        found[(number, "tests+own")] = round_request(row.task, code, given, preprocess=True)
        if row.setting == "n_round" and row.category != FUNCTIONALITY_EXTENSION:
            key = (row.level, row.model, row.task.id)
            accumulated[key].append(own)
            found[(number, "accumulated")] = round_request(
                row.task, code, [base, *accumulated[key]], preprocess=True
            )
    return found


def verdict(result: ExecResult) -> str:
    if result.status == "pass":
        return "Pass"
    if result.status == "timeout":
        return "TimeOut"
    return "Error"


def main() -> None:
    parser = check_parser(__doc__)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument(
        "--all-readings",
        action="store_true",
        help="check every row under every reading, not only its setting's own (v1's)",
    )
    parser.add_argument("--models", default="", help="comma list of models (default: all)")
    parser.add_argument(
        "--tasks", default="", help="comma list of task ids, e.g. CodeIF/2001 (default: all)"
    )
    parser.add_argument(
        "--reading", choices=READINGS, default=None, help="check every row under this reading"
    )
    args = parser.parse_args()
    every = read_rows(args.experiments, args.data)
    usable = {t.id for t in {r.task for r in every} if task_problem(t) is None}
    rows = [r for r in every if r.task.id in usable]
    print(f"{len(rows)} of {len(every)} published rows are on tasks usable here ({len(usable)})")
    if args.models:
        wanted = set(args.models.split(","))
        rows = [r for r in rows if r.model in wanted]
    if args.tasks:
        chosen = set(args.tasks.split(","))
        rows = [r for r in rows if r.task.id in chosen]
    requests = requests_for(rows)
    if args.reading:
        requests = {k: v for k, v in requests.items() if k[1] == args.reading}
    elif not args.all_readings:
        requests = {k: v for k, v in requests.items() if k[1] == primary(rows[k[0]].setting)}
    # The same code against the same tests runs once (models often agree word for word).
    unique: dict[str, ExecRequest] = {}
    key_of: dict[tuple[int, str], str] = {}
    with Executor(jobs=args.jobs) as executor:
        for k, request in requests.items():
            key_of[k] = executor.cache_key(request)
            unique.setdefault(key_of[k], request)
        print(f"{len(requests)} checks, {len(unique)} distinct runs")
        names = list(unique)
        results = executor.run_many([unique[n] for n in names])
    by_key = dict(zip(names, results, strict=True))
    ours: dict[tuple[int, str], ExecResult] = {k: by_key[key_of[k]] for k in requests}
    out_rows, agree = [], Counter()
    total = Counter()
    for number, row in enumerate(rows):
        entry = {
            "level": row.level,
            "model": row.model,
            "setting": row.setting,
            "line": row.index + 1,
            "task": row.task.id,
            "namespace": row.task.site.namespace if row.task.site else "",
            "type": row.category,
            "test": row.test,
            "theirs": row.theirs,
        }
        for reading in READINGS:
            result = ours.get((number, reading))
            if result is None:
                continue
            mine = "Error" if row.completion == EMPTY else verdict(result)
            entry[reading] = mine
            entry[f"{reading}_failing"] = [
                f"{t.name} ({t.status})" for t in result.tests if t.status != "pass"
            ]
            if reading == "tests" and result.status != "pass":
                entry["tests_detail"] = result.detail
            total[(row.setting, reading)] += 1
            agree[(row.setting, reading)] += mine == row.theirs
        out_rows.append(entry)
    args.out.mkdir(parents=True, exist_ok=True)
    summary = {
        f"{setting} · {reading}": {
            "rows": total[(setting, reading)],
            "agree": agree[(setting, reading)],
            "share": round(agree[(setting, reading)] / total[(setting, reading)], 4),
        }
        for setting in SETTINGS
        for reading in READINGS
        if total[(setting, reading)]
    }
    (args.out / "parity.json").write_text(
        json.dumps({"summary": summary, "rows": out_rows}, indent=1), "utf-8"
    )
    for name, cell in summary.items():
        print(f"{name:32} {cell['agree']:5}/{cell['rows']:<5} {100 * cell['share']:.1f}%")


if __name__ == "__main__":
    main()
