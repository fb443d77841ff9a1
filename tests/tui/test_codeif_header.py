"""A CodeIF-Bench session's header, status line and timeline say what it is (its instructions,
its rounds counted from 1 up to the conversation's limit), not BigCodeBench's Ω and turn budget
(Pilot; a scripted model answering with the task's reference code)."""

from __future__ import annotations

from codeif_offers import TASK, reference_model
from textual.pilot import Pilot
from tui_harness import AppFactory, awaiting_feedback, play

from convtui.core.codeif.conversation import rounds_limit
from convtui.core.codeif.instructions import instructions
from convtui.sessions.reading.browse import list_sessions
from convtui.tui.palette import StoredSessions
from convtui.tui.widgets.status_line import StatusLine
from convtui.tui.widgets.timeline import TurnTimeline


def test_the_header_shows_instructions_and_rounds_not_omega(apps: AppFactory) -> None:
    task = apps.catalog.get(TASK)
    order = instructions(task)
    limit = rounds_limit(order, "person")
    model = reference_model(apps)
    seen: dict[str, str] = {}

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        seen["title"] = str(screen.query_one("#session-title").render())
        seen["status"] = str(screen.query_one(StatusLine).render())
        seen["timeline"] = str(screen.query_one(TurnTimeline).border_subtitle)

    # The harness's config carries Ω and a 3-turn budget, as the command line's would.
    play(apps, scenario, size=(200, 50), model=model, task=TASK, turns=3)
    title, status = seen["title"], seen["status"]
    assert title.startswith(f"{TASK} · {len(order)} instructions · at most {limit} rounds · ")
    for omega in ("CF", "EF:", "VF:"):
        assert omega not in title and omega not in status, (title, status)
    assert f"round 1 of at most {limit}" in status
    assert "of 3" not in status
    assert status.endswith(f"· {len(order)} instructions")
    # The palette's entry for resuming it speaks of rounds too, not Ω or a turn budget, and
    # counts them as the status line does (round 1 waits for the person's answer).
    [session] = list_sessions(apps.store(), status=("running",), interactive=True)
    entry = StoredSessions._title(session, apps.catalog)
    where = f"round 1 of at most {limit}"
    assert entry == f"resume: {TASK} · {where} · {session.user_kind} · {session.id}"
    assert seen["timeline"] == f"1 / {limit}"


def test_a_bigcodebench_session_keeps_its_omega_and_turns(apps: AppFactory) -> None:
    seen: dict[str, str] = {}

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        seen["title"] = str(screen.query_one("#session-title").render())
        seen["status"] = str(screen.query_one(StatusLine).render())

    play(apps, scenario, size=(200, 50), turns=3)
    assert "· CF,EF:full,VF:novice · user: human" in seen["title"]
    assert "turn 0 · 1 of 3" in seen["status"]
