"""Pure helpers that turn values into text for the widgets: status words with glyphs (never
colour alone), timeline labels, the diff between turns, durations. No Textual state.

Recorded and outside text (a reply, its code, feedback, a task, a name) reaches a widget
through ``shown`` or ``title``, never as a plain string: Textual parses a string as markup and
passes ESC through to the terminal, so a reply could recolour or repaint the screen."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from pygments.token import Token
from rich.cells import cell_len
from rich.text import Text
from textual.content import Content
from textual.highlight import HighlightTheme, highlight

from convtui.core.plural import counted
from convtui.core.printable import printable
from convtui.sessions.reading.browse import CallLine
from convtui.tui.viewmodels import TurnView

GLYPHS = {
    "pass": "✓",
    "fail": "✗",
    "error": "!",
    "timeout": "⏱",
    "crash": "☠",
    "env_error": "⚠",
    "skipped": "-",
    "missing": "?",
    "not_run": "-",
}

PHASES = {
    "starting": "starting",
    "generating": "model is writing",
    "executing": "running the tests",
    "simulating": "simulator is writing feedback",
    "awaiting_feedback": "waiting for your feedback",
    "saving": "saving the turn",
    "cancelled": "turn cancelled: ctrl+s runs it again",
    "failed": "turn failed: ctrl+s runs it again",
    "viewing": "read-only",
    "solved": "solved",
    "exhausted": "turn limit reached",
    "stalled": "stalled: nothing left to act on",
    "accepted": "accepted as solved",
    "abandoned": "given up",
}

# The phases a session ends in (the store's closing statuses).
ENDED = frozenset({"solved", "exhausted", "stalled", "accepted", "abandoned"})


class DiffTheme(HighlightTheme):
    """Textual's theme lacks the tokens a unified diff produces."""

    STYLES = {
        **HighlightTheme.STYLES,
        Token.Generic.Inserted: "$text-success",
        Token.Generic.Deleted: "$text-error",
        Token.Generic.Subheading: "$text-accent",
        Token.Generic.Heading: "$text-primary bold",
    }


def shown(text: str, style: str = "", **kwargs: Any) -> Text:
    """``text`` as a widget's body: never markup, its control characters shown (``␛``)."""
    return Text(printable(text), style=style, **kwargs)


SEPARATOR = " · "


def parts_lines(parts: Sequence[str], width: int) -> str:
    """``parts`` joined by `` · `` on as many lines of ``width`` cells as they need, each
    line broken between two parts, never inside one that fits a line: the header and the
    status line stay whole on a narrow terminal (the session id, Ω, the phase)."""
    lines: list[str] = []
    line = ""
    for part in parts:
        joined = f"{line}{SEPARATOR}{part}" if line else part
        if line and cell_len(joined) > width:
            lines.append(line)
            line = part
        else:
            line = joined
    lines.append(line)
    return "\n".join(lines)


def title(text: str) -> Content:
    """``text`` as a border title or subtitle, which Textual would parse as markup."""
    return Content(printable(text))


def status_word(status: str) -> str:
    """``✓ PASS``: a glyph and a word, so meaning never rests on colour."""
    return f"{GLYPHS.get(status, '?')} {status.upper().replace('_', ' ')}"


# What the traceback view says of a test that left none, by the test's status: each says what
# is true of that status (a test that never ran did not pass).
NO_TRACEBACK = {
    "pass": "(no traceback: the test passed)",
    "fail": "(no traceback: the test failed, but the harness recorded none)",
    "error": "(no traceback: the test raised an error, but the harness recorded none)",
    "timeout": "(no traceback: the test ran past its time limit and was stopped)",
    "skipped": "(no traceback: the test skipped itself)",
    "missing": (
        "(no traceback: the harness expected this test, but the run never reported it; the "
        "run was cut short, or the code removed or replaced the test)"
    ),
    "not_run": (
        "(no traceback: the test never ran; the run stopped before any test started, as "
        "when the code does not compile or load)"
    ),
}


def traceback_parts(status: str, traceback: str, run_detail: str = "") -> list[tuple[str, bool]]:
    """The traceback view's paragraphs for a test, each with whether it is prose that may
    wrap: its traceback, or what its status means; for a test that did not pass, why the
    whole run stopped, when the run says. A traceback never wraps (its ``^^^`` markers point
    at columns of the line above); the words that stand in for one, and a one-line reason,
    are sentences that a narrow window must wrap rather than cut."""
    parts = [(traceback.rstrip(), False)]
    if not traceback.strip():
        unknown = f"(no traceback: the test's status is {status_word(status)})"
        parts = [(NO_TRACEBACK.get(status, unknown), True)]
    if status != "pass" and run_detail:
        # A traceback starts on its own line, so its frames stay aligned.
        if "\n" in run_detail.strip():
            parts.append((f"The run:\n{run_detail.rstrip()}", False))
        else:
            parts.append((f"The run: {run_detail}", True))
    return parts


def traceback_text(status: str, traceback: str, run_detail: str = "") -> str:
    """The traceback view's text as one string (``traceback_parts`` a blank line apart)."""
    return "\n\n".join(text for text, _ in traceback_parts(status, traceback, run_detail))


def source_label(source: str, edited: bool | None = None) -> str:
    if source == "none":
        return "no feedback"
    if source.startswith("simulator:"):
        kind = source.split(":")[1]
        return f"{kind} simulator"
    if source.startswith("codeif:"):  # a CodeIF-Bench round: codeif[:<kind>]:<category>
        parts = source.split(":")
        return f"feedback on {parts[-1]}" if parts[1:2] == ["feedback"] else parts[-1]
    if edited:
        return "edited draft"  # by a person: an edited draft is sent as human
    return source


def timeline_label(turn: TurnView, *, live: bool = False, phase: str = "") -> str:
    """``T2 ✗ 3/5 · human``; the live turn shows what it is doing."""
    if turn.result is None:
        return f"T{turn.idx} … {PHASES.get(phase, phase)}" if live else f"T{turn.idx}"
    mark = GLYPHS.get(turn.result.status, "?")
    label = f"T{turn.idx} {mark} {turn.result.passed}/{turn.result.total}"
    if turn.saved and turn.received is not None:
        # convcodeworld: the user speaks inside the turn, about the code the turn started from.
        label += f" · {source_label(turn.received.user_source)}"
    elif turn.saved:
        label += f" · {source_label(turn.feedback_source, turn.edited)}"
    elif live:
        label += " · live"
    return label


def turn_position(idx: int | None, max_turns: int) -> str:
    """``turn 2 · 3 of 10``: the turn's number (from 0, as the timeline's ``T2``) and how
    many of the session's turns it makes; ``no turn played`` when there is none."""
    if idx is None:
        return f"no turn played · 0 of {max_turns}"
    return f"turn {idx} · {idx + 1} of {max_turns}"


def round_position(idx: int | None, limit: int) -> str:
    """``round 3 of at most 16``: a CodeIF-Bench session counts rounds from 1, as the paper
    and the checklist's "given in round 3" do, up to twice as many as it has instructions."""
    if idx is None:
        return f"no round played · at most {limit}"
    return f"round {idx + 1} of at most {limit}"


def codeif_summary(instructions: int, limit: int) -> str:
    """What a CodeIF-Bench session is, in place of the Ω label it has no use for: the person
    gives instructions, each round's code is checked against all of them."""
    return f"{counted(instructions, 'instruction')} · at most {counted(limit, 'round')}"


def composer_note(phase: str) -> str:
    """What the composer says while it takes no feedback: the turn is still running, it
    stopped (ctrl+s runs it again), or the session ended (and f10 opens the next task)."""
    if phase in ("cancelled", "failed"):
        return PHASES[phase]
    if phase in ENDED:
        return f"session ended: {PHASES[phase]} · f10 opens the next task"
    return "waiting for the turn"


def code_diff(previous: str, current: str, *, previous_idx: int, current_idx: int) -> str:
    lines = difflib.unified_diff(
        previous.splitlines(keepends=True),
        current.splitlines(keepends=True),
        fromfile=f"turn {previous_idx}",
        tofile=f"turn {current_idx}",
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return text or "(no change from the previous turn)\n"


def highlighted_code(code: str) -> Content:
    return highlight(printable(code or ""), language="python")


def highlighted_diff(diff: str) -> Content:
    return highlight(printable(diff), language="diff", theme=DiffTheme)


def clock(seconds: float) -> str:
    """``00:41``, ``1:02:03``."""
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def duration(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


# An error in the calls list keeps to one line of about this many characters.
CALL_ERROR_CHARS = 100


def call_line(call: CallLine) -> str:
    """``1 repair   text    412→38 tok   410 ms``: one model call of a turn on one line, its
    position, purpose, kind, tokens in→out and latency; a reused answer says so instead of a
    latency (no time was spent), a failed one its error's first line."""
    head = f"{call.seq:>2} {call.purpose:<8} {call.kind:<4}"
    if call.status == "started":
        return f"{head}  … running"
    tokens = ""
    if call.input_tokens is not None or call.output_tokens is not None:
        counts = ("?" if n is None else str(n) for n in (call.input_tokens, call.output_tokens))
        tokens = "→".join(counts) + " tok"
    if call.reused:
        how = "reused"
    elif call.status == "ok" and call.latency_s is not None:
        how = duration(call.latency_s)
    else:
        how = ""
    line = f"{head} {tokens:>15} {how:>8}".rstrip()
    if call.status == "error":
        lines = [part.strip() for part in call.error.splitlines() if part.strip()]
        first = lines[0] if lines else "(no message)"
        if len(first) > CALL_ERROR_CHARS:
            first = first[: CALL_ERROR_CHARS - 1] + "…"
        line += f"  ! ERROR: {first}"
    elif call.status == "abandoned":
        line += "  - abandoned (its turn was cancelled or the app stopped)"
    return line
