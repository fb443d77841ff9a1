"""Every model call of a turn in the turn view, one line each in the order made: position,
purpose, kind, tokens in→out, latency, and the error of one that failed. Under
``--protocol convcodeworld`` a feedback turn makes several (repairs of code that does not
compile, the simulated user, the code call), and the feedback pane shows first what those
calls were given: the user's words are ``Turn.received.user``, not ``verbal_feedback``.

Scripted (``mock:FILE``, core/models/mock.py): the replies are fixed, so the calls each turn
makes are known in advance; token counts are the script's word counts. The tests really run
in the sandbox and every call is a row of a SQLite store in tmp_path."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from scripted import ended, run, screen_of, text_of
from textual.pilot import Pilot
from tui_harness import (
    NOVICE_SAYS,
    WRONG,
    AppFactory,
    awaiting_feedback,
    play,
    rows,
    wait_until,
)

from convtui.core.catalog.loaders import TaskCatalog
from convtui.core.execution.executor import Executor
from convtui.core.settings.omega import parse_feedback
from convtui.core.settings.protocol import build_config
from convtui.core.turns.record import TurnFeedback
from convtui.sessions.reading.browse import CallLine
from convtui.tui import make_app, render
from convtui.tui.app import Launch
from convtui.tui.controller import SessionPlan
from convtui.tui.turn_calls import read_calls
from convtui.tui.viewmodels import TurnView
from convtui.tui.widgets.call_list import CallList
from convtui.tui.widgets.feedback_pane import feedback_text
from convtui.tui.widgets.simulated_feedback import SimulatedFeedback

TASK = "BigCodeBench/2"
# ConvCodeWorld's feedback turns answer in DSPy's chain-of-thought shape: the rest of the
# "Reasoning:" line, then the "Code:" field (core/ccw/template.py parses it). Turn 0 is a
# plain reply whose code compiles and fails a test, so turn 1 is a feedback turn on code
# that compiles; turn 1's own code does not, so turn 2 repairs it first.
FAILING = "```python\ndef task_func(LETTERS):\n    return {}\n```"
BROKEN = "fix it.\nCode: ```python\ndef task_func(LETTERS):\n    return {\n```"
STILL_BROKEN = "fix it.\nCode: ```python\ndef task_func(LETTERS):\n    return [\n```"
HINT = "help.\nUser Feedback: Every letter should be a key, sorted by the mean."
SAID = "Every letter should be a key, sorted by the mean."


def purposes(calls: tuple[CallLine, ...]) -> list[tuple[int, str, str, str]]:
    return [(c.seq, c.purpose, c.kind, c.status) for c in calls]


def call_list(pilot: Pilot) -> CallList:
    return screen_of(pilot).query_one(CallList)


async def view_turn(pilot: Pilot, idx: int) -> None:
    """Show recorded turn ``idx`` read-only, on the Feedback tab."""
    screen = screen_of(pilot)
    screen.viewed = idx
    screen.query_one("#code-tabs").active = "feedback-tab"  # type: ignore[attr-defined]
    await pilot.pause()


async def calls_of(pilot: Pilot, idx: int) -> list[tuple[int, str, str, str]]:
    """Recorded turn ``idx``'s calls list as the turn view shows it: (seq, purpose, kind,
    status) each."""
    await view_turn(pilot, idx)
    return purposes(call_list(pilot).calls)


# --- pure helpers -----------------------------------------------------------------------------


def test_a_call_line_names_position_purpose_kind_tokens_and_latency():
    call = CallLine(
        0, 1, "repair", "text", "ok", input_tokens=412, output_tokens=38, latency_s=0.41
    )
    assert render.call_line(call) == " 1 repair   text      412→38 tok   410 ms"


def test_a_failed_call_shows_the_first_line_of_its_error_on_its_line():
    call = CallLine(0, 0, "generate", "chat", "error", error="rate limited\nretry after 2 s")
    line = render.call_line(call)
    assert line.startswith(" 0 generate chat") and line.endswith("! ERROR: rate limited")
    long = render.call_line(CallLine(0, 0, "simulate", "text", "error", error="x" * 500))
    assert len(long) < 160 and long.endswith("…")


def test_a_reused_call_running_call_or_abandoned_call_says_so():
    reused = CallLine(0, 0, "generate", "chat", "ok", True, 120, 40, 0.75)
    assert render.call_line(reused).endswith("120→40 tok   reused")
    assert render.call_line(CallLine(0, 2, "stale_ef", "text", "started")).endswith("… running")
    assert "abandoned" in render.call_line(CallLine(0, 0, "generate", "chat", "abandoned"))


def test_a_convcodeworld_turn_shows_first_what_its_calls_were_given():
    given = TurnFeedback("No errors.", None, SAID, "simulator:expert:mock:x")
    turn = TurnView(2, compile_feedback="ok", received=given, saved=True)
    text = feedback_text(turn, execution_on=True, user_inside_turn=True).plain
    assert text.startswith("What the model was given this turn\n")
    assert "User feedback · expert simulator\n" + SAID in text
    assert "Execution feedback\n(not given)" in text
    # Its own verbal part is asked for inside the next turn, never "no feedback".
    assert "asked inside the next turn" in text and "no feedback" not in text
    unasked = TurnView(2, received=TurnFeedback("No syntax errors", None, None), saved=True)
    assert "User feedback\n(not given)" in feedback_text(unasked, execution_on=True).plain
    plain = feedback_text(TurnView(0, saved=True), execution_on=True).plain
    assert "What the model was given" not in plain


def test_without_a_store_there_is_no_call_to_list():
    assert read_calls(None, "any-session") == {}


# --- on screen: --protocol convtui ------------------------------------------------------------


def test_the_live_turn_lists_its_code_call_with_tokens_as_soon_as_it_is_made(
    apps: AppFactory,
):
    async def scenario(pilot: Pilot) -> None:
        await awaiting_feedback(pilot)
        shown = call_list(pilot)
        assert shown.display
        [call] = shown.calls
        assert purposes(shown.calls) == [(0, "generate", "chat", "ok")]
        assert call.output_tokens == len(WRONG.split()) and call.input_tokens
        line = str(shown.render())
        assert line.startswith("Model calls this turn")
        [listed] = line.splitlines()[1:]
        tokens = f"{call.input_tokens}→{call.output_tokens}"
        assert listed.split()[:5] == ["0", "generate", "chat", tokens, "tok"]

    play(apps, scenario)


def test_a_simulated_users_call_follows_the_code_call_of_its_turn(apps: AppFactory):
    async def scenario(pilot: Pilot) -> None:
        await ended(pilot, "exhausted", "solved", "stalled")
        assert await calls_of(pilot, 0) == [
            (0, "generate", "chat", "ok"),
            (0, "simulate", "chat", "ok"),
        ]
        assert call_list(pilot).calls[1].output_tokens == len(NOVICE_SAYS.split())
        # The last turn asks no one: its code call alone.
        assert await calls_of(pilot, 1) == [(0, "generate", "chat", "ok")]

    play(apps, scenario, user="novice", turns=2)


def test_a_failed_model_call_is_listed_with_its_error(apps: AppFactory, tmp_path: Path):
    """Scripted: the script has no generate row, so the code call fails for good."""
    script = tmp_path / "no-code.jsonl"
    script.write_text(json.dumps({"purpose": "simulate", "text": "hm"}) + "\n")

    async def scenario(pilot: Pilot) -> None:
        await ended(pilot, "failed")
        screen_of(pilot).query_one("#code-tabs").active = "feedback-tab"  # type: ignore[attr-defined]
        await pilot.pause()
        [call] = call_list(pilot).calls
        assert (call.purpose, call.status) == ("generate", "error")
        assert "has no generate rows" in call.error
        [line] = str(call_list(pilot).render()).splitlines()[1:]
        assert line.startswith(" 0 generate chat  ! ERROR: mock:")

    play(apps, scenario, model=f"mock:{script}")
    assert rows(apps.db, "SELECT purpose, status FROM model_calls") == [("generate", "error")]


# --- on screen: --protocol convcodeworld ------------------------------------------------------


class CcwApps(AppFactory):
    """Apps playing ``--protocol convcodeworld`` sessions with an expert simulator, the code
    model and the simulator both the scripted ``rows`` (purpose, text)."""

    def play(
        self,
        script_rows: list[tuple[str, str]] | list[dict[str, object]],
        scenario: Callable[[Pilot], object],
        turns: int,
    ) -> None:
        """Play ``scenario`` on a script of (purpose, text) rows, or of whole script rows."""
        script = self.db.parent / "ccw.jsonl"
        lines = [
            row if isinstance(row, dict) else {"purpose": row[0], "text": row[1]}
            for row in script_rows
        ]
        script.write_text("".join(json.dumps(line) + "\n" for line in lines))
        spec = f"mock:{script}"
        [omega] = parse_feedback("CF,EF:full,VF:expert")
        config = build_config(
            "convcodeworld", model=spec, feedback=omega, simulator=spec, turns=turns
        )
        services = self.services(spec, clock=lambda: 0)
        plan = SessionPlan(self.catalog.get(TASK), config, "expert")
        run(make_app(services, Launch(self.catalog, config, "expert", plan)), scenario, (120, 40))


@pytest.fixture
def ccw(tmp_path: Path, executor: Executor, catalog: TaskCatalog) -> Iterator[CcwApps]:
    factory = CcwApps(tmp_path / "sessions.db", executor, catalog)
    yield factory
    factory.close()


def _fixed(catalog: TaskCatalog) -> str:
    """The task's ground truth as a feedback turn's reply: it passes every test."""
    truth = catalog.get(TASK).ground_truth
    return f"fix it.\nCode: ```python\ndef task_func{truth.split('def task_func', 1)[1]}\n```"


def test_a_convcodeworld_turn_lists_its_repair_simulator_and_code_calls_in_order(
    ccw: CcwApps, catalog: TaskCatalog
):
    """Turn 2 starts from turn 1's code, which does not compile: one repair makes it
    compile, the expert reviews the repaired code, and the code call answers the expert."""
    script = [
        ("generate", FAILING),
        ("generate", BROKEN),
        ("repair", _fixed(catalog)),
        ("simulate", HINT),
        ("generate", _fixed(catalog)),
    ]

    async def scenario(pilot: Pilot) -> None:
        screen = await ended(pilot, "solved", "exhausted", "stalled")
        assert len(screen.recorded) == 3
        assert await calls_of(pilot, 2) == [
            (0, "repair", "text", "ok"),
            (1, "simulate", "text", "ok"),
            (2, "generate", "text", "ok"),
        ]
        lines = str(call_list(pilot).render()).splitlines()[1:]
        assert [line.split()[:3] for line in lines] == [
            ["0", "repair", "text"],
            ["1", "simulate", "text"],
            ["2", "generate", "text"],
        ]
        # What the code model was given inside the turn: the expert's words among it.
        shown = text_of(pilot, "#feedback-text")
        assert shown.startswith("What the model was given this turn")
        assert f"User feedback · expert simulator\n{SAID}" in shown
        # The expert's pane shows them with the turn that was given them.
        pane = screen.query_one(SimulatedFeedback)
        assert pane.border_title == "Feedback · expert simulator inside turn 2"
        assert SAID in text_of(pilot, "#simulated-text")
        # Turn 1 built on code that compiled: the expert first, then the code call.
        assert await calls_of(pilot, 1) == [
            (0, "simulate", "text", "ok"),
            (1, "generate", "text", "ok"),
        ]

    ccw.play(script, scenario, turns=2)
    [(turn2,)] = rows(ccw.db, "SELECT count(*) FROM model_calls WHERE turn_idx = 2")
    assert turn2 == 3


def test_code_that_stays_broken_lists_three_repair_calls_and_no_simulator(ccw: CcwApps):
    script = [
        ("generate", FAILING),
        ("generate", BROKEN),
        ("repair", STILL_BROKEN),
        ("simulate", HINT),
    ]

    async def scenario(pilot: Pilot) -> None:
        await ended(pilot, "exhausted", "stalled", "solved")
        # pot.py's forward: up to three code calls while the code does not compile, and the
        # hop limit ends the turn before the expert is asked.
        assert await calls_of(pilot, 2) == [
            (0, "repair", "text", "ok"),
            (1, "repair", "text", "ok"),
            (2, "repair", "text", "ok"),
        ]
        assert "User feedback\n(not given)" in text_of(pilot, "#feedback-text")
        expert = "The expert simulator was not asked inside turn 2."
        assert text_of(pilot, "#simulated-text") == expert

    ccw.play(script, scenario, turns=2)


def test_a_live_convcodeworld_turn_lists_each_call_as_it_is_made(ccw: CcwApps):
    """Scripted: turn 1's code call streams for minutes, so the turn is caught in flight
    (the app's exit cancels it)."""
    script: list[dict[str, object]] = [
        {"purpose": "generate", "text": FAILING},
        {"purpose": "simulate", "text": HINT},
        {"purpose": "generate", "text": BROKEN, "turn": 1, "delay_s": 120.0},
    ]

    async def scenario(pilot: Pilot) -> None:
        await wait_until(
            pilot,
            lambda: [c.status for c in call_list(pilot).calls] == ["ok", "started"],
            "turn 1's code call to start",
        )
        screen = screen_of(pilot)
        assert screen.live is not None and screen.live.idx == 1
        assert purposes(call_list(pilot).calls) == [
            (0, "simulate", "text", "ok"),
            (1, "generate", "text", "started"),
        ]
        assert str(call_list(pilot).render()).endswith(" 1 generate text  … running")

    ccw.play(script, scenario, turns=2)
