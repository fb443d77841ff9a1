"""What the store hands back about runs and sessions: typed, frozen, no database handles."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from convtui.core.settings.config import SessionConfig, SessionStatus, UserKind
from convtui.core.settings.omega import FeedbackConfig
from convtui.sessions.database.codec import config_from_json, omega_from_label

RunKind = Literal["live", "static", "interactive"]
# Whose sessions a run plays: ConvCodeWorld's feedback turns (bench live, bench static, imported
# logs) or CodeIF-Bench's conversations (bench codeif). Readers pick their runs by it.
Benchmark = Literal["bigcodebench", "codeif"]
# How: a BigCodeBench run is live (the model and a user) or static (log sets replayed); a
# CodeIF-Bench run plays static or dynamic conversations, or replays people's (replay).
RunMode = Literal["live", "static", "dynamic", "replay"]
RunState = Literal["planned", "running", "done", "interrupted"]
CallStatus = Literal["started", "ok", "error", "abandoned"]

# A session in one of these states is finished: a resumed run skips it.
FINAL_SESSION_STATES: frozenset[SessionStatus] = frozenset(
    {"solved", "exhausted", "stalled", "failed", "accepted", "abandoned"}
)


@dataclass(frozen=True)
class RunRow:
    id: str
    kind: RunKind
    config: SessionConfig
    config_hash: str
    model: str
    simulator: str | None
    feedback: tuple[str, ...]  # the Ω labels the run covers
    context: str
    selection: str
    task_count: int
    max_turns: int
    status: RunState
    created_utc: str
    finished_utc: str | None
    code_version: str
    host: str | None
    pid: int | None
    lease_until_utc: str | None
    benchmark: Benchmark
    mode: RunMode
    # A static run: the log set it replays (reference model, Ω, who gave the feedback, where
    # the logs came from). None for other runs.
    replay: Mapping[str, Any] | None = None
    # A run loaded from elsewhere (an imported ConvCodeWorld folder, a reference session
    # copied out of another database): where from. None for runs made here.
    origin: str | None = None
    # What the run records about itself beyond its identity (runs.settings_json): a CodeIF
    # run's metric definition and data file. Empty for runs that record none.
    settings: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> RunRow:
        # Columns named as the fields are taken as they are, the JSON ones decoded; .get: rows
        # of databases from before origin and settings_json were added.
        values: dict[str, Any] = {name: row.get(name) for name in cls.__dataclass_fields__}
        return cls(
            **{
                **values,
                "config": config_from_json(row["config_json"]),
                "feedback": tuple(json.loads(row["feedback_json"])),
                "replay": json.loads(row["replay_json"]) if row.get("replay_json") else None,
                "settings": json.loads(row["settings_json"]) if row.get("settings_json") else {},
            }
        )


@dataclass(frozen=True)
class SessionRow:
    id: str
    run_id: str | None  # None for an interactive session
    task_id: str
    model: str
    feedback: str  # the Ω label, e.g. CF,EF:partial,VF:novice
    user_kind: UserKind
    simulator: str | None
    max_turns: int
    status: SessionStatus
    first_pass_turn: int | None
    turns_done: int
    error: str
    created_utc: str
    updated_utc: str
    # A replayed session: the reference session whose turns it was given.
    reference_session_id: str | None = None
    # Who typed the feedback of a session recorded in the TUI (--annotator).
    annotator: str | None = None

    @property
    def finished(self) -> bool:
        return self.status in FINAL_SESSION_STATES

    @property
    def omega(self) -> FeedbackConfig:
        """Ω, decoded from its stored label."""
        return omega_from_label(self.feedback)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> SessionRow:
        # .get: rows selected from databases of an older schema, or by narrower queries.
        values: dict[str, Any] = {name: row.get(name) for name in cls.__dataclass_fields__}
        return cls(**values)
