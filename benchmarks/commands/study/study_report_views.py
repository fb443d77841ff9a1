"""How ``convtui study report`` shows a :class:`StudyReport`: one JSON object for scripts, or
rich tables (progress as ``study status`` shows it, one table of scores per model, the
agreement)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from convtui.benchmarks.commands.study.study_admin import annotator_table
from convtui.benchmarks.commands.study.study_report_result import StudyReport
from convtui.benchmarks.commands.study.study_scores import AnnotatorScores, Scoring
from convtui.benchmarks.output import console
from convtui.core.metrics.stats import Comparison
from convtui.core.plural import counted
from convtui.core.studies.agreement import Agreement, Alpha
from convtui.core.studies.outcomes import Scores
from convtui.core.studies.person_times import PAUSE_S, TimeSummary
from convtui.core.studies.score_stats import Versus

NO_SIMULATED = "no simulated logs for the study's tasks"
TIMES_NOTE = (
    "From the turn's code and test results shown to the feedback sent, and the time spent "
    f"typing (a gap over {PAUSE_S:g} s between keys is thinking), over the turns of finished "
    "sessions; a turn shown before its session was reopened is not measured."
)
TURNS_NOTE = (
    "Turns to solve: a pass at turn k took k+1 turns; an unsolved session counts as the budget + 1."
)


def report_json(report: StudyReport) -> dict[str, object]:
    progress = report.progress
    return {
        "study": report.study.name,
        "db": str(report.db),
        "progress": {
            "done": progress.done,
            "assignments": progress.total,
            "annotators": [vars(p) for p in progress.annotators],
        },
        "scores": [s.to_json() for s in report.scorings],
        "simulated_logs": [s.name for s in report.scorings[0].simulated],
        "record_simulated": report.record_simulated,
        "agreement": agreement_json(report.agreement),
        "time_per_turn": {name: summary.to_json() for name, summary in report.times.items()},
    }


def agreement_json(found: Agreement) -> dict[str, object]:
    return {
        "annotators": len(found.annotators),
        "overlapped_tasks": len(found.tasks),
        "tasks": list(found.tasks),
        "pairs": found.pairs,
        "agreed_on_solved": None if found.agreed is None else round(100 * found.agreed, 1),
        "solved": found.solved.to_json(),
        "turns_to_solve": {
            **found.turns.to_json(),
            "unsolved_counts_as": list(found.unsolved_turns),
        },
    }


def print_report(report: StudyReport, plots: Sequence[Path] = ()) -> None:
    screen = console()
    progress = report.progress
    screen.print(Text(f"Study {report.study.name!r} in {report.db}", style="bold"), soft_wrap=True)
    screen.print(annotator_table(progress.annotators))
    screen.print(Text(f"{progress.done}/{progress.total} assignments done", style="bold"))
    if report.times:
        with_note(screen, times_table(report.times), TIMES_NOTE)
    for scoring in report.scorings:
        with_note(screen, scoring_table(scoring), scoring_note(scoring))
        for i in range(len(scoring.simulated)):
            with_note(screen, versus_table(scoring, i), f"{VERSUS_NOTE} {_intervals(scoring)}.")
        if scoring.failed:
            screen.print(
                f"{counted(scoring.failed, 'replayed session')} failed on model errors: the same "
                "command again retries them",
                soft_wrap=True,
            )
    if report.record_simulated is not None:
        screen.print(
            f"{NO_SIMULATED}: record them into the study database, e.g. "
            f"`{report.record_simulated}` (VF:novice for a novice)",
            soft_wrap=True,
        )
    screen.print(agreement_line(report.agreement), soft_wrap=True)
    with_note(screen, agreement_table(report.agreement), TURNS_NOTE)
    if plots:
        screen.print(f"plots: {', '.join(str(p) for p in plots)}", soft_wrap=True)


def with_note(screen: Console, table: Table, note: str) -> None:
    """``table``, then what it means as a paragraph from the left edge, as the other views
    print their notes: a rich caption is centred and no wider than its table, so a long one
    stood as a narrow block of broken lines."""
    screen.print(table)
    screen.print(Text(note), soft_wrap=True)


def times_table(times: Mapping[str, TimeSummary]) -> Table:
    """Each annotator's median seconds per turn, over the turns of their finished sessions
    whose times are known (what they mean: TIMES_NOTE)."""
    table = Table(title="Time per turn (median seconds)", header_style="bold", expand=False)
    table.add_column("annotator", no_wrap=True)
    table.add_column("turns measured", justify="right", no_wrap=True)
    table.add_column("shown → sent", justify="right", no_wrap=True)
    table.add_column("typing", justify="right", no_wrap=True)
    for name, summary in times.items():
        measured = f"{summary.measured}"
        if summary.turns > summary.measured:
            measured += f" of {summary.turns}"
        table.add_row(
            name,
            measured,
            _seconds(summary.median_shown_to_sent_s),
            _seconds(summary.median_typing_s),
        )
    return table


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def scoring_note(scoring: Scoring) -> str:
    """What ``scoring_table`` scored and how its intervals were drawn."""
    note = [scoring.rule[0].upper() + scoring.rule[1:] + "."]
    note.append(f"{_intervals(scoring)}; n/a: too few tasks for one.")
    if scoring.simulated:
        note.append("Simulated users are scored on the same tasks as the annotator.")
    return " ".join(note)


def _intervals(scoring: Scoring) -> str:
    return f"Intervals: {scoring.method}"


def scoring_table(scoring: Scoring) -> Table:
    how = _how(scoring)
    table = Table(title=f"MRR and Recall (%), {how}", header_style="bold", expand=False)
    table.add_column("annotator", no_wrap=True)
    for name in ("tasks", "MRR", "Recall"):
        table.add_column(name, justify="right", no_wrap=True)
    for s in scoring.simulated:
        # The log set's model and Ω, then who played the user: the name, stacked to fit.
        who = f"{s.user} simulated by {s.simulator}" if s.simulator else s.user
        heading = f"{s.reference_model}\n{s.feedback}\n{who}\nMRR / Recall (tasks)"
        table.add_column(heading, justify="right", overflow="fold", max_width=36)
    for row in (*scoring.rows, scoring.everyone):
        table.add_row(*_cells(row))
    return table


def _cells(row: AnnotatorScores) -> list[str]:
    mine = row.scores
    found = row.intervals
    shown = _pair(mine) if found is None else [found.mrr.text(), found.recall.text()]
    cells = [row.annotator, str(mine.tasks) if mine else "0", *shown]
    for theirs in row.simulated:
        cells.append("-" if theirs is None else " / ".join(_pair(theirs)) + f" ({theirs.tasks})")
    return cells


def _pair(scores: Scores | None) -> list[str]:
    if scores is None:
        return ["-", "-"]
    return [f"{100 * scores.mrr:.1f}", f"{100 * scores.recall:.1f}"]


VERSUS_NOTE = (
    "Paired on the tasks both did, the annotator minus the simulated user: MRR tested by the "
    "sign-flip permutation test, Recall by McNemar's exact test, over tasks; in brackets the "
    "p-value Holm-adjusted over the annotators; d_z the mean per-task difference over its "
    "standard deviation."
)


def versus_table(scoring: Scoring, i: int) -> Table:
    """Each annotator against simulated set ``i`` of ``scoring``, and all of them pooled."""
    s = scoring.simulated[i]
    table = Table(
        title=f"Each annotator against {s.user} simulated by {s.simulator or s.reference_model}"
        f" ({_how(scoring)})",
        header_style="bold",
        expand=False,
    )
    table.add_column("annotator", no_wrap=True)
    for name in ("tasks", "Δ MRR (pts)", "p (Holm)", "d_z", "Δ Recall (pts)", "p (Holm)"):
        table.add_column(name, justify="right")
    table.add_column("tasks annotator / simulated better", justify="right")
    for row in (*scoring.rows, scoring.everyone):
        found = row.versus[i] if i < len(row.versus) else None
        if found is not None:
            table.add_row(row.annotator, *_versus_cells(found))
    return table


def _versus_cells(found: Versus) -> list[str]:
    """The pooled row is one comparison: its Holm p is its own."""
    mrr, recall = found.mrr, found.recall
    effect = "—" if mrr.effect_size is None else f"{mrr.effect_size:+.2f}"
    return [
        str(mrr.units),
        _points(mrr),
        f"{mrr.p_value:.3f} ({found.holm_mrr:.3f})",
        effect,
        _points(recall),
        f"{recall.p_value:.3f} ({found.holm_recall:.3f})",
        f"{len(recall.first_better)} / {len(recall.second_better)}",
    ]


def _points(found: Comparison) -> str:
    d = found.difference
    if d.low is None or d.high is None:
        return f"{100 * d.value:+.1f} (n/a)"
    return f"{100 * d.value:+.1f} [{100 * d.low:+.1f}, {100 * d.high:+.1f}]"


def _how(scoring: Scoring) -> str:
    return f"replayed against {scoring.model}" if scoring.replayed else f"{scoring.model} (own)"


def agreement_line(found: Agreement) -> str:
    agreed = "" if found.agreed is None else f"; {100 * found.agreed:.1f}% of them agree on solved"
    return (
        f"Agreement: {counted(len(found.tasks), 'overlapped task')} (finished by two or more "
        f"annotators), {counted(found.pairs, 'pair of sessions')}{agreed}"
    )


def agreement_table(found: Agreement) -> Table:
    unsolved = " or ".join(str(n) for n in found.unsolved_turns) or "budget + 1"
    table = Table(
        title="Agreement on the overlapped tasks (Krippendorff's alpha)",
        header_style="bold",
        expand=False,
    )
    table.add_column("measure", no_wrap=True)
    table.add_column("level", no_wrap=True)
    table.add_column("alpha", justify="right", no_wrap=True)
    table.add_column("note", overflow="fold")
    table.add_row("solved within the budget", *_alpha(found.solved))
    table.add_row(f"turns to solve (unsolved = {unsolved})", *_alpha(found.turns))
    return table


def _alpha(alpha: Alpha) -> tuple[str, str, str]:
    if alpha.value is None:
        return alpha.level, "undefined", alpha.reason
    return alpha.level, f"{alpha.value:.3f}", ""
