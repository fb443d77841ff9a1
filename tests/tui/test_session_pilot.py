"""Whole sessions played through Textual's Pilot on the real parts: the sandbox runs the tests,
the store records every turn. Each test checks the rows written, not only the screen.

The code is scripted (``mock:``, the ``apps`` fixture: turn 0 fails one test, every later turn
fails another) so that outcomes are the same on every machine; tests that need other replies
write their own script. The embedded SmolLM2 plays one session of its own, checked only for
what it cannot change."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from tui_harness import (
    BROKEN,
    NOVICE_SAYS,
    REAL_MODEL,
    WRONG,
    AppFactory,
    awaiting_feedback,
    config_for,
    notices,
    phase_is,
    play,
    record_one_human_turn,
    right,
    rows,
    session_screen,
    type_feedback,
    wait_until,
)

from convtui.tui import make_app
from convtui.tui.app import Launch
from convtui.tui.palette import SessionCommands
from convtui.tui.screens.confirm import ConfirmModal
from convtui.tui.screens.help import HelpModal
from convtui.tui.screens.session import SessionScreen
from convtui.tui.screens.task_picker import TaskPickerScreen
from convtui.tui.widgets.composer import FeedbackComposer
from convtui.tui.widgets.status_line import StatusLine
from convtui.tui.widgets.timeline import TurnTimeline

pytestmark = pytest.mark.slow


def test_feedback_typed_into_the_composer_is_recorded_as_a_human_turn(apps: AppFactory):
    """Scripted: turn 0's code fails one of the task's five tests, whatever a model would
    write."""
    text = "Sort the dictionary by the mean of each list, highest first."

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        title = screen.query_one("#test-table").border_title
        assert title.startswith("Tests · ✗") and "4/5" in title
        await type_feedback(pilot, text)
        await pilot.press("ctrl+j")
        await awaiting_feedback(pilot, turn=1)
        assert [t.idx for t in screen.recorded] == [0]
        assert screen.query_one(FeedbackComposer).text == ""
        labels = [str(o.prompt) for o in screen.query_one(TurnTimeline).options]
        assert labels[0].endswith("· human") and labels[1].startswith("T1")

    play(apps, scenario)
    [(source, verbal, execution_id, passed)] = rows(
        apps.db, "SELECT feedback_source, verbal_feedback, execution_id, passed FROM turns"
    )
    assert (source, verbal, passed) == ("human", text, 0)
    assert rows(apps.db, "SELECT status FROM executions WHERE id = ?", execution_id) == [("fail",)]
    calls = rows(apps.db, "SELECT turn_idx, purpose, status FROM model_calls ORDER BY turn_idx")
    assert ("0", "generate", "ok") in [(str(t), p, s) for t, p, s in calls]
    [(user_kind, turns_done, status)] = rows(
        apps.db, "SELECT user_kind, turns_done, status FROM sessions"
    )
    assert (user_kind, turns_done, status) == ("human", 1, "running")


def test_the_reply_streams_into_the_code_pane_while_the_app_stays_responsive(apps):
    """Scripted: the reply takes a second to stream in, word by word."""
    from convtui.tui import messages as msg

    streamed: list[str] = []
    ready: list[str] = []

    seen: list[object] = []  # strong references, so no id is reused

    def hook(message) -> None:
        if not isinstance(message, msg.ReplyStreamed | msg.ReplyReady):
            return
        if any(m is message for m in seen):  # seen again as it bubbles up to the app
            return
        seen.append(message)
        if isinstance(message, msg.ReplyStreamed):
            streamed.append(message.text)
        elif isinstance(message, msg.ReplyReady):
            ready.append(message.reply)

    async def scenario(pilot: Pilot) -> None:
        await wait_until(pilot, lambda: bool(streamed), "the first streamed text")
        screen = session_screen(pilot)
        assert "streaming" in screen.query_one("#code-pane").border_title
        # Keys are handled while the turn runs (the model writes in another thread).
        await pilot.press("ctrl+t")
        assert screen.query_one("#task-pane").has_class("-collapsed")
        await awaiting_feedback(pilot)
        await pilot.press("escape")  # not busy: escape goes back to the composer
        assert pilot.app.focused is screen.query_one(FeedbackComposer)

    play(apps, scenario, hook=hook, model=apps.script([WRONG], delay_s=1.0))
    [reply] = ready
    assert reply == WRONG and len(streamed) >= 2
    assert all(reply.startswith(part) for part in streamed)
    assert [len(p) for p in streamed] == sorted(len(p) for p in streamed)


def test_empty_feedback_is_refused_with_a_message_and_nothing_is_recorded(apps: AppFactory):
    """Scripted: turn 0 fails a test, so the app waits for feedback."""

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        await type_feedback(pilot, "   \n  ")
        await pilot.press("ctrl+j")
        await pilot.pause(0.3)
        assert screen.phase == "awaiting_feedback"
        assert any("feedback is empty" in n for n in notices(pilot))

    play(apps, scenario)
    assert rows(apps.db, "SELECT count(*) FROM turns") == [(0,)]


def test_text_with_markup_brackets_is_recorded_and_shown_literally(apps: AppFactory):
    """Scripted: turns 0 and 1 fail a test each, so both wait for feedback."""
    text = "Return [bold]dict[/bold] sorted; see [red] and list[int]."

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        await type_feedback(pilot, text)
        await pilot.press("ctrl+j")
        await awaiting_feedback(pilot, turn=1)
        screen.viewed = 0
        await pilot.pause()
        shown = str(screen.query_one("#feedback-text").render())
        assert text in shown

    play(apps, scenario)
    assert rows(apps.db, "SELECT verbal_feedback FROM turns") == [(text,)]


def test_a_simulated_novice_gives_the_feedback_and_the_app_shows_it(apps: AppFactory):
    """Scripted: both turns fail their tests and the novice says NOVICE_SAYS."""

    async def scenario(pilot: Pilot) -> None:
        await wait_until(pilot, phase_is(pilot, "exhausted", "solved", "stalled"), "the end")
        screen = session_screen(pilot)
        assert len(screen.recorded) == 2
        [spoken] = [t.verbal_feedback for t in screen.recorded if t.verbal_feedback]
        assert spoken == NOVICE_SAYS
        # Shown as it is said (a notification, which times out) and kept with its turn.
        screen.viewed = 0
        await pilot.pause()
        shown = str(screen.query_one("#feedback-text").render())
        assert spoken in shown and "novice simulator" in shown

    play(apps, scenario, user="novice", turns=2)
    turns = rows(apps.db, "SELECT idx, feedback_source, verbal_feedback FROM turns ORDER BY idx")
    assert [t[0] for t in turns] == [0, 1]
    # The novice is asked about turn 0 only: the last turn gets no feedback.
    assert turns[0][1:] == (f"simulator:novice:{apps.model}", NOVICE_SAYS)
    assert turns[1][1:] == ("none", None)
    simulate = rows(apps.db, "SELECT status FROM model_calls WHERE purpose = 'simulate'")
    assert simulate and {s for (s,) in simulate} == {"ok"}
    assert rows(apps.db, "SELECT user_kind, status FROM sessions") == [("simulator", "exhausted")]


@pytest.mark.parametrize("edit", [True, False], ids=["edited", "sent-as-drafted"])
def test_an_assisted_draft_is_recorded_with_what_was_sent(apps: AppFactory, edit: bool):
    """Scripted: the simulator drafts NOVICE_SAYS about turn 0's failing test."""
    seen: dict[str, str] = {}

    async def scenario(pilot: Pilot) -> None:
        await awaiting_feedback(pilot)
        composer = pilot.app.screen.query_one(FeedbackComposer)
        seen["draft"] = composer.text
        assert composer.text == NOVICE_SAYS
        assert composer.text and "draft by simulator:novice" in composer.border_subtitle
        assert pilot.app.screen.unsaved_work == ""  # resuming brings the draft back
        if edit:
            await type_feedback(pilot, " Also keep the letters as keys.")
            assert composer.border_subtitle == "edited draft (sent as human)"
            # Leaving would lose nothing: the edited words are kept in the store as typed.
            assert pilot.app.screen.unsaved_work == ""
        seen["sent"] = composer.text.strip()
        await pilot.press("ctrl+j")
        await awaiting_feedback(pilot, turn=1)

    play(apps, scenario, user="assist:novice")
    [(draft, edited, verbal, source, simulate_call)] = rows(
        apps.db,
        "SELECT feedback_draft, feedback_edited, verbal_feedback, feedback_source, "
        "simulate_call_id FROM turns",
    )
    assert draft == seen["draft"] and verbal == seen["sent"]
    assert edited == int(edit)
    assert source == ("human" if edit else f"simulator:novice:{apps.model}")
    assert simulate_call is not None
    assert rows(apps.db, "SELECT user_kind FROM sessions") == [("assist",)]


def test_cancelling_a_turn_saves_nothing_and_the_turn_can_run_again(apps: AppFactory):
    """Scripted: the reply takes two seconds, time enough to cancel it."""

    async def scenario(pilot: Pilot) -> None:
        await wait_until(pilot, phase_is(pilot, "generating"), "the model to start")
        await pilot.press("escape")
        await wait_until(pilot, phase_is(pilot, "cancelled"), "the cancel")
        assert rows(apps.db, "SELECT count(*) FROM turns") == [(0,)]
        await pilot.press("f5")
        await awaiting_feedback(pilot)

    play(apps, scenario, model=apps.script([WRONG], delay_s=2.0))
    statuses = rows(apps.db, "SELECT status FROM model_calls WHERE turn_idx = 0 ORDER BY rowid")
    assert statuses[0] in [("abandoned",), ("ok",)]  # cancelled mid-call, or just after it
    assert statuses[-1] == ("ok",)
    assert rows(apps.db, "SELECT count(*) FROM turns") == [(0,)]
    assert rows(apps.db, "SELECT status FROM sessions") == [("running",)]


def test_accepting_as_solved_records_the_turn_and_ends_the_session(apps: AppFactory):
    """Scripted: turn 0 fails a test; the person accepts it anyway."""

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        await pilot.press("f8")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmModal), "confirm")
        await pilot.press("y")
        await wait_until(pilot, phase_is(pilot, "accepted"), "the session to end")
        assert screen.query_one(FeedbackComposer).ready is False

    play(apps, scenario)
    assert rows(apps.db, "SELECT idx, passed, verbal_feedback FROM turns") == [(0, 0, None)]
    assert rows(apps.db, "SELECT status, first_pass_turn FROM sessions") == [("accepted", None)]


def test_viewing_an_earlier_turn_is_read_only_and_end_returns_to_the_live_turn(apps):
    """Scripted: turns 0 and 1 fail a test each, so both wait for feedback."""

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        await type_feedback(pilot, "Use statistics.mean.")
        await pilot.press("ctrl+j")
        await awaiting_feedback(pilot, turn=1)
        screen.query_one(TurnTimeline).focus()
        await pilot.press("home", "enter")
        banner = screen.query_one("#viewing-banner")
        assert screen.viewed == 0 and banner.display
        assert "viewing turn 0 of 1" in str(banner.render())
        assert screen.query_one("#code-pane").border_title == "Code · turn 0"
        await pilot.press("end")
        assert screen.viewed is None and not banner.display
        assert screen.query_one("#code-pane").border_title == "Code · turn 1"

    play(apps, scenario)


def test_every_footer_key_is_in_help_and_the_palette_offers_only_valid_commands(apps):
    """Scripted: turn 0 fails a test, so the app waits for feedback."""

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        footer = {
            b.binding.description
            for b in screen.active_bindings.values()
            if b.binding.show and b.binding.description
        }
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, HelpModal), "help")
        helped = {row[1] for row in pilot.app.screen._rows}
        assert footer <= helped
        await pilot.press("escape")
        offered = {title for title, _, _ in SessionCommands(screen)._offered()}
        assert {"feedback: send", "tests: re-run", "session: accept as solved"} <= offered
        assert "turn: retry" not in offered

    play(apps, scenario)


def test_the_session_fits_80x24_with_code_tests_and_composer_in_view(apps: AppFactory):
    """Scripted: turn 0 fails a test, so the app waits for feedback."""

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        for selector in ("#code-pane", "#test-table", "#feedback-composer", "#status-line"):
            region = screen.query_one(selector).region
            assert region.height > 0 and region.bottom <= 24, (selector, region)
        assert not screen.query_one("#timeline").region.width  # hidden below 100 columns
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert screen.query_one("#timeline").region.width > 0

    play(apps, scenario, size=(80, 24))


def test_resuming_after_the_app_was_killed_loses_only_the_turn_in_flight(
    apps: AppFactory, tmp_path: Path
):
    """The first app is a separate process killed with SIGKILL while turn 1 waits for
    feedback; the resumed app shows turn 0 and reuses turn 1's finished model call.
    Scripted: every turn fails a test, so the session runs to its turn limit."""
    import os
    import signal
    import subprocess
    import sys
    import textwrap

    from support.data import DATA as DATA_DIR

    script = tmp_path / "first_app.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import asyncio, sys
            sys.path.insert(0, {str(Path(__file__).parent)!r})
            from tui_harness import AppFactory
            from convtui.core.execution.executor import Executor
            from convtui.core.catalog.loaders import load_catalog
            from tui_harness import awaiting_feedback, type_feedback

            async def main():
                with Executor(jobs=1) as executor:
                    apps = AppFactory(
                        __import__("pathlib").Path({str(apps.db)!r}), executor,
                        load_catalog("all", {str(DATA_DIR)!r}), {apps.model!r},
                    )
                    app = apps.app()
                    async with app.run_test(size=(120, 40)) as pilot:
                        await awaiting_feedback(pilot)
                        await type_feedback(pilot, "Use statistics.mean.")
                        await pilot.press("ctrl+j")
                        await awaiting_feedback(pilot, turn=1)
                        print("WAITING", flush=True)
                        await asyncio.sleep(600)

            asyncio.run(main())
            """
        )
    )
    child = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "WAITING"
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    [(session_id, status, turns_done)] = rows(
        apps.db, "SELECT id, status, turns_done FROM sessions"
    )
    assert (status, turns_done) == ("running", 1)
    calls_before = rows(apps.db, "SELECT count(*) FROM model_calls WHERE cache_hit = 0")

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot, turn=1)
        assert [t.idx for t in screen.recorded] == [0]
        assert screen.recorded[0].verbal_feedback == "Use statistics.mean."
        await type_feedback(pilot, "Return a dict.")
        await pilot.press("ctrl+j")
        await wait_until(pilot, phase_is(pilot, "exhausted", "solved"), "the last turn")

    play(apps, scenario, resume=session_id)
    turns = rows(apps.db, "SELECT idx, verbal_feedback FROM turns ORDER BY idx")
    assert turns == [(0, "Use statistics.mean."), (1, "Return a dict."), (2, None)]
    # Turn 1's reply was paid for by the killed app; the resumed one reused it.
    fresh = rows(apps.db, "SELECT count(*) FROM model_calls WHERE cache_hit = 0")
    assert fresh[0][0] == calls_before[0][0] + 1  # only turn 2 was generated anew
    assert rows(apps.db, "SELECT status FROM sessions") == [("exhausted",)]


def test_the_palette_resumes_a_recorded_session(apps: AppFactory):
    """Scripted: turns 0 and 1 fail a test each, so both wait for feedback."""
    session_id = record_one_human_turn(apps, "Use statistics.mean.")

    async def main() -> None:
        config = config_for(model=apps.model)
        app = make_app(apps.services(), Launch(apps.catalog, config))  # opens on the picker
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, TaskPickerScreen), "picker")
            await pilot.press("ctrl+p")
            await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "palette")
            await pilot.press(*"resume")

            def top_hit() -> str:
                hits = app.screen.query_one(CommandList)
                return str(hits.get_option_at_index(0).prompt) if hits.option_count else ""

            await wait_until(pilot, lambda: top_hit().startswith("resume: BigCodeBench/2"), "hit")
            assert session_id in top_hit()
            offered = top_hit()
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen), "resume")
            screen = await awaiting_feedback(pilot, turn=1)
            assert screen.controller.session_id == session_id
            # The palette counted the turns as the status line counts them once resumed.
            status = str(screen.query_one(StatusLine).render())
            assert status.startswith("turn 1 · 2 of 3 · ")
            assert offered.startswith("resume: BigCodeBench/2 · turn 1 · 2 of 3 · ")
            assert [t.verbal_feedback for t in screen.recorded] == ["Use statistics.mean."]
            assert not any(isinstance(s, TaskPickerScreen) for s in pilot.app.screen_stack)

    asyncio.run(main())
    assert rows(apps.db, "SELECT count(*) FROM sessions") == [(1,)]


def test_a_reply_that_does_not_compile_sends_the_compiler_error_to_the_next_turn(apps):
    """Scripted: turn 0's code has a syntax error, turn 1 is the ground truth."""

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        title = screen.query_one("#test-table").border_title
        assert title.startswith("Tests · ! ERROR") and "0/5" in title
        await type_feedback(pilot, "Close the bracket.")
        await pilot.press("ctrl+j")
        await wait_until(pilot, phase_is(pilot, "solved"), "the fixed turn to pass")

    play(apps, scenario, model=apps.script([BROKEN, right(apps.catalog)]))
    [(session_id,)] = rows(apps.db, "SELECT id FROM sessions")
    first, second = apps.store().load_turns(session_id)
    assert (first.compiled, first.passed, second.compiled, second.passed) == (
        False,
        False,
        True,
        True,
    )
    assert "SyntaxError" in first.compile_feedback
    # What the model was asked at turn 1 carries the compiler's words and the person's.
    asked = second.prompt[-1].content
    assert "SyntaxError" in asked and "Close the bracket." in asked


def test_a_reply_that_passes_ends_the_session_solved(apps: AppFactory):
    """Scripted: turn 0 fails a test; turn 1 is the task's ground truth, which passes."""

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        await type_feedback(pilot, "Every letter should be a key.")
        await pilot.press("ctrl+j")
        await wait_until(pilot, phase_is(pilot, "solved"), "the session to be solved")
        assert screen.query_one("#test-table").border_title.startswith("Tests · ✓")
        assert screen.query_one(FeedbackComposer).ready is False

    play(apps, scenario, model=apps.script([WRONG, right(apps.catalog)]))
    assert rows(apps.db, "SELECT idx, passed FROM turns ORDER BY idx") == [(0, 0), (1, 1)]
    assert rows(apps.db, "SELECT status, first_pass_turn FROM sessions") == [("solved", 1)]
    statuses = rows(apps.db, "SELECT DISTINCT status FROM executions ORDER BY status")
    assert statuses == [("fail",), ("pass",)]


def test_the_embedded_model_plays_a_turn_that_is_recorded_whatever_it_writes(real_apps):
    """The real SmolLM2 through llama.cpp: its code and its tests' outcome are its own, so
    this checks only what it cannot change. The reply streams as growing prefixes of what is
    recorded, turn 0 is saved with the generate call that wrote it, and the call is
    journaled with its token counts."""
    from convtui.tui import messages as msg

    streamed: list[str] = []

    def hook(message) -> None:
        if isinstance(message, msg.ReplyStreamed) and message.idx == 0:
            streamed.append(message.text)

    async def scenario(pilot: Pilot) -> None:
        await wait_until(
            pilot, phase_is(pilot, "awaiting_feedback", "solved"), "turn 0 to be tested"
        )
        screen = session_screen(pilot)
        await wait_until(pilot, lambda: screen.live is not None and screen.live.result, "tests")
        if screen.phase == "awaiting_feedback":
            await type_feedback(pilot, "Sort by the mean, highest first.")
            await pilot.press("ctrl+j")
        await wait_until(pilot, lambda: len(screen.recorded) >= 1, "turn 0 to be saved")

    play(real_apps, scenario, hook=hook)
    [(reply, call_id)] = rows(
        real_apps.db,
        "SELECT t.reply, r.generate_call_id FROM turn_texts t JOIN turns r "
        "ON r.session_id = t.session_id AND r.idx = t.idx WHERE t.idx = 0",
    )
    assert all(reply.startswith(part) for part in streamed)
    [(purpose, status, model, tokens_out, response)] = rows(
        real_apps.db,
        "SELECT purpose, status, model, output_tokens, response FROM model_call_texts WHERE id = ?",
        call_id,
    )
    assert (purpose, status, model) == ("generate", "ok", REAL_MODEL)
    assert response == reply and tokens_out > 0
    assert rows(real_apps.db, "SELECT model FROM sessions") == [(REAL_MODEL,)]
