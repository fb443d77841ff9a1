"""``convtui sessions import DIR``: a folder in ConvCodeWorld's static layout (its published
ConvCodeBench logs, or our own ``sessions export --format convcodebench``) loaded into the
store, one run per log set (reference model x Ω x simulator), one session per task.

Each run is a ``live`` run of ``--protocol convcodeworld`` (that is what the files record),
with ``runs.origin`` naming the folder. A task's turn k is file k's code with BigCodeBench's
verdict from the eval file beside it, and the feedback recorded in file k
(``Turn.received``: what turn k was given about turn k-1's code). The verdict is rebuilt as
an ``ExecResult`` whose execution feedback renders as ``pot.py``'s ``get_execution_feedback``
renders the eval's ``details``. A line with no compilation feedback after turn 0 was handed
on unchanged ("Already solved", or a session that stopped): the session ends before it.
Importing the same folder again adds nothing.

A folder that convtui exported (``sessions export --format convcodebench``) holds our
manifest beside the files (sessions/exchange/static_logs.py). A set whose files are byte for byte
the ones it lists is given back as it was recorded instead: the run takes the recorded config (its
protocol, model spec, Ω, context ...), its sessions the recorded user, annotator, status and error,
and each turn its recorded verdict, feedback and notes, with the code from the files. A set whose
files changed since (or an export from before the manifest held turns) is read as ConvCodeWorld's
logs, like any other.

The sets are found by sessions/exchange/ccw_sets.py, the verdicts rebuilt by
sessions/exchange/ccw_verdicts.py.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convtui.core.catalog.loaders import SUITE_PREFIX, load_catalog
from convtui.core.catalog.tasks import Task
from convtui.core.feedback.evaluate import FeedbackSettings, render_execution
from convtui.core.feedback.render import compile_feedback, declared_test_names
from convtui.core.settings.config import SessionConfig, SessionStatus
from convtui.core.settings.protocol import build_config
from convtui.core.turns.record import Turn, TurnFeedback
from convtui.sessions.database.codec import config_from_json, run_config_hash
from convtui.sessions.database.errors import ImportFormatError
from convtui.sessions.database.records import UserKind
from convtui.sessions.database.store import Store
from convtui.sessions.exchange.ccw_files import eval_file
from convtui.sessions.exchange.ccw_sets import FolderSet, find_sets
from convtui.sessions.exchange.ccw_verdicts import result_from_eval
from convtui.sessions.exchange.static_logs import MANIFEST, STATIC_FORMAT
from convtui.sessions.reading.transcript import turn_from_record


@dataclass(frozen=True)
class ImportedSet:
    run_id: str
    name: str
    model: str
    feedback: str
    sessions: int
    turns: int
    already: bool  # imported before: nothing was added
    protocol: str = "convcodeworld"  # the imported run's
    restored: bool = False  # given back as our export's manifest recorded it


@dataclass(frozen=True)
class RecordedSet:
    """What our export's manifest recorded of one log set whose files it lists unchanged."""

    config: SessionConfig
    user_kind: UserKind
    sessions: Mapping[str, Mapping[str, Any]]  # task id -> the manifest's entry
    digest: str  # of the set's files: two different exports of one set are two runs
    code_version: str | None  # of the runs that recorded them, where that was one version


def import_folder(
    store: Store, folder: Path, tasks: Mapping[str, Task], *, selected: Sequence[FolderSet]
) -> list[ImportedSet]:
    """Import ``selected`` sets (from :func:`find_sets`) of ``folder`` into ``store``."""
    return [_import_set(store, folder, found, tasks) for found in selected]


def import_logs(store: Store, folder: Path, data: Path | None = None) -> list[ImportedSet]:
    """Import every log set of ``folder`` into ``store`` (again: nothing new), with the tasks
    they name read from the catalog (``data`` as :func:`load_catalog` takes it)."""
    found = find_sets(folder)
    return import_folder(store, folder, _logged_tasks(found, data), selected=found)


def _logged_tasks(found: Sequence[FolderSet], data: Path | None) -> dict[str, Task]:
    """The catalog's tasks that the turn-0 files of ``found`` name."""
    ids: set[str] = set()
    for folder_set in found:
        with folder_set.files[0].open(encoding="utf-8") as handle:
            for text in handle:
                if text.strip():
                    try:
                        ids.add(str(json.loads(text)["task_id"]))
                    except (ValueError, KeyError, TypeError):
                        raise ImportFormatError(
                            f"{folder_set.files[0]}: a line without a task_id"
                        ) from None
    prefixes = {task_id.split("/")[0] for task_id in ids}
    suites = [suite for suite, prefix in SUITE_PREFIX.items() if prefix in prefixes]
    if not suites:
        raise ImportFormatError(f"the logs hold tasks of no known suite: {sorted(ids)[:3]}")
    catalog = load_catalog(",".join(suites), data)
    # Ids the catalog lacks are left out here: the import names the first one in its error.
    return {task_id: catalog.get(task_id) for task_id in ids if task_id in catalog}


def set_config(found: FolderSet) -> SessionConfig:
    feedback = found.name.feedback
    simulator = None
    if feedback.verbal != "none":
        simulator = found.name.by if found.name.by else found.model
    return build_config(
        "convcodeworld",
        model=found.model,
        feedback=feedback,
        simulator=simulator,
        turns=len(found.files) - 1,
    )


def _import_set(
    store: Store, folder: Path, found: FolderSet, tasks: Mapping[str, Task]
) -> ImportedSet:
    lines = [_lines(path, first=k == 0) for k, path in enumerate(found.files)]
    evals = [_evals(path) for path in found.files]
    task_ids = list(lines[0])
    for task_id in task_ids:
        if task_id not in tasks:
            raise ImportFormatError(
                f"{found.files[0]}: task {task_id} is not in the task catalog "
                "(is CONVTUI_DATA_DIR set to the BigCodeBench data?)"
            )
    recorded = recorded_set(folder, found, task_ids)
    config = set_config(found) if recorded is None else recorded.config
    label = config.feedback.label
    selection = f"imported;{found.name.stem}"
    if recorded is not None:
        selection += f";{recorded.digest}"
    key = run_config_hash(config, [label])

    def imported(run_id: str, already: bool) -> ImportedSet:
        return ImportedSet(
            run_id,
            found.name.stem,
            config.model if recorded else found.model,
            label,
            len(task_ids),
            len(lines),
            already,
            config.protocol,
            recorded is not None,
        )

    existing = store.find_finished_run(key, selection)
    if existing is not None:
        return imported(existing, True)
    run_id = store.create_run(
        "live",
        config,
        selection,
        task_ids,
        code_version=None if recorded is None else recorded.code_version,
        origin=f"imported from {folder.resolve()}",
        user_kind=None if recorded is None else recorded.user_kind,
        annotators=None
        if recorded is None
        else {t: entry.get("annotator") for t, entry in recorded.sessions.items()},
    )
    settings = FeedbackSettings.of(config)
    for row in store.run_sessions(run_id):
        if recorded is not None:
            _restore_session(store, row.id, recorded.sessions[row.task_id], lines, found)
            continue
        task = tasks[row.task_id]
        turns = _task_turns(row.task_id, task, lines, evals, found, settings)
        for turn in turns:
            status: SessionStatus = "running"
            if turn.idx == turns[-1].idx:
                status = _final_status(turns, config.max_turns)
            store.save_turn(row.id, turn, status)
    store.finish_run(run_id, "done")
    return imported(run_id, False)


def recorded_set(folder: Path, found: FolderSet, task_ids: Sequence[str]) -> RecordedSet | None:
    """What our manifest in ``folder`` recorded of ``found``, when it lists the set and every
    one of its files unchanged (its SHA-256); None otherwise, and for ConvCodeWorld's own
    logs. A manifest that lists the files unchanged but not as convtui writes it is refused:
    it is an export that was damaged, not someone else's logs."""
    path = folder / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != STATIC_FORMAT:
        return None
    try:
        hashes = {entry["name"]: entry["sha256"] for entry in manifest["files"]}
        where = found.files[-1].parent.relative_to(folder).as_posix()
        entry = next(
            (
                entry
                for entry in manifest["log_sets"]
                if (entry["name"], entry["folder"]) == (found.name.stem, where)
            ),
            None,
        )
        names = [
            p.relative_to(folder).as_posix()
            for path in found.files
            for p in (path, path.with_name(eval_file(path.name)))
        ]
        digests = [_sha256(folder / name) for name in names]
        if entry is None or any(hashes.get(n) != d for n, d in zip(names, digests, strict=True)):
            return None
        sessions = {str(s["task_id"]): s for s in entry["sessions"]}
        if "turns" not in next(iter(sessions.values()), {}):
            return None  # written before the manifest kept turns: nothing more to restore
        if sorted(sessions) != sorted(task_ids):
            raise ValueError("its sessions are not the files' tasks")
        return RecordedSet(
            config_from_json(json.dumps(entry["config"])),
            entry["user_kind"],
            sessions,
            hashlib.sha256("".join(digests).encode()).hexdigest()[:16],
            versions[0] if len(versions := entry["code_versions"]) == 1 else None,
        )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise ImportFormatError(
            f"{path} lists {found.name.stem}'s files unchanged but is not as convtui writes "
            f"it ({error}): remove it to import the files as ConvCodeWorld's logs"
        ) from None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _restore_session(
    store: Store,
    session_id: str,
    entry: Mapping[str, Any],
    lines: Sequence[Mapping[str, dict[str, Any]]],
    found: FolderSet,
) -> None:
    """Record a session's turns as the manifest recorded them, each with turn k's code from
    file k, and end it as it ended."""
    records = entry["turns"]
    if len(records) > len(lines):
        raise ImportFormatError(
            f"{found.name.stem}: the manifest has {len(records)} turns of {entry['task_id']} "
            f"and the files {len(lines)}"
        )
    for k, record in enumerate(records):
        code = str(lines[k][entry["task_id"]].get("solution") or "")
        last = k + 1 == len(records)
        store.save_turn(
            session_id, turn_from_record(record, code), entry["status"] if last else "running"
        )
    if entry.get("error"):
        store.set_session_status(session_id, entry["status"], entry["error"])


def _final_status(turns: Sequence[Turn], max_turns: int) -> SessionStatus:
    if turns[-1].passed:
        return "solved"
    return "exhausted" if len(turns) >= max_turns else "stalled"


def _task_turns(
    task_id: str,
    task: Task,
    lines: Sequence[Mapping[str, dict[str, Any]]],
    evals: Sequence[Mapping[str, dict[str, Any]]],
    found: FolderSet,
    settings: FeedbackSettings,
) -> list[Turn]:
    turns: list[Turn] = []
    names = _test_names(task)
    for k, (file_lines, file_evals) in enumerate(zip(lines, evals, strict=True)):
        where = found.files[k].name
        line = file_lines.get(task_id)
        entry = file_evals.get(task_id)
        if line is None or entry is None:
            missing = where if line is None else eval_file(where)
            raise ImportFormatError(f"{missing} has no entry for {task_id}")
        if k > 0 and line.get("compilation_feedback") is None:
            break  # handed on unchanged: the session ended at turn k-1
        result = result_from_eval(entry, where, names)
        code = str(line.get("solution") or "")
        compiled = compile_feedback(code, compat="ccw")
        received = None
        if k > 0:
            user = line.get("user_feedback")
            source = f"simulator:{found.name.feedback.verbal}:{found.name.by or found.model}"
            received = TurnFeedback(
                compilation=line.get("compilation_feedback"),
                execution=line.get("execution_feedback"),
                user=user,
                user_source=source if user is not None else "none",
            )
        log = line.get("log")
        turns.append(
            Turn(
                idx=k,
                reply=log if isinstance(log, str) else "",
                code=code,
                compiled=compiled.ok,
                compile_feedback=compiled.text,
                execution=result,
                execution_feedback=(
                    render_execution(task, result, settings) if compiled.ok else None
                ),
                notes=(f"imported from ConvCodeWorld's {where}",),
                received=received,
            )
        )
    return turns


def _test_names(task: Task) -> tuple[str, ...] | None:
    """The names BigCodeBench runs for ``task`` (the ``test*`` methods of its ``TestCases``),
    or its snippets' names; None when its test module does not parse."""
    if task.tests.kind == "snippets":
        return tuple(name for name, _ in task.tests.snippets)
    try:
        return declared_test_names(task.tests.source)
    except SyntaxError:
        return None


def _lines(path: Path, *, first: bool = False) -> dict[str, dict[str, Any]]:
    """Task id -> its line. ``first``: a sample file of several samples a task (BigCodeBench's
    ``--n_samples``) gives the task's first, whose verdict is the eval's first entry."""
    found: dict[str, dict[str, Any]] = {}
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
            except ValueError:
                raise ImportFormatError(f"{path}:{number} is not a JSON line") from None
            if not isinstance(line, dict) or "task_id" not in line or "solution" not in line:
                raise ImportFormatError(f"{path}:{number} lacks task_id or solution")
            task_id = str(line["task_id"])
            if not (first and task_id in found):
                found[task_id] = line
    return found


def _evals(path: Path) -> dict[str, dict[str, Any]]:
    target = path.with_name(eval_file(path.name))
    try:
        report = json.loads(target.read_text(encoding="utf-8"))
        entries = report["eval"]
        return {task_id: found[0] for task_id, found in entries.items()}
    except FileNotFoundError:
        raise ImportFormatError(
            f"{target.name} is missing beside {path.name}: BigCodeBench's verdicts are needed"
        ) from None
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        raise ImportFormatError(
            f'{target} is not an eval results file ({{"eval": {{task_id: [entry]}}}})'
        ) from None
