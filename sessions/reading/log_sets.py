"""Log sets in a store: the recorded sessions a static replay can be played against.

A log set (docs/design.md#vocabulary) is the sessions of one reference model under one Ω with
one kind of user: a simulator, nobody (no verbal feedback), or one person (each annotator's
sessions are a set of their own, human and assisted alike). It holds at most one session per
task — the newest finished one — since a replay has one reference per task. Replays are never
references themselves, and a session that recorded no turn has nothing to hand on.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackSource
from convtui.sessions.database.connection import narrowed, rows
from convtui.sessions.database.records import FINAL_SESSION_STATES, SessionRow
from convtui.sessions.database.store import Store

UserFilter = FeedbackSource
_FINAL = tuple(sorted(FINAL_SESSION_STATES))


@dataclass(frozen=True)
class LogSetFilter:
    """Which recorded sessions may serve as references (all, when every field is empty).

    ``runs``: run ids or unique prefixes; ``ref_model``: the reference's model spec;
    ``user``: ``human`` (people, assisted or not), ``novice``/``expert`` (simulators), or
    ``none`` (no verbal feedback); ``feedback``: Ω labels (``FeedbackConfig.label``, as
    ``--feedback`` parsed them); ``task_ids``: the tasks wanted."""

    runs: tuple[str, ...] = ()
    ref_model: str | None = None
    user: UserFilter | None = None
    feedback: tuple[str, ...] = ()
    task_ids: frozenset[str] | None = None
    # Only the runs loaded from there (``runs.origin``, e.g. an imported folder).
    origin: str | None = None


@dataclass(frozen=True)
class LogSet:
    """One reference model × Ω × user, with its sessions in task order."""

    name: str
    config: SessionConfig
    user_kind: str
    simulator: str | None
    annotator: str | None
    sessions: tuple[SessionRow, ...]

    @property
    def model(self) -> str:
        return self.config.model

    @property
    def feedback(self) -> str:
        return self.config.feedback.label

    @property
    def who(self) -> str:
        """Who gave the verbal feedback, in words."""
        if self.user_kind in ("human", "assist"):
            person = self.annotator or "unnamed annotator"
            return f"{person} ({'assisted by ' + self.simulator if self.simulator else 'human'})"
        if self.user_kind == "simulator" and self.simulator:
            return f"{self.config.feedback.verbal} simulated by {self.simulator}"
        return "no verbal feedback"

    def describe(self, source: str) -> dict[str, object]:
        """What a static run records about the set it replays (``runs.replay_json``)."""
        return {
            "log_set": self.name,
            "reference_model": self.model,
            "feedback": self.feedback,
            "protocol": self.config.protocol,
            "context": self.config.context,
            "user_kind": self.user_kind,
            "simulator": self.simulator,
            "annotator": self.annotator,
            "source": source,
            "sessions": len(self.sessions),
        }


def find_log_sets(store: Store, wanted: LogSetFilter = LogSetFilter()) -> list[LogSet]:
    """The store's log sets matching ``wanted``, sorted by name."""
    with store.reading() as db:
        candidates = [SessionRow.from_row(r) for r in rows(db, *_query(wanted))]
        configs = {row.id: store.session_config(row.id) for row in candidates}
    labels = set(wanted.feedback)
    groups: dict[tuple, dict[str, SessionRow]] = defaultdict(dict)
    for row in candidates:
        config = configs[row.id]
        if labels and config.feedback.label not in labels:
            continue
        if wanted.task_ids is not None and row.task_id not in wanted.task_ids:
            continue
        if not _user_matches(row, config, wanted.user):
            continue
        annotator = row.annotator if row.user_kind in ("human", "assist") else None
        key = (row.model, config.feedback.label, config.protocol, row.user_kind, row.simulator)
        # Newest wins: candidates come in id (creation) order.
        groups[(*key, annotator)][row.task_id] = row
    sets = [_log_set(configs, by_task) for by_task in groups.values()]
    return sorted(sets, key=lambda s: (s.name, s.annotator or ""))


def log_set_of(store: Store, sessions: Sequence[SessionRow]) -> LogSet:
    """The log set of exactly ``sessions`` (one per task, of one model, Ω and user), named
    and configured as :func:`find_log_sets` names and configures one: a study's annotator's
    sessions, chosen by their assignments rather than by the newest of each task."""
    with store.reading():
        configs = {row.id: store.session_config(row.id) for row in sessions}
    return _log_set(configs, {row.task_id: row for row in sessions})


def _query(wanted: LogSetFilter) -> tuple[str, list[object]]:
    sql = (
        "SELECT s.* FROM sessions s LEFT JOIN runs r ON r.id = s.run_id "
        f"WHERE s.status IN ({', '.join('?' * len(_FINAL))}) AND s.turns_done > 0 "
        "AND s.reference_session_id IS NULL AND (r.kind IS NULL OR r.kind != 'static')"
    )
    params: list[object] = list(_FINAL)
    if wanted.runs:
        sql += " AND (" + " OR ".join("s.run_id LIKE ?" for _ in wanted.runs) + ")"
        params += [f"{run}%" for run in wanted.runs]
    sql, params = narrowed(sql, params, {"s.model": wanted.ref_model, "r.origin": wanted.origin})
    return sql + " ORDER BY s.id", params


def _user_matches(row: SessionRow, config: SessionConfig, user: UserFilter | None) -> bool:
    if user is None:
        return True
    if user == "human":
        return row.user_kind in ("human", "assist")
    if user == "none":
        return config.feedback.verbal == "none"
    return row.user_kind == "simulator" and config.feedback.verbal == user


def _log_set(configs: dict[str, SessionConfig], by_task: dict[str, SessionRow]) -> LogSet:
    sessions = tuple(sorted(by_task.values(), key=lambda row: task_order(row.task_id)))
    newest = max(sessions, key=lambda row: row.id)
    config = configs[newest.id]
    annotator = newest.annotator if newest.user_kind in ("human", "assist") else None
    log_set = LogSet("", config, newest.user_kind, newest.simulator, annotator, sessions)
    return replace(log_set, name=f"{config.model} · {config.feedback.label} · {log_set.who}")


def task_order(task_id: str) -> tuple[str, int, str]:
    """Tasks in catalog order: ``BigCodeBench/2`` before ``BigCodeBench/10``."""
    prefix, _, number = task_id.rpartition("/")
    return (prefix, int(number), task_id) if number.isdigit() else (task_id, -1, task_id)
