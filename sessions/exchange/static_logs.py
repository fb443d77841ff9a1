"""``sessions export --format convcodebench``: recorded sessions written as the files
ConvCodeWorld's static mode reads (layout in sessions/exchange/ccw_files.py), so its own ``run.py
--option static`` and ``convtui bench static --logs`` replay them alike, and its
``print_results.py`` scores them.

A log set is the sessions of one reference model under one Ω with one kind of user, as
sessions/exchange/static_plan.py groups them. Every turn file holds every task of its set: a task
whose session ended earlier is handed on with its last code. A static replay's sessions (``bench
static``: each linked to the reference session it was handed) are written where ``run.py --option
static`` writes a replay, ``results/v0.3.6/static/<reference set>/``, and the reference log set they
replayed is written beside them, since ``print_results.py --option static`` reads both. Beside
ConvCodeWorld's folders, ``convtui-export.json`` lists the sets, their sessions and configs, the
names to give ConvCodeWorld's scripts, and a SHA-256 per file. It also keeps, per session, who gave
the feedback, how the session ended and, per turn, what ConvCodeWorld's files cannot hold (every
test's verdict, where each turn's feedback was recorded, who said it, notes), so that ``sessions
import`` of the folder gives the sessions back as they were recorded.
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
from convtui.core.execution.types import ExecResult
from convtui.core.feedback.render import failure_details, without_candidate_source
from convtui.core.settings.config import SessionConfig
from convtui.core.turns.record import Turn
from convtui.sessions.database.errors import ExportError
from convtui.sessions.database.records import SessionRow
from convtui.sessions.database.store import Store
from convtui.sessions.exchange.ccw_files import (
    NAME_MAX,
    TURN0_DIR,
    eval_entry,
    eval_file,
    turn0_file,
    turn_line,
)
from convtui.sessions.exchange.static_plan import LogSetPlan, print_results_args, task_order
from convtui.sessions.reading.browse import run_code_versions
from convtui.sessions.reading.transcript import json_line, turn_record

STATIC_FORMAT = "convtui-convcodebench-export"
# 4: sessions carry their annotator, error and turns (what sessions import restores).
STATIC_VERSION = 4
# Ours, beside ConvCodeWorld's folders: what was exported, from where, and each file's hash.
MANIFEST = "convtui-export.json"


@dataclass(frozen=True)
class WrittenLogSet:
    name: str
    folder: Path
    model: str
    feedback: str
    sessions: int
    files: tuple[str, ...]
    model_name: str = ""  # the model's name in the files: print_results.py's --model_name
    simulator_name: str | None = None  # its --simulator_name, where the set has verbal feedback
    reference: str | None = None  # a static replay: the reference set's folder name
    reference_model_name: str | None = None  # ... and its --ref_model_name
    added: bool = False  # a reference set written because a selected replay needs it
    print_results_args: tuple[str, ...] = ()  # what print_results.py takes to read the set


def write_log_sets(
    store: Store,
    plans: Sequence[LogSetPlan],
    out_dir: Path,
    headers: Mapping[str, str] | None = None,
) -> list[WrittenLogSet]:
    """Write the planned sets under ``out_dir`` in ConvCodeWorld's static layout
    (sessions/exchange/ccw_files.py), replacing an earlier export there. ``headers`` (task id -> the
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
        reference = plan.reference
        written.append(
            WrittenLogSet(
                plan.name,
                out_dir,
                plan.config.model,
                plan.config.feedback.label,
                len(plan.sessions),
                tuple(names),
                model_name=plan.model_name,
                simulator_name=plan.simulator_name,
                reference=reference.name if reference else None,
                reference_model_name=reference.model_name if reference else None,
                added=plan.added,
                print_results_args=tuple(print_results_args(plan)),
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
    zero = f"{TURN0_DIR}/{turn0_file(plan.model_name)}"
    turn_files = [plan.log_set.turn_file(k) for k in range(1, plan.turns)]
    paths = [zero] + [f"{plan.folder}/{name}" for name in turn_files]
    for path in paths:
        _check_length(path, plan)
    given = _given_turns(store, plan)
    date = max(row.updated_utc for row in plan.sessions)
    for row in plan.sessions:
        recorded = store.load_turns(row.id)
        if not recorded:
            raise ExportError(
                f"session {row.id} ({row.task_id}) has no turn: ConvCodeWorld's files need "
                "every task's turn 0; leave it out of the export"
            )
        for k, path in enumerate(paths):
            line, entry = _task_at(row, recorded, given.get(row.id, recorded), k, config, headers)
            made = (json_line(line).encode(), entry)
            if tables[path].setdefault(row.task_id, made) != made:
                raise ExportError(
                    f"two log sets of the model named {plan.model_name!r} have a different "
                    f"turn 0 for {row.task_id}: ConvCodeWorld keeps one turn-0 file per "
                    "model name; export them to separate folders"
                )
            dates[path] = max(dates.get(path, date), date)
    return [p for path in paths for p in (path, eval_file(path))]


def _check_length(path: str, plan: LogSetPlan) -> None:
    for part in (path, eval_file(path)):
        leaf = part.rsplit("/", 1)[-1]
        if len(leaf.encode()) > NAME_MAX:
            raise ExportError(
                f"the file name {leaf[:60]}... of {plan.config.model} would pass {NAME_MAX} "
                "bytes: give a shorter --model-name"
            )


def _given_turns(store: Store, plan: LogSetPlan) -> dict[str, list[Turn]]:
    """Session id -> the turns whose feedback the session's turns were given: a replayed
    session was handed its reference's turns; any other its own (the default)."""
    return {
        row.id: store.load_turns(row.reference_session_id)
        for row in plan.sessions
        if plan.reference is not None and row.reference_session_id
    }


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


def _task_at(
    row: SessionRow,
    recorded: Sequence[Turn],
    given: Sequence[Turn],
    k: int,
    config: SessionConfig,
    headers: Mapping[str, str],
) -> tuple[dict[str, Any], list[dict]]:
    """Task ``row``'s line in turn ``k``'s file and its eval entry. A turn the session never
    played takes its last code, with no feedback: after a pass that is ConvCodeWorld's
    "Already solved"; after a session that stopped without passing, the log says so.
    ``given`` holds the turns whose feedback turn k was given about (a replay's reference)."""
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
        feedback = _feedback(recorded, given, k, config)
        line = turn_line(row.task_id, solution, feedback, turn.reply, k + 1)
    return line, eval_entry(row.task_id, solution, status, details)


_STATUS = {"pass": "pass", "timeout": "timeout"}


def _feedback(
    recorded: Sequence[Turn], given: Sequence[Turn], k: int, config: SessionConfig
) -> tuple[str | None, str | None, str | None]:
    """The feedback turn ``k`` was given about the code before it. ConvCodeWorld's protocol
    records it with turn k (``Turn.received``); ours with the turn it was said about, turn
    k-1 of ``given`` (the session's own turns, or a replay's reference)."""
    if config.protocol == "convcodeworld":
        got = recorded[k].received
        return (got.compilation, got.execution, got.user) if got else (None, None, None)
    if k > len(given):
        return (None, None, None)
    before = given[k - 1]
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
        "folder": plan.folder,
        "model": config.model,
        # The names in the files, as ConvCodeWorld's print_results.py takes them.
        "model_name": plan.model_name,
        "simulator_name": plan.simulator_name,
        "reference_set": plan.reference.name if plan.reference else None,
        "reference_model_name": plan.reference.model_name if plan.reference else None,
        "print_results_args": print_results_args(plan),
        "added_as_reference": plan.added,
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
                "reference_session_id": row.reference_session_id,
                "annotator": row.annotator,
                "error": row.error,
                "turns": [_turn_entry(turn) for turn in store.load_turns(row.id)],
            }
            for row in plan.sessions
        ],
    }


# The code is in ConvCodeWorld's files; the prompt (the whole conversation again, each turn)
# is left to the JSONL transcript export; the rest are derived.
_NOT_IN_MANIFEST = ("code", "prompt", "prompt_hash", "passed", "feedback_edited")


def _turn_entry(turn: Turn) -> dict[str, Any]:
    """What ``sessions import`` needs beside the files to give ``turn`` back as recorded: the
    files hold BigCodeBench's verdict (failing tests only) and the feedback with the turn it
    was given to, under either protocol."""
    record = turn_record(turn)
    return {key: value for key, value in record.items() if key not in _NOT_IN_MANIFEST}
