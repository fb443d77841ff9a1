"""The users a person plays in the app: they answer the loop's feedback requests through the
screen, optionally starting from a simulator's draft (``--user assist:novice``), and a simulator
whose every message is shown as it is written (``--user novice``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from convtui.core.feedback.simulators import Ask, FeedbackRequest, Simulator, VerbalFeedback
from convtui.core.printable import printable
from convtui.core.settings.config import ClosingStatus
from convtui.sessions.database.human_times import HumanTurnTimes


@dataclass(frozen=True)
class Answer:
    """What the person sent: ``text`` (empty to continue without verbal feedback), or a
    decision to end the session here."""

    text: str
    closes: ClosingStatus | None = None
    # A CodeIF-Bench session: the category of the instruction the text is about (None: the
    # one offered).
    instruction: str | None = None
    # The person's time on the turn they answered (its index), recorded with that turn.
    turn_idx: int | None = None
    times: HumanTurnTimes | None = None


# (request, draft) -> None: the screen shows the request and waits for the person.
Prompt = Callable[[FeedbackRequest, str | None], None]


class PersonUser:
    """Verbal feedback typed by a person; with a ``drafter`` the simulator writes first and the
    person edits or replaces its draft. An edited draft is sent as ``human``."""

    source = "human"

    def __init__(self, prompt: Prompt, drafter: Simulator | None = None) -> None:
        self._prompt = prompt
        self._drafter = drafter
        self._pending: asyncio.Future[Answer] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.on_drafting: Callable[[], None] | None = None

    @property
    def waiting(self) -> bool:
        return self._pending is not None and not self._pending.done()

    def answer(self, answer: Answer) -> bool:
        """Hand the person's answer to the waiting turn; thread-safe. False when no turn is
        waiting (the answer would be lost, so the caller keeps the text)."""
        pending, loop = self._pending, self._loop
        if pending is None or loop is None or pending.done():
            return False
        loop.call_soon_threadsafe(_resolve, pending, answer)
        return True

    async def wait(self) -> Answer:
        """The person's next answer (the screen was told what to ask)."""
        self._loop = asyncio.get_running_loop()
        self._pending = self._loop.create_future()
        try:
            return await self._pending
        finally:
            self._pending = None

    async def feedback(self, request: FeedbackRequest, ask: Ask) -> VerbalFeedback | None:
        drafted = None
        if self._drafter is not None and self._drafter.wants_to_speak(request):
            if self.on_drafting is not None:
                self.on_drafting()
            drafted = await self._drafter.feedback(request, ask)
        draft = drafted.text if drafted is not None else None
        self._prompt(request, draft)
        answer = await self.wait()
        # The composer showed the draft's control characters as ␛…: sent unchanged, it is
        # the draft as the simulator wrote it.
        text = draft if draft is not None and answer.text == printable(draft) else answer.text
        kept = drafted is not None and text == draft
        return VerbalFeedback(
            text=text,
            source=drafted.source if kept and drafted else self.source,
            call=drafted.call if drafted else None,
            notes=drafted.notes if drafted else (),
            draft=draft,
            closes=answer.closes,
        )


def _resolve(future: asyncio.Future[Answer], answer: Answer) -> None:
    if not future.done():
        future.set_result(answer)


class ShownSimulator:
    """A simulator playing the user on its own; the screen hears when it starts and what it
    said, so the person watching sees every simulated message."""

    def __init__(
        self,
        simulator: Simulator,
        on_start: Callable[[], None],
        on_said: Callable[[VerbalFeedback | None], None],
    ) -> None:
        self._simulator = simulator
        self._on_start = on_start
        self._on_said = on_said
        self.source = simulator.source
        # The model that plays the user: --protocol convcodeworld asks it inside the turn.
        self.backend = simulator.backend

    async def feedback(self, request: FeedbackRequest, ask: Ask) -> VerbalFeedback | None:
        self._on_start()
        said = await self._simulator.feedback(request, ask)
        self._on_said(said)
        return said
