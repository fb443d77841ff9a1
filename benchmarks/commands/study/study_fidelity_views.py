"""How ``convtui study fidelity`` shows a :class:`FidelityResult`: rich tables (per source,
pooled and per task; per annotator; the person against each other source; the words; who the
simulators are), with the control in every table of outcomes, or one JSON object."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.table import Table
from rich.text import Text

from convtui.benchmarks.commands.study.fidelity_result import FidelityResult
from convtui.benchmarks.output import console
from convtui.core.metrics.stats import MIN_UNITS, Comparison
from convtui.core.plural import counted
from convtui.core.studies.feedback_words import Rate, WordsReport
from convtui.core.studies.fidelity import NO_FEEDBACK
from convtui.core.studies.fidelity_rows import (
    AnnotatorRow,
    PairRow,
    SourceRow,
    effect,
    p_text,
    points,
)

HOW_TO_READ = (
    "Each state is a turn where a person gave verbal feedback; every source's words were "
    "handed to each target for one turn, and its code run. Gain: the source minus no "
    "feedback (none, the control) on the same states and targets; Δ: the person minus the "
    "other source. The unit is the session (its states share a person and a task): "
    "intervals are the {method}; p beside a pass gain is McNemar's exact test where each "
    "session holds one pair, else (and beside a tests gain) the sign-flip permutation test "
    "of the sessions' mean differences; d_z is the mean per-session difference over its "
    "standard deviation. Where a table prints a p-value per task or per annotator, its "
    "Holm adjustment over them follows in brackets. n/a: fewer than {min_units} sessions, "
    "too few for an interval."
)

WORDS_NOTE = (
    "Words are read without a judge model: 'same problem' means both texts name the same "
    "failing test, identifier of the code or line number, lexical overlap only; it says "
    "nothing about whether they meant the same thing. The control has no words."
)


def print_fidelity(result: FidelityResult, figures: Sequence[Path] = ()) -> None:
    screen = console()
    report = result.report
    tasks = sorted({s.task_id for s in result.states})
    people = sorted({s.annotator or "?" for s in result.states})
    sessions = {s.session_id for s in result.states}
    screen.print(
        Text(
            f"Simulated-user fidelity in {result.db}: {counted(len(result.states), 'state')} "
            f"of {counted(len(sessions), 'session')} over {counted(len(tasks), 'task')} by "
            f"{counted(len(people), 'annotator')}, {counted(len(result.targets), 'target')}",
            style="bold",
        ),
        soft_wrap=True,
    )
    how = HOW_TO_READ.format(method=report.method, min_units=MIN_UNITS)
    screen.print(Text(how), soft_wrap=True)
    pooled = "pooled over targets" if len(report.by_target) > 1 else "pooled"
    screen.print(source_table(f"Feedback sources, {pooled}", report.sources))
    screen.print(annotator_table(f"{ANNOTATORS}, {pooled}", report.annotators))
    screen.print(pair_table(f"The person against each other source, {pooled}", report.pairs))
    if len(report.by_target) > 1:
        # Pooled, a target that ignores feedback halves every gain unseen: each on its own.
        for target, tables in report.by_target.items():
            screen.print(source_table(f"Feedback sources, target {target}", tables.sources))
            screen.print(annotator_table(f"{ANNOTATORS}, target {target}", tables.annotators))
            against = f"The person against each other source, target {target}"
            screen.print(pair_table(against, tables.pairs))
    for task, rows in report.sources_by_task.items():
        screen.print(source_table(f"Feedback sources, {task}", rows, per_task=True))
    for task, pairs in report.pairs_by_task.items():
        against = f"The person against each other source, {task}"
        screen.print(pair_table(against, pairs, per_task=True))
    screen.print(words_table(result.words))
    screen.print(same_problem_table(result.words))
    screen.print(Text(WORDS_NOTE), soft_wrap=True)
    screen.print(identity_table(result))
    screen.print(
        Text(
            f"This run: {counted(result.asked, 'simulator step')}, "
            f"{counted(result.played, 'target turn')} played; the rest were recorded before."
        )
    )
    for line in result.failed:
        screen.print(Text(f"failed: {line}", style="red"), soft_wrap=True)
    for path in figures:
        screen.print(Text(f"figure: {path}"), soft_wrap=True)


# "none (control)" on one line however many columns a table has.
LABEL_WIDTH = len(f"{NO_FEEDBACK} (control)")
ANNOTATORS = "What each annotator's feedback is worth (their words against none, the control)"


def _columns(table: Table, names: Sequence[str]) -> None:
    for name in names:
        table.add_column(name, justify="right")


def _p(found: Comparison | None, adjusted: float | None = None) -> str:
    """The exact test's p-value, and its Holm adjustment in brackets where one is given."""
    p = p_text(None if found is None else found.p_value)
    return p if adjusted is None else f"{p} ({p_text(adjusted)})"


def _rates(first: float, second: float) -> str:
    return f"{100 * first:.1f} / {100 * second:.1f}"


def source_table(title: str, rows: Sequence[SourceRow], per_task: bool = False) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("source", min_width=LABEL_WIDTH)
    p = "p (Holm)" if per_task else "p"
    _columns(table, ("sessions", "pass %", "tests passed %", "gain pass (pts)", p, "d_z"))
    _columns(table, ("gain tests (pts)", p))
    for row in rows:
        label = f"{row.source} (control)" if row.source == NO_FEEDBACK else row.source
        table.add_row(
            Text(label),
            str(row.sessions),
            f"{100 * row.pass_rate:.1f}",
            f"{100 * row.mean_share:.1f}",
            points(row.gain_pass),
            _p(row.gain_pass, row.holm_pass),
            effect(row.gain_pass),
            points(row.gain_share),
            _p(row.gain_share, row.holm_share),
        )
    return table


def annotator_table(title: str, rows: Sequence[AnnotatorRow]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("annotator")
    _columns(table, ("sessions", "pass % words / control", "gain pass (pts)", "p (Holm)"))
    _columns(table, ("d_z", "tests % words / control", "gain tests (pts)", "p (Holm)"))
    for row in rows:
        table.add_row(
            Text(row.annotator),
            str(row.gain_pass.units),
            _rates(row.person_pass_rate, row.control_pass_rate),
            points(row.gain_pass),
            _p(row.gain_pass, row.holm_pass),
            effect(row.gain_pass),
            _rates(row.person_share, row.control_share),
            points(row.gain_share),
            _p(row.gain_share, row.holm_share),
        )
    return table


def pair_table(title: str, rows: Sequence[PairRow], per_task: bool = False) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("other source", min_width=LABEL_WIDTH)
    p = "p (Holm)" if per_task else "p"
    _columns(table, ("sessions", "Δ pass (pts)", p, "Δ tests (pts)", p, "d_z (tests)"))
    table.add_column("sessions person / other better", justify="right")
    for row in rows:
        label = f"{row.other} (control)" if row.other == NO_FEEDBACK else row.other
        share = row.share_diff
        table.add_row(
            Text(label),
            str(share.units),
            points(row.pass_diff),
            _p(row.pass_diff, row.holm_pass),
            points(share),
            _p(share, row.holm_share),
            effect(share),
            f"{len(share.first_better)} / {len(share.second_better)}",
        )
    return table


def _rate(found: Rate) -> str:
    return "—" if found.rate is None else f"{found.count}/{found.of} ({100 * found.rate:.0f}%)"


def words_table(words: WordsReport) -> Table:
    table = Table(title="What the words are, per source", title_justify="left")
    table.add_column("source")
    for name in ("texts", "words", "characters", "names a failing test", "names the error"):
        table.add_column(name, justify="right")
    for name in ("holds code", "gives away %", "beyond the code %"):
        table.add_column(name, justify="right")
    table.add_row(Text(f"{NO_FEEDBACK} (control)"), "0", *("—" for _ in range(7)))
    for row in words.sources:
        table.add_row(
            Text(row.source),
            str(row.texts),
            f"{row.mean_words:.1f}",
            f"{row.mean_characters:.1f}",
            _rate(row.names_test),
            _rate(row.names_error),
            _rate(row.with_code),
            f"{100 * row.mean_giveaway:.1f}",
            f"{100 * row.mean_giveaway_beyond_candidate:.1f}",
        )
    return table


def same_problem_table(words: WordsReport) -> Table:
    table = Table(
        title="Does the person point at the same problem? (lexical: same name or line)",
        title_justify="left",
    )
    table.add_column("other source")
    for name in ("same failing test", "same identifier", "same line", "any of these"):
        table.add_column(name, justify="right")
    table.add_row(Text(f"{NO_FEEDBACK} (control)"), *("—" for _ in range(4)))
    for row in words.pair_totals:
        table.add_row(
            Text(row.other),
            _rate(row.same_test),
            _rate(row.same_identifier),
            _rate(row.same_line),
            _rate(row.same_problem),
        )
    return table


def identity_table(result: FidelityResult) -> Table:
    table = Table(title="Who the simulated sources are", title_justify="left")
    for name in ("source", "model", "served as", "persona", "protocol", "prompt SHA-256"):
        # Folded, never cut: a model's path or URL is read to its end.
        table.add_column(name, overflow="fold")
    for source, who in result.identities.items():
        digest = who.prompt_sha256 or "unknown (a draft recorded by the session)"
        # A URL names a server: what it answered as is the model, said beside it.
        served = ", ".join(result.served.get(who.model, ())) or "-"
        row = (Text(source), Text(who.model), Text(served), who.persona, who.protocol, digest)
        table.add_row(*row)
    return table
