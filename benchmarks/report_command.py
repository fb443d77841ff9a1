"""Wiring for ``convtui report``: read outcomes from the store, build, write and print the
tables."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from convtui.benchmarks.output import console, print_json, warning_line
from convtui.benchmarks.report import Outcome, Report, build_report, pass_table, summary_table
from convtui.core.errors import ConvtuiError
from convtui.sessions import Store
from convtui.sessions.results import SessionOutcome, run_outcomes, run_turn_passes


def report_command(
    db: Path, run_ids: Sequence[str] | None, out: Path | None, as_json: bool
) -> None:
    if not db.exists():
        raise ConvtuiError(f"no results database at {db}: run convtui bench live first")
    report = make_report(db, run_ids)
    files = write_files(report, out or db.parent, db.stem)
    if as_json:
        print_json({**report.to_json(), "files": [str(f) for f in files]})
        return
    screen = console()
    for warning in report.warnings:  # a header above the tables they qualify
        screen.print(warning_line(warning), soft_wrap=True)
    screen.print(pass_table(report))
    screen.print(
        summary_table(
            report,
            [
                "MRR: mean of 1/(k+1) over tasks, k the first passing turn (0 if never).",
                "Recall: share of tasks solved at some turn. Turns count from 0.",
            ],
        )
    )
    screen.print(f"written: {', '.join(str(f) for f in files)}", soft_wrap=True)


def make_report(db: Path, run_ids: Sequence[str] | None) -> Report:
    with Store.open(db) as store:
        outcomes = run_outcomes(store, list(run_ids) if run_ids else None)
        if not outcomes:
            raise ConvtuiError(
                f"no benchmark sessions in {db}"
                + (f" for run(s) {', '.join(run_ids)}" if run_ids else "")
            )
        # The newest run wins when several runs hold the same task under the same setting.
        newest: dict[tuple[str, str, str], SessionOutcome] = {}
        for o in sorted(outcomes, key=lambda o: o.run_id):
            newest[(o.model, o.feedback, o.task_id)] = o
        # Only the runs whose sessions made it into the tables: their isolation is reported.
        used = sorted({o.run_id for o in newest.values()})
        isolation = {r: store.run(r).config.isolation for r in used}
        passes = run_turn_passes(store, used)
        # A config recorded before protocols existed reads as convtui (SessionConfig's
        # default): those runs followed our own rules, not the reference's.
        protocols = {r: store.run(r).config.protocol for r in used}
    report = build_report(
        Outcome(
            model=o.model,
            feedback=o.feedback,
            task_id=o.task_id,
            turn_passes=passes.get(o.session_id, ()),
            max_turns=o.max_turns,
            status=o.status,
            protocol=protocols[o.run_id],
        )
        for o in newest.values()
    )
    return replace(report, isolation=isolation)


def write_files(report: Report, folder: Path, stem: str) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        folder / f"{stem}-pass-at-turn.csv": report.pass_csv(),
        folder / f"{stem}-mrr-recall.csv": report.summary_csv(),
        folder / f"{stem}-report.json": json.dumps(report.to_json(), indent=2) + "\n",
    }
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    return list(files)
