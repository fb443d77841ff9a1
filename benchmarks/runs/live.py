"""``convtui bench live``: many tasks × feedback configurations, each a session of up to N
turns, recorded turn by turn; the same command after a kill continues where it stopped."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from convtui.benchmarks.runs.lifecycle import LEASE_S, NewRun, play_run
from convtui.core.catalog.tasks import Task
from convtui.core.execution.backend import ExecutionBackend
from convtui.core.feedback.simulators import Simulator
from convtui.core.models.base import ModelBackend
from convtui.core.play.loop import (
    SessionEnded,
    SessionLoop,
    TurnCompleted,
    TurnStarted,
    cached_execute,
)
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.turns.record import Turn
from convtui.sessions import Store
from convtui.sessions.database.records import SessionRow


@dataclass(frozen=True)
class TurnProgress:
    """What the front end shows: a turn that begins (``started``, its index), one that is
    done (``turn``), or a finished session (neither)."""

    task_id: str
    feedback: str
    turn: Turn | None
    session_status: str
    error: str = ""
    started: int | None = None

    @property
    def session_ended(self) -> bool:
        return self.turn is None and self.started is None


@dataclass(frozen=True)
class LiveResult:
    run_id: str
    resumed: bool
    sessions: int
    failed: int


def live_run(
    config: SessionConfig,
    feedback: Sequence[FeedbackConfig],
    selection: str,
    tasks: Sequence[Task],
) -> NewRun:
    """The live run of ``tasks`` under every Ω of ``feedback``, for lifecycle.open_run."""
    return NewRun(
        config,
        selection,
        benchmark="bigcodebench",
        mode="live",
        task_ids=[t.id for t in tasks],
        feedback=feedback,
    )


async def run_live(
    store: Store,
    run_id: str,
    config: SessionConfig,
    tasks: Sequence[Task],
    executor: ExecutionBackend,
    backend: ModelBackend,
    simulator: ModelBackend | None,
    concurrency: int,
    on_progress: Callable[[TurnProgress], None] | None = None,
    replay: bool = False,
) -> LiveResult:
    """Play the run's pending sessions, ``concurrency`` at a time. With ``replay`` (a static
    run) each session is played against its reference session's recorded turns and no user
    is asked (core/play/replay.py)."""
    by_id = {t.id: t for t in tasks}
    cache = store.execution_cache()
    execute = cached_execute(executor, cache)

    async def play(row: SessionRow) -> bool:
        failed = False
        task = by_id[row.task_id]
        session_config = replace(config, feedback=row.omega)
        user = None
        verbal = session_config.feedback.verbal
        if verbal != "none" and simulator is not None and not replay:
            user = Simulator(verbal, simulator, config.simulator_params)
        reference = None
        if replay and row.reference_session_id is not None:
            reference = store.load_turns(row.reference_session_id)
        loop = SessionLoop(
            task, session_config, backend, execute, user, store.journal(row.id), reference
        )
        async for event in loop.run(store.load_turns(row.id)):
            if isinstance(event, TurnStarted):
                if on_progress:
                    on_progress(
                        TurnProgress(task.id, row.feedback, None, "running", started=event.idx)
                    )
            elif isinstance(event, TurnCompleted):
                store.save_turn(row.id, event.turn, event.status, event.cache_key)
                store.take_lease(run_id, seconds=LEASE_S)
                if on_progress:
                    on_progress(TurnProgress(task.id, row.feedback, event.turn, event.status))
            elif isinstance(event, SessionEnded):
                if event.status == "failed":
                    failed = True
                    store.set_session_status(row.id, "failed", event.error)
                if on_progress:
                    on_progress(
                        TurnProgress(task.id, row.feedback, None, event.status, event.error)
                    )
        return not failed

    # A run with failed sessions stays resumable: the same command retries them.
    played = await play_run(store, run_id, play, concurrency)
    return LiveResult(run_id, False, played.sessions, played.failed)


def default_concurrency(model: str) -> int:
    """In-process models serve one call at a time on every core, so extra sessions only
    contend (measured: 0.92x the turns per minute at 4 sessions, scripts/perf/
    turn_throughput.py); servers batch, so keep several going."""
    return 1 if model.startswith("local:") else 8
