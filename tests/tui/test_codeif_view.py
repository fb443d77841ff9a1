"""A `bench codeif` conversation opens in the app's turn view (`convtui session --resume ID`):
read-only, every round on the timeline, the checklist with the instructions given and what
the last round's code follows. The rounds are a scripted model's (``mock:``, the task's
reference code every round, so the verdicts do not depend on what a model writes), run
through the real executor into a real SQLite file."""

from __future__ import annotations

import json

from codeif_offers import TASK, reference_model
from support.cli import convtui
from textual.pilot import Pilot
from tui_harness import AppFactory, fenced, play, rows, wait_until

from convtui.core.codeif.instructions import instructions
from convtui.tui.screens.session_keys import FINISHED
from convtui.tui.widgets.composer import FeedbackComposer
from convtui.tui.widgets.instruction_checklist import InstructionChecklist


def test_a_static_benchmark_conversation_opens_read_only_with_its_checklist(
    apps: AppFactory,
) -> None:
    task = apps.catalog.get(TASK)
    order = instructions(task)
    model = reference_model(apps)
    argv = ["bench", "codeif", "--mode", "static", "--model", model, "--ids", "11"]
    done = convtui(*argv, "--db", str(apps.db), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["sessions_played"] == 1
    [(session_id, status)] = rows(apps.db, "SELECT id, status FROM sessions")
    calls = rows(apps.db, "SELECT count(*) FROM model_calls")

    async def scenario(pilot: Pilot) -> None:
        await wait_until(
            pilot, lambda: getattr(pilot.app.screen, "phase", None) in FINISHED, "it to open"
        )
        screen = pilot.app.screen
        assert screen.phase == status
        assert len(screen.recorded) == len(order)
        assert not screen.query_one(FeedbackComposer).display
        assert screen.given == tuple(i.category for i in order)
        shown = screen.query_one(InstructionChecklist).rows_shown
        assert [r.given_in for r in shown] == list(range(1, len(order) + 1))
        assert shown[0].followed is True  # the reference code follows the initial instruction

    play(apps, scenario, resume=session_id)
    assert rows(apps.db, "SELECT count(*) FROM model_calls") == calls


def test_a_dynamic_conversation_of_the_authors_script_opens_read_only(apps: AppFactory) -> None:
    """``--mode dynamic --protocol codeif`` (core/codeif/authors_dynamic.py): turn 1's code
    returns its input, so it misses the initial instruction and turn 2 retries it; turn 2's
    code removes the first and the last occurrence, annotated, and passes it, so turn 3 gives
    Input-Output Conditions, which that code misses (the dataset's own assert wants "bann"
    for "banana"), and so does turn 4, its retry: it is removed, the code follows every
    instruction left, and the conversation ends after 4 turns."""
    identity = fenced("def remove_occ(s, ch):\n    return s\n")
    first_last = fenced(
        "def remove_occ(s: str, ch: str) -> str:\n    first = s.find(ch)\n"
        "    if first == -1:\n        return s\n    s = s[:first] + s[first + 1:]\n"
        "    last = s.rfind(ch)\n    if last == -1:\n        return s\n"
        "    return s[:last] + s[last + 1:]\n"
    )
    model = apps.script([identity, first_last], name="dynamic.jsonl")
    argv = ["bench", "codeif", "--mode", "dynamic", "--protocol", "codeif", "--model", model]
    done = convtui(*argv, "--ids", "11", "--db", str(apps.db), "--json")
    assert done.returncode == 0, done.stderr
    [(session_id, status)] = rows(apps.db, "SELECT id, status FROM sessions")
    calls = rows(apps.db, "SELECT count(*) FROM model_calls")
    io = "Input-Output Conditions"

    async def scenario(pilot: Pilot) -> None:
        await wait_until(
            pilot, lambda: getattr(pilot.app.screen, "phase", None) in FINISHED, "it to open"
        )
        screen = pilot.app.screen
        assert screen.phase == status == "exhausted"
        assert len(screen.recorded) == 4
        assert not screen.query_one(FeedbackComposer).display
        assert screen.given == ("Base", io)
        shown = {
            r.instruction.category: r for r in screen.query_one(InstructionChecklist).rows_shown
        }
        assert (shown["Base"].given_in, shown[io].given_in) == (1, 2)
        assert shown["Base"].followed is True and shown[io].followed is False

    play(apps, scenario, resume=session_id)
    assert rows(apps.db, "SELECT count(*) FROM model_calls") == calls
