"""`convtui compare` in tests: stores whose verdicts are written by hand (no model, no
executor), so every number a comparison prints can be worked out from the patterns, and the
command run in process."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import replace

from convtui.core.settings.omega import FeedbackConfig
from convtui.sessions import SessionRow, Store
from support.cli import invoke
from support.verdicts import EF_FULL, config, turn

Verdicts = Mapping[str, Sequence[bool]]


def play(store: Store, session_id: str, verdicts: Sequence[bool]) -> None:
    """Record ``verdicts`` as the session's turns, stopping at the first pass."""
    for idx, passed in enumerate(verdicts):
        last = passed or idx + 1 == len(verdicts)
        status = ("solved" if passed else "exhausted") if last else "running"
        store.save_turn(session_id, turn(idx, passed), status)
        if passed:
            return


def live_run(
    store: Store,
    model: str,
    verdicts: Verdicts,
    feedback: Sequence[FeedbackConfig] = (EF_FULL,),
    turns: int = 3,
) -> str:
    """A live run of ``model`` over the tasks of ``verdicts`` under each Ω of ``feedback``,
    every session playing its task's verdicts; returns the run id."""
    run_id = store.create_run(
        "live", config(model, feedback[0], turns), "ids=hand", sorted(verdicts), list(feedback)
    )
    for row in store.run_sessions(run_id):
        play(store, row.id, verdicts[row.task_id])
    return run_id


def static_run(
    store: Store, target: str, references: Sequence[SessionRow], verdicts: Verdicts
) -> str:
    """``target`` replaying ``references`` (a live run's sessions), with ``verdicts``."""
    cfg = replace(config(target), context="markov")
    run_id = store.create_static_run(cfg, f"static;{target}", references, {"log_set": "x"})
    for row in store.run_sessions(run_id):
        play(store, row.id, verdicts[row.task_id])
    return run_id


def tasks(*numbers: int) -> list[str]:
    return [f"BigCodeBench/{n}" for n in numbers]


def solved_at(turn: int | None, turns: int = 3) -> tuple[bool, ...]:
    """The verdicts of a session first passing at ``turn`` (None: never)."""
    return tuple(t == turn for t in range(turns if turn is None else turn + 1))


def compare(*args: str) -> subprocess.CompletedProcess[str]:
    return invoke("compare", *args)


def compared(*args: str) -> dict:
    """``convtui compare ARGS --json``, which must succeed."""
    done = compare(*args, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def metric(data: dict, key: str, pair: tuple[str, str] = ("A", "B")) -> dict:
    """One pair's comparison on one metric from compare's JSON."""
    (found,) = [m for m in data["metrics"] if m["metric"] == key]
    (row,) = [p for p in found["pairs"] if (p["first_side"], p["second_side"]) == pair]
    return row
