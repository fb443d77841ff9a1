"""Two windows on one session (a second browser tab, the terminal app beside the served one):
a turn the store refuses because the other window recorded it first is never silent. The
person is told, the screen shows what the store holds, and their words are not lost: they
wait in the composer for the turn the store now waits for, or, once the session has ended
there, are shown to copy. Scripted model (the ``apps`` fixture's), real sandbox, one real
SQLite store in tmp_path that both windows write through connections of their own."""

from __future__ import annotations

import threading

import pytest
from codeif_offers import TASK as CODEIF_TASK
from codeif_offers import reference_model
from textual.message import Message
from textual.pilot import Pilot
from tui_harness import (
    AppFactory,
    awaiting_feedback,
    notices,
    phase_is,
    play,
    rows,
    type_feedback,
    wait_until,
)

from convtui.tui import messages as msg
from convtui.tui.codeif_controller import CodeifController
from convtui.tui.controller import SessionController
from convtui.tui.human import Answer
from convtui.tui.launch import resumed_plan
from convtui.tui.widgets.composer import FeedbackComposer

pytestmark = pytest.mark.slow

RESTORED = "restored: not sent yet"
THEIRS = "Every letter must be a key."  # sent in the other window
MINE = "Sort by the mean, [highest] first."  # sent here, after the other window's

# Today's code ignored the refusal: the wait for its notice is the one that fails there.
TOLD_WITHIN_S = 60.0


class OtherWindow:
    """The same session played by a second controller, with its own store connection, runner
    and model, in a thread of its own as a screen's worker plays it."""

    def __init__(self, apps: AppFactory, session_id: str, model: str | None = None) -> None:
        services = apps.services(model)
        plan = resumed_plan(services.store, apps.catalog, session_id)
        self.heard: list[Message] = []
        kind = CodeifController if plan.task.suite == "codeif" else SessionController
        self.controller = kind(services, plan, self.heard.append)
        self._thread = threading.Thread(target=self.controller.play, daemon=True)

    def __enter__(self) -> OtherWindow:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.controller.cancel()
        self._thread.join(timeout=30)

    async def send_first(self, pilot: Pilot, answer: Answer) -> None:
        """Answer turn 0 here and wait until the store holds it."""
        await wait_until(
            pilot, lambda: self.controller.waiting_for_person, "the other window to wait"
        )
        assert self.controller.send(answer)
        await wait_until(
            pilot,
            lambda: any(isinstance(m, msg.TurnSaved) for m in self.heard),
            "the other window to record turn 0",
        )


def recorded(apps: AppFactory) -> list[tuple]:
    return rows(apps.db, "SELECT idx, verbal_feedback, feedback_source FROM turns ORDER BY idx")


def kept(apps: AppFactory) -> list[tuple]:
    return rows(apps.db, "SELECT session_id, turn_idx, text FROM typed_feedback")


async def told(pilot: Pilot) -> str:
    await wait_until(
        pilot,
        lambda: any("already recorded by another window" in n for n in notices(pilot)),
        "the person to be told their turn was refused",
        timeout_s=TOLD_WITHIN_S,
    )
    return next(n for n in notices(pilot) if "already recorded by another window" in n)


def test_a_turn_another_window_recorded_first_is_refused_aloud_and_the_words_come_back(
    apps: AppFactory,
) -> None:
    """The other window sends turn 0 while this one waits; this one's send is refused: the
    person is told, turn 0 stays the other window's, the screen shows it, and the words
    wait in the composer for turn 1, from where sending them records them."""

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        session_id = screen.controller.session_id
        assert session_id is not None
        with OtherWindow(apps, session_id) as other:
            await other.send_first(pilot, Answer(THEIRS))
            await type_feedback(pilot, MINE)
            await pilot.press("ctrl+j")

            said = await told(pilot)
            assert "Turn 0 was already recorded" in said
            assert "back in the composer for turn 1" in said
            assert recorded(apps)[0] == (0, THEIRS, "human")
            assert kept(apps) == [(session_id, 1, MINE)]

            await awaiting_feedback(pilot, turn=1)
            composer = screen.query_one(FeedbackComposer)
            assert composer.text == MINE
            assert composer.border_subtitle == RESTORED
            assert [t.verbal_feedback for t in screen.recorded] == [THEIRS]

            await pilot.press("ctrl+j")
            # Turn 2 is the last of three: it is played, and the session ends.
            await wait_until(pilot, phase_is(pilot, "exhausted"), "the session to end")
        assert recorded(apps)[:2] == [(0, THEIRS, "human"), (1, MINE, "human")]
        assert kept(apps) == []

    play(apps, scenario)


def test_words_for_a_session_another_window_ended_are_shown_to_copy(apps: AppFactory) -> None:
    """The other window gives up with turn 0; this one's words cannot go anywhere: they are
    quoted in the notice and left, read-only, in the composer, and the session stays ended
    as the other window left it."""

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        session_id = screen.controller.session_id
        assert session_id is not None
        with OtherWindow(apps, session_id) as other:
            await other.send_first(pilot, Answer(THEIRS, "abandoned"))
            await type_feedback(pilot, MINE)
            await pilot.press("ctrl+j")

            said = await told(pilot)
            assert "the session has ended there (given up)" in said
            assert "Here they are to copy" in said and said.endswith(MINE)
            await wait_until(pilot, phase_is(pilot, "abandoned"), "the session to show ended")
            composer = screen.query_one(FeedbackComposer)
            assert composer.text == MINE and composer.read_only
            assert "composer to copy" in str(screen.query_one("#status-line").render())
        assert recorded(apps) == [(0, THEIRS, "human")]
        assert rows(apps.db, "SELECT status FROM sessions") == [("abandoned",)]
        assert kept(apps) == []

    play(apps, scenario)


def test_a_codeif_round_another_window_recorded_first_gives_the_words_back_with_their_instruction(
    apps: AppFactory,
) -> None:
    """CodeIF-Bench: the other window answers round 1 first; this window's answer is
    refused, the session goes on from the other window's answer (round 2 is played with its
    words), and this window's words wait for round 2, still about the instruction they were
    written for."""
    model = reference_model(apps)

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        session_id = screen.controller.session_id
        assert session_id is not None
        about = screen.composing
        assert about is not None
        with OtherWindow(apps, session_id, model) as other:
            await other.send_first(pilot, Answer(THEIRS))
            composer = screen.query_one(FeedbackComposer)
            composer.clear()
            await type_feedback(pilot, MINE)
            await pilot.press("ctrl+j")

            said = await told(pilot)
            assert "Round 1 was already recorded" in said
            assert "back in the composer for round 2" in said
            assert rows(apps.db, "SELECT text, instruction FROM typed_feedback") == [(MINE, about)]
            await awaiting_feedback(pilot, turn=1)
            assert composer.text == MINE and composer.border_subtitle == RESTORED
            assert screen.composing == about

            await pilot.press("ctrl+j")
            await awaiting_feedback(pilot, turn=2)
        assert [turn[:2] for turn in recorded(apps)] == [(0, THEIRS), (1, MINE)]
        assert kept(apps) == []

    play(apps, scenario, model=model, task=CODEIF_TASK)
