"""The command line's output where it is not a terminal (a pipe, a file): tables keep their
columns; and its help names no type after a flag, which takes no value."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from support.omegas import omegas
from typer.testing import CliRunner

from convtui.cli import app
from convtui.core.execution.types import ExecResult, TestOutcome
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.turns.record import Turn
from convtui.sessions import Store

# The Ω labels of the nine columns report's tables have for ``--feedback all``.
WIDE = ("CF,EF:partial,VF:novice", "CF,EF:full,VF:expert", "CF,EF:partial,VF:expert")


def a_turn(idx: int, passed: bool) -> Turn:
    return Turn(
        idx=idx,
        reply="",
        code="def task_func():\n    return 1\n",
        compiled=True,
        compile_feedback="No syntax errors",
        execution=ExecResult(
            "pass" if passed else "fail",
            (TestOutcome("test_one", "pass" if passed else "fail", 0.01),),
        ),
    )


@pytest.fixture
def nine_settings(tmp_path: Path) -> Path:
    """A run of two tasks under all nine feedback settings, every session over."""
    db = tmp_path / "results.db"
    config = SessionConfig(
        model="local:smollm2",
        feedback=FeedbackConfig("full", "novice"),
        simulator="openai:gpt-4o",
        max_turns=2,
    )
    with Store.open(db) as store:
        run_id = store.create_run(
            "live", config, "ids=0,1", ["BigCodeBench/0", "BigCodeBench/1"], omegas("all")
        )
        for n, row in enumerate(store.run_sessions(run_id)):
            store.save_turn(row.id, a_turn(0, False), "running")
            store.save_turn(row.id, a_turn(1, n % 2 == 0), "solved" if n % 2 == 0 else "exhausted")
        store.finish_run(run_id, "done")
    return db


def test_a_report_into_a_pipe_keeps_its_columns(nine_settings: Path, tmp_path: Path) -> None:
    """rich gave a pipe 80 columns, folding the nine-column tables into unreadable cells."""
    environ = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    done = subprocess.run(
        [sys.executable, "-m", "convtui", "report", "--db", str(nine_settings)],
        capture_output=True,  # stdout a pipe, as in `convtui report | less`
        stdin=subprocess.DEVNULL,
        text=True,
        env={**environ, "CI": "true"},
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) > 80
    for label in WIDE:  # each column's heading whole on one line, not folded over several
        assert any(label in line for line in lines), label


def _paths(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every command's words: (), ("report",), ("bench", "live"), ..."""
    yield path
    for name, sub in getattr(command, "commands", {}).items():
        yield from _paths(sub, (*path, name))


@pytest.mark.parametrize("path", list(_paths(typer.main.get_command(app))), ids=" ".join)
def test_help_names_no_type_after_a_flag(path: tuple[str, ...]) -> None:
    done = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    assert "--help" in done.output
    assert "<bool>" not in done.output
