"""A person plays the user of a CodeIF-Bench repository task (L-2: a method of sqlitedict's
SqliteDict) in the app (Pilot; a scripted model that always answers with the task's reference
code, so the verdicts do not depend on what a model writes). The project is rebuilt from PyPI
for this file; every round runs pytest inside it, in the sandbox. The person sees where the
function goes and the context the model was given."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Markdown
from tui_harness import AppFactory, awaiting_feedback, fenced, play, rows, screen_text

from convtui.core.projects.location import ENV_PROJECTS_DIR
from convtui.core.projects.rebuild import fetch_file, rebuild_project
from convtui.core.projects.releases import load_releases
from convtui.tui.widgets.composer import FeedbackComposer
from convtui.tui.widgets.instruction_checklist import InstructionChecklist

TASK = "CodeIF/2024"  # sqlitedict.SqliteDict.commit, L-2


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("projects")
    release = load_releases()["Database/sqlitedict"]
    rebuild_project(root, release, cache=root / "sdists", fetch=fetch_file)
    return root


@pytest.fixture
def here(projects: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv(ENV_PROJECTS_DIR, str(projects))
    yield projects


def test_a_person_plays_a_repository_task_and_sees_its_file_and_context(
    apps: AppFactory, here: Path
) -> None:
    task = apps.catalog.get(TASK)
    assert task.site is not None
    model = apps.script([fenced(task.ground_truth)], name="repository.jsonl")

    async def scenario(pilot: Pilot) -> None:
        screen = await awaiting_feedback(pilot)
        shown = screen.query_one("#task-markdown", Markdown).source
        assert "**Goes into** `Database/sqlitedict/sqlitedict.py`, lines 370-378" in shown
        assert "**Context** (the class or file around it):" in shown
        assert "class SqliteDict(DictClass):" in shown
        assert "Goes into" in "\n".join(screen_text(pilot.app))
        # The reference answers the task: its own tests pass in the project.
        checklist = screen.query_one(InstructionChecklist)
        assert checklist.rows_shown[0].followed is True
        composer = screen.query_one(FeedbackComposer)
        assert composer.text  # the order's next instruction, offered
        await pilot.press("ctrl+j")
        await awaiting_feedback(pilot, turn=1)

    play(apps, scenario, model=model, task=TASK)
    # Each round runs every instruction's tests in the project (a person may give any of
    # them next); the same code checked twice is one cached execution.
    (execution,) = rows(apps.db, "SELECT id FROM executions")
    ran = dict(
        rows(apps.db, "SELECT name, status FROM execution_tests WHERE execution_id = ?", *execution)
    )
    assert all(ran[name] == "pass" for name, _ in task.tests.snippets)
    instruction = next(r for r in task.requirements if r.category == task.instruction_order[0])
    ((instruction_test, _),) = instruction.tests.snippets
    assert instruction_test in ran
    # The project itself was never written to.
    tree = here / "Source_Code" / "Database" / "sqlitedict"
    assert (
        "def " + instruction_test.rsplit("::", 1)[1]
        not in (tree / "tests" / "test_core.py").read_text()
    )
