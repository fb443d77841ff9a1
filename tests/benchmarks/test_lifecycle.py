"""A run's life as every bench command lives it: opened once and found again, refused while
another live process drives it, played a few sessions at a time, finished done or
interrupted."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from convtui.benchmarks.runs.codeif import CodeifSettings, codeif_run
from convtui.benchmarks.runs.lifecycle import (
    NewRun,
    OpenedRun,
    PlayedRun,
    limited,
    open_run,
    play_run,
)
from convtui.core.models.types import GenerationParams
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.turns.journal import CallRequest
from convtui.sessions import RunLeasedError, SessionRow, Store
from convtui.sessions.database.connection import writing

TASKS = [f"BigCodeBench/{n}" for n in range(5)]
CONFIG = SessionConfig(
    model="local:smollm2",
    feedback=FeedbackConfig("full", "none"),
    max_turns=3,
    params=GenerationParams(temperature=0.0, max_tokens=64, seed=7),
)
LIVE = NewRun(CONFIG, "ids=0-4", benchmark="bigcodebench", mode="live", task_ids=TASKS)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "results.db") as opened:
        yield opened


def test_a_second_open_resumes_the_run_and_makes_failed_work_playable(store: Store) -> None:
    first = open_run(store, LIVE)
    assert first.resumed is False
    run = store.run(first.run_id)
    assert (run.kind, run.benchmark, run.mode, run.status) == (
        "live",
        "bigcodebench",
        "live",
        "running",
    )
    no_turn, with_turn, *_ = store.run_sessions(first.run_id)
    store.set_session_status(no_turn.id, "failed", "model error")
    with writing(store.db) as db:  # as if it had recorded a turn
        db.execute("UPDATE sessions SET turns_done = 1 WHERE id = ?", (with_turn.id,))
    store.set_session_status(with_turn.id, "failed", "model error")
    journal = store.journal(no_turn.id)
    call = journal.started(CallRequest(0, "generate", "h", (), CONFIG.params, CONFIG.model))
    store.finish_run(first.run_id, "done")  # a finished run is reopened, not made again

    again = open_run(store, LIVE)

    assert again == OpenedRun(first.run_id, resumed=True)
    assert store.session(no_turn.id).status == "planned"
    assert store.session(with_turn.id).status == "running"
    status = store.db.execute("SELECT status FROM model_calls WHERE id = ?", (call,)).fetchone()
    assert status == ("abandoned",)
    assert store.run(first.run_id).status == "running"
    other = NewRun(CONFIG, "ids=0-1", benchmark="bigcodebench", mode="live", task_ids=TASKS[:2])
    assert open_run(store, other).run_id != first.run_id


def test_a_run_another_live_process_drives_is_refused(
    store: Store, other_process: subprocess.Popen
) -> None:
    run_id = open_run(store, LIVE).run_id
    store.finish_run(run_id, "interrupted")  # this process lets go of it...
    store.take_lease(run_id, other_process.pid, seconds=60)  # ...and another takes it

    with pytest.raises(RunLeasedError, match=f"pid {other_process.pid}"):
        open_run(store, LIVE)


def test_each_benchmark_records_what_it_plays(store: Store) -> None:
    dynamic = CodeifSettings("dynamic", preprocess=True)
    selection = f"{dynamic.selection_prefix};data=0123;ids="
    new = codeif_run(dynamic, CONFIG, selection, [])
    assert new.mode == "dynamic" and new.benchmark == "codeif"
    live = open_run(store, LIVE)
    reference = store.run_sessions(live.run_id)[0]
    replay = NewRun(
        CONFIG,
        "codeif;mode=replay;protocol=convtui",
        benchmark="codeif",
        mode="replay",
        references=[reference],
        replay={"benchmark": "codeif"},
    )
    replayed = store.run(open_run(store, replay).run_id)
    assert (replayed.kind, replayed.benchmark, replayed.mode) == ("static", "codeif", "replay")
    [session] = store.run_sessions(replayed.id)
    assert session.reference_session_id == reference.id


def _play(store: Store, run_id: str, failing: set[str], concurrency: int | None) -> PlayedRun:
    async def one(row: SessionRow) -> bool:
        await asyncio.sleep(0)
        return row.task_id not in failing

    return asyncio.run(play_run(store, run_id, one, concurrency))


def test_the_run_ends_interrupted_when_a_session_failed_and_done_otherwise(
    store: Store,
) -> None:
    run_id = open_run(store, LIVE).run_id

    assert _play(store, run_id, {TASKS[1]}, 2) == PlayedRun(sessions=5, failed=1)
    run = store.run(run_id)
    assert run.status == "interrupted" and run.lease_until_utc is None

    run_id = open_run(store, LIVE).run_id  # resumed: its sessions are still pending here
    assert _play(store, run_id, set(), 2) == PlayedRun(sessions=5, failed=0)
    assert store.run(run_id).status == "done"


@pytest.mark.parametrize("concurrency", [1, 2, None])
def test_no_more_sessions_play_at_once_than_allowed(store: Store, concurrency: int | None) -> None:
    run_id = open_run(store, LIVE).run_id
    playing, most = 0, 0

    async def one(row: SessionRow) -> bool:
        nonlocal playing, most
        playing += 1
        most = max(most, playing)
        for _ in range(3):
            await asyncio.sleep(0)
        playing -= 1
        return True

    played = asyncio.run(play_run(store, run_id, one, concurrency))

    assert played.sessions == len(TASKS)
    assert most == (concurrency or len(TASKS))


def test_limited_keeps_calls_in_flight_under_the_limit() -> None:
    in_flight, most = 0, 0

    async def work(n: int) -> int:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0)
        in_flight -= 1
        return n * 2

    async def go() -> list[int]:
        gated = limited(work, 3)
        return list(await asyncio.gather(*(gated(n) for n in range(10))))

    assert asyncio.run(go()) == [n * 2 for n in range(10)]
    assert most == 3
