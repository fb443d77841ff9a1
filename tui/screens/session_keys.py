"""The session screen's keys and when each is offered: one list feeds the footer, the help
modal and (through check_action) the command palette.

The first key of each binding is the one the footer shows, and it works in a browser too
(tui/browser_keys.py): ctrl+n and ctrl+t open a window and a tab there, ctrl+r and f5 reload
the page. The terminal keeps those as second keys; the served app drops them."""

from __future__ import annotations

from textual.binding import Binding, BindingType

from convtui.tui import render

BUSY = frozenset({"starting", "generating", "executing", "simulating", "saving"})
FINISHED = render.ENDED

PHASES = BUSY | FINISHED | {"awaiting_feedback", "cancelled", "failed"}
CANCELLABLE = BUSY - {"saving"}

# Which phases each action is offered in (check_action): elsewhere it leaves the footer, help
# marks it "not now" and the palette drops it, so all three show only what can be done now.
# Unlisted actions are always offered.
ALLOWED = {
    "send": {"awaiting_feedback"},
    "continue": {"awaiting_feedback"},
    "rerun_tests": {"awaiting_feedback"},
    "retry_turn": {"cancelled", "failed"},
    "accept": {"awaiting_feedback"},
    "give_up": {"awaiting_feedback", "cancelled", "failed"},
    "cancel": CANCELLABLE,
    "focus_composer": PHASES - CANCELLABLE,  # escape cancels while a step runs
}

SESSION_BINDINGS: list[BindingType] = [
    Binding(
        "ctrl+j,alt+enter",
        "send",
        "Send",
        id="convtui.send",
        priority=True,
        key_display="^j",
        tooltip="Send your feedback and start the next turn",
    ),
    Binding(
        "ctrl+g,ctrl+n",
        "continue",
        "Skip",
        id="convtui.continue",
        priority=True,
        tooltip="Next turn without verbal feedback",
    ),
    Binding(
        "escape",
        "cancel",
        "Cancel",
        id="convtui.cancel",
        tooltip="Cancel the running step: nothing of it is saved",
    ),
    Binding(
        "escape",
        "focus_composer",
        "Composer",
        id="convtui.focus-composer",
        show=False,
        tooltip="Back to the feedback composer",
    ),
    Binding(
        "ctrl+s,ctrl+r",
        "rerun_tests",
        "Rerun",
        id="convtui.rerun",
        priority=True,
        tooltip="Run this turn's tests again, uncached",
    ),
    Binding(
        "ctrl+s,f5",  # ctrl+s runs again: the tests while feedback waits, else the turn
        "retry_turn",
        "Retry turn",
        id="convtui.retry",
        priority=True,
        tooltip="Run a cancelled or failed turn again",
    ),
    Binding(
        "f2",
        "toggle_diff",
        "Diff",
        id="convtui.diff",
        tooltip="Show the code or its diff against the previous turn",
    ),
    Binding(
        "f8",
        "accept",
        "Accept",
        id="convtui.accept",
        tooltip="Accept this code as solved and end the session",
    ),
    Binding(
        "f9",
        "give_up",
        "Give up",
        id="convtui.give-up",
        tooltip="End the session without a solution",
    ),
    Binding(
        "ctrl+o,ctrl+t",
        "toggle_task",
        "Task",
        id="convtui.toggle-task",
        show=False,
        priority=True,
        tooltip="Fold or unfold the task",
    ),
    Binding(
        "ctrl+b",
        "toggle_timeline",
        "Turns",
        id="convtui.toggle-timeline",
        show=False,
        priority=True,
        tooltip="Show or hide the turn timeline",
    ),
    Binding(
        "f3",  # not f6: the composer (a TextArea) takes f6 to select a line
        "focus_timeline",
        "Turn list",
        id="convtui.focus-timeline",
        show=False,
        tooltip="Move to the turn list, shown if hidden",
    ),
    Binding(
        "end",
        "view_live",
        "Live turn",
        id="convtui.live",
        show=False,
        tooltip="Back to the live turn",
    ),
]
