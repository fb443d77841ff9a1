"""The "Simulated user fidelity" part of a study's export (``convtui study export``): when the
database holds target turns of ``convtui study fidelity`` on the study's sessions, their rows
(data/fidelity.parquet, a second config of the dataset) and the card's section with the
tables of core/studies/fidelity.py and who each simulator is.

The numbers are those of ``convtui study fidelity --seed 0 --resamples 2000`` over every
simulator and target the database holds for the exported sessions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from convtui.core.plural import counted
from convtui.core.studies.fidelity import NO_FEEDBACK, FeedbackOutcome, fidelity
from convtui.core.studies.fidelity_rows import UNIT, FidelityReport, p_text, points
from convtui.core.studies.fidelity_states import SimulatorIdentity
from convtui.sessions.studies.fidelity import StoredTurn
from convtui.sessions.studies.study_dataset import FIDELITY_PATH

SEED, RESAMPLES = 0, 2000


def fidelity_rows(study: str, turns: Sequence[StoredTurn]) -> list[dict[str, Any]]:
    """One row per target turn, with every column of ``FIDELITY_COLUMNS``."""
    rows = []
    for t in turns:
        who = t.identity
        rows.append(
            {
                "study": study,
                "state": t.state.state_id,
                "session_id": t.state.session_id,
                "turn": t.state.turn_idx,
                "task_id": t.state.task_id,
                "annotator": t.state.annotator,
                "source": t.source,
                "feedback": t.text,
                "simulator_model": who.model if who else None,
                "simulator_persona": who.persona if who else None,
                "simulator_protocol": who.protocol if who else None,
                "simulator_prompt_sha256": who.prompt_sha256 if who else None,
                "target": t.turn.target,
                "target_protocol": t.turn.protocol,
                "passed": t.turn.passed,
                "tests_passed": t.turn.tests_passed,
                "tests_total": t.turn.tests_total,
            }
        )
    return rows


def fidelity_report(turns: Sequence[StoredTurn]) -> FidelityReport:
    return fidelity(
        [
            FeedbackOutcome(
                t.state.state_id,
                t.state.session_id,
                t.state.task_id,
                t.state.annotator,
                t.source,
                t.target,
                t.turn.passed,
                t.turn.tests_passed,
                t.turn.tests_total,
            )
            for t in turns
        ],
        seed=SEED,
        resamples=RESAMPLES,
    )


def fidelity_section(turns: Sequence[StoredTurn]) -> str:
    """The card's section: what was measured, the tables, who the simulators are, and how
    to load the rows. Without target turns: a line saying none were recorded."""
    if not turns:
        return (
            "No simulated-user fidelity results were recorded for these sessions "
            "(`convtui study fidelity` records them)."
        )
    report = fidelity_report(turns)
    states = {t.state.state_id for t in turns}
    targets = sorted({t.target for t in turns})
    identities: dict[str, SimulatorIdentity] = {}
    for t in turns:
        if t.identity is not None:
            identities.setdefault(t.source, t.identity)
    lines = [
        f"On {counted(len(states), 'state')} (turns where an annotator gave verbal feedback), "
        "each feedback source was handed to "
        f"{counted(len(targets), 'target model')} ({', '.join(f'`{t}`' for t in targets)}) "
        "for one turn and its code run in the sandbox: the annotator's words (`person`), "
        "each simulated user's on the same state, and none at all (`none`, the control). "
        f"Gains and differences are in points (x100), pooled over the targets, with a "
        f"{report.method}; n/a where the {UNIT} are too few for one. The unit is the session "
        "(its states share a person and a task): p is McNemar's exact test on passing where a "
        "session holds one pair, else the sign-flip permutation test over sessions, and Holm "
        "p adjusts the annotators' p-values for their number. Small samples give wide "
        "intervals, and a target is one model: another may use the same words "
        "differently (`convtui study fidelity` shows a table per target).",
        "",
    ]
    lines += _table(
        ("source", "states", "pass %", "tests passed %", "gain in pass", "gain in tests passed"),
        [
            (
                f"`{_label(r.source)}`",
                str(r.states),
                f"{100 * r.pass_rate:.1f}",
                f"{100 * r.mean_share:.1f}",
                points(r.gain_pass),
                points(r.gain_share),
            )
            for r in report.sources
        ],
    )
    lines += _table(
        ("the person against", "sessions", "Δ pass", "sign test p", "Δ tests passed"),
        [
            (
                f"`{_label(p.other)}`",
                str(p.pass_diff.units),
                points(p.pass_diff),
                p_text(p.pass_diff.p_value),
                points(p.share_diff),
            )
            for p in report.pairs
        ],
    )
    lines += _table(
        ("annotator", "sessions", "gain of their words in pass", "Holm p", "in tests passed"),
        [
            (
                a.annotator,
                str(a.gain_pass.units),
                points(a.gain_pass),
                p_text(a.holm_pass),
                points(a.gain_share),
            )
            for a in report.annotators
        ],
    )
    lines += ["The simulated users:", ""]
    lines += _table(
        ("source", "model", "persona", "prompts of", "prompt SHA-256"),
        [
            (
                f"`{source}`",
                f"`{sim.model}`",
                sim.persona,
                sim.protocol,
                f"`{sim.prompt_sha256}`" if sim.prompt_sha256 else "unknown (the session's draft)",
            )
            for source, sim in identities.items()
        ],
    )
    lines += [
        f"Every target turn is a row of `{FIDELITY_PATH}`, the dataset's `fidelity` config:",
        "",
        "```python",
        'fidelity = load_dataset("path/to/this/folder", "fidelity", split="train")',
        "```",
    ]
    return "\n".join(lines)


def _label(source: str) -> str:
    return f"{source} (control)" if source == NO_FEEDBACK else source


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A Markdown table, numbers right-aligned (every column but the first), and a blank
    line after it."""
    lines = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(header) - 1)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return [*lines, ""]
