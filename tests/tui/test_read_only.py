"""`convtui session --resume ID` on a session that ended opens it read-only: an imported
ConvCodeWorld conversation (the hand-written fixture in the reference's layout) shows every
recorded turn, offers nothing that would play, send or close, and calls no model."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from tui_harness import AppFactory, play, rows, wait_until

from convtui.sessions import Store
from convtui.sessions.exchange.ccw_import import import_logs
from convtui.tui.screens.session_keys import FINISHED
from convtui.tui.widgets.composer import FeedbackComposer
from convtui.tui.widgets.timeline import TurnTimeline

FIXTURE = Path(__file__).parents[1] / "fixtures" / "ccw_static"


def test_an_imported_session_opens_read_only(apps: AppFactory) -> None:
    with Store.open(apps.db) as store:
        (imported,) = import_logs(store, FIXTURE)
        found = {r.task_id: r for r in store.run_sessions(imported.run_id)}
        row = found["BigCodeBench/3"]
        codes = [t.code for t in store.load_turns(row.id)]

    async def scenario(pilot: Pilot) -> None:
        await wait_until(
            pilot, lambda: getattr(pilot.app.screen, "phase", None) in FINISHED, "it to open"
        )
        screen = pilot.app.screen
        assert screen.phase == row.status
        assert [t.code for t in screen.recorded] == codes
        assert not screen.query_one(FeedbackComposer).display
        for action in ("send", "continue", "retry_turn", "give_up", "accept"):
            assert not screen.check_action(action, ())
        # Any recorded turn can be viewed.
        screen.query_one(TurnTimeline).post_message(TurnTimeline.TurnSelected(0))
        await wait_until(pilot, lambda: screen.viewed == 0, "turn 0 to show")
        await pilot.press("f5")
        await pilot.pause(0.2)
        assert screen.phase == row.status

    play(apps, scenario, resume=row.id)
    assert rows(apps.db, "SELECT count(*) FROM model_calls") == [(0,)]
    assert rows(apps.db, "SELECT count(*) FROM turns WHERE session_id = ?", row.id) == [
        (len(codes),)
    ]
