"""The store: one SQLite file holding runs, sessions, turns, model calls and executions.

``Store.open(path)`` creates the file (and its folder), switches it to WAL and migrates it.
A ``Store`` may be shared by threads: each thread gets its own connection, writes take the
write lock up front and are short, and readers are never blocked by the writer.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any

from sqlite_utils import Database

from convtui.core.settings.config import SessionConfig, SessionStatus
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.turns.record import Turn
from convtui.sessions.database import human_times, typed
from convtui.sessions.database import turns as turn_rows
from convtui.sessions.database.codec import (
    canonical_json,
    config_from_json,
    config_to_json,
    omega_from_label,
)
from convtui.sessions.database.connection import (
    Connections,
    check_sqlite,
    enable_wal,
    reading,
    refuse_foreign_file,
    remove_database,
    rows,
    writing,
)
from convtui.sessions.database.errors import NotFoundError, RunLeasedError, StoreError
from convtui.sessions.database.executions import StoreExecutionCache
from convtui.sessions.database.human_times import HumanTurnTimes
from convtui.sessions.database.ids import new_id, utc_after, utc_now
from convtui.sessions.database.journal import StoreJournal, abandon_started
from convtui.sessions.database.leases import held_by_other, this_host
from convtui.sessions.database.records import (
    FINAL_SESSION_STATES,
    Benchmark,
    RunKind,
    RunMode,
    RunRow,
    RunState,
    SessionRow,
    UserKind,
)
from convtui.sessions.database.run_rows import (
    insert_replay_sessions,
    insert_run,
    insert_run_sessions,
    static_run_columns,
)
from convtui.sessions.database.schema import migrate
from convtui.sessions.database.typed import TypedFeedback

_FINAL = tuple(sorted(FINAL_SESSION_STATES))
_FINAL_MARKS = ", ".join("?" * len(_FINAL))


class Store:
    """Persistence for convtui (see SCHEMA.md for the tables)."""

    def __init__(self, path: Path, connections: Connections, *, created: bool = False) -> None:
        self.path = path
        self._connections = connections
        # Made by this open: a command that fails before recording anything removes it again.
        self._created = created

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, busy_timeout_s: float = 30.0) -> Store:
        """Open (creating if needed) the store at ``path`` and bring its schema up to date.

        A file that is not a SQLite database is refused before anything touches it. Used as
        a context manager, a store this call created is deleted again when the block raises
        before any run or session was recorded: a failed command leaves no empty database."""
        check_sqlite()
        if str(path) == ":memory:":
            # Every thread has its own connection, and each would see its own empty database.
            raise StoreError("the convtui store needs a file; :memory: is not supported")
        target = Path(path)
        refuse_foreign_file(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        created = _create(target)
        connections = Connections(target, busy_timeout_s)
        try:
            db = connections.get()
            enable_wal(db, target)
            migrate(db)
        except BaseException:
            connections.close()
            if created:
                remove_database(target)
            raise
        return cls(target, connections, created=created)

    def close(self) -> None:
        """Close every thread's connection; the store cannot be used afterwards."""
        self._connections.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        empty = exc_type is not None and self._created and self._holds_nothing()
        self.close()
        if empty:
            remove_database(self.path)

    def _holds_nothing(self) -> bool:
        try:
            db = self._connections.get()
            return not any(
                db.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone()
                for table in ("runs", "sessions", "executions", "model_calls")
            )
        except Exception:  # a broken store is not ours to judge empty: keep it
            return False

    @property
    def db(self) -> Database:
        """This thread's connection (for queries that have no method here)."""
        return self._connections.get()

    @contextmanager
    def reading(self) -> Iterator[Database]:
        """This thread's connection inside one read snapshot, for report queries."""
        with reading(self._connections.get()) as db:
            yield db

    # --- runs ----------------------------------------------------------------------------------

    def create_run(
        self,
        kind: RunKind,
        config: SessionConfig,
        selection: str,
        task_ids: Sequence[str],
        feedback: Sequence[FeedbackConfig] | None = None,
        *,
        code_version: str | None = None,
        origin: str | None = None,
        user_kind: UserKind | None = None,
        annotators: Mapping[str, str | None] | None = None,
        benchmark: Benchmark = "bigcodebench",
        mode: RunMode | None = None,
    ) -> str:
        """Create a run and all its sessions (one per task and feedback label, status
        ``planned``) in one transaction; returns the run id.

        ``feedback`` (every Ω ``--feedback`` names) defaults to ``config.feedback``; each
        session runs ``config`` with its own Ω. The run's config hash is
        ``run_config_hash(config, labels)``, what :meth:`find_resumable_run` looks for.

        Sessions are given feedback by ``config.simulator`` (or none, without verbal
        feedback) unless ``user_kind`` says who did, as sessions recorded elsewhere and
        imported may: then ``annotators`` (task id -> name) names the person of a human or
        assisted session, and the simulator is kept only where one drafted the words.

        ``benchmark`` and ``mode`` say what the run plays (SCHEMA.md); the mode defaults to
        the kind's (``live`` or ``static``)."""
        omegas = list(feedback or [config.feedback])
        labels = list(dict.fromkeys(omega.label for omega in omegas))
        verbal = {omega.label: omega.verbal != "none" for omega in omegas}
        tasks = list(dict.fromkeys(task_ids))
        run_id, now = new_id(), utc_now()
        db = self._connections.get()
        with writing(db):
            insert_run(
                db,
                run_id,
                kind,
                config,
                labels,
                selection,
                len(tasks),
                now,
                code_version=code_version,
                benchmark=benchmark,
                mode=mode or ("static" if kind == "static" else "live"),
                more={"simulator": config.simulator, "origin": origin},
            )
            insert_run_sessions(
                db, run_id, config, tasks, labels, verbal, now, user_kind, annotators
            )
        return run_id

    def create_static_run(
        self,
        config: SessionConfig,
        selection: str,
        references: Sequence[SessionRow],
        replay: Mapping[str, Any],
        *,
        code_version: str | None = None,
        benchmark: Benchmark = "bigcodebench",
        mode: RunMode = "static",
    ) -> str:
        """Create a static run (a replay of one log set) and one ``planned`` session per
        reference session, linked to it (``reference_session_id``), in one transaction.

        Each replayed session keeps who gave the feedback it will be handed (the reference's
        user kind, simulator and annotator): those words are reused, not asked again.
        ``replay`` describes the log set (stored as ``runs.replay_json``); a CodeIF-Bench
        replay of people's conversations is ``benchmark="codeif", mode="replay"``."""
        if not references:
            raise ValueError("a static run needs at least one reference session")
        run_id, now = new_id(), utc_now()
        label = config.feedback.label
        db = self._connections.get()
        with writing(db):
            insert_run(
                db,
                run_id,
                "static",
                config,
                [label],
                selection,
                len(references),
                now,
                code_version=code_version,
                benchmark=benchmark,
                mode=mode,
                more=static_run_columns(replay),
            )
            insert_replay_sessions(db, run_id, config, label, references, now)
        return run_id

    def update_run_settings(self, run_id: str, settings: Mapping[str, Any]) -> None:
        """Merge ``settings`` into what the run records about itself (``runs.settings_json``)."""
        db = self._connections.get()
        with writing(db):
            found = db.execute("SELECT settings_json FROM runs WHERE id = ?", (run_id,)).fetchone()
            if found is None:
                raise NotFoundError(f"no run {run_id}")
            merged = {**(json.loads(found[0]) if found[0] else {}), **settings}
            db.execute(
                "UPDATE runs SET settings_json = ? WHERE id = ?", (canonical_json(merged), run_id)
            )

    def run(self, run_id: str) -> RunRow:
        found = rows(self._connections.get(), "SELECT * FROM runs WHERE id = ?", (run_id,))
        if not found:
            raise NotFoundError(f"no run {run_id}")
        return RunRow.from_row(found[0])

    def find_finished_run(self, config_hash: str, selection: str) -> str | None:
        """The newest finished run with this configuration and task selection."""
        row = (
            self._connections.get()
            .execute(
                "SELECT id FROM runs WHERE config_hash = ? AND selection = ? "
                "AND status = 'done' AND kind != 'interactive' ORDER BY id DESC LIMIT 1",
                (config_hash, selection),
            )
            .fetchone()
        )
        return row[0] if row else None

    def find_resumable_run(self, config_hash: str, selection: str) -> str | None:
        """The newest unfinished run with this configuration and task selection: what the
        same ``convtui bench`` command finds again after it was killed."""
        row = (
            self._connections.get()
            .execute(
                "SELECT id FROM runs WHERE config_hash = ? AND selection = ? "
                "AND status != 'done' AND kind != 'interactive' ORDER BY id DESC LIMIT 1",
                (config_hash, selection),
            )
            .fetchone()
        )
        return row[0] if row else None

    def take_lease(self, run_id: str, pid: int | None = None, seconds: float = 120.0) -> None:
        """Make ``pid`` (default: this process) the run's driver for ``seconds`` and mark the
        run running; call again to renew. Raises RunLeasedError while another live process
        holds the lease (a dead holder on this host is replaced at once)."""
        pid = os.getpid() if pid is None else pid
        host = this_host()
        db = self._connections.get()
        with writing(db):
            found = rows(db, "SELECT pid, host, lease_until_utc FROM runs WHERE id = ?", (run_id,))
            if not found:
                raise NotFoundError(f"no run {run_id}")
            held = found[0]
            if held_by_other(held["pid"], held["host"], held["lease_until_utc"], pid, host):
                raise RunLeasedError(
                    f"run {run_id} is being driven by pid {held['pid']} on {held['host']} "
                    f"(lease until {held['lease_until_utc']}); stop it or wait for the lease "
                    "to expire"
                )
            db.execute(
                "UPDATE runs SET pid = ?, host = ?, lease_until_utc = ?, status = 'running', "
                "finished_utc = NULL WHERE id = ?",
                (pid, host, utc_after(seconds), run_id),
            )

    def finish_run(self, run_id: str, status: RunState) -> None:
        """End a run (``done`` or ``interrupted``) and release its lease."""
        db = self._connections.get()
        with writing(db):
            cursor = db.execute(
                "UPDATE runs SET status = ?, finished_utc = ?, lease_until_utc = NULL WHERE id = ?",
                (status, utc_now(), run_id),
            )
            if cursor.rowcount == 0:
                raise NotFoundError(f"no run {run_id}")

    # --- sessions ------------------------------------------------------------------------------

    def pending_sessions(self, run_id: str) -> list[SessionRow]:
        """The run's sessions still to play (not solved, exhausted, stalled or failed), in
        creation order."""
        return [
            SessionRow.from_row(row)
            for row in rows(
                self._connections.get(),
                f"SELECT * FROM sessions WHERE run_id = ? AND status NOT IN ({_FINAL_MARKS}) "
                "ORDER BY id",
                (run_id, *_FINAL),
            )
        ]

    def run_sessions(self, run_id: str) -> list[SessionRow]:
        """All of the run's sessions, in creation order."""
        return [
            SessionRow.from_row(row)
            for row in rows(
                self._connections.get(),
                "SELECT * FROM sessions WHERE run_id = ? ORDER BY id",
                (run_id,),
            )
        ]

    def session(self, session_id: str) -> SessionRow:
        found = rows(self._connections.get(), "SELECT * FROM sessions WHERE id = ?", (session_id,))
        if not found:
            raise NotFoundError(f"no session {session_id}")
        return SessionRow.from_row(found[0])

    def set_session_status(self, session_id: str, status: SessionStatus, error: str = "") -> None:
        """Move a session to ``status`` outside a turn (``running`` when it starts, ``failed``
        with the reason when its model gave up). A session that ends here drops the words
        typed for its next turn: no turn will take them."""
        db = self._connections.get()
        with writing(db):
            cursor = db.execute(
                "UPDATE sessions SET status = ?, error = ?, updated_utc = ? WHERE id = ?",
                (status, error, utc_now(), session_id),
            )
            if cursor.rowcount == 0:
                raise NotFoundError(f"no session {session_id}")
            if status in FINAL_SESSION_STATES:
                typed.discard(db, session_id)

    def create_interactive_session(
        self,
        task_id: str,
        config: SessionConfig,
        user_kind: UserKind = "human",
        annotator: str | None = None,
    ) -> str:
        """A session outside any run (the TUI); it keeps its own config. Returns its id.
        ``annotator`` names the person giving feedback (human and assisted sessions)."""
        session_id, now = new_id(), utc_now()
        simulator = config.simulator if user_kind in ("simulator", "assist") else None
        db = self._connections.get()
        with writing(db):
            db.execute(
                "INSERT INTO sessions (id, run_id, task_id, model, feedback, user_kind, "
                "simulator, max_turns, config_json, status, created_utc, updated_utc, "
                "annotator) VALUES (?, NULL, ?, ?, ?, ?, ?, ?, ?, 'planned', ?, ?, ?)",
                (
                    session_id,
                    task_id,
                    config.model,
                    config.feedback.label,
                    user_kind,
                    simulator,
                    config.max_turns,
                    config_to_json(config),
                    now,
                    now,
                    annotator if user_kind in ("human", "assist") else None,
                ),
            )
        return session_id

    def session_config(self, session_id: str) -> SessionConfig:
        """The config a session runs under: its own (interactive) or its run's with the
        session's feedback configuration."""
        db = self._connections.get()
        found = rows(
            db,
            "SELECT s.feedback, s.config_json, r.config_json AS run_config FROM sessions s "
            "LEFT JOIN runs r ON r.id = s.run_id WHERE s.id = ?",
            (session_id,),
        )
        if not found:
            raise NotFoundError(f"no session {session_id}")
        row = found[0]
        if row["config_json"] is not None:
            return config_from_json(row["config_json"])
        config = config_from_json(row["run_config"])
        return replace(config, feedback=omega_from_label(row["feedback"]))

    # --- turns, model calls, executions --------------------------------------------------------

    def save_turn(
        self,
        session_id: str,
        turn: Turn,
        status: SessionStatus,
        execution_key: str | None = None,
        times: HumanTurnTimes | None = None,
    ) -> bool:
        """Record a finished turn and the session's new ``status`` in one transaction.

        ``execution_key`` is the executor's cache key for ``turn.execution``; ``times``, the
        person's time on a turn they answered. Returns False (and changes nothing) when this
        turn index was already recorded."""
        db = self._connections.get()
        return turn_rows.save_turn(db, session_id, turn, status, execution_key, times)

    def human_turn_times(self, session_ids: Iterable[str]) -> dict[str, dict[int, HumanTurnTimes]]:
        """Session id -> turn index -> the person's times, for turns a person answered."""
        return human_times.load(self._connections.get(), list(session_ids))

    def turn_may_have_been_shown(self, session_id: str, turn_idx: int) -> bool:
        """Whether the unrecorded turn ``turn_idx`` may have been shown to the person before
        now (sessions/database/human_times.py ``may_have_been_shown``)."""
        return human_times.may_have_been_shown(self._connections.get(), session_id, turn_idx)

    def load_turns(self, session_id: str) -> list[Turn]:
        """The session's recorded turns, equal to the ``Turn`` values that were saved."""
        return turn_rows.load_turns(self._connections.get(), session_id)

    def keep_typed(
        self, session_id: str, turn_idx: int, text: str, instruction: str | None = None
    ) -> bool:
        """Keep the words a person typed for ``turn_idx`` but has not sent (blank text removes
        them); ``save_turn`` of that turn removes them. Returns whether words are kept now:
        never for a turn already recorded or a session that ended (sessions/database/typed.py)."""
        return typed.keep(self._connections.get(), session_id, turn_idx, text, instruction)

    def typed_feedback(self, session_id: str, turn_idx: int) -> TypedFeedback | None:
        """The words kept for ``turn_idx`` of the session and not sent, if any."""
        return typed.kept(self._connections.get(), session_id, turn_idx)

    def journal(self, session_id: str, *, share_across_sessions: bool = False) -> StoreJournal:
        """The ``CallJournal`` the turn loop records this session's model calls through."""
        return StoreJournal(self._connections, session_id, share_across_sessions)

    def abandon_started_calls(
        self, run_id: str | None = None, *, session_id: str | None = None
    ) -> int:
        """Mark the run's (or one session's) calls still ``started`` as ``abandoned``: call it
        after taking the run's lease, when no live process can still be making them."""
        if (run_id is None) == (session_id is None):
            raise ValueError("give exactly one of run_id and session_id")
        db = self._connections.get()
        with writing(db):
            return abandon_started(db, run_id=run_id, session_id=session_id)

    def execution_cache(self) -> StoreExecutionCache:
        """The executor's result cache over the executions table (timeouts and crashes are
        recorded but never returned)."""
        return StoreExecutionCache(self._connections)


def _create(path: Path) -> bool:
    """Whether this call made the file. Exclusive, so that of several processes opening one
    new file at once only one counts as its creator, and only that one may remove it again
    (removing it under the others' open connections would fail their every read)."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    except FileExistsError:
        return False
    return True
