"""What the turn loop reports while it plays: front ends iterate ``SessionLoop.run`` for these
(loop.py re-exports them), and the turn policies emit the ones inside a turn, so they live
apart from both."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from convtui.core.execution.types import ExecResult
from convtui.core.models.types import Completion
from convtui.core.settings.config import SessionStatus
from convtui.core.turns.record import Turn


@dataclass(frozen=True)
class TurnEvent:
    """Something that happened inside turn ``idx``, in the order below."""

    idx: int


@dataclass(frozen=True)
class TurnStarted(TurnEvent):
    pass


@dataclass(frozen=True)
class ReplyStreamed(TurnEvent):
    """The reply so far, while the model writes it."""

    text: str


@dataclass(frozen=True)
class ReplyReady(TurnEvent):
    """The whole reply and the code taken from it."""

    completion: Completion
    code: str


@dataclass(frozen=True)
class Executed(TurnEvent):
    """The code's verdict on the task's tests."""

    result: ExecResult


@dataclass(frozen=True)
class TurnCompleted:
    """The caller persists ``turn`` while the loop waits; ``status`` is the session's status
    after it (``running`` when another turn follows).

    ``cache_key`` is the executor's cache key of the request the turn ran, taken where the
    loop ran it, so the store links the turn to the very cache entry its result came from
    (BigCodeBench's turn 0 runs more than the turn's code). None when the loop was given an
    ``execute`` that keeps no cache (``cached_execute`` always does)."""

    turn: Turn
    status: SessionStatus
    cache_key: str | None = None


@dataclass(frozen=True)
class SessionEnded:
    status: SessionStatus
    turns: tuple[Turn, ...]
    error: str = ""


Event = TurnStarted | ReplyStreamed | ReplyReady | Executed | TurnCompleted | SessionEnded
# How a turn reports its events: safe to call from any thread (a backend may stream from one).
Emit = Callable[[Event], None]
