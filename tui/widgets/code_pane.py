"""The code of the turn being viewed: highlighted, as a diff against the turn before, or the
model's raw reply (which streams in while the model writes).

Every character must be readable: a line wider than the pane scrolls sideways (→, or the
scroll bar), and w wraps the Code, Diff and Reply tabs instead. The Feedback tab never wraps:
it holds tracebacks, whose ``^^^`` markers must stay under the code line they point at."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import ScrollableContainer, Vertical
from textual.widgets import Static, TabbedContent, TabPane

from convtui.tui import render
from convtui.tui.viewmodels import TurnView
from convtui.tui.widgets.feedback_pane import FeedbackPane


class CodePane(Vertical):
    help = (
        "**Code** is what the tests ran: the code extracted from the model's reply. "
        "**Diff** compares it with the previous turn (d toggles). **Reply** is the model's "
        "raw answer, streamed as it arrives. **Feedback** is what the model will be told about "
        "this code under the session's Ω, and every model call the turn made, in order. "
        "A line wider than the pane scrolls sideways (→ ←); **w** wraps long lines instead."
    )
    BINDING_GROUP_TITLE = "the code pane"
    BINDINGS = [
        Binding("d", "toggle_diff", "Diff", id="convtui.diff-local", tooltip="Code ↔ diff"),
        Binding(
            "w",
            "toggle_wrap",
            "Wrap",
            id="convtui.wrap",
            tooltip="Wrap long lines of the code, diff and reply, or scroll them sideways (→ ←)",
        ),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.border_title = "Code"
        self._code = ""
        self._diff = ""
        self._theme_seen = ""

    def compose(self) -> ComposeResult:
        with TabbedContent(id="code-tabs", initial="code-tab"):
            with TabPane("Code", id="code-tab"), ScrollableContainer(id="code-scroll"):
                yield Static("", id="code-text", markup=False)
            with TabPane("Diff", id="diff-tab"), ScrollableContainer(id="diff-scroll"):
                yield Static("", id="diff-text", markup=False)
            with TabPane("Reply", id="reply-tab"), ScrollableContainer(id="reply-scroll"):
                yield Static("", id="reply-text", markup=False)
            with TabPane("Feedback", id="feedback-tab"):
                yield FeedbackPane(id="feedback-pane")

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._paint())

    def show(self, turn: TurnView, previous: TurnView | None) -> None:
        """Show ``turn``; the diff is against ``previous`` (none for turn 0)."""
        self._code = turn.code
        if previous is None:
            self._diff = "(turn 0 has no previous turn to compare with)\n"
        else:
            self._diff = render.code_diff(
                previous.code, turn.code, previous_idx=previous.idx, current_idx=turn.idx
            )
        self.query_one("#reply-text", Static).update(render.shown(turn.reply))
        self.border_title = f"Code · turn {turn.idx}"
        self._paint()

    def stream(self, idx: int, text: str) -> None:
        """The reply so far, while the model writes; the code tab shows it too."""
        self.border_title = f"Code · turn {idx} · streaming"
        self.query_one("#reply-text", Static).update(render.shown(text))
        self.query_one("#code-text", Static).update(render.shown(text))
        self.query_one("#code-scroll", ScrollableContainer).scroll_end(animate=False)

    def clear(self, idx: int) -> None:
        self._code = self._diff = ""
        self.border_title = f"Code · turn {idx}"
        for name in ("code", "diff", "reply"):
            self.query_one(f"#{name}-text", Static).update("")

    def _paint(self) -> None:
        self.query_one("#code-text", Static).update(render.highlighted_code(self._code))
        self.query_one("#diff-text", Static).update(render.highlighted_diff(self._diff))

    def action_toggle_diff(self) -> None:
        tabs = self.query_one(TabbedContent)
        tabs.active = "code-tab" if tabs.active == "diff-tab" else "diff-tab"

    def action_toggle_wrap(self) -> None:
        self.toggle_class("-wrap")
        wrapped = self.has_class("-wrap")
        self.border_subtitle = "wrapped · w scrolls sideways" if wrapped else ""

    @on(TabbedContent.TabActivated)
    def _keep_focus_here(self, event: TabbedContent.TabActivated) -> None:
        event.stop()
