"""A person's session, recorded through the app (Pilot, scripted code), replayed by
`convtui bench static` against the embedded SmolLM2: what a human typed is handed to the
target word for word, no simulator is asked, and a turn where the person said nothing replays
with no verbal feedback. What SmolLM2 writes is not checked; only what it cannot change."""

from __future__ import annotations

import json
import sqlite3

import pytest
from support.cli import invoke
from textual.pilot import Pilot
from tui_harness import (
    AppFactory,
    awaiting_feedback,
    phase_is,
    play,
    type_feedback,
    wait_until,
)

from convtui.tui.screens.confirm import ConfirmModal
from convtui.tui.widgets.composer import FeedbackComposer

pytestmark = pytest.mark.slow

SAID = "Sort the dictionary by the mean of each list, highest first."


def test_a_human_session_from_the_app_replays_against_the_embedded_model(
    apps: AppFactory, local_model_available: None, tmp_path, monkeypatch
):
    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        await type_feedback(pilot, SAID)
        await pilot.press("ctrl+j")
        await awaiting_feedback(pilot, turn=1)
        assert screen.query_one(FeedbackComposer).text == ""
        # Turn 1 fails too; the person gives up on it without a word: accepted as it is.
        await pilot.press("f8")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmModal), "confirm")
        await pilot.press("y")
        await wait_until(pilot, phase_is(pilot, "accepted"), "the session to end")

    play(apps, scenario)
    replay_db = tmp_path / "replay.db"
    done = invoke(
        "bench", "static", "--logs", str(apps.db), "--db", str(replay_db),
        "--model", "local:smollm2", "--user", "human", "--max-tokens", "64", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (run,) = json.loads(done.stdout)["runs"]
    assert (run["references"], run["failed"]) == (1, 0)
    with sqlite3.connect(replay_db) as conn:
        [(session_id, reference_id, user_kind)] = conn.execute(
            "SELECT s.id, s.reference_session_id, s.user_kind FROM sessions s "
            "JOIN runs r ON r.id = s.run_id WHERE r.kind = 'static'"
        ).fetchall()
        assert user_kind == "human"
        human = conn.execute(
            "SELECT idx, verbal_feedback FROM turns WHERE session_id = ? ORDER BY idx",
            (reference_id,),
        ).fetchall()
        assert human == [(0, SAID), (1, None)]
        # Each generate call's last message: what the target is told about the code it got.
        prompts = {
            idx: conn.execute(
                "SELECT text FROM blobs WHERE hash = ?", (json.loads(refs)[-1][1],)
            ).fetchone()[0]
            for idx, refs in conn.execute(
                "SELECT turn_idx, messages_json FROM model_calls WHERE session_id = ? "
                "AND purpose = 'generate'",
                (session_id,),
            )
        }
        purposes = {p for (p,) in conn.execute("SELECT purpose FROM model_calls")}
        replayed = [i for (i,) in conn.execute(
            "SELECT idx FROM turns WHERE session_id = ? ORDER BY idx", (session_id,))]  # fmt: skip
    # Turn 1 is handed the person's words; turn 2 the turn they said nothing about.
    assert SAID in prompts[1]
    assert 2 in prompts and SAID not in prompts[2]
    assert replayed[:3] == [0, 1, 2]
    # The words were typed once, in the app; nothing stood in for the person.
    assert "simulate" not in purposes
