"""Recorded text is shown, never obeyed, on the command line: the control characters of a
reply, a name or a task in a merged session or a study come out as ``␛``…, so no listing can
clear the terminal, recolour it or retitle its window (issue 29, point 5). The command line
runs in process over real SQLite files in tmp_path; its output is no terminal, so rich adds
no colour of its own and no ESC may reach it at all."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import assert_one_line_error, convtui
from support.recorded import compiled_turn
from support.studies import study_spec, write_study

from convtui.core.execution.types import ExecResult, TestOutcome
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig
from convtui.sessions import Store

# What a reply paints over a screen: clear it, home the cursor, green words, a window title.
PAINT = "\x1b[2J\x1b[H\x1b[32mALL TESTS PASSED\x1b]0;pwned\x07"
SHOWN = "␛[2J␛[H␛[32mALL TESTS PASSED␛]0;pwned"
RAW = ("\x1b", "\x9b", "\x07")


def assert_shown_not_obeyed(output: str) -> None:
    for code in RAW:
        assert code not in output, f"{code!r} reached the terminal"


def hostile_source(path: Path) -> str:
    """A database, as another machine recorded it, whose session holds escapes in its task,
    model, annotator, code, reply, test names, feedback and a C1 CSI (0x9B)."""
    config = SessionConfig(
        model=f"local:{PAINT}", feedback=FeedbackConfig("full", "none"), max_turns=2
    )
    code = f"def task_func(xs):\n    return 0  # {PAINT}\n"
    result = ExecResult(
        "fail", (TestOutcome(f"test_{PAINT}", "fail", 0.01, f"AssertionError: {PAINT}\n"),)
    )
    with Store.open(path) as store:
        session = store.create_interactive_session(
            f"BigCodeBench/13{PAINT}", config, "human", annotator=f"ana{PAINT}"
        )
        turn = compiled_turn(
            0,
            code,
            result,
            f"TEST_X\nAssertionError: {PAINT}\n",
            reply=f"Here it is. \x9b2J{PAINT}\n```python\n{code}```",
            verbal_feedback=f"Still wrong.{PAINT}",
            feedback_source="human",
        )
        store.save_turn(session, turn, "running")
    return session


def test_a_merged_session_lists_and_shows_its_escapes_instead_of_sending_them(
    tmp_path: Path,
) -> None:
    session = hostile_source(tmp_path / "theirs.db")
    db = tmp_path / "study.db"
    merged = convtui("sessions", "merge", str(tmp_path / "theirs.db"), "--db", str(db))
    assert merged.returncode == 0, merged.stderr

    listed = convtui("sessions", "list", "--db", str(db), columns=200)
    assert listed.returncode == 0, listed.stderr
    assert_shown_not_obeyed(listed.stdout)
    assert "BigCodeBench/13␛[2J" in listed.stdout and "human:ana␛[2J" in listed.stdout

    shown = convtui("sessions", "show", session, "--db", str(db), columns=200)
    assert shown.returncode == 0, shown.stderr
    assert_shown_not_obeyed(shown.stdout)
    for place in ("return 0  # ", "test_", "Still wrong.", "AssertionError: ", "ana"):
        assert place + SHOWN in shown.stdout, place

    # --json is for programs: JSON escapes the codes itself, and the text stays as recorded.
    as_json = convtui("sessions", "show", session, "--db", str(db), "--json")
    assert_shown_not_obeyed(as_json.stdout)
    assert "\\u001b[2J" in as_json.stdout


def test_study_status_shows_the_escapes_of_a_name_in_an_older_study(tmp_path: Path) -> None:
    """A study written before names were checked (or by hand): its names still print safely."""
    db = tmp_path / "study.db"
    write_study(db, study_spec(name=f"pilot{PAINT}", annotators=("ana", f"ben{PAINT}", "cy")))
    done = convtui("study", "status", "--db", str(db), columns=200)
    assert done.returncode == 0, done.stderr
    assert_shown_not_obeyed(done.stdout)
    assert f"ben{SHOWN}" in done.stdout
    # An error that quotes the name is as safe.
    token = convtui("study", "token", f"dee{PAINT}", "--db", str(db))
    assert_one_line_error(token, "no annotator")
    assert_shown_not_obeyed(token.stderr)


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ('name = "pilot\\u001b[2J"', ("study name", "'pilot\\x1b[2J'", "␛")),
        ('annotators = ["ana", "ben\\u001b]0;pwned\\u0007"]', ("annotator name", "␛, ␇")),
        ('annotators = ["ana", "ben\\ncy"]', ("annotator name", "\\n")),
        ('annotators = ["ana", "ben\\u009b2J"]', ("annotator name", "\\x9b")),
    ],
)
def test_study_init_refuses_names_with_control_characters(
    tmp_path: Path, line: str, words: tuple[str, ...]
) -> None:
    key = line.split(" ", 1)[0]
    fields = {
        "name": 'name = "pilot"',
        "tasks": 'tasks = ["BigCodeBench/2", "BigCodeBench/3"]',
        "model": 'model = "mock:replies.jsonl"',
        "annotators": 'annotators = ["ana", "ben"]',
    }
    fields[key] = line
    spec = tmp_path / "STUDY.toml"
    spec.write_text("\n".join(fields.values()) + "\n", encoding="utf-8")
    db = tmp_path / "study.db"
    done = convtui("study", "init", str(spec), "--db", str(db))
    assert_one_line_error(done, "control characters", "printable characters", *words)
    assert_shown_not_obeyed(done.stderr)
    assert not db.exists()


def test_add_annotator_refuses_a_name_with_control_characters(tmp_path: Path) -> None:
    db = tmp_path / "study.db"
    write_study(db, study_spec())
    done = convtui("study", "add-annotator", "dee\x1b[2J", "--tasks", "1", "--db", str(db))
    assert_one_line_error(done, "annotator name", "'dee\\x1b[2J'", "control characters")
    assert_shown_not_obeyed(done.stderr)
    status = convtui("study", "status", "--db", str(db), "--json")
    assert "dee" not in status.stdout
