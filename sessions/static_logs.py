"""``sessions export --format convcodebench``: recorded sessions written as the files
ConvCodeWorld's static mode reads (layout in sessions/ccw_files.py), so its own ``run.py
--option static`` and ``convtui bench static --logs`` replay them alike.

A log set is the sessions of one reference model under one Ω with one kind of user. Every
turn file holds every task of its set: a task whose session ended earlier is handed on with
its last code. Beside ConvCodeWorld's folders, ``convtui-export.json`` lists the sets, their
sessions and configs, and a SHA-256 per file.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convtui.core.ccw.sanitize import calibrated_program
from convtui.core.execution import ExecResult
from convtui.core.feedback import failure_details, without_candidate_source
from convtui.core.session import SessionConfig, Turn
from convtui.sessions.browse import run_code_versions
from convtui.sessions.ccw_files import (
    RESULTS_DIR,
    TURN0_DIR,
    LogSetName,
    eval_entry,
    eval_file,
    model_part,
    turn0_file,
    turn_line,
)
from convtui.sessions.errors import ExportError
from convtui.sessions.records import SessionRow
from convtui.sessions.store import Store
from convtui.sessions.transcript import json_line

STATIC_FORMAT = "convtui-convcodebench-export"
STATIC_VERSION = 2
# Ours, beside ConvCodeWorld's folders: what was exported, from where, and each file's hash.
MANIFEST = "convtui-export.json"


@dataclass(frozen=True)
class LogSetPlan:
    """One log set to write: its sessions sorted by task, all under ``config``."""

    name: str
    config: SessionConfig
    user_kind: str
    simulator: str | None
    sessions: tuple[SessionRow, ...]


@dataclass(frozen=True)
class WrittenLogSet:
    name: str
    folder: Path
    model: str
    feedback: str
    sessions: int
    files: tuple[str, ...]


def task_order(task_id: str) -> tuple[str, int, int, str]:
    """Tasks in catalog order: ``BigCodeBench/2`` before ``BigCodeBench/10``."""
    prefix, _, number = task_id.rpartition("/")
    if number.isdigit():
        return (prefix, 0, int(number), task_id)
    return (task_id, 1, 0, task_id)


def plan_log_sets(store: Store, sessions: Sequence[SessionRow]) -> list[LogSetPlan]:
    """Group sessions into log sets by (model, Ω), refusing a set that would mix configs,
    kinds of user, or two sessions of one task (a replay has one reference per task)."""
    groups: dict[tuple[str, str], list[SessionRow]] = defaultdict(list)
    for row in sessions:
        groups[(row.model, row.feedback)].append(row)
    plans = [_plan(store, rows) for _, rows in sorted(groups.items())]
    names: dict[str, LogSetPlan] = {}
    for plan in plans:
        if plan.name in names:
            other = names[plan.name]
            raise ExportError(
                f"models {other.config.model!r} and {plan.config.model!r} would both be "
                f"written to the folder {plan.name}: export them separately"
            )
        names[plan.name] = plan
    return sorted(plans, key=lambda plan: plan.name)


def _plan(store: Store, rows: Sequence[SessionRow]) -> LogSetPlan:
    first = rows[0]
    label = f"{first.model} · {first.feedback}"
    config = store.session_config(first.id)
    for row in rows[1:]:
        other = store.session_config(row.id)
        if other.config_hash != config.config_hash:
            fields = _differing(config.to_dict(), other.to_dict())
            raise ExportError(
                f"sessions {first.id} and {row.id} ({label}) ran under different configs "
                f"({', '.join(fields)} differ); a log set holds one config: export them "
                "separately"
            )
        if (row.user_kind, row.simulator) != (first.user_kind, first.simulator):
            raise ExportError(
                f"sessions {first.id} and {row.id} ({label}) had different users "
                f"({_who(first)} and {_who(row)}); a log set holds one kind of feedback: "
                "export them separately"
            )
    by_task: dict[str, str] = {}
    for row in rows:
        if row.task_id in by_task:
            raise ExportError(
                f"sessions {by_task[row.task_id]} and {row.id} ({label}) both hold task "
                f"{row.task_id}; a log set has one reference session per task: name the "
                "sessions to export"
            )
        by_task[row.task_id] = row.id
    ordered = sorted(rows, key=lambda row: task_order(row.task_id))
    return LogSetPlan(
        name=LogSetName(
            model_part(config.model), config.feedback, _by(config, first.user_kind, first.simulator)
        ).stem,
        config=config,
        user_kind=first.user_kind,
        simulator=first.simulator,
        sessions=tuple(ordered),
    )


def _differing(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return sorted(key for key in a.keys() | b.keys() if a.get(key) != b.get(key))


def _who(row: SessionRow) -> str:
    return f"{row.user_kind}:{row.simulator}" if row.simulator else row.user_kind


def write_log_sets(
    store: Store,
    plans: Sequence[LogSetPlan],
    out_dir: Path,
    headers: Mapping[str, str] | None = None,
) -> list[WrittenLogSet]:
    """Write the planned sets under ``out_dir`` in ConvCodeWorld's static layout
    (sessions/ccw_files.py), replacing an earlier export there. ``headers`` (task id -> the
    task's code prompt) gives turn 0's eval entries the calibrated program BigCodeBench ran
    under ``--protocol convcodeworld``. Every target is checked before anything is written, so
    a refusal leaves ``out_dir`` as it was; the files are written beside it and moved in."""
    if out_dir.exists() and not out_dir.is_dir():
        raise ExportError(f"{out_dir} is a file; --out names a folder for convcodebench logs")
    _check_replaceable(out_dir)
    tables: dict[str, dict[str, tuple[bytes, list[dict]]]] = defaultdict(dict)
    dates: dict[str, str] = {}
    written = []
    for plan in plans:
        names = _write_set(store, plan, tables, dates, headers or {})
        written.append(
            WrittenLogSet(
                plan.name,
                out_dir,
                plan.config.model,
                plan.config.feedback.label,
                len(plan.sessions),
                tuple(names),
            )
        )
    files = _serialise(tables, dates)
    manifest = _manifest_of(store, plans, files)
    partial = out_dir.with_name(f".{out_dir.name}.partial")
    if partial.exists():  # left by an export that was killed mid-way
        shutil.rmtree(partial)
    for name, data in {**files, MANIFEST: manifest}.items():
        path = partial / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    partial.rename(out_dir)
    return written


def _check_replaceable(folder: Path) -> None:
    """An existing folder may only be replaced when it holds exactly an earlier export:
    anything else in it might be someone's work."""
    if not folder.exists() or not any(folder.iterdir()):
        return
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        ours = manifest.get("format") == STATIC_FORMAT
        listed = {MANIFEST, *(entry["name"] for entry in manifest.get("files", []))}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        ours, listed = False, set()
    present = {str(path.relative_to(folder)) for path in folder.rglob("*") if not path.is_dir()}
    if not ours or not present <= listed:
        raise ExportError(
            f"{folder} exists and is not an earlier convtui export: move it or choose another --out"
        )


def _write_set(
    store: Store,
    plan: LogSetPlan,
    tables: dict[str, dict[str, tuple[bytes, list[dict]]]],
    dates: dict[str, str],
    headers: Mapping[str, str],
) -> list[str]:
    """Add ``plan``'s lines and eval entries to ``tables`` (file -> task -> both); the turn-0
    file is the model's, shared by its log sets, so a task must have one turn 0 there."""
    config = plan.config
    name = LogSetName(
        model_part(config.model), config.feedback, _by(config, plan.user_kind, plan.simulator)
    )
    turns = max([config.max_turns, *(row.turns_done for row in plan.sessions)])
    zero = f"{TURN0_DIR}/{turn0_file(config.model)}"
    paths = [zero] + [f"{RESULTS_DIR}/{name.turn_file(k)}" for k in range(1, turns)]
    date = max(row.updated_utc for row in plan.sessions)
    for row in plan.sessions:
        recorded = store.load_turns(row.id)
        if not recorded:
            raise ExportError(
                f"session {row.id} ({row.task_id}) has no turn: ConvCodeWorld's files need "
                "every task's turn 0; leave it out of the export"
            )
        for k, path in enumerate(paths):
            line, entry = _task_at(row, recorded, k, config, headers)
            made = (json_line(line).encode(), entry)
            if tables[path].setdefault(row.task_id, made) != made:
                raise ExportError(
                    f"two log sets of {config.model} have a different turn 0 for "
                    f"{row.task_id}: ConvCodeWorld keeps one turn-0 file per model; export "
                    "them to separate folders"
                )
            dates[path] = max(dates.get(path, date), date)
    return [p for path in paths for p in (path, eval_file(path))]


def _serialise(
    tables: Mapping[str, Mapping[str, tuple[bytes, list[dict]]]], dates: Mapping[str, str]
) -> dict[str, bytes]:
    """Every file's bytes, tasks in catalog order: the same sessions export the same bytes."""
    files: dict[str, bytes] = {}
    for path, by_task in tables.items():
        order = sorted(by_task, key=task_order)
        files[path] = b"".join(by_task[t][0] for t in order)
        # Not the export time: the newest change to the sessions written there.
        report = {"date": dates[path], "eval": {t: by_task[t][1] for t in order}}
        files[eval_file(path)] = (json.dumps(report, ensure_ascii=False) + "\n").encode()
    return files


def _by(config: SessionConfig, user_kind: str, simulator: str | None) -> str | None:
    """Who simulated the user, as the file name says it; ConvCodeWorld leaves it out when the
    model simulated its own user. People (our extension) are ``human``."""
    if user_kind == "human":
        return "human"
    if user_kind == "assist":
        return f"assist-{model_part(simulator)}" if simulator else "assist"
    if user_kind == "simulator" and simulator and simulator != config.model:
        return model_part(simulator)
    return None


def _task_at(
    row: SessionRow,
    recorded: Sequence[Turn],
    k: int,
    config: SessionConfig,
    headers: Mapping[str, str],
) -> tuple[dict[str, Any], list[dict]]:
    """Task ``row``'s line in turn ``k``'s file and its eval entry. A turn the session never
    played takes its last code, with no feedback: after a pass that is ConvCodeWorld's
    "Already solved"; after a session that stopped without passing, the log says so."""
    turn = recorded[min(k, len(recorded) - 1)]
    result = turn.execution
    details = _details(result, config) if result is not None else {"ALL": "not run"}
    status = "fail" if result is None else _STATUS.get(result.status, "fail")
    solution = turn.code
    if k == 0:
        program = solution
        if config.protocol == "convcodeworld" and row.task_id in headers:
            program = calibrated_program(solution, headers[row.task_id])
        return {"task_id": row.task_id, "solution": solution}, eval_entry(
            row.task_id, program, status, details
        )
    if k >= len(recorded):
        log = (
            None if turn.passed else f"convtui: the session ended at turn {turn.idx} ({row.status})"
        )
        line = turn_line(row.task_id, solution, (None, None, None), log, k)
    else:
        # pot.py's ``iteration`` is its hop count: one past k once turn k repaired the code.
        line = turn_line(row.task_id, solution, _feedback(recorded, k, config), turn.reply, k + 1)
    return line, eval_entry(row.task_id, solution, status, details)


_STATUS = {"pass": "pass", "timeout": "timeout"}


def _feedback(
    recorded: Sequence[Turn], k: int, config: SessionConfig
) -> tuple[str | None, str | None, str | None]:
    """The feedback turn ``k`` was given about turn k-1's code. ConvCodeWorld's protocol
    records it with turn k (``Turn.received``); ours with turn k-1, where it was said."""
    if config.protocol == "convcodeworld":
        got = recorded[k].received
        return (got.compilation, got.execution, got.user) if got else (None, None, None)
    before = recorded[k - 1]
    if before.passed:
        return (None, None, None)
    return (before.compile_feedback, before.execution_feedback, before.verbal_feedback)


def _details(result: ExecResult, config: SessionConfig) -> dict[str, str]:
    """BigCodeBench's ``details`` for ``result``: what its execution feedback is built from."""
    if result.passed:
        return {}
    details = failure_details(result, bcb_messages=config.protocol == "convcodeworld")
    if not config.ef_source_lines:
        details = {name: without_candidate_source(text) for name, text in details.items()}
    return details


def _manifest_of(store: Store, plans: Sequence[LogSetPlan], files: Mapping[str, bytes]) -> bytes:
    manifest = {
        "format": STATIC_FORMAT,
        "format_version": STATIC_VERSION,
        "log_sets": [_manifest(store, plan) for plan in plans],
        "files": [
            {"name": name, "sha256": hashlib.sha256(data).hexdigest()}
            for name, data in sorted(files.items())
        ],
    }
    text = json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return text.encode()


def _manifest(store: Store, plan: LogSetPlan) -> dict[str, Any]:
    config = plan.config
    run_ids = sorted({row.run_id for row in plan.sessions if row.run_id is not None})
    return {
        "format": STATIC_FORMAT,
        "format_version": STATIC_VERSION,
        "name": plan.name,
        "model": config.model,
        "feedback": config.feedback.label,
        "execution_feedback": config.feedback.execution,
        "verbal_feedback": config.feedback.verbal,
        "user_kind": plan.user_kind,
        "simulator": plan.simulator,
        "context": config.context,
        "partial_rule": config.partial_rule,
        "extract": config.extract,
        "max_turns": config.max_turns,
        "config": config.to_dict(),
        "config_hash": config.config_hash,
        # TUI sessions record no code version; only runs do.
        "code_versions": run_code_versions(store, run_ids),
        "run_ids": run_ids,
        # Not the export time: the newest change to the set's sessions, so exporting the same
        # database again writes the same bytes.
        "created_utc": max(row.updated_utc for row in plan.sessions),
        "session_ids": [row.id for row in plan.sessions],
        "task_ids": [row.task_id for row in plan.sessions],
        "sessions": [
            {
                "task_id": row.task_id,
                "session_id": row.id,
                "run_id": row.run_id,
                "status": row.status,
                "turns_done": row.turns_done,
                "first_pass_turn": row.first_pass_turn,
            }
            for row in plan.sessions
        ],
    }
