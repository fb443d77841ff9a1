"""The turn loop (docs/design.md#one-turn): generate, extract, compile, execute, render
feedback, ask the user, and hand the finished turn to the caller before the next begins.

Front ends drive it as an async iterator of events; the iterator is suspended while the
caller handles ``TurnCompleted``, which is where the store commits the turn, so a turn is
always written before the next one starts. How each turn is played is a ``TurnPolicy``
(turn_policy.py), chosen for the session when the loop is built."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from convtui.core.catalog.tasks import Task
from convtui.core.execution.backend import ExecutionBackend
from convtui.core.execution.types import ExecRequest, ExecResult
from convtui.core.feedback.evaluate import Execute
from convtui.core.feedback.prompts import feedback_message
from convtui.core.feedback.simulators import User
from convtui.core.models.base import ModelBackend
from convtui.core.models.types import ModelError
from convtui.core.play.ccw_policies import BcbTurn0, CcwTurn
from convtui.core.play.events import (
    Emit,
    Event,
    Executed,
    ReplyReady,
    ReplyStreamed,
    SessionEnded,
    TurnCompleted,
    TurnStarted,
)
from convtui.core.play.own_turn import ConvtuiTurn, build_prompt
from convtui.core.play.policy import TurnContext, TurnPolicy
from convtui.core.play.replay import replay_status
from convtui.core.play.replay_turn import ReplayTurn
from convtui.core.settings.config import SessionConfig, SessionStatus
from convtui.core.turns.journal import CallJournal, ExecutionCache
from convtui.core.turns.record import Turn

# Front ends take the events, and the prompt the convtui turn builds, from here.
__all__ = [
    "CachedExecute",
    "Event",
    "Executed",
    "ReplyReady",
    "ReplyStreamed",
    "SessionEnded",
    "SessionLoop",
    "TurnCompleted",
    "TurnStarted",
    "build_prompt",
    "cached_execute",
    "choose_policy",
    "feedback_message",
]


@dataclass(frozen=True)
class CachedExecute:
    """The loop's ``execute``: a result the cache holds is reused, anything else runs in a
    thread (the executor blocks while its child runs) and is recorded. ``keyed`` also gives
    the cache key it used, so the turn that ran the request is linked to that entry without
    a second key being made from what the caller thinks was run."""

    executor: ExecutionBackend
    cache: ExecutionCache | None

    async def keyed(self, request: ExecRequest) -> tuple[str, ExecResult]:
        key = self.executor.cache_key(request)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return key, hit
        result = await asyncio.to_thread(self.executor.run, request)
        if self.cache is not None:
            self.cache.put(key, request.task_id, request.code, result)
        return key, result

    async def __call__(self, request: ExecRequest) -> ExecResult:
        return (await self.keyed(request))[1]


def cached_execute(executor: ExecutionBackend, cache: ExecutionCache | None) -> CachedExecute:
    return CachedExecute(executor, cache)


class _KeptKey:
    """The ``execute`` the policies are given: it remembers the cache key of the last
    request it ran, which ``run`` hands on with the turn (each turn runs its code once)."""

    def __init__(self, execute: Execute) -> None:
        self._execute = execute
        self.key: str | None = None

    async def __call__(self, request: ExecRequest) -> ExecResult:
        if isinstance(self._execute, CachedExecute):
            self.key, result = await self._execute.keyed(request)
            return result
        self.key = None
        return await self._execute(request)


def choose_policy(
    context: TurnContext, idx: int, reference: Sequence[Turn] | None = None
) -> TurnPolicy:
    """The policy that plays turn ``idx`` of a session in ``context`` (replaying ``reference``
    when given). Every turn after the first is played alike, so turn 1's policy is every
    later turn's."""
    ccw = context.config.protocol == "convcodeworld"
    if reference is not None and idx > 0:
        return ReplayTurn(context, reference, CcwTurn(context) if ccw else None)
    if ccw and idx > 0:
        return CcwTurn(context)
    if ccw and context.task.suite == "bigcodebench":
        return BcbTurn0(context)
    return ConvtuiTurn(context)


def _status_after(turn: Turn, config: SessionConfig) -> SessionStatus:
    if turn.passed:
        return "solved"
    if turn.idx + 1 >= config.max_turns:
        return "exhausted"
    if config.protocol == "convcodeworld":
        # The reference plays every turn. One that made no code call left the code as it
        # was, and the next would ask the same questions and get the same answers.
        return "stalled" if turn.idx > 0 and turn.generate_call is None else "running"
    if not feedback_message(turn):
        return "stalled"
    return "running"


def _emitter(queue: asyncio.Queue[Event]) -> Emit:
    """Put events on ``queue`` from any thread: model backends may stream from a worker."""
    loop = asyncio.get_running_loop()

    def emit(event: Event) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, event)

    return emit


class SessionLoop:
    """Runs one task for one model under one feedback configuration."""

    def __init__(
        self,
        task: Task,
        config: SessionConfig,
        backend: ModelBackend,
        execute: Execute,
        user: User | None = None,
        journal: CallJournal | None = None,
        reference: Sequence[Turn] | None = None,
    ) -> None:
        # A static replay (ConvCodeBench): the reference session's recorded turns. Turn 0 is
        # the model's own; at turn t >= 1 it is given the reference's turn t-1 (and, with
        # context "full", every reference turn before t) and the feedback recorded for it,
        # and no user is ever asked (replay.py).
        self.reference = tuple(reference) if reference is not None else None
        # Passed to the backend with every call (CallInfo): the stored session's id, so a
        # session played again (resumed, or a cancelled turn retried) keeps its key.
        self.session_key = journal.session_id if journal is not None else uuid.uuid4().hex
        self._ran = _KeptKey(execute)
        # The one record of the session's task, configuration, models and journal: the
        # policies read it, and so does the loop.
        self.context = TurnContext(
            task, config, backend, self._ran, user, journal, self.session_key
        )
        # Chosen once: the first turn's policy, and the one of every turn after it.
        self.policies = (
            choose_policy(self.context, 0, self.reference),
            choose_policy(self.context, 1, self.reference),
        )

    def policy(self, idx: int) -> TurnPolicy:
        return self.policies[min(idx, 1)]

    async def run(self, prior: Sequence[Turn] = ()) -> AsyncIterator[Event]:
        """Play the session from ``prior`` (turns already recorded) to its end."""
        turns = list(prior)
        status: SessionStatus = self._status_after(turns[-1]) if turns else "running"
        while status == "running":
            idx = len(turns)
            yield TurnStarted(idx)
            events: asyncio.Queue[Event] = asyncio.Queue()
            self._ran.key = None
            play = self.policy(idx).play(idx, tuple(turns), _emitter(events))
            work = asyncio.ensure_future(play)
            try:
                while not work.done() or not events.empty():
                    getter = asyncio.ensure_future(events.get())
                    await asyncio.wait({work, getter}, return_when=asyncio.FIRST_COMPLETED)
                    if getter.done():
                        yield getter.result()
                    else:
                        getter.cancel()
                        await asyncio.sleep(0)  # let threadsafe callbacks land in the queue
                played = work.result()
            except ModelError as exc:
                yield SessionEnded("failed", tuple(turns), str(exc))
                return
            finally:
                if not work.done():  # the caller stopped listening: cancel the turn in flight
                    work.cancel()
            turn = played.turn
            status = played.closes or self._status_after(turn)
            turns.append(turn)
            yield TurnCompleted(turn, status, self._ran.key)
        yield SessionEnded(status, tuple(turns))

    def _status_after(self, turn: Turn) -> SessionStatus:
        if self.reference is None:
            return _status_after(turn, self.context.config)
        return replay_status(turn, self.reference, self.context.config)
