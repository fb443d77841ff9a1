"""The session screen's state and how it is drawn: its phase, the recorded turns, the live
one and the one viewed, pushed down into the panes after every change."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rich.text import Text
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Static

from convtui.core.codeif.instructions import Instruction
from convtui.core.codeif.records import round_source
from convtui.sessions.reading.browse import CallLine
from convtui.tui import render
from convtui.tui.controller import AppServices, SessionPlan
from convtui.tui.screens.session_keys import BUSY, FINISHED
from convtui.tui.viewmodels import TurnView
from convtui.tui.widgets.code_pane import CodePane
from convtui.tui.widgets.composer import FeedbackComposer
from convtui.tui.widgets.feedback_pane import FeedbackPane
from convtui.tui.widgets.instruction_checklist import InstructionChecklist, checklist_rows
from convtui.tui.widgets.results_table import TestResultsTable
from convtui.tui.widgets.simulated_feedback import SimulatedFeedback
from convtui.tui.widgets.status_line import StatusLine
from convtui.tui.widgets.timeline import TurnTimeline


class SessionView(Screen):
    """The base of the session screen (tui/screens/session.py): the state it owns, and how
    that state reaches the widgets. Whatever moves the state on ends in :meth:`_refresh`."""

    phase: reactive[str] = reactive("starting", bindings=True)
    """What the session is doing: starting, generating, executing, simulating,
    awaiting_feedback, saving, cancelled, failed, or finished (solved, exhausted, stalled,
    accepted, abandoned)."""

    viewed: reactive[int | None] = reactive(None)
    """The recorded turn shown read-only, or None for the live turn."""

    # Set by SessionScreen.__init__ (the plan, and what its controller makes of it).
    services: AppServices
    plan: SessionPlan
    codeif: bool
    instructions: tuple[Instruction, ...]
    budget: int
    given: tuple[str, ...]
    """CodeIF: the instructions given so far, in the order given."""
    composing: str | None
    """CodeIF: the instruction whose words the composer was given."""
    recorded: list[TurnView]
    live: TurnView | None
    calls: dict[int, tuple[CallLine, ...]]
    """Each turn's model calls in the order made, as the store holds them."""
    _started: float
    _user_inside_turn: bool

    def _title(self, session_id: str | None) -> list[str]:
        """The header's parts; on a narrow terminal they take a second line (PartsLine), so
        the session id and Ω are never cut. The model comes last: a long spec (a path, a
        URL) is what a short terminal cuts."""
        config, task = self.plan.config, self.plan.task
        if self.codeif:
            # What the session is, in place of the Ω label it has no use for (its rounds give
            # instructions, not Ω's feedback); next to the task, so 80 columns still show it.
            what = render.codeif_summary(len(self.instructions), self.budget)
            parts = [task.id, what, f"user: {self.plan.user}"]
        else:
            parts = [task.id, config.feedback.label, f"user: {self.plan.user}"]
        if session_id:
            parts.append(f"session {session_id}")
        return [*parts, config.model]

    # --- state pushed down ---------------------------------------------------------------------

    def watch_phase(self, phase: str) -> None:
        if not self.query(StatusLine) or not self.query(FeedbackComposer):
            # Read before or while the panes mount (the app's footer asks check_action as the
            # screen is pushed, and once met the status line mounted before the composer):
            # nothing to push down yet; on_mount does it once the panes exist.
            return
        self.query_one(StatusLine).phase = phase
        composer = self.query_one(FeedbackComposer)
        composer.ready = phase == "awaiting_feedback"
        composer.idle_note = render.composer_note(phase)
        composer.read_only = phase in FINISHED  # nobody will read what is typed now
        self.set_class(phase in BUSY, "-busy")

    def watch_viewed(self, _viewed: int | None) -> None:
        self._refresh()

    def _update_live(self, **changes: Any) -> None:
        """The live turn with ``changes``; none while no turn is live (a message that arrives
        after its turn was saved)."""
        if self.live is not None:
            self.live = replace(self.live, **changes)

    def _shown(self) -> tuple[TurnView | None, TurnView | None]:
        """The turn the panes show and the one before it (for the diff)."""
        if self.viewed is not None:
            idx = self.viewed
            turn = self.recorded[idx]
        elif self.live is not None:
            idx, turn = self.live.idx, self.live
        elif self.recorded:
            idx, turn = len(self.recorded) - 1, self.recorded[-1]
        else:
            return None, None
        previous = self.recorded[idx - 1] if 0 < idx <= len(self.recorded) else None
        return turn, previous

    def _refresh(self) -> None:
        turn, previous = self._shown()
        labels = [render.timeline_label(t) for t in self.recorded]
        if self.live is not None:
            labels.append(render.timeline_label(self.live, live=True, phase=self.phase))
        timeline = self.query_one(TurnTimeline)
        # The row of the turn on screen stays highlighted: the viewed one, else the latest.
        shown = self.viewed if self.viewed is not None else len(labels) - 1
        timeline.set_turns(labels, shown, self.budget)
        banner = self.query_one("#viewing-banner", Static)
        banner.display = self.viewed is not None
        if self.viewed is not None:
            banner.update(
                Text(
                    f"viewing turn {self.viewed} of {len(self.recorded)} (read-only) · "
                    "end returns to the live turn"
                )
            )
        self.query_one(StatusLine).turn = self._current_turn()
        writing = self.phase == "simulating" and self.viewed is None
        for pane in self.query(SimulatedFeedback):
            pane.show_turn(turn, previous, writing=writing)
        if turn is None:
            return
        streaming = self.viewed is None and self.live is not None and not self.live.code
        if not streaming:
            self.query_one(CodePane).show(turn, previous)
        self.query_one(TestResultsTable).show(turn.result)
        if self.codeif:
            given = self.given if self.viewed is None else self._given_through(self.viewed)
            composing = self.composing if self.viewed is None else None
            self.query_one(InstructionChecklist).show(
                checklist_rows(self.instructions, turn.result, given), composing
            )
        self._show_feedback(turn)

    def _given_through(self, idx: int) -> tuple[str, ...]:
        """CodeIF: the instructions given up to recorded turn ``idx``."""
        given: list[str] = []
        for turn in self.recorded[: idx + 1]:
            found = round_source(turn.received)
            if found is not None and found[1] not in given:
                given.append(found[1])
        return tuple(given)

    def _show_feedback(self, turn: TurnView) -> None:
        self.query_one(FeedbackPane).show(
            turn,
            execution_on=self.plan.config.feedback.execution != "none",
            calls=self.calls.get(turn.idx, ()),
            user_inside_turn=self._user_inside_turn,
        )

    def position(self) -> str:
        """Where the session stands, as the status line says it (``turn 1 · 2 of 11``): the
        one way turns are counted wherever the app speaks of them."""
        shown = render.round_position if self.codeif else render.turn_position
        return shown(self._current_turn(), self.budget)

    def _current_turn(self) -> int | None:
        """The turn in play: the live one, else the next to run, or once the session ended
        the last one played (None if it ended before any)."""
        if self.live is not None:
            return self.live.idx
        if self.finished:
            return len(self.recorded) - 1 if self.recorded else None
        return len(self.recorded)

    def _tick(self) -> None:
        self.query_one(StatusLine).elapsed_s = self.services.clock() - self._started

    @property
    def finished(self) -> bool:
        return self.phase in FINISHED
