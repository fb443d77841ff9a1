"""The command line as a user meets it: real data, real sandbox; the command runs in process
(typer's CliRunner, tests/support/cli.py) except where a real process is the point (no
terminal, the real entry point's exit code)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from support.cli import (
    assert_one_line_error,
    convtui,
    convtui_argv,
    env,
    invoke,
    run_process,
)
from support.data import needs_bigcodebench

pytestmark = needs_bigcodebench


def checked(task_id: str, code: str, *options: str) -> subprocess.CompletedProcess[str]:
    """``convtui check --task TASK_ID --code - OPTIONS`` with ``code`` on stdin."""
    return convtui("check", "--task", task_id, "--code", "-", *options, stdin=code)


def test_tasks_show_prints_prompt_tests_and_ground_truth():
    done = convtui("tasks", "show", "BigCodeBench/13")
    assert done.returncode == 0, done.stderr
    for part in ("BigCodeBench/13", "code header", "tests", "ground truth", "ftplib"):
        assert part in done.stdout


def test_tasks_list_filters_by_library_and_ids():
    done = convtui("tasks", "list", "--lib", "pandas", "--ids", "0-99", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert rows and all("pandas" in r["libs"] for r in rows)
    assert all(int(r["id"].split("/")[1]) <= 99 for r in rows)


def test_unknown_task_is_one_line_with_nearest_matches():
    assert_one_line_error(convtui("tasks", "show", "BigCodeBench/99999"), "BigCodeBench/999")


def test_bad_feedback_value_is_one_line():
    done = checked("BigCodeBench/13", "x = 1\n", "--feedback", "EF:lots")
    assert_one_line_error(done, "--feedback")


def test_missing_code_file_is_one_line(tmp_path):
    missing = tmp_path / "nope.py"
    assert_one_line_error(
        convtui("check", "--task", "BigCodeBench/13", "--code", str(missing)), str(missing)
    )


def test_check_json_reports_failing_candidate_with_feedback():
    reply = (
        "Here you go:\n```python\ndef task_func(ftp_server='x', ftp_user='u', "
        "ftp_password='p', ftp_dir='/d'):\n    return []\n```\n"
    )
    done = checked("BigCodeBench/13", reply, "--feedback", "CF,EF:full", "--json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == "fail"
    assert report["compilation_feedback"] == "No syntax errors"
    assert {t["status"] for t in report["tests"]} <= {"fail", "error", "pass"}
    assert "TEST_CASE_1\nTraceback (most recent call last):" in report["execution_feedback"]
    assert report["code"].startswith("import subprocess")  # the task header was prefixed
    assert set(report) >= {
        "status",
        "tests",
        "compilation_feedback",
        "execution_feedback",
        "duration_s",
    }


def test_check_passes_the_ground_truth():
    truth = json.loads(convtui("tasks", "show", "BigCodeBench/1", "--json").stdout)
    done = checked("BigCodeBench/1", truth["ground_truth"], "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["execution_feedback"] == "Passed all test runs"


def test_doctor_json_summarises_ground_truth_and_broken_runs():
    good = convtui("doctor", "--ids", "0-5", "--json")
    assert good.returncode == 0, good.stdout + good.stderr
    summary = json.loads(good.stdout)
    assert summary["total"] == 6 and summary["passed"] == 6
    assert {"total", "passed", "env_error", "failed", "timeout", "failing_ids"} <= set(summary)
    broken = convtui("doctor", "--ids", "0-5", "--solution", "broken", "--json")
    assert json.loads(broken.stdout)["passed"] == 0


@pytest.mark.parametrize(
    ("content", "words"),
    [(None, "no script file at"), ('{"purpose": "generate"}\n', "line 1: text must be")],
    ids=["missing", "bad-row"],
)
def test_a_bad_mock_script_is_one_line_and_records_nothing(tmp_path, content, words):
    script = tmp_path / "script.jsonl"
    if content is not None:
        script.write_text(content)
    db = tmp_path / "results.db"
    done = convtui(
        "bench", "live", "--ids", "2", "--turns", "1", "--feedback", "CF",
        "--model", f"mock:{script}", "--db", str(db),
    )  # fmt: skip
    assert_one_line_error(done, f"mock:{script}", words)


# --- tasks list in an ordinary terminal ---------------------------------------------------------


@pytest.mark.parametrize("width", [80, 120, 160])
def test_tasks_list_fits_the_terminal_with_libs_and_test_counts_visible(width):
    from convtui.core.feedback.render import declared_test_names

    done = convtui("tasks", "list", "--ids", "0-2,1139", columns=width)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= width
    rows = [line for line in lines if line.startswith("│")]
    # One line per task (nothing wrapped), each closed by the right border.
    assert len(rows) == 4
    assert all(row.rstrip().endswith("│") for row in rows)
    cells = {
        parts[0]: parts[1:] for parts in ([c.strip() for c in row.split("│")[1:-1]] for row in rows)
    }
    assert set(cells) == {"BigCodeBench/0", "BigCodeBench/1", "BigCodeBench/2", "BigCodeBench/1139"}
    for task_id, (libs, tests, prompt) in cells.items():
        task = json.loads(convtui("tasks", "show", task_id, "--json").stdout)
        full_libs = ", ".join(task["libs"])
        assert libs == full_libs or (libs.endswith("…") and full_libs.startswith(libs[:-1]))
        assert len(libs) >= 6  # never squeezed to nothing
        assert tests == str(len(declared_test_names(task["tests"]["source"])))
        first_line = task["prompt"].strip().splitlines()[0]
        assert len(prompt) >= 10
        assert prompt == first_line or first_line.startswith(prompt[:-1])
    # Short libraries stay whole even at 80 columns.
    short = min(cells, key=lambda t: len(cells[t][0]))
    assert not cells[short][0].endswith("…")


# --- check: code that does not compile, and files with no code ----------------------------------


def test_check_says_that_code_which_does_not_compile_does_not_compile(tmp_path):
    candidate = tmp_path / "broken.py"
    candidate.write_text("def task_func(LETTERS):\n    counts = {\n    return counts\n")
    done = convtui("check", "--task", "BigCodeBench/2", "--code", str(candidate), "--json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == "error"
    assert report["detail"].startswith("the code does not compile: SyntaxError: ")
    assert "__test__.py" not in report["detail"]
    # The line is the candidate's own, the one compilation feedback points at.
    cf_line = re.search(r'File "tmp\.py", line (\d+)', report["compilation_feedback"])
    assert cf_line is not None
    assert report["detail"].endswith(f"(line {cf_line.group(1)})")
    assert report["tests"] and {t["status"] for t in report["tests"]} == {"not_run"}

    shown = convtui("check", "--task", "BigCodeBench/2", "--code", str(candidate))
    assert "does not compile" in shown.stdout
    assert "NOT RUN" in shown.stdout and "MISSING" not in shown.stdout


def test_check_execution_feedback_quotes_candidate_lines_only_under_convtui(tmp_path):
    """BigCodeBench's tracebacks cannot quote the candidate's lines (its module has no file),
    so under --protocol convcodeworld neither does the feedback; ours does."""
    candidate = tmp_path / "raises.py"
    candidate.write_text("def task_func(LETTERS):\n    return 1 / 0\n")
    run = ("check", "--task", "BigCodeBench/2", "--code", str(candidate), "--json")
    ours = json.loads(convtui(*run, "--protocol", "convtui").stdout)["execution_feedback"]
    theirs = json.loads(convtui(*run, "--protocol", "convcodeworld").stdout)["execution_feedback"]
    assert "in task_func\n    return 1 / 0\n" in ours
    assert "in task_func\nZeroDivisionError" in theirs
    assert "return 1 / 0" not in theirs


def test_check_shows_an_error_while_loading_as_each_protocol_feeds_it_to_the_model():
    """Code that raises at import: convtui's feedback is the traceback with the quoted line;
    ConvCodeWorld's is BigCodeBench's str(exc), as the turn loop under it renders."""
    code = "d = {}\nfor k, v in d.iteritems():\n    pass\ndef task_func(LETTERS):\n    return {}\n"
    ours = json.loads(checked("BigCodeBench/2", code, "--json", "--protocol", "convtui").stdout)
    theirs = json.loads(
        checked("BigCodeBench/2", code, "--json", "--protocol", "convcodeworld").stdout
    )
    assert "in <module>\n    for k, v in d.iteritems():\n" in ours["execution_feedback"]
    assert (
        "AttributeError: 'dict' object has no attribute 'iteritems'" in (ours["execution_feedback"])
    )
    assert theirs["execution_feedback"] == "ALL\n'dict' object has no attribute 'iteritems'\n"


def test_check_summary_names_the_kind_of_error_raised_while_loading():
    """The line under the verdict says which exception stopped the code, not its message alone
    ("name 'x' is not defined" reads as if the error had no name)."""
    code = "x = undefined_name\ndef task_func(LETTERS):\n    return {}\n"
    done = checked("BigCodeBench/2", code)
    assert "NameError: name 'undefined_name' is not defined" in done.stdout.splitlines()[1]
    shown = json.loads(checked("BigCodeBench/2", code, "--json").stdout)
    assert shown["detail"] == "NameError: name 'undefined_name' is not defined"


def test_check_renders_no_execution_feedback_for_code_that_does_not_compile(tmp_path):
    candidate = tmp_path / "broken.py"
    candidate.write_text("def task_func(LETTERS):\n    counts = {\n    return counts\n")
    done = convtui("check", "--task", "BigCodeBench/2", "--code", str(candidate), "--json")
    report = json.loads(done.stdout)
    assert report["compilation_feedback"].startswith("Traceback")
    assert report["execution_feedback"] is None


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("notes.md", "# Notes\n\nThis file only has words in it.\n\n- one point\n- another\n"),
        ("reply.md", "I could not write it, sorry.\n\n```text\nno code here\n```\n"),
        ("empty.py", ""),
    ],
)
def test_check_refuses_a_file_with_no_python_in_one_line(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    done = convtui("check", "--task", "BigCodeBench/2", "--code", str(path))
    assert_one_line_error(done, "no Python code", str(path), "fenced python block", ".py file")


def test_check_refuses_empty_stdin_in_one_line():
    done = checked("BigCodeBench/2", "\n")
    assert_one_line_error(done, "no Python code in stdin")


# --- bad option values: one line, exit 2, nothing created ---------------------------------------


BAD_OPTIONS = [
    (["session", "--turns", "-1"], ["--turns", "convtui session --help"]),
    (["bench", "live", "--turns", "-1"], ["--turns", "convtui bench live --help"]),
    (["bench", "live", "--ids", "abc"], ["'abc'", "0-9,42"]),
    (
        ["bench", "live", "--protocol", "ccw"],
        ["--protocol", "'ccw' is not one of", "convcodeworld"],
    ),
    (["session", "--protocol", "x"], ["--protocol", "convtui", "convtui session --help"]),
    (["bench", "live", "--context", "half"], ["--context", "'markov', 'full'"]),
    (["session", "--partial-rule", "all"], ["--partial-rule", "'ccw', 'first-tests'"]),
    (["bench", "live", "--isolation", "docker"], ["--isolation", "'landlock', 'none'"]),
    (
        ["check", "--task", "BigCodeBench/2", "--code", "x", "--extract", "nope"],
        ["--extract", "'robust', 'ccw'"],
    ),
    (["doctor", "--solution", "none"], ["--solution", "'ground-truth', 'broken'"]),
    (["tasks", "list", "--suite", "humaneval"], ["--suite", "'bigcodebench', 'codeif', 'all'"]),
    (["bench", "live", "--jobs", "0"], ["--jobs"]),
    (["bench", "live", "--concurrency", "0"], ["--concurrency"]),
    (["bench", "live", "--max-tokens", "0"], ["--max-tokens"]),
    (["bench", "live", "--no-such-option"], ["--no-such-option", "bench live --help"]),
    (["session", "--turns"], ["--turns"]),
    (["sessions", "list", "--limit", "0"], ["--limit"]),
    (["doctor", "--fail-under", "2"], ["--fail-under"]),
    (["check", "--task", "BigCodeBench/2"], ["--code"]),
    (["sesion"], ["sesion", "session"]),
]


@pytest.mark.parametrize(
    ("args", "words"), BAD_OPTIONS, ids=[" ".join(args) for args, _ in BAD_OPTIONS]
)
def test_bad_options_are_one_line_with_exit_2_and_create_nothing(tmp_path, args, words):
    db = tmp_path / "results.db"
    takes_db = args[0] in ("session", "bench", "sessions")
    done = convtui(*args, *(["--db", str(db)] if takes_db else []))
    assert_one_line_error(done, *words)
    assert "╭" not in done.stderr and "Usage:" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_help_still_prints_and_exits_0():
    done = convtui("bench", "live", "--help")
    assert done.returncode == 0, done.stderr
    assert "--turns" in done.stdout


# --- session needs a terminal -------------------------------------------------------------------


def test_session_without_a_terminal_exits_2_at_once_and_creates_nothing(tmp_path):
    """A real process: what is at stake is its stdin (no terminal) and its exit."""
    db = tmp_path / "results.db"
    done = subprocess.run(
        [*convtui_argv("session", "--task", "BigCodeBench/2", "--db", str(db))],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env(COLUMNS="100"),
        timeout=120,  # the old code drew into the pipe and waited for keys for ever
        check=False,
    )
    assert_one_line_error(done, "needs a terminal", "convtui bench live")
    assert done.stdout == ""
    assert not db.exists()


# --- the real entry point ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["bench", "live", "--protocol", "ccw"], ["--protocol", "'ccw' is not one of"]),
        (["tasks", "show", "BigCodeBench/99999"], ["BigCodeBench/999"]),
    ],
    ids=["option", "library"],
)
def test_the_real_entry_point_gives_the_exit_code_and_line_the_tests_see_in_process(args, words):
    """The other tests run the command in process (typer's CliRunner); ``python -m convtui``
    answers bad input the same way: exit code 2 and one ``error:`` line on stderr."""
    real = run_process(*args, timeout=120)
    assert_one_line_error(real, *words)
    in_process = invoke(*args)
    assert (in_process.returncode, in_process.stderr) == (real.returncode, real.stderr)
