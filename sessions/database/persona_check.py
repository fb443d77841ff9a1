"""The CHECK of ``fidelity_feedback.persona``, derived from the personas convtui knows
(core/settings/persona.py) rather than fixed in a migration.

m013 wrote the CHECK with the two personas of its day, and every database made since holds
it: a file keeps refusing a persona it does not know, whatever wrote into it (a merge finds
such a row damaged). When convtui knows a persona that the file's CHECK lacks, opening the file
widens the CHECK to the union of both (never narrows it: rows a newer convtui wrote stay
valid), so a new persona is one line in core/settings/persona.py and no migration. SQLite cannot
alter a CHECK, so the table is rebuilt and every row copied under its own rowid (a merge's
``merge_ranges`` name rowids); no other table, view or trigger names it. The store also checks
the persona in Python where it writes and merges (sessions/studies/fidelity.py,
sessions/merging/merge_fidelity.py)."""

from __future__ import annotations

import re

from sqlite_utils import Database

from convtui.core.settings.persona import PERSONAS

_CHECKED = re.compile(r"persona TEXT NOT NULL CHECK \(persona IN \(([^)]*)\)\)")
_COLUMNS = (
    "session_id, turn_idx, source, model, persona, protocol, prompt_sha256, status, text_blob, "
    "call_id, request_hash, input_tokens, output_tokens, latency_s, notes_json, created_utc"
)


def checked_personas(db: Database) -> tuple[str, ...] | None:
    """The personas the file's CHECK allows; None where there is no such table or CHECK."""
    found = db.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'fidelity_feedback'"
    ).fetchone()
    match = _CHECKED.search(found[0]) if found else None
    if match is None:
        return None
    return tuple(part.strip().strip("'") for part in match[1].split(","))


def lacks_a_persona(db: Database) -> bool:
    """Whether the file's CHECK refuses a persona convtui knows."""
    allowed = checked_personas(db)
    return allowed is not None and not set(PERSONAS) <= set(allowed)


def widen_persona_check(db: Database) -> None:
    """Rebuild ``fidelity_feedback`` with a CHECK allowing what it allowed and every persona
    convtui knows; call inside the caller's write transaction."""
    allowed = checked_personas(db)
    if allowed is None:
        return
    wanted = (*allowed, *(p for p in PERSONAS if p not in allowed))
    listed = ", ".join(f"'{p}'" for p in wanted)
    [[sql]] = db.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'fidelity_feedback'"
    ).fetchall()
    widened = _CHECKED.sub(f"persona TEXT NOT NULL CHECK (persona IN ({listed}))", sql)
    old = "fidelity_feedback_narrow"
    db.execute(f"ALTER TABLE fidelity_feedback RENAME TO {old}")
    db.execute(widened)
    db.execute(
        f"INSERT INTO fidelity_feedback (rowid, {_COLUMNS}) "
        f"SELECT rowid, {_COLUMNS} FROM {old} ORDER BY rowid"
    )
    db.execute(f"DROP TABLE {old}")
