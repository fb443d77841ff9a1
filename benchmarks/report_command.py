"""Wiring for ``convtui report``: read outcomes from the store, build and write the tables."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from convtui.benchmarks.report import Outcome, Report, build_report
from convtui.core.errors import ConvtuiError
from convtui.sessions import Store
from convtui.sessions.results import SessionOutcome, run_outcomes, run_turn_passes


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
