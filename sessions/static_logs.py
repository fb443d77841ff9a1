"""ConvCodeBench-style static logs: recorded sessions frozen as log sets that a static replay
reads instead of asking a feedback model or a person again (layout in SCHEMA.md, "Static logs
(export)"; CCW's own files in notes/harness.md §2.8–2.9).

A log set is the sessions of one reference model under one Ω. Its folder holds one JSONL file
per turn index, one line per task that reached that turn, and a manifest with the config and
a SHA-256 per file. At target turn t a replay reads file t−1: the reference's code, whether it
passed, and the execution and verbal feedback recorded for it.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from convtui.core.session import SessionConfig, Turn
from convtui.sessions.browse import run_code_versions
from convtui.sessions.errors import ExportError
from convtui.sessions.records import SessionRow
from convtui.sessions.store import Store
from convtui.sessions.transcript import json_line

STATIC_FORMAT = "convtui-static-logs"
STATIC_VERSION = 1
MANIFEST = "manifest.json"

# ConvCodeWorld's file-name codes (its get_compact_gen_results_fn): UNIT is partial coverage.
_EF_CODE = {"none": "", "partial": "_EF_UNIT", "full": "_EF_FULL"}
_VF_CODE = {"none": "", "novice": "_SNF", "expert": "_SEF"}


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


def slug(text: str) -> str:
    """A model spec as a file-name part: ``local:smollm2`` → ``local_smollm2`` (CCW replaces
    ``/``; specs here also hold ``:`` and whole URLs)."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")
    return cleaned or "model"


def log_set_name(config: SessionConfig, user_kind: str, simulator: str | None) -> str:
    """``<model>_CF[_EF_UNIT|_EF_FULL][_SNF|_SEF][_by_<who>]``, in the manner of CCW's
    ``bigcodebench_<model>_CF_EF_UNIT_SNF_by_gpt-4o``; ``who`` is the simulator, ``human``,
    or ``assist-<simulator>`` for drafts a person edited."""
    omega = config.feedback
    name = f"{slug(config.model)}_CF{_EF_CODE[omega.execution]}{_VF_CODE[omega.verbal]}"
    if user_kind == "human":
        name += "_by_human"
    elif user_kind == "assist":
        name += f"_by_assist-{slug(simulator)}" if simulator else "_by_assist"
    elif user_kind == "simulator" and simulator:
        name += f"_by_{slug(simulator)}"
    return name


def turn_file(name: str, turn: int) -> str:
    return f"{name}_ITER={turn}.jsonl"


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
        name=log_set_name(config, first.user_kind, first.simulator),
        config=config,
        user_kind=first.user_kind,
        simulator=first.simulator,
        sessions=tuple(ordered),
    )


def _differing(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return sorted(key for key in a.keys() | b.keys() if a.get(key) != b.get(key))


def _who(row: SessionRow) -> str:
    return f"{row.user_kind}:{row.simulator}" if row.simulator else row.user_kind


def write_log_sets(store: Store, plans: Sequence[LogSetPlan], out_dir: Path) -> list[WrittenLogSet]:
    """Write each planned set to ``out_dir/<name>/``, replacing the folder of an earlier
    export of the same name. Every target is checked before anything is written, so a refusal
    leaves ``out_dir`` as it was."""
    if out_dir.exists() and not out_dir.is_dir():
        raise ExportError(f"{out_dir} is a file; --out names a folder for convcodebench logs")
    for plan in plans:
        _check_replaceable(out_dir / plan.name)
    out_dir.mkdir(parents=True, exist_ok=True)
    return [_write_set(store, plan, out_dir) for plan in plans]


def _check_replaceable(folder: Path) -> None:
    """An existing folder may only be replaced when it holds exactly an earlier export:
    anything else in it might be someone's work."""
    if not folder.exists():
        return
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        ours = manifest.get("format") == STATIC_FORMAT
        listed = {MANIFEST, *(entry["name"] for entry in manifest.get("files", []))}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        ours, listed = False, set()
    present = {entry.name for entry in folder.iterdir()} if folder.is_dir() else {folder.name}
    if not ours or not present <= listed:
        raise ExportError(
            f"{folder} exists and is not an earlier convtui export: move it or choose another --out"
        )


def _write_set(store: Store, plan: LogSetPlan, out_dir: Path) -> WrittenLogSet:
    target = out_dir / plan.name
    partial = out_dir / f".{plan.name}.partial"
    if partial.exists():  # left by an export that was killed mid-way
        shutil.rmtree(partial)
    partial.mkdir()
    turns = max([plan.config.max_turns, *(row.turns_done for row in plan.sessions)])
    names = [turn_file(plan.name, t) for t in range(turns)]
    hashes = [hashlib.sha256() for _ in names]
    counts = [0] * turns
    handles: list[BinaryIO] = [(partial / name).open("wb") for name in names]
    try:
        for row in plan.sessions:
            for turn in store.load_turns(row.id):
                data = json_line(static_record(row, turn)).encode()
                handles[turn.idx].write(data)
                hashes[turn.idx].update(data)
                counts[turn.idx] += 1
    finally:
        for handle in handles:
            handle.close()
    files = [
        {"name": name, "turn": t, "records": counts[t], "sha256": hashes[t].hexdigest()}
        for t, name in enumerate(names)
    ]
    manifest = _manifest(store, plan, files)
    (partial / MANIFEST).write_text(
        json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
        encoding="utf-8",
        newline="\n",
    )
    if target.exists():
        shutil.rmtree(target)
    partial.rename(target)
    return WrittenLogSet(
        plan.name,
        target,
        plan.config.model,
        plan.config.feedback.label,
        len(plan.sessions),
        (MANIFEST, *names),
    )


def static_record(row: SessionRow, turn: Turn) -> dict[str, Any]:
    """One task at one turn: the reference's code and what was recorded about it. The
    feedback fields are those the reference's next turn was given about this code."""
    result = turn.execution
    passed, total = result.counts() if result is not None else (0, 0)
    return {
        "task_id": row.task_id,
        "session_id": row.id,
        "turn": turn.idx,
        "reply": turn.reply,
        "code": turn.code,
        "compiled": turn.compiled,
        "compile_feedback": turn.compile_feedback,
        "status": result.status if result is not None else None,
        "tests_passed": passed,
        "tests_total": total,
        "passed": turn.passed,
        "execution_feedback": turn.execution_feedback,
        "verbal_feedback": turn.verbal_feedback,
        "feedback_source": turn.feedback_source,
        "feedback_edited": turn.feedback_edited,
    }


def _manifest(store: Store, plan: LogSetPlan, files: list[dict[str, Any]]) -> dict[str, Any]:
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
        "files": files,
    }
