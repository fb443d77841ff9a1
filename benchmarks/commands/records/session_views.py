"""Rich renderings for ``convtui sessions``: the session list, one session's transcript, and
what an export wrote.

Recorded text (code, feedback, tracebacks) is passed as ``Text``/``Syntax``, never as markup:
it is full of square brackets."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from rich import box
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.rule import Rule
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from convtui.benchmarks.commands.records.export_result import ExportResult
from convtui.benchmarks.views import seconds, status_text
from convtui.core.plural import counted
from convtui.core.turns.record import Turn
from convtui.sessions.database.human_times import HumanTurnTimes
from convtui.sessions.reading.browse import CallLine, SessionDetail, SessionSummary

_SESSION_STYLE = {
    "solved": "green",
    "accepted": "cyan",
    "exhausted": "red",
    "stalled": "red",
    "failed": "magenta",
    "abandoned": "yellow",
    "running": "bold",
    "planned": "dim",
}


def session_status(status: str) -> Text:
    return Text(status, style=_SESSION_STYLE.get(status, ""))


def _listed_user(s: SessionSummary) -> str:
    """The user column: who gave feedback, the annotator's name, a replay marked as such."""
    kind: str = s.user_kind
    if kind == "none" and _codeif(s.task_id):
        kind = "benchmark"  # bench codeif: the benchmark's own words play the user
    who = f"{kind}:{s.annotator}" if s.annotator else kind
    return f"replay·{who}" if s.reference_session_id else who


def _codeif(task_id: str) -> bool:
    return task_id.startswith("CodeIF/")


def _listed_feedback(s: SessionSummary) -> str:
    """The Ω column; a CodeIF-Bench conversation's feedback is its instructions."""
    return "instructions" if _codeif(s.task_id) else s.feedback


def _user(user_kind: str, simulator: str | None) -> str:
    return f"{user_kind} ({simulator})" if simulator else user_kind


def _cut(text: str) -> Text:
    return Text(text, no_wrap=True, overflow="ellipsis")


def session_table(
    sessions: Sequence[SessionSummary], width: int = 120, id_length: int = 26
) -> Table:
    """Below 100 columns the model and the time are left out (``--json`` has everything).
    Ids are cut to their first ``id_length`` characters: the shortest prefix that is unique
    in the store (``unique_prefix_length``), which ``show`` and ``--resume`` accept."""
    wide = width >= 100
    # No vertical rules: a listing must stay readable in an ordinary terminal.
    table = Table(
        title=f"{counted(len(sessions), 'session')}, newest first",
        header_style="bold",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
        padding=0,  # the box draws a blank divider between cells: space enough
    )
    # One line per session at any width: the id, status, turns and first pass stay whole (the
    # id is what `show` and `--resume` take), the words between are cut with an ellipsis.
    # rich narrows only columns that may wrap, so the words that can give are declared so
    # and their cells cut themselves instead of wrapping.
    table.add_column("id", no_wrap=True, min_width=id_length)
    table.add_column("task", no_wrap=True, overflow="ellipsis", min_width=7)
    if wide:
        table.add_column("model", overflow="ellipsis", min_width=5)
    table.add_column("Ω", overflow="ellipsis", min_width=6)
    table.add_column("user", overflow="ellipsis", min_width=4)
    table.add_column("status", no_wrap=True, min_width=7)
    table.add_column("turns", justify="right", no_wrap=True, min_width=5)
    table.add_column("pass", justify="right", no_wrap=True, min_width=4)
    if wide:
        table.add_column("updated", no_wrap=True, overflow="ellipsis", min_width=3)
    for s in sessions:
        cells: list[RenderableType] = [
            Text(s.id[:id_length]),
            Text(s.task_id),
            _cut(s.model),
            _cut(_listed_feedback(s)),
            _cut(_listed_user(s)),
            session_status(s.status),
            f"{s.turns_done}/{s.max_turns}",
            "-" if s.first_pass_turn is None else f"T{s.first_pass_turn}",
            # UTC, to the minute: enough to tell sessions apart in a listing.
            s.updated_utc[5:16].replace("T", " "),
        ]
        if not wide:
            del cells[8], cells[2]
        table.add_row(*cells)
    return table


def session_detail(detail: SessionDetail) -> RenderableType:
    """A readable transcript: a header, then each turn's code, tests and feedback."""
    s, config = detail.session, detail.config
    head = Table.grid(padding=(0, 2))
    head.add_row("session", Text(s.id))
    head.add_row("task", Text(s.task_id))
    head.add_row("model", Text(s.model))
    head.add_row("Ω", Text(s.feedback))
    head.add_row("user", Text(_user(s.user_kind, s.simulator)))
    if s.annotator:
        head.add_row("annotator", Text(s.annotator))
    if s.reference_session_id:
        head.add_row("replays", Text(f"session {s.reference_session_id} (static replay)"))
    head.add_row("status", session_status(s.status))
    first = "never" if s.first_pass_turn is None else f"turn {s.first_pass_turn}"
    head.add_row("turns", f"{s.turns_done} of {s.max_turns} · first pass: {first}")
    head.add_row(
        "protocol",
        f"{config.protocol} · context {config.context} · partial rule {config.partial_rule} "
        f"· extract {config.extract}",
    )
    head.add_row("run", Text(s.run_id or "interactive (TUI)"))
    if detail.code_version:
        head.add_row("code", Text(detail.code_version))
    head.add_row("time", f"{s.created_utc} → {s.updated_utc}")
    endpoints = _endpoints(detail.calls)
    if endpoints:
        head.add_row("endpoints", Text(endpoints))
    if s.error:
        head.add_row("error", Text(s.error, style="red"))
    parts: list[RenderableType] = [
        Panel(head, title=Text(f"{s.task_id} · {s.model} · {s.feedback}"), title_align="left")
    ]
    # Several servers answered (replicas of one model): each turn's calls say which.
    where = len({c.endpoint for c in detail.calls if c.endpoint}) > 1
    for turn in detail.turns:
        parts.extend(turn_view(turn, detail.session.feedback))
        times = detail.times.get(turn.idx)
        if times is not None:
            parts.append(Text(times_line(times), style="dim"))
        calls = [c for c in detail.calls if c.turn_idx == turn.idx]
        if where or len(calls) > 1 or any(c.purpose not in ("generate", "simulate") for c in calls):
            listed = ", ".join(_call(c, where) for c in calls)
            parts.append(Text(f"model calls: {listed}", style="dim"))
    if not detail.turns:
        parts.append(Text("no turns recorded yet", style="italic"))
    return Group(*parts)


def turn_view(turn: Turn, feedback_label: str) -> list[RenderableType]:
    result = turn.execution
    title = Text(f"turn {turn.idx} · ")
    if result is None:
        title.append("not run", style="dim")
    else:
        passed, total = result.counts()
        title.append_text(status_text(result.status))
        if result.isolation == "imported":  # BigCodeBench's reports name failing tests only
            title.append(" · imported verdict", style="dim")
        else:
            title.append(f" · {passed}/{total} tests passed")
    parts: list[RenderableType] = [Rule(title, align="left"), *_received(turn)]
    code = turn.code.rstrip("\n") or "# (no code)"
    parts.append(
        Panel(
            Syntax(code, "python", line_numbers=True, word_wrap=True, theme="ansi_dark"),
            title="code",
            title_align="left",
        )
    )
    if result is not None and result.detail:
        parts.append(Text(result.detail, style="italic"))
    if result is not None and result.tests:
        tests = Table(header_style="bold", expand=False)
        tests.add_column("test", no_wrap=True)
        tests.add_column("status")
        tests.add_column("seconds", justify="right")
        for test in result.tests:
            tests.add_row(Text(test.name), status_text(test.status), seconds(test))
            # What failed inside it (failing subtests, then its own failure), one row each:
            # the entries BigCodeBench's details hold for it.
            for issue in test.issues:
                tests.add_row(Text(f"  {issue.name}", style="dim"), status_text(issue.status), "")
        parts.append(tests)
    parts.append(
        Panel(Text(turn.compile_feedback), title="compilation feedback", title_align="left")
    )
    if turn.execution_feedback is not None:
        parts.append(
            Panel(
                Syntax(
                    turn.execution_feedback or "(empty)", "pytb", word_wrap=True, theme="ansi_dark"
                ),
                title=Text(f"execution feedback · {feedback_label}"),
                title_align="left",
            )
        )
    parts.extend(_verbal(turn))
    if turn.notes:
        parts.append(Text("notes: " + "; ".join(turn.notes), style="dim"))
    return parts


def times_line(times: HumanTurnTimes) -> str:
    """The person's time on a turn they answered, in one line."""
    if times.shown_to_sent_s is None:
        why = (
            "the session was reopened after the turn was shown" if times.resumed else "not measured"
        )
        return f"person's time: unknown ({why}); sent {times.sent_utc}"
    typing = "" if times.typing_s is None else f", {times.typing_s:.1f} s typing"
    keys = "" if times.keystrokes is None else f" ({counted(times.keystrokes, 'keystroke')})"
    return f"person's time: {times.shown_to_sent_s:.1f} s from shown to sent{typing}{keys}"


def _call(call: CallLine, where: bool = False) -> str:
    how = "reused" if call.reused else call.status
    text = f"{call.seq}:{call.purpose}" + ("" if how == "ok" else f" ({how})")
    return f"{text} @ {call.endpoint}" if where and call.endpoint else text


def _endpoints(calls: Sequence[CallLine]) -> str:
    """The servers that answered the session's calls, with how many each (reused answers
    not counted: no server was asked)."""
    counts: dict[str, int] = {}
    for call in calls:
        if call.endpoint and not call.reused and call.status == "ok":
            counts[call.endpoint] = counts.get(call.endpoint, 0) + 1
    return ", ".join(f"{url} ({counted(n, 'call')})" for url, n in sorted(counts.items()))


def _received(turn: Turn) -> list[RenderableType]:
    """The feedback this turn's calls were given, where the protocol gives it inside the turn
    (ConvCodeWorld: about the previous code, or the code a repair call just wrote)."""
    given = turn.received
    if given is None:
        return []
    grid = Table.grid(padding=(0, 2))
    for name, value in (
        ("compilation", given.compilation),
        ("execution", given.execution),
        (f"user · {given.user_source}", given.user),
    ):
        grid.add_row(name, Text("(none)" if value is None else value or "(empty)"))
    return [Panel(grid, title="feedback this turn was given", title_align="left")]


def _verbal(turn: Turn) -> list[RenderableType]:
    if turn.verbal_feedback is None:
        return []
    title = Text(f"verbal feedback · {turn.feedback_source}")
    if turn.feedback_edited:
        title.append(" · edited draft", style="yellow")
    elif turn.feedback_draft is not None:
        title.append(" · draft sent unchanged", style="dim")
    parts: list[RenderableType] = [
        Panel(Text(turn.verbal_feedback), title=title, title_align="left")
    ]
    if turn.feedback_edited and turn.feedback_draft:
        parts.append(
            Panel(
                Text(turn.feedback_draft, style="dim"),
                title="the simulator's draft",
                title_align="left",
            )
        )
    return parts


def export_view(result: ExportResult) -> RenderableType:
    shown = _export_view(result)
    return Group(shown, left_out_note(result)) if result.unfinished_left_out else shown


def left_out_note(result: ExportResult) -> Text:
    return Text(
        f"{counted(result.unfinished_left_out, 'unfinished session')} (planned or running) "
        "left out; "
        "--include-unfinished exports them as they are"
    )


def _export_view(result: ExportResult) -> RenderableType:
    if result.format == "jsonl":
        return Text(f"{counted(result.sessions, 'session')} written to {result.out} (JSONL)")
    if result.format == "codeif":
        return Text(
            f"{counted(result.sessions, 'conversation')}, {counted(result.rounds or 0, 'round')} "
            "written to "
            f"{result.out} (CodeIF-Bench completions)"
        )
    table = Table(
        title=Text(
            f"{counted(result.sessions, 'session')} in {counted(len(result.sets), 'log set')} "
            f"under {result.out}"
        ),
        header_style="bold",
    )
    table.add_column("log set (folder)", overflow="fold")
    table.add_column("model", overflow="fold")
    table.add_column("Ω", no_wrap=True)
    table.add_column("sessions", justify="right")
    table.add_column("files", justify="right")
    for s in result.sets:
        name = f"static/{s.reference}/{s.name}" if s.reference else s.name
        sessions = f"{s.sessions} (reference)" if s.added else str(s.sessions)
        table.add_row(Text(name), Text(s.model), Text(s.feedback), sessions, str(len(s.files)))
    # How ConvCodeWorld's own script reads each set: the names in the files are not the specs.
    reads = [
        Text(f"  python print_results.py {shlex.join(s.print_results_args)}")
        for s in result.sets
        if s.print_results_args and not s.added
    ]
    if not reads:
        return table
    where = Text(f"ConvCodeWorld's print_results.py reads them when run in {result.out}:")
    return Group(table, where, *reads)
