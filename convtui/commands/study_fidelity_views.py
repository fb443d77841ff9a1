"""How ``convtui study fidelity`` shows a :class:`FidelityResult`: rich tables (per source,
pooled and per task; per annotator; the person against each other source; the words; who the
simulators are), with the control in every table of outcomes, or one JSON object."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.table import Table
from rich.text import Text

from convtui.benchmarks.output import console
from convtui.commands.study_fidelity import FidelityResult
from convtui.core.plural import counted
from convtui.core.studies.feedback_words import Rate, WordsReport
from convtui.core.studies.fidelity import NO_FEEDBACK, PairRow, SourceRow
from convtui.core.studies.paired import Difference

HOW_TO_READ = (
    "Each state is a turn where a person gave verbal feedback; every source's words were "
    "handed to each target for one turn, and its code run. Gain: the source minus no "
    "feedback (none, the control) on the same states and targets; Δ: the person minus the "
    "other source. Intervals: {level:.0%} bootstrap over states ({resamples} resamples, seed "
    "{seed}); p: exact two-sided sign test over states. Few states make wide intervals."
)
WORDS_NOTE = (
    "Words are read without a judge model: 'same problem' means both texts name the same "
    "failing test, identifier of the code or line number, lexical overlap only; it says "
    "nothing about whether they meant the same thing. The control has no words."
)


def print_fidelity(result: FidelityResult, figures: Sequence[Path] = ()) -> None:
    screen = console()
    report = result.report
    boot = report.bootstrap
    tasks = sorted({s.task_id for s in result.states})
    people = sorted({s.annotator or "?" for s in result.states})
    screen.print(
        Text(
            f"Simulated-user fidelity in {result.db}: {counted(len(result.states), 'state')} "
            f"over {counted(len(tasks), 'task')} by {counted(len(people), 'annotator')}, "
            f"{counted(len(result.targets), 'target')}",
            style="bold",
        ),
        soft_wrap=True,
    )
    screen.print(
        Text(HOW_TO_READ.format(level=boot.level, resamples=boot.resamples, seed=boot.seed)),
        soft_wrap=True,
    )
    screen.print(source_table("Feedback sources, pooled", report.sources))
    for task, rows in report.sources_by_task.items():
        screen.print(source_table(f"Feedback sources, {task}", rows))
    screen.print(annotator_table(result))
    screen.print(pair_table("The person against each other source, pooled", report.pairs))
    for task, pairs in report.pairs_by_task.items():
        screen.print(pair_table(f"The person against each other source, {task}", pairs))
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


def interval(found: Difference | None, scale: float = 100.0) -> str:
    """``+12.5 [-3.1, +20.0]`` in points of ``scale``; ``—`` when nothing was matched."""
    if found is None:
        return "—"
    return f"{scale * found.mean:+.1f} [{scale * found.low:+.1f}, {scale * found.high:+.1f}]"


def _p(found: Difference | None) -> str:
    return "—" if found is None else f"{found.p_value:.3f}"


def source_table(title: str, rows: Sequence[SourceRow]) -> Table:
    table = Table(title=title, title_justify="left")
    for name in ("source", "states", "outcomes", "pass %", "tests passed %"):
        table.add_column(name, justify="left" if name == "source" else "right")
    table.add_column("gain pass (pts)", justify="right")
    table.add_column("gain tests (pts)", justify="right")
    table.add_column("p (pass)", justify="right")
    for row in rows:
        label = f"{row.source} (control)" if row.source == NO_FEEDBACK else row.source
        table.add_row(
            Text(label),
            str(row.states),
            str(row.outcomes),
            f"{100 * row.pass_rate:.1f}",
            f"{100 * row.mean_share:.1f}",
            interval(row.gain_pass),
            interval(row.gain_share),
            _p(row.gain_pass),
        )
    return table


def annotator_table(result: FidelityResult) -> Table:
    table = Table(
        title="What each annotator's feedback is worth (their words against none, the "
        "control, on their states, across targets)",
        title_justify="left",
    )
    for name in ("annotator", "states", "pass % (words)", "pass % (control)"):
        table.add_column(name, justify="left" if name == "annotator" else "right")
    for name in ("gain pass (pts)", "tests % (words)", "tests % (control)", "gain tests (pts)"):
        table.add_column(name, justify="right")
    table.add_column("p (pass)", justify="right")
    for row in result.report.annotators:
        table.add_row(
            Text(row.annotator),
            str(row.gain_pass.states),
            f"{100 * row.person_pass_rate:.1f}",
            f"{100 * row.control_pass_rate:.1f}",
            interval(row.gain_pass),
            f"{100 * row.person_share:.1f}",
            f"{100 * row.control_share:.1f}",
            interval(row.gain_share),
            _p(row.gain_pass),
        )
    return table


def pair_table(title: str, rows: Sequence[PairRow]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("other source")
    for name in ("states", "pairs", "Δ pass (pts)", "Δ tests (pts)", "person / other better"):
        table.add_column(name, justify="right")
    table.add_column("sign test p", justify="right")
    for row in rows:
        label = f"{row.other} (control)" if row.other == NO_FEEDBACK else row.other
        share = row.share_diff
        table.add_row(
            Text(label),
            str(share.states),
            str(share.pairs),
            interval(row.pass_diff),
            interval(share),
            f"{share.first_better} / {share.second_better}",
            _p(share),
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
    for name in ("source", "model", "persona", "protocol", "prompt SHA-256"):
        table.add_column(name)
    for source, who in result.identities.items():
        digest = who.prompt_sha256 or "unknown (a draft recorded by the session)"
        table.add_row(Text(source), Text(who.model), who.persona, who.protocol, digest)
    return table
