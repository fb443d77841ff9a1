"""A person plays the user of a CodeIF-Bench task in the app (Pilot; a scripted model that
always answers with the task's reference code, so the verdicts do not depend on what a model
writes; the real executor and a real SQLite file): the composer holds the next instruction of
the benchmark's order; sending it unchanged records it as the benchmark's words, an edited one
as the person's; the checklist says which instructions the code follows and which were
given, shows an instruction's tests on enter and swaps the composer's instruction on u."""

from __future__ import annotations

import json

from codeif_offers import EDIT, TASK, offered, reference_model
from support.cli import convtui
from textual.pilot import Pilot
from tui_harness import (
    AppFactory,
    awaiting_feedback,
    phase_is,
    play,
    rows,
    wait_until,
)

from convtui.core.codeif.instructions import BASE
from convtui.tui.screens.confirm import ConfirmModal
from convtui.tui.screens.instruction import InstructionModal
from convtui.tui.widgets.composer import FeedbackComposer
from convtui.tui.widgets.instruction_checklist import InstructionChecklist


def test_a_person_gives_instructions_edits_one_and_reads_the_checklist(apps: AppFactory) -> None:
    order, words, model = offered(apps)

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        composer = screen.query_one(FeedbackComposer)
        checklist = screen.query_one(InstructionChecklist)
        # Round 1 gave the task; its code is the reference, which follows the initial
        # instruction. The composer offers the order's next instruction, marked →.
        assert composer.text == words[1]
        assert screen.composing == order[1].category
        first = checklist.rows_shown
        assert [r.instruction.category for r in first] == [i.category for i in order]
        assert first[0].followed is True and first[0].given_in == 1
        assert all(r.given_in is None for r in first[1:])
        assert checklist.get_row_at(1)[0] == "→"
        await pilot.press("ctrl+j")  # send it as offered

        screen = await awaiting_feedback(pilot, turn=1)
        assert composer.text == words[2]
        assert [r.given_in for r in checklist.rows_shown[:3]] == [1, 2, None]
        await append_to_draft(pilot, composer, EDIT)
        assert composer.border_subtitle == "edited draft (sent as human)"
        await pilot.press("ctrl+j")

        screen = await awaiting_feedback(pilot, turn=2)
        # enter on a row shows its words and tests; u swaps the composer's instruction.
        checklist.focus()
        checklist.move_cursor(row=len(order) - 1)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, InstructionModal), "modal")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(pilot.app.screen, InstructionModal), "x")
        checklist.focus()
        checklist.move_cursor(row=len(order) - 1)
        await pilot.press("u")
        await pilot.pause()
        assert composer.text == words[-1]
        assert screen.composing == order[-1].category
        assert checklist.get_row_at(len(order) - 1)[0] == "→"
        await pilot.press("ctrl+j")

        await awaiting_feedback(pilot, turn=3)
        await give_up(pilot)

    play(apps, scenario, model=model, task=TASK)
    found = rows(
        apps.db,
        "SELECT idx, json_extract(received_json, '$.user_source'), "
        "json_extract(received_json, '$.user'), verbal_feedback, feedback_draft, "
        "feedback_source FROM turns ORDER BY idx",
    )
    sources = [r[1] for r in found]
    assert sources == [
        f"codeif:instruction:{BASE}",
        f"codeif:instruction:{order[1].category}",
        f"codeif:instruction:{order[2].category}",
        f"codeif:instruction:{order[-1].category}",
    ]
    # What each round was given is what the person sent after the round before.
    assert [r[2] for r in found[1:]] == [words[1], words[2] + EDIT, words[-1]]
    # Sent as offered: the benchmark's words; edited: the person's, the offer kept as draft.
    assert found[0][3:] == (words[1], words[1], f"codeif:{order[1].category}")
    assert found[1][3:] == (words[2] + EDIT, words[2], "human")
    assert found[2][3:] == (words[-1], words[-1], f"codeif:{order[-1].category}")
    [(status, user_kind)] = rows(apps.db, "SELECT status, user_kind FROM sessions")
    assert (status, user_kind) == ("abandoned", "human")
    # Round i's model input is the conversation so far: (I1, A1, ..., I_i).
    prompts = rows(apps.db, "SELECT prompt_json FROM turns ORDER BY idx")
    assert [len(json.loads(p)) for (p,) in prompts] == [1, 3, 5, 7]

    # The session ended: --resume opens it read-only, every round on the timeline and the
    # checklist as it stood.
    [(session_id,)] = rows(apps.db, "SELECT id FROM sessions")

    async def reopened(pilot: Pilot) -> None:
        await wait_until(pilot, phase_is(pilot, "abandoned"), "the ended session to open")
        screen = pilot.app.screen
        assert len(screen.recorded) == 4
        assert not screen.query_one(FeedbackComposer).display
        assert screen.given == (BASE, order[1].category, order[2].category, order[-1].category)
        shown = screen.query_one(InstructionChecklist).rows_shown
        assert [r.given_in for r in shown if r.given_in] == [1, 2, 3, 4]
        assert shown[0].followed is True
        assert not screen.check_action("retry_turn", ())
        await pilot.press("f5")  # offered nowhere: nothing is played again
        await pilot.pause(0.2)
        assert screen.phase == "abandoned"

    play(apps, reopened, model=model, task=TASK, resume=session_id)
    assert rows(apps.db, "SELECT count(*) FROM turns") == [(4,)]
    assert rows(apps.db, "SELECT count(*) FROM model_calls") == [(4,)]


def test_a_resumed_conversation_sends_what_the_person_sent_before_it_stopped(
    apps: AppFactory,
) -> None:
    """The app stops after the person sent an edited instruction, before answering the
    round it asked for: --resume plays that round with the recorded words (its model call
    comes from the journal) and asks the person about the next one only."""
    order, words, model = offered(apps)

    async def stop_after_sending(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        composer = screen.query_one(FeedbackComposer)
        await append_to_draft(pilot, composer, EDIT)
        await pilot.press("ctrl+j")
        await awaiting_feedback(pilot, turn=1)  # round 2 answered, not yet answered by them

    play(apps, stop_after_sending, model=model, task=TASK)
    [(session_id, status)] = rows(apps.db, "SELECT id, status FROM sessions")
    assert status == "running"
    assert rows(apps.db, "SELECT count(*) FROM model_calls") == [(2,)]

    async def resumed(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot, turn=1)
        # Offered the instruction after the one sent, not asked for round 2's again.
        assert screen.query_one(FeedbackComposer).text == words[2]
        assert screen.given == (BASE, order[1].category)
        await pilot.press("ctrl+j")
        await awaiting_feedback(pilot, turn=2)

    play(apps, resumed, model=model, task=TASK, resume=session_id)
    found = rows(
        apps.db,
        "SELECT idx, json_extract(received_json, '$.user'), verbal_feedback FROM turns "
        "ORDER BY idx",
    )
    assert found == [(0, words[0], words[1] + EDIT), (1, words[1] + EDIT, words[2])]
    # Round 2's call was journaled before the stop: it is reused (recorded as a cache hit)
    # and only round 3 called the model again.
    calls = rows(apps.db, "SELECT turn_idx, cache_hit FROM model_calls ORDER BY id")
    assert calls == [(0, 0), (1, 0), (1, 1), (2, 0)]


def test_a_persons_conversation_replays_against_another_model(apps: AppFactory, tmp_path):
    """bench codeif --logs: the person's words, edits included, are handed to the target
    round by round; no person or simulator is asked; report shows the replay's tables."""
    model = reference_model(apps)

    async def record(pilot: Pilot) -> None:
        await awaiting_feedback(pilot)
        await pilot.press("ctrl+j")
        screen = await awaiting_feedback(pilot, turn=1)
        composer = screen.query_one(FeedbackComposer)
        await append_to_draft(pilot, composer, EDIT)
        await pilot.press("ctrl+j")
        await awaiting_feedback(pilot, turn=2)
        await give_up(pilot)

    play(apps, record, model=model, task=TASK)
    [(reference,)] = rows(apps.db, "SELECT id FROM sessions")
    target = apps.script(
        ["```python\ndef remove_occ(s, ch):\n    return s\n```"], name="target.jsonl"
    )
    out = tmp_path / "replay.db"
    argv = ["bench", "codeif", "--logs", str(apps.db), "--model", target, "--db", str(out)]
    done = convtui(*argv, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["sessions_played"] == 1
    given = rows(
        out,
        "SELECT t.idx, json_extract(t.received_json, '$.user'), s.reference_session_id "
        "FROM turns t JOIN sessions s ON s.id = t.session_id WHERE s.run_id IS NOT NULL "
        "AND s.reference_session_id IS NOT NULL ORDER BY t.idx",
    )
    recorded = rows(
        apps.db, "SELECT idx, json_extract(received_json, '$.user') FROM turns ORDER BY idx"
    )
    assert [(i, u) for i, u, _ in given] == recorded  # the same words, round by round
    assert {r for _, _, r in given} == {reference}
    assert rows(out, "SELECT DISTINCT purpose FROM model_calls") == [("generate",)]
    # The function that ignores its input follows nothing with the initial asserts (the
    # paper's check): the replay's report says so.
    data = json.loads(convtui("report", "--db", str(out), "--json", "--metrics", "paper").stdout)
    [group] = data["codeif"]["groups"]
    assert group["mode"] == "replay" and [r["ia"] for r in group["rounds"]] == [0.0] * 3
    assert data["static"] == []  # not a ConvCodeBench static column
    # The same command again plays nothing; bench static points to bench codeif --logs.
    assert json.loads(convtui(*argv, "--json").stdout)["sessions_played"] == 0
    wrong = convtui("bench", "static", "--logs", str(apps.db), "--model", target, "--db", str(out))
    assert wrong.returncode == 2 and "bench codeif --logs" in wrong.stderr
    assert wrong.stderr.strip().count("\n") == 0


async def append_to_draft(pilot: Pilot, composer: FeedbackComposer, text: str) -> None:
    """The person types ``text`` at the end of the composer's draft."""
    composer.focus()
    composer.move_cursor(composer.document.end)
    composer.insert(text)
    await pilot.pause()


async def give_up(pilot: Pilot) -> None:
    """F9, confirmed: the session ends as abandoned."""
    await pilot.press("f9")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmModal), "confirm")
    await pilot.press("y")
    await wait_until(pilot, phase_is(pilot, "abandoned"), "the session to end")
