"""What the session's background work reports to the screen: every message is posted from
the runner thread with ``post_message``, which is thread-safe, and says what happened in the
past tense."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from convtui.core.execution.types import ExecResult
from convtui.core.settings.config import SessionStatus
from convtui.core.turns.record import Turn
from convtui.sessions.database.typed import TypedFeedback
from convtui.sessions.reading.browse import CallLine
from convtui.tui.refusal import Refusal


@dataclass
class SessionOpened(Message):
    """The session row exists (new or resumed) with these turns already recorded; ``typed``:
    the words kept for the next turn, typed before the app closed and never sent."""

    session_id: str
    turns: tuple[Turn, ...]
    typed: TypedFeedback | None = None


@dataclass
class CallsRecorded(Message):
    """The model calls of these turns as the store now holds them, each turn's in the order
    made; they replace what the screen had for those turns."""

    calls: dict[int, tuple[CallLine, ...]]


@dataclass
class TurnBegan(Message):
    idx: int


@dataclass
class ReplyStreamed(Message):
    """The reply so far; a backlog collapses to the newest, so a slow screen never lags."""

    idx: int
    text: str

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ReplyStreamed) and message.idx == self.idx


@dataclass
class ReplyReady(Message):
    idx: int
    reply: str
    code: str


@dataclass
class ExecutionDone(Message):
    """Test results of the live turn; ``rerun`` when the person asked to run them again (the
    turn keeps its first result)."""

    idx: int
    result: ExecResult
    rerun: bool = False


@dataclass
class FeedbackWanted(Message):
    """The live turn waits for the person; ``draft`` is a simulator's draft (assist mode)."""

    idx: int
    compile_feedback: str
    execution_feedback: str | None
    draft: str | None


@dataclass
class Simulating(Message):
    """A simulator is writing feedback (the user or the assist draft)."""

    idx: int


@dataclass
class Simulated(Message):
    """A simulated user's message, shown as it is given (None: it stayed silent)."""

    idx: int
    text: str | None


@dataclass
class TurnSaved(Message):
    """The turn is in the store; ``status`` is the session's status after it."""

    turn: Turn
    status: SessionStatus


@dataclass
class TurnRefused(Message):
    """The store already held the turn this window played (another window recorded it
    first); nothing of this window's was saved for it. The store's turns follow
    (``SessionOpened``), and the session goes on from them unless it has ended."""

    refusal: Refusal


@dataclass
class SessionFinished(Message):
    status: SessionStatus
    error: str = ""


@dataclass
class TurnFailed(Message):
    """The live turn could not finish (``kind``: model, executor, store); nothing was saved
    for it and it can be run again."""

    idx: int
    kind: str
    text: str


@dataclass
class TurnCancelled(Message):
    idx: int


@dataclass
class TypedNotKept(Message):
    """The words typed in the composer could not be written to the store (``error`` says
    why); the next change writes them again."""

    error: str


@dataclass
class InstructionOffered(Message):
    """A CodeIF-Bench session: the person is offered ``category``'s instruction (``text``) for
    the round after turn ``idx``; None when every instruction was given."""

    idx: int
    category: str | None
    text: str | None


@dataclass
class InstructionsGiven(Message):
    """A CodeIF-Bench session: the instructions given so far, in the order given."""

    categories: tuple[str, ...]
