"""What a benchmark command says when the user stops it with Ctrl+C: what the database kept
and the command that goes on from there (every finished turn is already a row, so running
the same command again continues the run)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from convtui.core.plural import counted

INTERRUPTED_EXIT = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl+C


def kept(db: Path) -> str:
    """The newest run of ``db`` in a few words: its id, sessions finished, turns recorded."""
    from convtui.sessions import Store
    from convtui.sessions.database.connection import rows
    from convtui.sessions.database.records import FINAL_SESSION_STATES

    final = sorted(FINAL_SESSION_STATES)
    marks = ", ".join("?" * len(final))
    if not db.is_file():
        return f"nothing was recorded yet ({db} was not created)"
    with Store.open(db) as store, store.reading() as conn:
        found = rows(
            conn,
            "SELECT r.id, count(DISTINCT s.id) AS sessions, "
            f"count(DISTINCT CASE WHEN s.status IN ({marks}) THEN s.id END) AS finished, "
            "(SELECT count(*) FROM turns t JOIN sessions u ON u.id = t.session_id "
            " WHERE u.run_id = r.id) AS turns "
            "FROM runs r LEFT JOIN sessions s ON s.run_id = r.id "
            "GROUP BY r.id ORDER BY r.id DESC LIMIT 1",
            final,
        )
    if not found:
        return f"{db} holds no run yet"
    run = found[0]
    return (
        f"run {run['id']} in {db}: {run['finished']} of {counted(run['sessions'], 'session')} "
        f"finished, {counted(run['turns'], 'turn')} recorded"
    )


def say_interrupted(db: Path) -> None:
    """Two lines on stderr after Ctrl+C: what was kept, and the command that goes on (the
    command line exits with INTERRUPTED_EXIT)."""
    again = shlex.join(["convtui", *sys.argv[1:]])
    try:
        what = kept(db)
    except Exception as exc:  # the database is the user's to inspect; say what we could
        what = f"the database {db} could not be read ({exc})"
    print(f"interrupted: kept {what}.", file=sys.stderr)
    print(f"go on where it stopped: {again}", file=sys.stderr)
