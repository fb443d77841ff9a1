"""Stores whose verdicts are written by hand (no model, no executor): live and static runs of
BigCodeBench tasks with the per-turn verdicts a test chooses, so every number a report prints
follows from those verdicts alone."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from convtui.core.execution.types import ExecResult
from convtui.core.models.types import GenerationParams
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.turns.record import Turn
from convtui.sessions import SessionRow, Store

Verdicts = Mapping[str, tuple[bool, ...]]  # task id -> its verdict at turn 0, 1, ...
EF_FULL = FeedbackConfig("full", "none")


def config(
    model: str, feedback: FeedbackConfig = EF_FULL, turns: int = 3, protocol: str = "convtui"
) -> SessionConfig:
    return SessionConfig(
        model=model,
        feedback=feedback,
        max_turns=turns,
        params=GenerationParams(temperature=0.0, max_tokens=64),
        protocol=protocol,  # type: ignore[arg-type]
    )


def turn(idx: int, passed: bool) -> Turn:
    result = ExecResult(
        "pass" if passed else "fail",
        duration_s=0.1,
        isolation="landlock",
        detail="" if passed else "1 test failed",
    )
    return Turn(idx, "reply", f"x = {idx}", True, "No compilation errors", result)


def play(store: Store, session_id: str, verdicts: tuple[bool, ...]) -> None:
    """Record ``verdicts`` as the session's turns, its status following the last."""
    for idx, passed in enumerate(verdicts):
        last = passed or idx + 1 == len(verdicts)
        status = ("solved" if passed else "exhausted") if last else "running"
        store.save_turn(session_id, turn(idx, passed), status)


def live(
    store: Store,
    model: str,
    verdicts: Verdicts,
    feedback: FeedbackConfig = EF_FULL,
    turns: int = 3,
) -> list[SessionRow]:
    """A live run of ``model`` over the tasks of ``verdicts``; its sessions."""
    run_id = store.create_run("live", config(model, feedback, turns), "ids", sorted(verdicts))
    for row in store.run_sessions(run_id):
        play(store, row.id, verdicts[row.task_id])
    return store.run_sessions(run_id)


def replay(store: Store, target: str, references: list[SessionRow], verdicts: Verdicts) -> str:
    """A static (markov) run of ``target`` replaying ``references``; its run id."""
    cfg = replace(config(target), context="markov")
    run_id = store.create_static_run(cfg, f"static;{target}", references, {"log_set": "x"})
    for row in store.run_sessions(run_id):
        play(store, row.id, verdicts[row.task_id])
    return run_id


def tasks(count: int) -> list[str]:
    return [f"BigCodeBench/{i}" for i in range(count)]
