"""Words typed into the composer and not sent survive the app: they are written to the store
shortly after typing pauses (and as the screen closes), put back in the composer when the
session is opened again, and gone once the turn is saved. Scripted model (the ``apps``
fixture's: turn 0 fails a test), real sandbox, real SQLite store in tmp_path."""

from __future__ import annotations

import asyncio

import pytest
from codeif_offers import EDIT, offered
from codeif_offers import TASK as CODEIF_TASK
from support.studies import study_spec, write_study
from textual.pilot import Pilot
from tui_harness import (
    NOVICE_SAYS,
    AppFactory,
    awaiting_feedback,
    phase_is,
    play,
    rows,
    study_app,
    type_feedback,
    wait_until,
)

from convtui.tui.typed_words import KEEP_AFTER_S
from convtui.tui.widgets.composer import FeedbackComposer
from convtui.tui.widgets.instruction_checklist import InstructionChecklist

pytestmark = pytest.mark.slow

RESTORED = "restored: not sent yet"


def kept(apps: AppFactory) -> list[tuple]:
    return rows(apps.db, "SELECT session_id, turn_idx, text FROM typed_feedback")


def test_an_annotator_who_left_before_sending_finds_their_words_again(apps: AppFactory) -> None:
    """The study app (``session --study``): words kept while typing and as ctrl+q closes the
    app come back with the assignment, unsent; sending them records them and drops the
    kept copy."""
    spec = study_spec(
        tasks=("BigCodeBench/2",),
        model=apps.model,
        feedback="CF,EF:full,VF:novice",
        annotators=("ana",),
        overlap=1,
    )
    write_study(apps.db, spec)
    first, more = "Every letter must be a key.", " Sort by the mean, highest first."

    async def leave_unsent(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        session_id = screen.controller.session_id
        await type_feedback(pilot, first)
        # Written once typing pauses, while the app still runs (a killed server loses no more).
        await wait_until(pilot, lambda: kept(apps) == [(session_id, 0, first)], "words kept")
        await type_feedback(pilot, more)
        await pilot.press("ctrl+q")  # at once: the screen writes the last keys as it closes
        await wait_until(pilot, lambda: pilot.app.return_code is not None, "the app to exit")

    async def come_back() -> None:
        async with study_app(apps, "ana").run_test(size=(120, 40)) as pilot:
            screen = await awaiting_feedback(pilot)
            composer = screen.query_one(FeedbackComposer)
            assert composer.text == first + more
            assert composer.border_subtitle == RESTORED
            assert rows(apps.db, "SELECT count(*) FROM turns") == [(0,)]
            await pilot.press("ctrl+j")
            await awaiting_feedback(pilot, turn=1)
            assert composer.text == "" and composer.border_subtitle == ""

    async def first_visit() -> None:
        async with study_app(apps, "ana").run_test(size=(120, 40)) as pilot:
            await leave_unsent(pilot)

    asyncio.run(first_visit())
    [(session_id, _, text)] = kept(apps)
    assert text == first + more
    asyncio.run(come_back())

    assert rows(apps.db, "SELECT session_id, idx, verbal_feedback, feedback_source FROM turns") == [
        (session_id, 0, first + more, "human")
    ]
    assert kept(apps) == []


def test_a_simulator_draft_is_not_kept_but_the_persons_edit_is_and_wins_on_resume(
    apps: AppFactory,
) -> None:
    """Assist mode, plain ``session`` then ``--resume``: the unedited draft comes back from
    the call journal, so nothing is written for it; the person's edit is kept, comes back
    over the draft, and giving up (f9) records it with the turn."""
    edit = " Also keep the letters as keys."
    seen: dict[str, str] = {}

    async def edit_and_leave(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        seen["session"] = screen.controller.session_id or ""
        composer = screen.query_one(FeedbackComposer)
        assert composer.text == NOVICE_SAYS and not composer.typed
        await pilot.pause(KEEP_AFTER_S * 2)
        assert kept(apps) == []  # an unedited draft is not the person's words
        await type_feedback(pilot, edit)
        words = (seen["session"], 0, NOVICE_SAYS + edit)
        await wait_until(pilot, lambda: kept(apps) == [words], "the edit kept")

    async def give_up(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        composer = screen.query_one(FeedbackComposer)
        assert composer.text == NOVICE_SAYS + edit  # the draft offered again does not replace it
        assert composer.border_subtitle == RESTORED
        await pilot.press("f9")
        await pilot.pause()
        await pilot.press("y")
        await wait_until(pilot, phase_is(pilot, "abandoned"), "the session to end")

    play(apps, edit_and_leave, user="assist:novice")
    play(apps, give_up, resume=seen["session"])

    [turn] = rows(
        apps.db,
        "SELECT verbal_feedback, feedback_draft, feedback_edited, feedback_source FROM turns",
    )
    assert turn == (NOVICE_SAYS + edit, NOVICE_SAYS, 1, "human")
    assert rows(apps.db, "SELECT status FROM sessions") == [("abandoned",)]
    assert kept(apps) == []


def test_a_codeif_instruction_being_rewritten_comes_back_with_its_instruction(
    apps: AppFactory,
) -> None:
    """CodeIF-Bench: the person swaps the offered instruction for the last one (u) and edits
    it; on resume the edit is back and still about that instruction, which is what sending
    it records as the turn's draft."""
    order, words, model = offered(apps)
    last = words[-1]
    seen: dict[str, str] = {}

    async def rewrite_and_leave(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        seen["session"] = screen.controller.session_id or ""
        checklist = screen.query_one(InstructionChecklist)
        checklist.focus()
        checklist.move_cursor(row=len(order) - 1)
        await pilot.press("u")
        await pilot.pause()
        composer = screen.query_one(FeedbackComposer)
        composer.focus()
        composer.move_cursor(composer.document.end)
        composer.insert(EDIT)
        await wait_until(
            pilot,
            lambda: (
                rows(apps.db, "SELECT text, instruction FROM typed_feedback")
                == [(last + EDIT, order[-1].category)]
            ),
            "the edit kept with its instruction",
        )

    async def send(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        assert screen.query_one(FeedbackComposer).text == last + EDIT
        assert screen.composing == order[-1].category  # not the order's next, offered again
        await pilot.press("ctrl+j")
        await awaiting_feedback(pilot, turn=1)

    play(apps, rewrite_and_leave, model=model, task=CODEIF_TASK)
    play(apps, send, model=model, task=CODEIF_TASK, resume=seen["session"])

    assert rows(apps.db, "SELECT verbal_feedback, feedback_draft FROM turns") == [
        (last + EDIT, last)
    ]
    assert kept(apps) == []
