"""Why a run's sessions failed, for the summary a bench command prints when it ends: "2 failed
on model errors" alone sends a person searching; the errors (alike ones counted once) and the
command that shows a failed session in full answer it where it is read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from convtui.core.plural import counted
from convtui.sessions import Store

SHOWN_ERRORS = 3


@dataclass(frozen=True)
class FailureGroup:
    """The failed sessions that share one error: how many, and the first of them."""

    error: str
    sessions: int
    first_session_id: str

    def to_json(self) -> dict[str, object]:
        return {
            "error": self.error,
            "sessions": self.sessions,
            "first_session_id": self.first_session_id,
        }


def failure_groups(db: Path, run_ids: Sequence[str]) -> list[FailureGroup]:
    """The failed sessions of ``run_ids`` grouped by their error, the commonest first."""
    found: dict[str, list[str]] = {}
    with Store.open(db) as store:
        for run_id in run_ids:
            for row in store.run_sessions(run_id):
                if row.status == "failed":
                    found.setdefault(row.error or "no error recorded", []).append(row.id)
    groups = [FailureGroup(error, len(ids), ids[0]) for error, ids in found.items()]
    return sorted(groups, key=lambda g: (-g.sessions, g.first_session_id))


def failure_lines(groups: Sequence[FailureGroup], db: Path) -> list[str]:
    """One line per error (the commonest few), then where to read a failed session whole."""
    if not groups:
        return []
    lines = [
        f"  {counted(g.sessions, 'session')}: {_one_line(g.error)}" for g in groups[:SHOWN_ERRORS]
    ]
    if len(groups) > SHOWN_ERRORS:
        lines.append(f"  and {counted(len(groups) - SHOWN_ERRORS, 'other error')}")
    first = groups[0].first_session_id
    lines.append(
        f"  see one: convtui sessions show {first} --db {db}; "
        "the same command again retries the failed sessions"
    )
    return lines


def _one_line(error: str, width: int = 200) -> str:
    text = " ".join(error.split())
    return text if len(text) <= width else text[: width - 1] + "…"
