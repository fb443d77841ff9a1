"""The names of `convtui report`'s files: the database's name once, then what the file holds."""

from __future__ import annotations

from support.columns import static_column

from convtui.benchmarks.commands.report import write_files
from convtui.benchmarks.reports.report import Report, report_file_names

NAMES = ["pass-at-turn", "static-pass-at-turn", "codeif-rounds", "report"]


def test_a_name_that_starts_with_the_database_name_does_not_repeat_it():
    assert report_file_names("codeif", NAMES) == {
        "pass-at-turn": "codeif-pass-at-turn",
        "static-pass-at-turn": "codeif-static-pass-at-turn",
        "codeif-rounds": "codeif-rounds",
        "report": "codeif-report",
    }
    assert report_file_names("results", NAMES)["codeif-rounds"] == "results-codeif-rounds"


def test_two_files_never_get_one_name():
    """static.db's live table is static-pass-at-turn already: its static one keeps the prefix."""
    names = report_file_names("static", NAMES)
    assert names["pass-at-turn"] == "static-pass-at-turn"
    assert names["static-pass-at-turn"] == "static-static-pass-at-turn"
    assert len(set(names.values())) == len(NAMES)


def test_a_replays_only_database_named_static_writes_static_once(tmp_path):
    written = write_files(Report((), 0), [static_column("m", "CF", 0.5, 1.0)], tmp_path, "static")
    assert sorted(p.name for p in written) == [
        "static-mrr-recall.csv",
        "static-pass-at-turn.csv",
        "static-report.json",
    ]
    assert all(p.is_file() for p in written)
