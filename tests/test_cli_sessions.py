"""`convtui sessions list|show|export` as a user meets them: the command line (in process)
over a real store built in tmp_path (no dataset, model or executor needed)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from support.cli import assert_one_line_error, convtui
from support.omegas import omegas
from support.recorded import compiled_turn

from convtui.core.execution.types import ExecResult, TestOutcome
from convtui.core.models.types import ChatMessage
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.turns.record import Turn
from convtui.sessions import Store

CONFIG = SessionConfig(
    model="local:smollm2",
    feedback=FeedbackConfig("full", "novice"),
    simulator="openai:gpt-4o",
    max_turns=3,
)


def a_turn(idx: int, passed: bool) -> Turn:
    code = f"def task_func(xs):\n    return [sum(xs)][0] + {0 if passed else 1}\n"
    tests = (
        TestOutcome("test_empty", "pass", 0.01),
        TestOutcome(
            "test_sum",
            "pass" if passed else "fail",
            0.02,
            "" if passed else "Traceback (most recent call last):\nAssertionError: 7 != 6\n",
        ),
    )
    return compiled_turn(
        idx,
        code,
        ExecResult("pass" if passed else "fail", tests),
        None if passed else "TEST_SUM\nAssertionError: 7 != 6\n",
        verbal_feedback=None if passed else "You add [one] too many.",
        feedback_source="none" if passed else "human",
        prompt=(ChatMessage("user", "Sum a list."),),
        feedback_draft=None if passed else "The result is one too big.",
    )


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "results.db"
    with Store.open(path) as store:
        solved = store.create_interactive_session("BigCodeBench/13", CONFIG, "assist")
        store.save_turn(solved, a_turn(0, False), "running")
        store.save_turn(solved, a_turn(1, True), "solved")
        running = store.create_interactive_session("BigCodeBench/2", CONFIG, "human")
        store.save_turn(running, a_turn(0, False), "running")
    return path


def session_ids(db: Path) -> dict[str, str]:
    with Store.open(db) as store:
        rows = store.db.execute("SELECT task_id, id FROM sessions").fetchall()
    return dict(rows)


def test_list_json_parses_and_filters(db: Path) -> None:
    done = convtui("sessions", "list", "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [s["task_id"] for s in listed] == ["BigCodeBench/2", "BigCodeBench/13"]
    assert listed[1]["status"] == "solved" and listed[1]["user_kind"] == "assist"

    done = convtui("sessions", "list", "--db", str(db), "--status", "solved", "--json")
    assert [s["task_id"] for s in json.loads(done.stdout)] == ["BigCodeBench/13"]


def test_list_table_names_every_session(db: Path) -> None:
    done = convtui("sessions", "list", "--db", str(db), "--user", "human")
    assert done.returncode == 0, done.stderr
    (shown,) = listed_ids(done)
    assert session_ids(db)["BigCodeBench/2"].startswith(shown)
    assert "BigCodeBench/13" not in done.stdout


def test_show_prints_a_transcript_by_prefix(db: Path) -> None:
    sid = session_ids(db)["BigCodeBench/13"]
    done = convtui("sessions", "show", sid[:22], "--db", str(db))
    assert done.returncode == 0, done.stderr
    for part in (
        "BigCodeBench/13",
        "CF,EF:full,VF:novice",
        "turn 0",
        "turn 1",
        "test_sum",
        "TEST_SUM",
        "You add [one] too many.",  # square brackets printed, not taken as markup
        "edited draft",
        "No syntax errors",
    ):
        assert part in done.stdout, part


def test_show_json_holds_config_and_turns(db: Path) -> None:
    sid = session_ids(db)["BigCodeBench/13"]
    done = convtui("sessions", "show", sid, "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["session"]["id"] == sid
    assert shown["config"]["feedback"] == "CF,EF:full,VF:novice"
    assert [t["passed"] for t in shown["turns"]] == [False, True]
    assert shown["turns"][0]["feedback_edited"] is True


def test_unknown_id_is_one_line(db: Path) -> None:
    assert_one_line_error(
        convtui("sessions", "show", "zzzzzzzz", "--db", str(db)), "zzzzzzzz", "sessions list"
    )


def test_missing_database_is_one_line_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "nope.db"
    for args in (
        ("list",),
        ("show", "01abcdef"),
        ("export", "--all", "--out", str(tmp_path / "out.jsonl")),
    ):
        assert_one_line_error(convtui("sessions", *args, "--db", str(missing)), str(missing))
    assert list(tmp_path.iterdir()) == []


def test_export_jsonl_to_stdout_and_to_a_file(db: Path, tmp_path: Path) -> None:
    done = convtui("sessions", "export", "--db", str(db), "--status", "solved")
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    assert json.loads(line)["session"]["task_id"] == "BigCodeBench/13"

    out = tmp_path / "sessions.jsonl"
    done = convtui(
        "sessions", "export", "--db", str(db), "--all", "--include-unfinished", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2


def test_export_all_leaves_unfinished_sessions_out_and_says_so(db: Path, tmp_path: Path) -> None:
    """--all (or a filter) exports the finished sessions and says how many unfinished ones
    it left out (an app's database nearly always holds one); naming an unfinished session
    is refused in one line and writes no file."""
    out = tmp_path / "sessions.jsonl"
    done = convtui("sessions", "export", "--db", str(db), "--all", "--out", str(out))
    assert done.returncode == 0, done.stderr
    (line,) = out.read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["session"]["task_id"] == "BigCodeBench/13"
    said = " ".join(done.stdout.split())
    assert "1 unfinished session (planned or running) left out" in said
    assert "--include-unfinished" in said
    # On stdout the export stays clean: the note goes to stderr.
    streamed = convtui("sessions", "export", "--db", str(db), "--all")
    assert streamed.returncode == 0, streamed.stderr
    assert len(streamed.stdout.splitlines()) == 1
    assert "left out" in streamed.stderr
    named = tmp_path / "named.jsonl"
    running = session_ids(db)["BigCodeBench/2"]
    refused = convtui("sessions", "export", running, "--db", str(db), "--out", str(named))
    assert_one_line_error(refused, running, "--include-unfinished")
    assert not [p for p in tmp_path.iterdir() if "named.jsonl" in p.name]


def test_export_convcodebench_writes_a_log_set(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "logs"
    sid = session_ids(db)["BigCodeBench/13"]
    done = convtui(
        "sessions", "export", sid, "--db", str(db), "--format", "convcodebench", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    stem = "bigcodebench_local_smollm2_CF_EF_FULL_SNF_by_assist-openai_gpt-4o"
    assert (out / "results" / "v0.3.6" / f"{stem}.jsonl").is_file()
    manifest = json.loads((out / "convtui-export.json").read_text(encoding="utf-8"))
    assert manifest["log_sets"][0]["session_ids"] == [sid]
    present = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert present == sorted(["convtui-export.json", *(f["name"] for f in manifest["files"])])


def test_export_needs_a_selection_and_a_known_format(db: Path) -> None:
    assert_one_line_error(convtui("sessions", "export", "--db", str(db)), "--all")
    assert_one_line_error(
        convtui("sessions", "export", "--all", "--db", str(db), "--format", "csv"),
        "--format",
        "'jsonl', 'convcodebench'",
    )


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--user", "bogus"], ["--user", "'bogus' is not one of", "assist:novice"]),
        (["--user", "novice", "--feedback", "CF,VF:expert"], ["plays VF:novice", "VF:expert"]),
        (["--resume", "01nosuchsession"], ["no database at", "to resume from"]),
        (["--feedback", "all"], ["one configuration here"]),
    ],
)
def test_session_refuses_bad_input_in_one_line_and_creates_no_file(tmp_path, args, words):
    db = tmp_path / "s.db"
    done = convtui("session", "--db", str(db), *args)
    assert_one_line_error(done, *words)
    assert not db.exists()


@pytest.mark.parametrize("width", [80, 120])
def test_list_keeps_id_task_status_turns_and_first_pass_whole_in_80_columns(db, width):
    from rich.console import Console

    from convtui.benchmarks.commands.records.session_views import session_table
    from convtui.sessions.reading.browse import list_sessions

    with Store.open(db) as store:
        found = list_sessions(store)
    console = Console(width=width, record=True)
    console.print(session_table(found, width))
    lines = console.export_text().splitlines()
    ids = session_ids(db)
    solved = next(line for line in lines if ids["BigCodeBench/13"] in line)
    assert solved.split()[1:2] == ["BigCodeBench/13"]
    assert solved.split()[-3 if width < 100 else -5 :][:3] == ["solved", "2/3", "T1"]
    assert max(len(line.rstrip()) for line in lines) <= width


# --- short id prefixes: what `sessions list` shows, `show` and `--resume` take ------------------


def listed_ids(done) -> list[str]:
    assert done.returncode == 0, done.stderr
    return [line.split()[0] for line in done.stdout.splitlines() if "BigCodeBench/" in line]


def planned_run(db: Path, tasks: int, *feedback: str) -> list[str]:
    """The session ids of a run of tasks 0 to ``tasks - 1`` under each Ω in ``feedback``,
    planned in one transaction as `bench live` does (so created within milliseconds)."""
    with Store.open(db) as store:
        run_id = store.create_run(
            "live",
            CONFIG,
            f"ids=0-{tasks - 1}",
            [f"BigCodeBench/{n}" for n in range(tasks)],
            omegas(*feedback),
        )
        return [s.id for s in store.run_sessions(run_id)]


def test_sessions_of_one_run_are_listed_by_short_prefixes_that_show_resolves(tmp_path):
    db = tmp_path / "run.db"
    ids = planned_run(db, 60, "CF,EF:full", "CF,EF:partial")  # 120 ids in a millisecond or two
    shown = listed_ids(convtui("sessions", "list", "--db", str(db), columns=120))
    assert len(shown) == len(ids) == 120
    assert len({len(prefix) for prefix in shown}) == 1  # one width: the column lines up
    assert 8 <= len(shown[0]) <= 12
    for prefix in shown:
        assert sum(sid.startswith(prefix) for sid in ids) == 1, prefix
    for prefix in (shown[0], shown[len(shown) // 2], shown[-1]):
        done = convtui("sessions", "show", prefix, "--db", str(db), "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["session"]["id"].startswith(prefix)


def test_a_prefix_one_character_short_of_the_shown_one_can_be_ambiguous(tmp_path):
    db = tmp_path / "run.db"
    ids = planned_run(db, 40, "CF,EF:full")
    shown = listed_ids(convtui("sessions", "list", "--db", str(db)))
    # The shown length is the shortest that works for all: one less names two sessions.
    shorter = {prefix[:-1] for prefix in shown}
    assert any(sum(sid.startswith(p) for sid in ids) > 1 for p in shorter)


def test_ids_stored_by_older_versions_still_list_and_resolve(tmp_path):
    fixture = Path(__file__).resolve().parent / "fixtures" / "store-m002_feedback_drafts.sqlite"
    db = tmp_path / "old.db"
    shutil.copyfile(fixture, db)
    with Store.open(db) as store:
        ids = [row[0] for row in store.db.execute("SELECT id FROM sessions").fetchall()]
    shown = listed_ids(convtui("sessions", "list", "--db", str(db)))
    assert sorted(sid for prefix in shown for sid in ids if sid.startswith(prefix)) == sorted(ids)
    for prefix in shown:
        done = convtui("sessions", "show", prefix, "--db", str(db), "--json")
        assert done.returncode == 0, done.stderr


def test_resume_takes_the_prefix_that_list_shows(db: Path, bigcodebench) -> None:
    from convtui.sessions.reading.browse import unique_prefix_length
    from convtui.tui.launch import resumed_plan

    sid = session_ids(db)["BigCodeBench/2"]  # still running: resumable
    catalog = bigcodebench
    with Store.open(db) as store:
        prefix = sid[: unique_prefix_length(store, [sid])]
        assert len(prefix) < len(sid)
        plan = resumed_plan(store, catalog, prefix)
    assert plan.resume_id == sid
    assert plan.task.id == "BigCodeBench/2"


# --- the default export folder ------------------------------------------------------------------


def test_the_default_convcodebench_export_folder_is_git_ignored(db: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")
    sid = session_ids(db)["BigCodeBench/13"]
    done = convtui("sessions", "export", sid, "--db", str(db), "--format", "convcodebench")
    assert done.returncode == 0, done.stderr
    (folder,) = (p for p in db.parent.iterdir() if p.is_dir())  # the default: beside the db
    written = next(folder.rglob("*_eval_results.json")).relative_to(db.parent)
    ignored = subprocess.run(
        ["git", "-C", str(root), "check-ignore", "--no-index", "-q", str(written)],
        check=False,
    )
    assert ignored.returncode == 0, f"{written} is not ignored by .gitignore"


# --- annotators and replays -----------------------------------------------------------------


def test_list_and_show_name_the_annotator_and_the_replayed_session(tmp_path: Path) -> None:
    path = tmp_path / "replays.db"
    with Store.open(path) as store:
        person = store.create_interactive_session(
            "BigCodeBench/13", CONFIG, "human", annotator="ana"
        )
        store.save_turn(person, a_turn(0, True), "solved")
        run_id = store.create_static_run(
            CONFIG, "static;x", [store.session(person)], {"log_set": "x"}
        )
        (replayed,) = store.run_sessions(run_id)
        store.save_turn(replayed.id, a_turn(0, True), "solved")
    listed = convtui("sessions", "list", "--db", str(path), "--json")
    assert listed.returncode == 0, listed.stderr
    by_id = {s["id"]: s for s in json.loads(listed.stdout)}
    assert by_id[person]["annotator"] == "ana"
    assert by_id[replayed.id]["reference_session_id"] == person
    table = convtui("sessions", "list", "--db", str(path))
    assert "human:ana" in table.stdout and "replay·" in table.stdout  # cut to fit at 80
    shown = convtui("sessions", "show", replayed.id, "--db", str(path))
    assert shown.returncode == 0, shown.stderr
    assert f"session {person} (static replay)" in shown.stdout
    assert "annotator" in shown.stdout and "ana" in shown.stdout


def test_a_folder_given_as_db_gets_the_same_line_as_everywhere(tmp_path):
    """`bench` said "is a folder, not a database", `sessions list` "no results database": one
    mistake, one message."""
    for args in (("sessions", "list"), ("sessions", "show", "abc"), ("report",)):
        done = convtui(*args, "--db", str(tmp_path))
        assert_one_line_error(done, f"{tmp_path} is a folder, not a database")
