"""A benchmark run's life, the same for every ``convtui bench`` command: opened (found again,
or made with all its sessions), its lease taken, its pending sessions played a few at a time,
finished.

Every command must continue what a kill cut off, refuse a run another live process drives,
and leave a run with failed sessions resumable. Written once here, the benchmarks cannot drift
apart on any of that; what differs between them is only what a new run holds
(:class:`NewRun`) and how one session is played (the callback :func:`play_run` is given).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig
from convtui.sessions import SessionRow, Store, run_config_hash
from convtui.sessions.database.records import Benchmark, RunMode

# How long a run stays this process's without a renewal. Renewed after every recorded turn
# and every finished session, so only a process that stopped making progress loses it.
LEASE_S = 120.0

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class NewRun:
    """A run as a command describes it. Its identity is the config hash (of ``config`` and
    ``feedback``, every Ω it covers: ``config.feedback`` when empty) and the
    ``selection``: the same command finds the same run again by them. When none is found it is
    made with a ``planned`` session per task and label; or, a static run (one that records
    the log set it replays, ``replay``), with one per reference session of ``references``."""

    config: SessionConfig
    selection: str
    benchmark: Benchmark
    mode: RunMode
    task_ids: Sequence[str] = ()
    feedback: Sequence[FeedbackConfig] = ()
    references: Sequence[SessionRow] = ()
    replay: Mapping[str, Any] | None = None

    @property
    def config_hash(self) -> str:
        labels = [f.label for f in self.feedback] or [self.config.feedback.label]
        return run_config_hash(self.config, labels)


@dataclass(frozen=True)
class OpenedRun:
    run_id: str
    resumed: bool  # found again (unfinished, or finished and reopened), not made


@dataclass(frozen=True)
class PlayedRun:
    sessions: int  # the pending sessions played
    failed: int  # of those, the ones that ended failed (the run stays resumable)


def open_run(store: Store, new: NewRun) -> OpenedRun:
    """The run ``new`` describes, with this process's lease on it: the newest unfinished one,
    else the newest finished one (so the same command run again plays nothing twice and
    retries what failed), else a new one.

    What a kill or a failure left unfinished is made playable again: calls still ``started``
    are abandoned (their answers are asked for again), and failed sessions go back to
    ``running``, or ``planned`` when they recorded no turn, for another chance. Raises
    RunLeasedError while another live process drives the run."""
    key = new.config_hash
    run_id = store.find_resumable_run(key, new.selection) or store.find_finished_run(
        key, new.selection
    )
    resumed = run_id is not None
    if run_id is None:
        run_id = _create(store, new)
    store.take_lease(run_id, seconds=LEASE_S)
    store.abandon_started_calls(run_id)
    for session in store.run_sessions(run_id):
        if session.status == "failed":
            store.set_session_status(session.id, "running" if session.turns_done else "planned")
    return OpenedRun(run_id, resumed)


def _create(store: Store, new: NewRun) -> str:
    if new.replay is not None:
        return store.create_static_run(
            new.config,
            new.selection,
            new.references,
            new.replay,
            benchmark=new.benchmark,
            mode=new.mode,
        )
    return store.create_run(
        "live",
        new.config,
        new.selection,
        new.task_ids,
        new.feedback or None,
        benchmark=new.benchmark,
        mode=new.mode,
    )


async def play_run(
    store: Store,
    run_id: str,
    play_one: Callable[[SessionRow], Awaitable[bool]],
    concurrency: int | None,
) -> PlayedRun:
    """Play the run's pending sessions, ``concurrency`` at a time (None: all at once, for a
    caller that limits its own work instead), then finish the run.

    ``play_one`` plays one session and says whether it ended without failing. The run ends
    ``done`` when every session did, else ``interrupted``: the same command retries the failed
    ones (:func:`open_run`). An exception from ``play_one`` is not a failed session: it stops
    the run unfinished, and its lease lapses."""
    pending = store.pending_sessions(run_id)
    failed = 0

    async def one(row: SessionRow) -> None:
        nonlocal failed
        if not await play_one(row):
            failed += 1
        store.take_lease(run_id, seconds=LEASE_S)

    played = one if concurrency is None else limited(one, concurrency)
    await asyncio.gather(*(played(row) for row in pending))
    store.finish_run(run_id, "done" if failed == 0 else "interrupted")
    return PlayedRun(len(pending), failed)


def limited(fn: Callable[[T], Awaitable[R]], concurrency: int) -> Callable[[T], Awaitable[R]]:
    """``fn`` with at most ``concurrency`` (at least one) calls in flight at once."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def gated(arg: T) -> R:
        async with gate:
            return await fn(arg)

    return gated
