"""What the turn loop reports while it plays: front ends iterate ``SessionLoop.run`` for these
(loop.py re-exports them), and the turn policies emit the ones inside a turn, so they live
apart from both."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from convtui.core.execution import ExecResult
from convtui.core.models.types import Completion
from convtui.core.session import SessionStatus, Turn


@dataclass(frozen=True)
class TurnStarted:
    idx: int


@dataclass(frozen=True)
class ReplyStreamed:
    idx: int
    text: str


@dataclass(frozen=True)
class ReplyReady:
    idx: int
    completion: Completion
    code: str


@dataclass(frozen=True)
class Executed:
    idx: int
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
