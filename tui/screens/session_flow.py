"""How the session screen moves on: the controller's messages, each changing the state and
redrawing it, and the composer's unsent words kept on their way to the store."""

from __future__ import annotations

from dataclasses import replace

from textual import on, work
from textual.timer import Timer
from textual.widgets import TextArea

from convtui.tui import messages as msg
from convtui.tui import refusal as refusals
from convtui.tui import render
from convtui.tui.controller import SessionController
from convtui.tui.screens.session_view import SessionView
from convtui.tui.turn_timer import TurnTimer
from convtui.tui.typed_words import KEEP_AFTER_S, Typed, TypedWords
from convtui.tui.viewmodels import TurnView, result_view, turn_view
from convtui.tui.widgets.code_pane import CodePane
from convtui.tui.widgets.composer import FeedbackComposer
from convtui.tui.widgets.parts_line import PartsLine
from convtui.tui.widgets.results_table import TestResultsTable
from convtui.tui.widgets.status_line import StatusLine


class SessionFlow(SessionView):
    """The session screen's answers to its controller (SessionController, or
    CodeifController for a CodeIF-Bench task), which runs the turns in workers and reports
    each step as a message (tui/messages.py)."""

    # Set by SessionScreen.__init__.
    controller: SessionController
    unsent: TypedWords
    """The composer's unsent words on their way to the store."""
    timer: TurnTimer
    """The person's time on each turn they answer."""
    _keep_timer: Timer | None
    _restored_instruction: str | None
    """CodeIF: the instruction the restored words were about, until the round is offered."""

    # --- messages from the controller ----------------------------------------------------------

    @on(msg.SessionOpened)
    def _opened(self, event: msg.SessionOpened) -> None:
        self.recorded = [turn_view(t) for t in event.turns]
        if self.codeif:
            self.given = self._given_through(len(self.recorded) - 1)
        self.query_one("#session-title", PartsLine).set_parts(self._title(event.session_id))
        composer = self.query_one(FeedbackComposer)
        typed = event.typed
        if typed is not None and self.plan.ended is None:
            self.unsent.found((typed.turn_idx, typed.text, typed.instruction))
            if not composer.typed:  # words typed since the screen opened are newer
                composer.restore(typed.text)
                self._restored_instruction = typed.instruction
        # Words typed before the row existed had nowhere to go; they have now.
        self._keep_typed_soon()
        self._refresh()

    @on(msg.CallsRecorded)
    def _calls_recorded(self, event: msg.CallsRecorded) -> None:
        self.calls.update(event.calls)
        turn, _previous = self._shown()
        if turn is not None and turn.idx in event.calls:
            self._show_feedback(turn)

    @on(msg.TurnBegan)
    def _began(self, event: msg.TurnBegan) -> None:
        self.live = TurnView(event.idx)
        self.phase = "generating"
        self.query_one(CodePane).clear(event.idx)
        self._refresh()

    @on(msg.ReplyStreamed)
    def _streamed(self, event: msg.ReplyStreamed) -> None:
        if self.viewed is None:
            self.query_one(CodePane).stream(event.idx, event.text)

    @on(msg.ReplyReady)
    def _reply_ready(self, event: msg.ReplyReady) -> None:
        same = self.live is not None and self.live.idx == event.idx
        base = self.live if same and self.live is not None else TurnView(event.idx)
        self.live = replace(base, reply=event.reply, code=event.code)
        # A cached execution lets the turn reach its user before this message arrives (the
        # user's callbacks post directly, the loop's events after a hop): never step back.
        if self.phase in ("starting", "generating"):
            self.phase = "executing"
        self._refresh()

    @on(msg.ExecutionDone)
    def _executed(self, event: msg.ExecutionDone) -> None:
        view = result_view(event.result)
        if event.rerun:
            note = f"re-run: {render.status_word(view.status)} {view.summary}"
            self.query_one(StatusLine).note = note
            self.query_one(TestResultsTable).show(view, note=note + " (turn keeps the first)")
            return
        self._update_live(result=view)
        # The person may already be asked (the loop goes on while this message travels).
        if self.phase == "executing":
            self.phase = "saving"
        self._refresh()

    @on(msg.FeedbackWanted)
    def _feedback_wanted(self, event: msg.FeedbackWanted) -> None:
        self._update_live(
            compile_feedback=event.compile_feedback, execution_feedback=event.execution_feedback
        )
        self.phase = "awaiting_feedback"
        self.timer.shown(event.idx)
        composer = self.query_one(FeedbackComposer)
        if self.codeif:
            composer.offer_draft(event.draft, f"the benchmark ({self.composing})")
        else:
            kind = self.plan.user.split(":", 1)[-1]
            composer.offer_draft(event.draft, f"simulator:{kind}")
        if composer.display:
            composer.focus()
        self._refresh()

    @on(msg.Simulating)
    def _simulating(self, _event: msg.Simulating) -> None:
        self.phase = "simulating"
        self._refresh()

    @on(msg.Simulated)
    def _simulated(self, event: msg.Simulated) -> None:
        # Shown where a person's feedback would be (below the tests, and in the Feedback
        # tab), never over the code; "" is a simulator that stayed silent.
        self._update_live(
            verbal_feedback=event.text or "", feedback_source=f"simulator:{self.plan.user}"
        )
        self.phase = "saving"
        self._refresh()

    @on(msg.TurnSaved)
    def _saved(self, event: msg.TurnSaved) -> None:
        self.recorded.append(turn_view(event.turn))
        self.live = None
        composer = self.query_one(FeedbackComposer)
        self.unsent.saved()
        if event.turn.verbal_feedback is not None or event.turn.feedback_draft is not None:
            composer.sent()
        # Between turns the next one is starting; after the last, the session's end shows.
        self.phase = event.status if event.status != "running" else "starting"
        # Words left in the composer (ctrl+g sends none) now wait for the next turn.
        self._keep_typed_soon()
        self._refresh()

    @on(msg.TurnRefused)
    def _refused(self, event: msg.TurnRefused) -> None:
        # The store's turns come next (SessionOpened) and replace this window's: the live
        # turn was never recorded, and the words the store kept come back from there.
        refusal = event.refusal
        self.live = None
        self.viewed = None
        self.unsent.saved()  # the other window's record dropped the words kept for the turn
        composer = self.query_one(FeedbackComposer)
        composer.sent()
        if refusal.kept_for is None and refusal.words:
            composer.restore(refusal.words)  # the store took them nowhere: here to copy
        # An ended session's phase is set now, so the note below outlives the SessionFinished
        # that follows.
        self.phase = refusal.ended or "starting"
        rounds = self.codeif
        what = "round" if rounds else "turn"
        self.notify(
            refusals.notice(refusal, rounds=rounds),
            title=f"this {what} was already recorded",
            severity="warning",
            markup=False,
            timeout=60,
        )
        self.query_one(StatusLine).note = refusals.note(refusal, rounds=rounds)
        self._refresh()

    @on(msg.SessionFinished)
    def _finished(self, event: msg.SessionFinished) -> None:
        self.phase = event.status  # the status line says how it ended
        self._refresh()

    @on(msg.TurnFailed)
    def _failed(self, event: msg.TurnFailed) -> None:
        if event.kind == "executor" and self.phase == "awaiting_feedback":
            self.notify(event.text, title="re-run failed", severity="error", markup=False)
            return
        self.phase = "failed"
        self.notify(
            event.text, title=f"{event.kind} error", severity="error", markup=False, timeout=15
        )
        self.query_one(StatusLine).note = f"{event.kind} error: {event.text.splitlines()[0]}"
        self._refresh()

    @on(msg.TurnCancelled)
    def _cancelled(self, _event: msg.TurnCancelled) -> None:
        self.phase = "cancelled"
        self.live = None
        self._refresh()

    @on(msg.InstructionOffered)
    def _instruction_offered(self, event: msg.InstructionOffered) -> None:
        restored, self._restored_instruction = self._restored_instruction, None
        # Restored words stay about the instruction they were written for.
        keep = restored is not None and self.query_one(FeedbackComposer).restored
        self.composing = restored if keep else event.category
        self._refresh()

    @on(msg.InstructionsGiven)
    def _instructions_given(self, event: msg.InstructionsGiven) -> None:
        self.given = event.categories
        self._refresh()

    # --- the composer's unsent words -----------------------------------------------------------

    @on(TextArea.Changed, "#feedback-composer")
    def _composer_changed(self, _event: TextArea.Changed) -> None:
        self._keep_typed_soon()

    def _keep_typed_soon(self) -> None:
        """Write the composer's words once typing pauses (``KEEP_AFTER_S``): only the
        person's own, for the turn that waits or will wait for them, while the session is
        live; an unedited draft writes nothing (it comes back from the call journal)."""
        composer = self.query_one(FeedbackComposer)
        idx = self._current_turn()
        if (
            self.controller.session_id is None
            or self.plan.ended is not None
            or self.finished
            or not composer.display
            or idx is None
        ):
            return
        text = composer.text if composer.typed else ""
        self.unsent.changed((idx, text, self.composing if self.codeif else None))
        if self._keep_timer is not None:
            self._keep_timer.stop()
        self._keep_timer = self.set_timer(KEEP_AFTER_S, self._keep_pending)

    def _keep_pending(self) -> None:
        self._keep_timer = None
        write = self.unsent.take()
        if write is not None:
            self._write_typed(*write)

    @work(thread=True, group="typed", exit_on_error=False, description="keep the words typed")
    def _write_typed(self, seq: int, typed: Typed) -> None:
        try:
            self.unsent.write(seq, typed)
        except Exception as exc:  # shown, and written again on the next change
            self.post_message(msg.TypedNotKept(str(exc)))

    @on(msg.TypedNotKept)
    def _typed_not_kept(self, event: msg.TypedNotKept) -> None:
        self.unsent.failed()
        note = f"your words are not saved yet: {event.error.splitlines()[0]}"
        self.query_one(StatusLine).note = note
        self.notify(
            event.error, title="could not keep your words", severity="warning", markup=False
        )
