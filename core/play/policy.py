"""How one turn is played, as the loop sees it: a session mixes turns of different makes
(BigCodeBench's turn 0 before ConvCodeWorld's feedback turns, a replay's model turn 0 before
its replayed ones), so the loop picks a ``TurnPolicy`` per turn index when it is built and
each policy plays its turns alone, with the shared ``TurnContext``.

The policies: convtui's own turn (convtui_turn.py), ConvCodeWorld's feedback turn and
BigCodeBench's turn 0 (ccw/policies.py), and a static replay's turn (replay_turn.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from convtui.core.catalog.tasks import Task
from convtui.core.feedback.evaluate import Execute
from convtui.core.feedback.simulators import User
from convtui.core.models.base import ModelBackend
from convtui.core.models.types import ChatMessage, Completion, GenerationParams
from convtui.core.play.events import Emit
from convtui.core.play.journaled import journaled_call
from convtui.core.settings.config import ClosingStatus, SessionConfig
from convtui.core.turns.journal import CallJournal, CallKind, CallPurpose
from convtui.core.turns.record import Turn


@dataclass(frozen=True)
class Played:
    """A finished turn; ``closes`` when the user ended the session with it (a person who
    accepts or abandons the code instead of giving feedback)."""

    turn: Turn
    closes: ClosingStatus | None = None


class TurnPolicy(Protocol):
    async def play(self, idx: int, turns: Sequence[Turn], emit: Emit) -> Played:
        """Play turn ``idx`` after ``turns`` (every turn of the session before it), reporting
        its events through ``emit`` as they happen."""
        ...


@dataclass(frozen=True)
class TurnContext:
    """One session's share of every turn: its task, configuration, models, the user who gives
    its verbal feedback (if any), the ``execute`` its code runs through and the journal its
    model calls are recorded in."""

    task: Task
    config: SessionConfig
    backend: ModelBackend
    execute: Execute
    user: User | None
    journal: CallJournal | None
    # Passed to the backend with every call (CallInfo): the stored session's id, so a session
    # played again (resumed, or a cancelled turn retried) keeps its key.
    session_key: str

    async def complete(
        self,
        turn_idx: int,
        purpose: CallPurpose,
        messages: tuple[ChatMessage, ...],
        params: GenerationParams,
        backend: ModelBackend | None = None,
        on_text: Callable[[str], None] | None = None,
        *,
        seq: int = 0,
        kind: CallKind = "chat",
    ) -> Completion:
        """One model call, journaled (journaled.py); a finished identical call is reused."""
        return await journaled_call(
            backend or self.backend,
            self.journal,
            self.session_key,
            turn_idx,
            purpose,
            messages,
            params,
            on_text,
            seq=seq,
            kind=kind,
        )
