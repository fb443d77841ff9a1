"""`sessions export --format convcodebench` then `sessions import`: a session convtui recorded
comes back as it was recorded (user, annotator, status, protocol, model, every turn), read from
the export's manifest where the files are unchanged; a folder whose files changed imports as
ConvCodeWorld's logs. Real processes over stores built by hand (no model or executor)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from support.cli import env, run_process
from support.data import needs_bigcodebench
from support.recorded import compiled_turn

from convtui.core.execution.types import ExecResult, TestOutcome
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.settings.protocol import build_config
from convtui.core.turns.record import Turn
from convtui.sessions import Store

pytestmark = needs_bigcodebench

TASK = "BigCodeBench/13"
CONFIG = build_config(
    "convtui",
    model="local:smollm2",
    feedback=FeedbackConfig("full", "novice"),
    simulator=None,
    turns=3,
)


def convtui(*args: str, columns: int = 100) -> subprocess.CompletedProcess[str]:
    return run_process(*args, environ=env(COLUMNS=str(columns)), timeout=120)


def a_turn(idx: int, said: str | None) -> Turn:
    """A failing turn (one test of two fails); ``said``: the person's words about it."""
    code = f"def task_func(xs):\n    return sum(xs) + {idx + 1}\n"
    trace = "Traceback (most recent call last):\nAssertionError: 7 != 6\n"
    return compiled_turn(
        idx,
        code,
        ExecResult(
            "fail",
            (TestOutcome("test_empty", "pass", 0.01), TestOutcome("test_sum", "fail", 0.02, trace)),
            duration_s=0.5,
            isolation="landlock",
            detail="1 test failed",
        ),
        "TEST_SUM\nAssertionError: 7 != 6\n",
        reply=f"Here you go:\n```python\n{code}```",
        verbal_feedback=said,
        feedback_source="human" if said else "none",
        notes=("extracted the last code block",),
    )


@pytest.fixture
def exported(tmp_path: Path) -> tuple[Path, str, Path]:
    """A human's session under --protocol convtui, given up after two turns (the person's
    words on the first), exported: (its database, its id, the export folder)."""
    db = tmp_path / "app.db"
    with Store.open(db) as store:
        sid = store.create_interactive_session(TASK, CONFIG, "human", annotator="ana")
        store.save_turn(sid, a_turn(0, "You add [one] too many."), "running")
        store.save_turn(sid, a_turn(1, None), "abandoned")
    out = tmp_path / "logs"
    done = convtui(
        "sessions", "export", sid, "--db", str(db), "--format", "convcodebench", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    return db, sid, out


@pytest.fixture
def back_db(tmp_path: Path) -> Path:
    """The store an export is imported into, apart from the one it was exported from."""
    return tmp_path / "back.db"


def import_into(db: Path, folder: Path) -> dict:
    done = convtui("sessions", "import", str(folder), "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    (imported,) = json.loads(done.stdout)
    return imported


def only_session(db: Path) -> str:
    with Store.open(db) as store:
        (sid,) = [row[0] for row in store.db.execute("SELECT id FROM sessions").fetchall()]
    return sid


# Header rows that name this copy (its id, its run, the code that imported it, when).
_OWN_ROWS = re.compile(r"^│ (session|run|code|time) .*\n", re.MULTILINE)


def shown(db: Path, sid: str) -> str:
    done = convtui("sessions", "show", sid, "--db", str(db), columns=120)
    assert done.returncode == 0, done.stderr
    return _OWN_ROWS.sub("", done.stdout.replace(sid, "ID"))


def test_a_given_up_human_session_comes_back_as_it_was_recorded(
    exported: tuple[Path, str, Path], back_db: Path
) -> None:
    db, sid, out = exported
    imported = import_into(back_db, out)
    assert imported["protocol"] == "convtui" and imported["restored"] is True
    assert imported["model"] == "local:smollm2"
    back = only_session(back_db)
    with Store.open(db) as store:
        before, before_config = store.session(sid), store.session_config(sid)
        before_turns = store.load_turns(sid)
    with Store.open(back_db) as store:
        after, after_config = store.session(back), store.session_config(back)
        after_turns = store.load_turns(back)
    assert (after.user_kind, after.annotator, after.simulator) == ("human", "ana", None)
    assert after.status == before.status == "abandoned"
    assert (after.model, after.feedback) == (before.model, before.feedback)
    assert after_config == before_config  # protocol, model spec, Ω, context, rules, limits
    assert after_turns == before_turns
    assert shown(back_db, back) == shown(db, sid)


def test_importing_the_export_again_adds_nothing(
    exported: tuple[Path, str, Path], back_db: Path
) -> None:
    _, _, out = exported
    first = import_into(back_db, out)
    again = import_into(back_db, out)
    assert again["already_imported"] is True and again["run_id"] == first["run_id"]
    only_session(back_db)


def test_an_export_whose_files_changed_imports_as_convcodeworld_logs(
    exported: tuple[Path, str, Path], back_db: Path
) -> None:
    _, _, out = exported
    (turn1,) = [p for p in out.rglob("*.jsonl") if "too many" in p.read_text()]
    turn1.write_text(turn1.read_text().replace("too many", "too much"))
    imported = import_into(back_db, out)
    assert imported["protocol"] == "convcodeworld" and imported["restored"] is False
    with Store.open(back_db) as store:
        row = store.session(only_session(back_db))
        turns = store.load_turns(row.id)
    # What the files say, read as ConvCodeWorld's: the words sit with the turn they were given to.
    assert row.model == "local_smollm2"
    assert turns[1].received is not None and turns[1].received.user == "You add [one] too much."
