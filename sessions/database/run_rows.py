"""The rows a new run writes in one transaction (SCHEMA.md): its ``runs`` row and one
``planned`` session per task and Ω (:meth:`Store.create_run`), or per reference session of a
static replay (:meth:`Store.create_static_run`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlite_utils import Database

from convtui.core.settings.config import SessionConfig
from convtui.sessions.database.codec import canonical_json, config_to_json, run_config_hash
from convtui.sessions.database.ids import new_id
from convtui.sessions.database.provenance import code_version as current_code_version
from convtui.sessions.database.records import Benchmark, RunKind, RunMode, SessionRow, UserKind

_PEOPLE = ("human", "assist")


def insert_run(
    db: Database,
    run_id: str,
    kind: RunKind,
    config: SessionConfig,
    labels: Sequence[str],
    selection: str,
    task_count: int,
    now: str,
    *,
    code_version: str | None,
    benchmark: Benchmark,
    mode: RunMode,
    more: Mapping[str, Any],
) -> None:
    """The row of a new run, ``planned``: the columns every run holds, then ``more`` (a live
    run's simulator and origin, :meth:`Store.create_run`; a static replay's,
    :meth:`Store.create_static_run`)."""
    columns = {
        "id": run_id,
        "kind": kind,
        "config_json": config_to_json(config),
        "config_hash": run_config_hash(config, labels),
        "model": config.model,
        "feedback_json": canonical_json(list(labels)),
        "context": config.context,
        "selection": selection,
        "task_count": task_count,
        "max_turns": config.max_turns,
        "status": "planned",
        "created_utc": now,
        **more,
        "code_version": code_version or current_code_version(),
        "benchmark": benchmark,
        "mode": mode,
    }
    names = ", ".join(columns)
    marks = ", ".join("?" * len(columns))
    db.execute(f"INSERT INTO runs ({names}) VALUES ({marks})", tuple(columns.values()))


def static_run_columns(replay: Mapping[str, Any]) -> dict[str, Any]:
    """What a static replay's run row holds beyond every run's: no simulator of its own, and
    how it replays its references."""
    return {"simulator": None, "replay_json": canonical_json(dict(replay))}


def insert_run_sessions(
    db: Database,
    run_id: str,
    config: SessionConfig,
    tasks: Sequence[str],
    labels: Sequence[str],
    verbal: Mapping[str, bool],
    now: str,
    user_kind: UserKind | None,
    annotators: Mapping[str, str | None] | None,
) -> None:
    """The rows of :meth:`Store.create_run`'s sessions, ``planned``: one per task and Ω."""
    db.conn.executemany(
        "INSERT INTO sessions (id, run_id, task_id, model, feedback, user_kind, "
        "simulator, max_turns, status, created_utc, updated_utc, annotator) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'planned', ?, ?, ?)",
        [
            (
                new_id(),
                run_id,
                task_id,
                config.model,
                label,
                *_who(verbal[label], config.simulator, user_kind),
                config.max_turns,
                now,
                now,
                (annotators or {}).get(task_id) if user_kind in _PEOPLE else None,
            )
            # Task-major: an interrupted run has every configuration of its first tasks, so
            # its columns stay comparable.
            for task_id in tasks
            for label in labels
        ],
    )


def _who(
    verbal: bool, simulator: str | None, given: UserKind | None
) -> tuple[UserKind, str | None]:
    """A run session's user kind and simulator: its simulator's, or ``given``'s, whose
    simulator is kept as :meth:`Store.create_interactive_session` keeps it."""
    if given is None:
        return ("simulator" if verbal and simulator else "none"), (simulator if verbal else None)
    return given, (simulator if given in ("simulator", "assist") else None)


def insert_replay_sessions(
    db: Database,
    run_id: str,
    config: SessionConfig,
    label: str,
    references: Sequence[SessionRow],
    now: str,
) -> None:
    """The rows of :meth:`Store.create_static_run`'s sessions, ``planned``: one per reference
    session, with its user kind, simulator and annotator."""
    db.conn.executemany(
        "INSERT INTO sessions (id, run_id, task_id, model, feedback, user_kind, "
        "simulator, max_turns, status, created_utc, updated_utc, "
        "reference_session_id, annotator) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'planned', ?, ?, ?, ?)",
        [
            (
                new_id(),
                run_id,
                ref.task_id,
                config.model,
                label,
                ref.user_kind,
                ref.simulator,
                config.max_turns,
                now,
                now,
                ref.id,
                ref.annotator,
            )
            for ref in references
        ],
    )
