"""DevEval projects rebuilt from PyPI (the route this machine and CI reach), and CodeIF-Bench's
repository tasks played inside them end to end: doctor, static and dynamic runs with the
scripted ``mock:`` model (so what is asserted cannot depend on what a model writes), and the
report keeping levels apart.

The projects are rebuilt once for this file (a real download from PyPI, a real environment).
"""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import subprocess
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from support.cli import env, invoke

from convtui.core.projects.rebuild import RebuildError, fetch_file, rebuild_project
from convtui.core.projects.releases import load_releases

# sqlitedict holds an L-1 repository task (CodeIF/1006) and an L-2 one (CodeIF/2024); twtxt
# an L-3 one (CodeIF/3004).
PROJECTS = ("sqlitedict", "twtxt")
TASKS = {"CodeIF/1006": "L-1 repository", "CodeIF/2024": "L-2", "CodeIF/3004": "L-3"}
IDS = ",".join(TASKS)


CACHE: dict[str, str] = {}  # the user cache the processes use: a folder of this module's


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    CACHE["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    found = tmp_path_factory.mktemp("projects")
    done = _convtui("projects", "rebuild", *PROJECTS, "--projects", str(found), "--json")
    assert done.returncode == 0, done.stderr
    return found


def _convtui(*args: str, projects: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``convtui ARGS`` in process, with this module's user cache (and projects root)."""
    extra = {"CONVTUI_PROJECTS_DIR": str(projects)} if projects else {}
    return invoke(*args, environ={**CACHE, **extra})


def test_a_rebuilt_project_is_listed_with_its_release_and_usable_tasks(root: Path) -> None:
    listed = json.loads(_convtui("projects", "list", "--projects", str(root), "--json").stdout)
    by_name = {p["project"]: p for p in listed["projects"]}
    assert len(by_name) == 42
    sqlitedict = by_name["Database/sqlitedict"]
    assert sqlitedict["source"] == "sqlitedict==2.1.0" and sqlitedict["environment"]
    assert sqlitedict["usable"] == 2 and sorted(sqlitedict["tasks"]) == [
        "CodeIF/1006",
        "CodeIF/2024",
    ]
    assert by_name["Communications/twtxt"]["usable"] == 1
    assert by_name["Utilities/boltons"]["usable"] == 0 or "boltons" in PROJECTS


def test_doctor_says_which_repository_tasks_are_valid_here_and_why_not(root: Path) -> None:
    done = _convtui("doctor", "--suite", "codeif", "--ids", f"{IDS},1001", "--json", projects=root)
    report = json.loads(done.stdout)
    rows = {r["id"]: r for r in report["repository"]}
    assert all(rows[task]["valid"] for task in TASKS), rows
    assert not rows["CodeIF/1001"]["valid"]
    assert "no project source" in rows["CodeIF/1001"]["why"]
    assert [rows[task]["level"] for task in TASKS] == [1, 2, 3]
    broken = _convtui(
        "doctor", "--suite", "codeif", "--ids", IDS, "--solution", "broken", "--json",
        projects=root,
    )  # fmt: skip
    assert {o["status"] for o in json.loads(broken.stdout)["unexpected"]} == set()
    assert all(r["valid"] for r in json.loads(broken.stdout)["repository"])


@pytest.mark.parametrize("mode", ["static", "dynamic"])
def test_a_run_plays_repository_tasks_through_the_sandbox_and_reports_levels_apart(
    root: Path, tmp_path: Path, mode: str
) -> None:
    script = tmp_path / "replies.jsonl"
    # One reply for every round of both tasks: never right for both, always runnable code.
    script.write_text(
        json.dumps({"purpose": "generate", "text": "```python\ndef f(self):\n    return 1\n```"})
        + "\n"
    )
    db = tmp_path / "runs.db"
    played = _convtui(
        "bench", "codeif", "--ids", IDS, "--mode", mode, "--model", f"mock:{script}",
        "--db", str(db), "--json", projects=root,
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    assert json.loads(played.stdout)["sessions_played"] == len(TASKS)
    report = json.loads(_convtui("report", "--db", str(db), "--json").stdout)
    levels = {g["level"] for g in report["codeif"]["groups"]}
    assert levels == set(TASKS.values())
    sessions = {s["task_id"]: s for s in report["codeif"]["sessions"]}
    assert {k: s["level"] for k, s in sessions.items()} == TASKS
    # Every round ran in the project: the executions name pytest ids of the task's file.
    shown = _convtui("sessions", "list", "--db", str(db), "--json")
    assert shown.returncode == 0 and "CodeIF/2024" in shown.stdout


def test_a_release_whose_checksum_differs_is_refused(root: Path, tmp_path: Path) -> None:
    """The source distribution rebuilt above, served on loopback under a digest it does not
    have: refused in one line, nothing laid out."""
    sdists = Path(CACHE["XDG_CACHE_HOME"]) / "convtui" / "sdists"
    (archive,) = sdists.glob("sqlitedict-*.tar.gz")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(sdists))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    release = load_releases()["Database/sqlitedict"]
    served = replace(
        release,
        sdist_url=f"http://127.0.0.1:{server.server_port}/{archive.name}",
        sha256="0" * 64,
    )
    try:
        with pytest.raises(RebuildError, match="sha256 mismatch") as refused:
            rebuild_project(tmp_path, served, cache=tmp_path / "cache", fetch=fetch_file)
    finally:
        server.shutdown()
    assert "\n" not in str(refused.value)
    assert not (tmp_path / "Source_Code" / "Database" / "sqlitedict").exists()
    assert list((tmp_path / "cache").glob("*")) == []


def test_completions_in_the_authors_repository_layout_are_scored_by_namespace(
    root: Path, tmp_path: Path
) -> None:
    """Rows as the authors' repository inference writes them (``namespace``, ``type``,
    ``test``, ``completion``): the base answer then the follow-ups. The reference code as
    every answer: the base round passes the task's own tests; a follow-up it was not written
    for fails its instruction test."""
    from convtui.core.catalog.loaders import load_catalog

    data = Path(env()["CONVTUI_DATA_DIR"]) / "CodeIF-Bench-L2-repo.jsonl"
    task = load_catalog("codeif", data).get("CodeIF/2024")
    assert task.site is not None
    follow_up = task.requirements[0]
    rows = [
        {"namespace": task.site.namespace, "completion": f"```python\n{task.ground_truth}```"},
        {
            "namespace": task.site.namespace,
            "type": follow_up.category,
            "test": follow_up.tests.snippets[0][0],
            "completion": f"```python\n{task.ground_truth}```",
        },
    ]
    completions = tmp_path / "result.jsonl"
    completions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "scored.db"
    scored = _convtui(
        "bench", "codeif", "--score-only", str(completions), "--data", str(data),
        "--protocol", "codeif", "--db", str(db), "--json", projects=root,
    )  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    report = json.loads(_convtui("report", "--db", str(db), "--json").stdout)
    (session,) = report["codeif"]["sessions"]
    assert session["task_id"] == "CodeIF/2024" and session["level"] == "L-2"
    first, second = session["rounds"]
    assert first["followed"] == {"Base": True}
    assert second["instruction"] == follow_up.category
    assert second["followed"][follow_up.category] is False


def test_the_authors_dynamic_script_checks_a_repository_task_in_its_project(
    root: Path, tmp_path: Path
) -> None:
    """--mode dynamic --protocol codeif on an L-2 task: an answer whose commit raises fails
    the base check (the project's own tests, run in the project), and the retry's message
    carries their repository script's error text (pytest's failures, then FAILED lines)."""
    script = tmp_path / "replies.jsonl"
    reply = "```python\ndef commit(self, blocking=True):\n    raise RuntimeError('no')\n```"
    script.write_text(json.dumps({"purpose": "generate", "text": reply}) + "\n")
    db = tmp_path / "dynamic.db"
    played = _convtui(
        "bench", "codeif", "--ids", "2024", "--mode", "dynamic", "--protocol", "codeif",
        "--model", f"mock:{script}", "--db", str(db), "--json", projects=root,
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    import sqlite3

    with sqlite3.connect(db) as conn:
        turns = conn.execute(
            "SELECT json_extract(received_json, '$.user_source'), "
            "json_extract(received_json, '$.user') FROM turns ORDER BY idx"
        ).fetchall()
    assert turns[0][0] == "codeif:instruction:Base"
    assert turns[1][0] == "codeif:feedback:Base"
    retry = turns[1][1]
    assert retry.startswith("Please note that you have not followed the instructions below:")
    error = retry.split("Error message:\n```\n", 1)[1].rsplit("\n```", 1)[0]
    assert "_ NamedSqliteDictCreateOrReuseTest.test_" in error
    assert "RuntimeError: no" in error
    # Cut as their extract_key_error_message cuts: 1,021 characters and "...".
    assert len(error) <= 1024


def test_a_project_taken_from_a_tree_of_its_own_is_checked_like_any_copy(
    root: Path, tmp_path: Path
) -> None:
    """--tree: a project whose release lacks its tests comes from a checkout of its history;
    here a copy of the rebuilt sqlitedict stands for one. The tasks can run when its code is
    at their lines, and a tree that holds another version is named as such."""
    tree = tmp_path / "checkout"
    shutil.copytree(root / "Source_Code" / "Database" / "sqlitedict", tree)
    other = tmp_path / "other-root"
    # The environment built above, copied: the command keeps an environment that is ready.
    shutil.copytree(
        root / "envs" / "Database__sqlitedict",
        other / "envs" / "Database__sqlitedict",
        symlinks=True,
    )
    taken = _convtui(
        "projects", "rebuild", "sqlitedict", "--tree", str(tree), "--projects", str(other),
        "--json",
    )  # fmt: skip
    assert taken.returncode == 0, taken.stderr
    (project,) = json.loads(taken.stdout)["projects"]
    assert project["usable"] == 2 and not project["problems"]
    source = json.loads(
        (other / "Source_Code" / "Database" / "sqlitedict" / ".convtui-source.json").read_text()
    )
    assert source == {"route": "tree", "from": str(tree.resolve())}
    module = tree / "sqlitedict.py"
    module.write_text("# another version\n" + module.read_text())
    again = _convtui(
        "projects", "rebuild", "sqlitedict", "--tree", str(tree), "--projects", str(other),
        "--json",
    )  # fmt: skip
    (project,) = json.loads(again.stdout)["projects"]
    assert project["usable"] == 0
    assert all("reference code is not at lines" in why for why in project["problems"].values())
    many = _convtui("projects", "rebuild", "--tree", str(tree), "--projects", str(other))
    assert many.returncode != 0 and "name that one project" in many.stderr
