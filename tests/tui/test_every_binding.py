"""Every key and every palette command the session offers, fired in each phase it is offered
in, with a check that the app is alive and the action happened.

Scripted: the model's replies come from a ``mock:`` script (core/models/mock.py), so nothing
here depends on what a model writes; a reply streaming at the script's slow pace holds the
streaming phase. The tests really run in the sandbox and every turn lands in a SQLite store
in tmp_path.

What a phase offers is read from the app (the bindings the footer would show, for each pane
focused in turn, and the palette's session commands) and must equal the list below: a new
binding or command without an effect checked here fails the test."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from scripted import (
    RIGHT,
    SLOW,
    SLOW_S,
    WRONG,
    ScriptedApps,
    confirm,
    ended,
    given_up_after_two_turns,
    run,
    screen_of,
    streaming,
)
from textual.app import App
from textual.command import CommandPalette
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import TabbedContent
from tui_harness import awaiting_feedback as awaiting
from tui_harness import close_palette, from_palette, palette_search, rows, wait_until

from convtui.tui.app import ConvTuiApp
from convtui.tui.palette import SessionCommands
from convtui.tui.screens.help import HelpModal
from convtui.tui.screens.session import SessionScreen
from convtui.tui.screens.task_picker import TaskPickerScreen
from convtui.tui.screens.traceback import TracebackModal
from convtui.tui.widgets.code_pane import CodePane
from convtui.tui.widgets.composer import FeedbackComposer
from convtui.tui.widgets.results_table import TestResultsTable
from convtui.tui.widgets.status_line import StatusLine
from convtui.tui.widgets.timeline import TurnTimeline

pytestmark = pytest.mark.slow

# Where the keys are pressed from: nothing focused, then each pane (its own keys work only
# while it has focus).
FOCUS = (None, "#feedback-composer", "#task-pane", "#code-tabs Tabs", "#test-table", "#timeline")

PANE_ACTIONS = {
    "CodePane.toggle_diff",
    "CodePane.toggle_wrap",
    "TestResultsTable.open_traceback",
    "TurnTimeline.cursor_up",
    "TurnTimeline.cursor_down",
    "TurnTimeline.select",
    "TurnTimeline.live",
}
ALWAYS = PANE_ACTIONS | {
    "app.help",
    "app.quit",
    "app.command_palette",
    "toggle_diff",
    "toggle_task",
    "toggle_timeline",
    "focus_timeline",
    "view_live",
}
AWAITING = ALWAYS | {
    "send",
    "continue",
    "focus_composer",
    "rerun_tests",
    "accept",
    "give_up",
}
ENDED = ALWAYS | {"focus_composer", "app.next_task", "app.pick_task"}
CANCELLED = ENDED | {"retry_turn", "give_up"}

# These move the session on (or away): fired in apps of their own (CHAINS below).
STATE_CHANGING = {
    "cancel",
    "send",
    "continue",
    "accept",
    "give_up",
    "retry_turn",
    "app.next_task",
}
FEEDBACK = "Sort by the mean of each list, [highest] first."


def action_name(node: object, action: str) -> str:
    """``app.help``, ``send`` (the screen's), ``TurnTimeline.select`` (a pane's)."""
    if isinstance(node, App):
        return f"app.{action}"
    if isinstance(node, Screen):
        return action
    return f"{type(node).__name__}.{action}"


def listed(binding) -> bool:
    ours = (binding.id or "").startswith("convtui.")
    return ours or binding.action in ("quit", "command_palette")


@dataclass
class Ctx:
    pilot: Pilot
    db: Path
    phase: str
    expected: set[str]
    screen: SessionScreen
    """The session screen the phase was reached on (modals may cover it)."""


Fire = Callable[[], Awaitable[None]]


# --- what each action must do ---------------------------------------------------------------


async def toggles_diff(ctx: Ctx, fire: Fire) -> None:
    tabs = ctx.screen.query_one("#code-tabs", TabbedContent)
    before = tabs.active
    after = "code-tab" if before == "diff-tab" else "diff-tab"
    await fire()
    await wait_until(ctx.pilot, lambda: tabs.active == after, "the other tab", 60)
    tabs.active = before


async def toggles_wrap(ctx: Ctx, fire: Fire) -> None:
    pane = ctx.screen.query_one(CodePane)
    before = pane.has_class("-wrap")
    await fire()
    assert pane.has_class("-wrap") is not before
    pane.action_toggle_wrap()


async def folds_task(ctx: Ctx, fire: Fire) -> None:
    pane = ctx.screen.query_one("#task-pane")
    before = pane.has_class("-collapsed")
    await fire()
    assert pane.has_class("-collapsed") is not before
    ctx.screen.action_toggle_task()


async def toggles_timeline(ctx: Ctx, fire: Fire) -> None:
    timeline = ctx.screen.query_one(TurnTimeline)
    before = timeline.region.width > 0
    await fire()
    await ctx.pilot.pause()
    assert (timeline.region.width > 0) is not before
    ctx.screen.action_toggle_timeline()
    await ctx.pilot.pause()


async def focuses_timeline(ctx: Ctx, fire: Fire) -> None:
    screen = ctx.screen
    timeline = screen.query_one(TurnTimeline)
    screen.set_focus(screen.query_one("#task-pane"))
    screen.action_toggle_timeline()  # hidden first: the key shows it as it focuses it
    await ctx.pilot.pause()
    assert timeline.region.width == 0
    await fire()
    await ctx.pilot.pause()
    assert ctx.pilot.app.focused is timeline and timeline.region.width > 0


async def returns_to_the_live_turn(ctx: Ctx, fire: Fire) -> None:
    screen = ctx.screen
    screen.viewed = 0 if screen.recorded else None
    await fire()
    assert screen.viewed is None
    assert not screen.query_one("#viewing-banner").display


async def timeline_up(ctx: Ctx, fire: Fire) -> None:
    timeline = ctx.screen.query_one(TurnTimeline)
    last = timeline.option_count - 1
    timeline.highlighted = last if last >= 0 else None
    await fire()
    assert timeline.highlighted == (max(last - 1, 0) if last >= 0 else None)


async def timeline_down(ctx: Ctx, fire: Fire) -> None:
    timeline = ctx.screen.query_one(TurnTimeline)
    count = timeline.option_count
    timeline.highlighted = 0 if count else None
    await fire()
    assert timeline.highlighted == (min(1, count - 1) if count else None)


async def timeline_views_the_turn(ctx: Ctx, fire: Fire) -> None:
    screen = ctx.screen
    timeline = screen.query_one(TurnTimeline)
    screen.viewed = None
    timeline.highlighted = 0
    await fire()
    await ctx.pilot.pause()
    if timeline.option_count > 1:
        assert screen.viewed == 0
        assert "viewing turn 0" in str(screen.query_one("#viewing-banner").render())
    else:  # the only row is the turn shown anyway
        assert screen.viewed is None
    if timeline.option_count:
        assert screen.query_one(CodePane).border_title.startswith("Code · turn 0")


async def timeline_back_to_live(ctx: Ctx, fire: Fire) -> None:
    screen = ctx.screen
    timeline = screen.query_one(TurnTimeline)
    screen.viewed = 0 if screen.recorded else None
    timeline.highlighted = 0
    await fire()
    await ctx.pilot.pause()
    assert screen.viewed is None and not screen.query_one("#viewing-banner").display
    if timeline.option_count:  # none after a first turn was cancelled
        assert timeline.highlighted == timeline.option_count - 1


async def opens_traceback(ctx: Ctx, fire: Fire) -> None:
    table = ctx.screen.query_one(TestResultsTable)
    has_rows = table.row_count > 0
    await fire()
    await ctx.pilot.pause()
    if not has_rows:  # nothing ran yet: nothing to open
        assert isinstance(ctx.pilot.app.screen, SessionScreen)
        return
    modal = ctx.pilot.app.screen
    assert isinstance(modal, TracebackModal)
    await ctx.pilot.press("escape")
    await wait_until(ctx.pilot, lambda: isinstance(ctx.pilot.app.screen, SessionScreen), "back")


async def focuses_composer(ctx: Ctx, fire: Fire) -> None:
    screen = ctx.screen
    screen.set_focus(screen.query_one("#task-pane"))
    await fire()
    assert ctx.pilot.app.focused is screen.query_one(FeedbackComposer)


async def reruns_tests(ctx: Ctx, fire: Fire) -> None:
    status = ctx.screen.query_one(StatusLine)
    status.note = ""
    await fire()
    await wait_until(ctx.pilot, lambda: status.note.startswith("re-run: "), "the re-run")
    assert ctx.screen.phase == "awaiting_feedback"
    assert "re-run" in str(ctx.screen.query_one(TestResultsTable).border_subtitle)


async def opens_help(ctx: Ctx, fire: Fire) -> None:
    app = ctx.pilot.app
    await fire()
    await wait_until(ctx.pilot, lambda: isinstance(app.screen, HelpModal), "help")
    modal = app.screen
    assert isinstance(modal, HelpModal)
    # Every binding of the app, the session screen and its panes has its row.
    for owner, where in (
        (ConvTuiApp, ""),
        (SessionScreen, ""),
        (CodePane, "the code pane"),
        (TestResultsTable, "the tests table"),
        (TurnTimeline, "the turn timeline"),
    ):
        for binding in owner.BINDINGS:
            found = [r for r in modal.rows if r.description == binding.description]
            found = [r for r in found if r.where == where]
            if where == "":
                name = action_name(app if owner is ConvTuiApp else ctx.screen, binding.action)
                if not found:
                    # Sharing its key with an action offered now, it gives that one its row.
                    assert name not in ctx.expected, f"{binding.description} missing from help"
                    display = app.get_key_display(binding)
                    shared = [r for r in modal.rows if r.where == "" and r.keys == display]
                    assert len(shared) == 1 and shared[0].now, (binding.description, shared)
                    continue
                assert found[0].now is (name in ctx.expected), (name, found[0])
            assert found, f"{binding.description} ({binding.key}) missing from help"
    keys = [r.keys for r in modal.rows if r.where == ""]
    assert len(keys) == len(set(keys)), f"a key listed twice in help: {sorted(keys)}"
    assert {"f10", "f4", "^s / f5", "f1", "esc", "^j / alt+⏎", "^p"} <= set(keys)
    await ctx.pilot.press("escape")
    await wait_until(ctx.pilot, lambda: isinstance(app.screen, SessionScreen), "help to close")


async def opens_palette(ctx: Ctx, fire: Fire) -> None:
    await fire()
    await wait_until(ctx.pilot, lambda: isinstance(ctx.pilot.app.screen, CommandPalette), "palette")
    await ctx.pilot.press("escape")
    await wait_until(ctx.pilot, lambda: isinstance(ctx.pilot.app.screen, SessionScreen), "closed")


async def opens_picker(ctx: Ctx, fire: Fire) -> None:
    screen = ctx.screen
    await fire()
    await wait_until(ctx.pilot, lambda: isinstance(ctx.pilot.app.screen, TaskPickerScreen), "pick")
    await ctx.pilot.press("escape")
    await wait_until(ctx.pilot, lambda: ctx.pilot.app.screen is screen, "the session again")


async def quits(ctx: Ctx, fire: Fire) -> None:
    app = ctx.pilot.app
    asked = bool(ctx.screen.unsaved_work)
    await fire()
    if asked:  # a turn in flight: the app asks first, and "no" keeps it
        await confirm(ctx.pilot, "n")
        assert app.return_code is None and isinstance(app.screen, SessionScreen)
        await fire()
        await confirm(ctx.pilot, "y")
    await wait_until(ctx.pilot, lambda: app.return_code is not None, "the app to exit")
    assert app.return_code == 0


async def cancels(ctx: Ctx, fire: Fire) -> None:
    await fire()
    await ended(ctx.pilot, "cancelled")
    assert rows(ctx.db, "SELECT count(*) FROM turns") == [(0,)]
    assert "cancelled" in str(ctx.screen.query_one(StatusLine).render())


async def retries(ctx: Ctx, fire: Fire) -> None:
    await fire()
    await streaming(ctx.pilot)  # turn 0 again
    assert ctx.screen.live is not None and ctx.screen.live.idx == 0
    assert rows(ctx.db, "SELECT count(*) FROM turns") == [(0,)]


async def sends(ctx: Ctx, fire: Fire) -> None:
    screen = ctx.screen
    assert screen.live is not None
    idx = screen.live.idx
    composer = screen.query_one(FeedbackComposer)
    composer.insert(FEEDBACK)
    await fire()
    await awaiting(ctx.pilot, idx + 1)
    assert rows(
        ctx.db, "SELECT feedback_source, verbal_feedback FROM turns WHERE idx = ?", idx
    ) == [("human", FEEDBACK)]


async def continues(ctx: Ctx, fire: Fire) -> None:
    screen = ctx.screen
    assert screen.live is not None
    idx = screen.live.idx
    await fire()
    await awaiting(ctx.pilot, idx + 1)
    assert rows(ctx.db, "SELECT verbal_feedback FROM turns WHERE idx = ?", idx) == [(None,)]


def statuses(ctx: Ctx) -> list[tuple]:
    """(id, status) of every session in the store, the one on screen marked with a ``*``."""
    here = ctx.screen.controller.session_id
    found = rows(ctx.db, "SELECT id, status FROM sessions ORDER BY id")
    return [("*" if sid == here else sid, status) for sid, status in found]


async def ends_as(ctx: Ctx, fire: Fire, status: str) -> SessionScreen:
    """Fire, say yes, and the session on screen ends as ``status``; no other session moves."""
    before = statuses(ctx)
    await fire()
    await confirm(ctx.pilot, "y")
    screen = await ended(ctx.pilot, status)
    assert statuses(ctx) == [(sid, status if sid == "*" else was) for sid, was in before]
    return screen


async def accepts(ctx: Ctx, fire: Fire) -> None:
    await ends_as(ctx, fire, "accepted")


async def gives_up(ctx: Ctx, fire: Fire) -> None:
    screen = await ends_as(ctx, fire, "abandoned")
    assert "given up" in str(screen.query_one(StatusLine).render())


async def opens_next_task(ctx: Ctx, fire: Fire) -> None:
    app = ctx.pilot.app
    assert isinstance(app, ConvTuiApp)
    before = ctx.screen
    ids = app.launch.catalog.ids
    following = ids[ids.index(before.plan.task.id) + 1]
    sessions = len(rows(ctx.db, "SELECT id FROM sessions"))
    await fire()
    await wait_until(
        ctx.pilot,
        lambda: isinstance(app.screen, SessionScreen) and app.screen is not before,
        "the next task",
    )
    after = screen_of(ctx.pilot)
    assert after.plan.task.id == following
    await wait_until(ctx.pilot, lambda: after.controller.session_id is not None, "its session")
    assert len(rows(ctx.db, "SELECT id FROM sessions")) == sessions + 1
    assert rows(
        ctx.db, "SELECT task_id FROM sessions WHERE id = ?", after.controller.session_id
    ) == [(following,)]


async def offers_no_resume_of_itself(ctx: Ctx, session_id: str) -> None:
    """The palette does not list the open session among those to resume (resuming it would
    only leave it and open it again; tests/tui/test_palette_resume.py lists the others)."""
    titles = await palette_search(ctx.pilot, "resume")
    await ctx.pilot.pause(0.3)  # the search has listed what it finds
    assert not any(session_id in title for title in titles()), titles()
    await close_palette(ctx.pilot)
    assert ctx.pilot.app.screen is ctx.screen


ORACLES: dict[str, Callable[[Ctx, Fire], Awaitable[None]]] = {
    "toggle_diff": toggles_diff,
    "CodePane.toggle_diff": toggles_diff,
    "CodePane.toggle_wrap": toggles_wrap,
    "toggle_task": folds_task,
    "toggle_timeline": toggles_timeline,
    "focus_timeline": focuses_timeline,
    "view_live": returns_to_the_live_turn,
    "TurnTimeline.cursor_up": timeline_up,
    "TurnTimeline.cursor_down": timeline_down,
    "TurnTimeline.select": timeline_views_the_turn,
    "TurnTimeline.live": timeline_back_to_live,
    "TestResultsTable.open_traceback": opens_traceback,
    "focus_composer": focuses_composer,
    "rerun_tests": reruns_tests,
    "app.help": opens_help,
    "app.command_palette": opens_palette,
    "app.pick_task": opens_picker,
    "app.quit": quits,
    "cancel": cancels,
    "retry_turn": retries,
    "send": sends,
    "continue": continues,
    "accept": accepts,
    "give_up": gives_up,
    "app.next_task": opens_next_task,
}


# --- the phases -----------------------------------------------------------------------------


async def to_streaming(pilot: Pilot) -> None:
    await streaming(pilot)


async def to_awaiting(pilot: Pilot) -> None:
    await awaiting(pilot, 0)


async def to_viewing(pilot: Pilot) -> None:
    await awaiting(pilot, 0)
    await pilot.press("ctrl+n")
    screen = await awaiting(pilot, 1)
    screen.query_one(TurnTimeline).focus()
    await pilot.press("home", "enter")
    assert screen.viewed == 0


async def to_solved(pilot: Pilot) -> None:
    await ended(pilot, "solved")


async def to_cancelled(pilot: Pilot) -> None:
    await streaming(pilot)
    await pilot.press("escape")
    await ended(pilot, "cancelled")


async def keep_viewing(pilot: Pilot) -> None:
    screen_of(pilot).viewed = 0


async def nothing(_pilot: Pilot) -> None:
    return None


@dataclass(frozen=True)
class Phase:
    replies: tuple[str, ...]
    slow: bool
    reach: Callable[[Pilot], Awaitable[None]]
    expected: frozenset[str]
    restore: Callable[[Pilot], Awaitable[None]] = nothing
    open: bool = True
    """The session is still open (the palette must not offer to resume it)."""


PHASES = {
    "streaming": Phase((SLOW,), True, to_streaming, frozenset(ALWAYS | {"cancel"})),
    "awaiting-feedback": Phase((WRONG,), False, to_awaiting, frozenset(AWAITING)),
    "viewing-an-earlier-turn": Phase(
        (WRONG,), False, to_viewing, frozenset(AWAITING), restore=keep_viewing
    ),
    "solved": Phase((RIGHT,), False, to_solved, frozenset(ENDED), open=False),
    "given-up": Phase((WRONG,), False, given_up_after_two_turns, frozenset(ENDED), open=False),
    "cancelled": Phase((SLOW,), True, to_cancelled, frozenset(CANCELLED)),
}


# --- firing ---------------------------------------------------------------------------------


async def offered_keys(pilot: Pilot) -> dict[str, tuple[str | None, str]]:
    """Each offered action with a pane to focus and a key that fires it there."""
    screen = screen_of(pilot)
    found: dict[str, tuple[str | None, str]] = {}
    for target in FOCUS:
        widget = None if target is None else screen.query_one(target)
        if widget is not None and not (widget.focusable and widget.display):
            continue
        screen.set_focus(widget)  # at once: active_bindings follows screen.focused
        for key, active in screen.active_bindings.items():
            if active.enabled and listed(active.binding):
                found.setdefault(action_name(active.node, active.binding.action), (target, key))
    return found


def offered_commands(pilot: Pilot) -> dict[str, str]:
    """The palette's session commands offered now, by action name."""
    return {action: title for title, action, _ in SessionCommands(screen_of(pilot))._offered()}


QUIT = "Quit"  # Textual's system command


async def offers_one_quit(pilot: Pilot) -> None:
    """The palette lists one way to quit, not Textual's and ours side by side."""
    titles = await palette_search(pilot, "quit")
    await wait_until(pilot, lambda: QUIT in titles(), "the quit command")
    assert [t for t in titles() if "quit" in t.lower()] == [QUIT]
    await close_palette(pilot)


def by_key(pilot: Pilot, target: str | None, key: str) -> Fire:
    async def fire() -> None:
        screen = screen_of(pilot)
        screen.set_focus(None if target is None else screen.query_one(target))
        await pilot.press(key)
        await pilot.pause()

    return fire


def by_palette(pilot: Pilot, title: str, typed: str | None = None) -> Fire:
    """Open the palette, type ``typed`` (the title itself by default), choose the hit
    titled ``title`` (or ending with it, when ``typed`` is given) and run it."""

    def chosen(text: str) -> bool:
        return text == title if typed is None else text.endswith(title)

    async def fire() -> None:
        await from_palette(pilot, typed or title, title, chosen)
        await pilot.pause()

    return fire


def open_in(scripted: ScriptedApps, phase: Phase) -> ConvTuiApp:
    return scripted.app(list(phase.replies), delay_s=SLOW_S if phase.slow else 0.0)


async def check_offers(ctx: Ctx) -> tuple[dict[str, tuple[str | None, str]], dict[str, str]]:
    keys = await offered_keys(ctx.pilot)
    assert set(keys) == ctx.expected, f"{ctx.phase} offers {sorted(keys)}"
    commands = offered_commands(ctx.pilot)
    palette_names = {a for _, a, _ in SessionCommands.COMMANDS}
    assert set(commands) == ctx.expected & palette_names
    return keys, commands


# --- the tests ------------------------------------------------------------------------------


@pytest.mark.parametrize("via", ["key", "palette"])
@pytest.mark.parametrize("phase", list(PHASES))
def test_every_action_that_keeps_the_session_works_in_each_phase(
    scripted: ScriptedApps, phase: str, via: str
):
    """Views, panes, help, the palette, the picker and a re-run; quitting last (with the
    question first while a turn is in flight)."""
    spec = PHASES[phase]
    fired: list[str] = []

    async def scenario(pilot: Pilot) -> None:
        await spec.reach(pilot)
        ctx = Ctx(pilot, scripted.db, phase, set(spec.expected), screen_of(pilot))
        keys, commands = await check_offers(ctx)
        if via == "palette":
            # Quitting from the palette is Textual's own system command, its only quit entry.
            commands = {**commands, "app.quit": QUIT}
            await offers_one_quit(pilot)
        keeping = sorted(n for n in spec.expected - STATE_CHANGING if n != "app.quit")
        if via == "palette" and spec.open:  # StoredSessions leaves this one out
            session_id = ctx.screen.controller.session_id
            assert session_id is not None
            await offers_no_resume_of_itself(ctx, session_id)
            fired.append("resume")
        for name in [*keeping, "app.quit"]:
            if via == "palette" and name not in commands:
                continue  # not a palette command (pane keys, help, the palette itself)
            await spec.restore(pilot)
            before = ctx.screen.phase
            fire = by_key(pilot, *keys[name]) if via == "key" else by_palette(pilot, commands[name])
            await ORACLES[name](ctx, fire)
            fired.append(name)
            if name != "app.quit":
                assert ctx.screen.phase == before, name  # and the session did not move on

    run(open_in(scripted, spec), scenario)
    assert fired[-1] == "app.quit"
    if via == "palette" and spec.open:
        assert "resume" in fired
    assert len(fired) >= (2 if via == "palette" else 10)


CHANGING = {
    (phase, name, via)
    for phase, spec in PHASES.items()
    for name in spec.expected & STATE_CHANGING
    for via in ("key", "palette")
}

# Where an action leads back to a phase that offers the next one, one app plays the steps
# in a row: (the phase it is fired in, the action, fired by key or by palette). A step after
# app.next_task is on the next task's new session, which is first brought to the step's
# phase as a new app's would be (the chain's script suits every phase it names).
Step = tuple[str, str, str]
SEND_AND_CONTINUE = [
    ("send", "key"),
    ("send", "palette"),
    ("continue", "key"),
    ("continue", "palette"),
]


def give_up_then_the_next_task(via: str, then: str) -> list[Step]:
    """Going on without words, then giving up at turn 1 (the given-up phase, as
    given_up_after_two_turns reaches it), and the next task from there, all by ``via``; on
    the next task's session, accepting from the palette in phase ``then``."""
    return [
        ("awaiting-feedback", "continue", via),
        ("awaiting-feedback", "give_up", via),
        ("given-up", "app.next_task", via),
        (then, "accept", "palette"),
    ]


CHAINS: dict[str, list[Step]] = {
    "cancel-and-retry": [
        ("streaming", "cancel", "key"),
        ("cancelled", "retry_turn", "key"),
        ("streaming", "cancel", "palette"),
        ("cancelled", "retry_turn", "palette"),
        ("streaming", "cancel", "key"),
        ("cancelled", "give_up", "key"),
    ],
    "cancelled-then-the-next-task-both-ways": [
        ("cancelled", "app.next_task", "key"),
        ("cancelled", "app.next_task", "palette"),
        ("cancelled", "give_up", "palette"),
    ],
    "send-and-continue-then-accept": [
        *(("awaiting-feedback", n, v) for n, v in SEND_AND_CONTINUE),
        ("awaiting-feedback", "accept", "key"),
    ],
    "send-and-continue-then-accept-while-viewing": [
        *(("viewing-an-earlier-turn", n, v) for n, v in SEND_AND_CONTINUE),
        ("viewing-an-earlier-turn", "accept", "key"),
    ],
    **{
        f"give-up-then-the-next-task-by-{via}": give_up_then_the_next_task(via, then)
        for via, then in (("key", "awaiting-feedback"), ("palette", "viewing-an-earlier-turn"))
    },
    **{
        f"{phase}-{name}-{via}": [(phase, name, via)]
        for phase, name in (("viewing-an-earlier-turn", "give_up"), ("solved", "app.next_task"))
        for via in ("key", "palette")
    },
}


def test_the_chains_fire_every_state_changing_action_both_ways_in_every_phase():
    assert {step for steps in CHAINS.values() for step in steps} == CHANGING
    for steps in CHAINS.values():  # one script plays every phase of a chain
        assert len({PHASES[phase].replies for phase, _, _ in steps}) == 1, steps


@pytest.mark.parametrize("chain", list(CHAINS))
def test_every_action_that_moves_the_session_on_works_in_each_phase(
    scripted: ScriptedApps, chain: str
):
    steps = CHAINS[chain]
    first = PHASES[steps[0][0]]

    async def scenario(pilot: Pilot) -> None:
        await first.reach(pilot)
        new_session = False
        for phase, name, via in steps:
            spec = PHASES[phase]
            if new_session:  # the next task's session, brought to the phase as at start
                await spec.reach(pilot)
            await spec.restore(pilot)
            ctx = Ctx(pilot, scripted.db, phase, set(spec.expected), screen_of(pilot))
            keys, commands = await check_offers(ctx)
            fire = by_key(pilot, *keys[name]) if via == "key" else by_palette(pilot, commands[name])
            await ORACLES[name](ctx, fire)
            new_session = name == "app.next_task"

    run(open_in(scripted, first), scenario)


def test_every_palette_command_has_a_key_and_an_effect_checked_here():
    """One set of bindings feeds footer, help and palette: a palette command no key fires
    would be missing from the footer and help."""
    bound = {f"app.{b.action}" for b in ConvTuiApp.BINDINGS}
    bound |= {b.action for b in SessionScreen.BINDINGS}
    commands = {action for _title, action, _help in SessionCommands.COMMANDS}
    assert commands <= bound, commands - bound
    assert commands <= set(ORACLES), commands - set(ORACLES)
