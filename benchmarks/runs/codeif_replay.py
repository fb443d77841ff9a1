"""``convtui bench codeif --logs DB``: CodeIF-Bench conversations that people recorded in the
app (``convtui session --task CodeIF/N``), replayed against another model.

A person's conversation is a log set like any other: its rounds' words — the instructions as
the person sent them, edited or not, in the order they chose — are handed to the target
model round by round; the target sees its own earlier answers (the static conversation's
context), and each answer is checked on every instruction, as the person's was, so the
report's IA, CA, IFR and IFE compare the two. No person is asked again. Each task replays its
newest recorded conversation; a replayed session is linked to it (``reference_session_id``)
and lists as a replay.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from convtui.benchmarks.runs.lifecycle import NewRun
from convtui.core.catalog.loaders import TaskCatalog
from convtui.core.catalog.tasks import Task
from convtui.core.codeif.conversation import RoundPlan
from convtui.core.codeif.instructions import instructions
from convtui.core.codeif.records import round_plan, round_source
from convtui.core.errors import ConvtuiError
from convtui.core.settings.config import SessionConfig
from convtui.core.turns.record import Turn
from convtui.sessions import SessionRow, Store
from convtui.sessions.merging.copying import copy_sessions
from convtui.sessions.reading.results import app_sessions

TASK_PREFIX = "CodeIF/"


def reference_conversations(
    source: Store, catalog: TaskCatalog, wanted: set[str] | None
) -> list[SessionRow]:
    """Per task (of ``wanted``, or every one), the newest CodeIF conversation recorded in
    the app whose turns are CodeIF rounds."""
    chosen: dict[str, SessionRow] = {}
    for row in app_sessions(source, TASK_PREFIX):
        if row.task_id in chosen or row.task_id not in catalog:
            continue
        if wanted is not None and row.task_id not in wanted:
            continue
        if all(round_source(t.received) is not None for t in source.load_turns(row.id)):
            chosen[row.task_id] = row
    return [chosen[k] for k in sorted(chosen, key=lambda t: int(t.split("/")[1]))]


def script_of(turns: Sequence[Turn], task: Task) -> tuple[RoundPlan, ...]:
    """The rounds after the first as the reference recorded them: kind, instruction, words."""
    order = instructions(task)
    return tuple(round_plan(turn, order) for turn in turns[1:])


def gather_references(
    logs: Path, store: Store, catalog: TaskCatalog, wanted: set[str] | None
) -> list[SessionRow]:
    """The reference conversations, copied into ``store`` when they live elsewhere (the
    report reads a replay beside its reference)."""
    if not logs.exists():
        raise ConvtuiError(f"no database at {logs}: --logs takes a convtui database")
    if logs.resolve() == Path(store.path).resolve():
        found = reference_conversations(store, catalog, wanted)
    else:
        with Store.open(logs) as source:
            found = reference_conversations(source, catalog, wanted)
            copy_sessions(source, store, found)
    if not found:
        raise ConvtuiError(
            f"no CodeIF-Bench conversation recorded in the app in {logs}"
            + (" for the tasks of --ids" if wanted is not None else "")
            + ": record one with convtui session --task CodeIF/11 --db "
            f"{logs} (bench codeif runs are not references: replay a model with "
            "bench codeif --mode static instead)"
        )
    return found


def replay_selection(prefix: str, logs: Path, references: Sequence[SessionRow]) -> str:
    """The run's selection: the logs' name and which conversations, so recording more of
    them makes a new run rather than resuming one over other references."""
    digest = hashlib.sha256(",".join(sorted(r.id for r in references)).encode()).hexdigest()
    return f"{prefix};logs={logs.name};refs={digest[:16]}"


def replay_run(
    config: SessionConfig, selection: str, references: Sequence[SessionRow], logs: Path
) -> NewRun:
    """The replay run, for lifecycle.open_run: a session per reference, linked to it."""
    return NewRun(
        config,
        selection,
        benchmark="codeif",
        mode="replay",
        references=references,
        replay={"benchmark": "codeif", "logs": str(logs), "references": len(references)},
    )


def replay_scripts(
    store: Store, run_id: str, tasks: dict[str, Task]
) -> dict[str, tuple[RoundPlan, ...]]:
    """Each replayed session's rounds to give, read from its reference."""
    scripts = {}
    for row in store.run_sessions(run_id):
        if row.reference_session_id is None:
            raise ConvtuiError(f"session {row.id} of replay run {run_id} has no reference")
        turns = store.load_turns(row.reference_session_id)
        scripts[row.id] = script_of(turns, tasks[row.task_id])
    return scripts
