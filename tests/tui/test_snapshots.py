"""Snapshots of the session screen in its key states (pytest-textual-snapshot).

The replies come from a recorded session (seed.py) and the tests really run, so a snapshot
changes only when the screen does. The session is recorded under the embedded model's spec,
which the title shows: the app opens and checks that model but never asks it anything (every
reply it plays is found in the call journal), so no snapshot depends on what it would write.
Frozen: the clock, test durations, the cursor blink, the session id. Textual is pinned exactly
in pyproject.toml: regenerate with ``pytest tests/tui/test_snapshots.py --snapshot-update``
only after reading the report."""

from __future__ import annotations

import pytest
from seed import SESSION_ID, recorded_session
from textual.pilot import Pilot
from tui_harness import REAL_MODEL, AppFactory, config_for, phase_is, wait_until

from convtui.tui import messages as msg
from convtui.tui import render
from convtui.tui.screens.session import SessionScreen
from convtui.tui.widgets.composer import FeedbackComposer

pytestmark = pytest.mark.usefixtures("local_model_available")

TASK = "BigCodeBench/2"
HEADER = "```python\nimport random\nimport statistics\n"
WRONG = HEADER + "def task_func(LETTERS):\n    return {}\n```"
CLOSER = (
    HEADER + "def task_func(LETTERS):\n"
    "    data = {k: [random.randint(0, 100) for _ in range(3)] for k in LETTERS}\n"
    "    return dict(sorted(data.items(), key=lambda kv: statistics.mean(kv[1])))\n```"
)
RIGHT = (
    HEADER + "def task_func(LETTERS):\n"
    "    data = {k: [random.randint(0, 100) for _ in range(random.randint(1, 10))]"
    " for k in LETTERS}\n"
    "    return dict(sorted(data.items(), key=lambda kv: statistics.mean(kv[1]),"
    " reverse=True))\n```"
)
FEEDBACK = "Build the dictionary first, then sort it by the mean of each list, highest first."


@pytest.fixture(autouse=True)
def frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render, "duration", lambda _s: "12 ms")
    monkeypatch.delenv("NO_COLOR", raising=False)


def app_at(apps: AppFactory, replies: list[str], feedback: list[str], **config: object):
    store = apps.store()
    task = apps.catalog.get(TASK)
    recorded = config_for(**config, model=REAL_MODEL)
    recorded_session(store, apps.executor, task, recorded, replies, feedback)
    return apps.app(resume=SESSION_ID, clock=lambda: 0.0, model=REAL_MODEL)


async def settled(pilot: Pilot, *phases: str) -> SessionScreen:
    await wait_until(pilot, phase_is(pilot, *phases), f"phase {phases}")
    screen = pilot.app.screen
    assert isinstance(screen, SessionScreen)
    if screen.phase == "awaiting_feedback":
        await wait_until(pilot, lambda: screen.live is not None and screen.live.result, "tests")
    screen.query_one(FeedbackComposer).cursor_blink = False
    await pilot.pause()
    return screen


class TestLiveTurn:
    def test_awaiting_feedback_on_the_first_turn(self, apps, snap_compare):
        async def run_before(pilot: Pilot) -> None:
            await settled(pilot, "awaiting_feedback")

        app = app_at(apps, [WRONG], [])
        assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)

    def test_feedback_being_typed_on_the_second_turn(self, apps, snap_compare):
        async def run_before(pilot: Pilot) -> None:
            screen = await settled(pilot, "awaiting_feedback")
            screen.query_one(FeedbackComposer).insert("Use [reverse=True] when sorting.")

        app = app_at(apps, [WRONG, CLOSER], [FEEDBACK])
        assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)

    def test_a_reply_streaming_in(self, apps, snap_compare):
        async def run_before(pilot: Pilot) -> None:
            screen = await settled(pilot, "awaiting_feedback")
            # What the controller posts while turn 1's reply streams in.
            screen.post_message(msg.TurnBegan(1))
            screen.post_message(msg.ReplyStreamed(1, CLOSER[:90]))
            await pilot.pause()

        app = app_at(apps, [WRONG, CLOSER], [FEEDBACK])
        assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)

    def test_solved(self, apps, snap_compare):
        async def run_before(pilot: Pilot) -> None:
            await settled(pilot, "solved")

        app = app_at(apps, [WRONG, RIGHT], [FEEDBACK])
        assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


class TestViews:
    def test_diff_against_the_previous_turn(self, apps, snap_compare):
        async def run_before(pilot: Pilot) -> None:
            await settled(pilot, "awaiting_feedback")
            await pilot.press("f2")

        app = app_at(apps, [WRONG, CLOSER], [FEEDBACK])
        assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)

    def test_an_earlier_turn_read_only(self, apps, snap_compare):
        async def run_before(pilot: Pilot) -> None:
            screen = await settled(pilot, "awaiting_feedback")
            screen.viewed = 0
            screen.query_one("#code-tabs").active = "feedback-tab"

        app = app_at(apps, [WRONG, CLOSER], [FEEDBACK])
        assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)

    def test_a_failing_tests_traceback(self, apps, snap_compare):
        async def run_before(pilot: Pilot) -> None:
            screen = await settled(pilot, "awaiting_feedback")
            screen.query_one("#test-table").focus()
            await pilot.press("enter")

        app = app_at(apps, [WRONG, CLOSER], [FEEDBACK])
        assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)

    def test_help(self, apps, snap_compare):
        async def run_before(pilot: Pilot) -> None:
            await settled(pilot, "awaiting_feedback")
            await pilot.press("f1")

        app = app_at(apps, [WRONG], [])
        assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


class TestLook:
    def test_80x24(self, apps, snap_compare):
        async def run_before(pilot: Pilot) -> None:
            await settled(pilot, "awaiting_feedback")

        app = app_at(apps, [WRONG, CLOSER], [FEEDBACK])
        assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)

    def test_light_theme(self, apps, snap_compare):
        async def run_before(pilot: Pilot) -> None:
            await settled(pilot, "awaiting_feedback")
            pilot.app.theme = "textual-light"
            await pilot.pause()

        app = app_at(apps, [WRONG, CLOSER], [FEEDBACK])
        assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)

    def test_no_color(self, apps, snap_compare, monkeypatch):
        monkeypatch.setenv("NO_COLOR", "1")

        async def run_before(pilot: Pilot) -> None:
            await settled(pilot, "awaiting_feedback")

        app = app_at(apps, [WRONG, CLOSER], [FEEDBACK])
        assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)
