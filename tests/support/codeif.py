"""`convtui bench codeif` and `convtui report` as the CodeIF-Bench benchmark tests drive them:
one task, scripted replies (``mock:``), what a run's SQLite file records."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support.cli import invoke
from support.sqlite_rows import fetchall

TASK = "CodeIF/11"


def script(path: Path, replies: list[str]) -> str:
    """A ``mock:`` spec that answers the rounds with ``replies`` in order."""
    path.write_text("".join(json.dumps({"purpose": "generate", "text": r}) + "\n" for r in replies))
    return f"mock:{path}"


def codeif(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``convtui bench codeif --ids TASK --db DB --json ARGS``, in process."""
    return invoke("bench", "codeif", "--ids", TASK, "--db", str(db), "--json", *args)


def rounds(db: Path) -> list[tuple]:
    """(round, the user message's source, the prompt, passed) of every recorded round."""
    return fetchall(
        db,
        "SELECT t.idx, json_extract(t.received_json, '$.user_source'), t.prompt_json, "
        "t.passed FROM turns t ORDER BY t.idx",
    )


def report(db, *args: str) -> subprocess.CompletedProcess[str]:
    """``convtui report --db DB ARGS``, in process."""
    return invoke("report", "--db", str(db), *args)
