"""What ``sessions merge`` checks in a source's rows before it takes any
(sessions/merging/merge.py).

A merged file is an annotator's own database, and anyone can change it with sqlite3; the
study's database takes from it only what convtui itself could have written there. An
assignment link could otherwise hand one annotator's session to another (whose app would open
it), a text stored under another text's hash would stand in the target for whatever has that
hash, and a status its turns do not bear out would count in the study's results. Any such row
refuses the whole file, in one line naming it: a merge never half-trusts a file.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Collection
from datetime import datetime
from pathlib import Path
from typing import Any, get_args

from convtui.core.catalog.loaders import suite_of
from convtui.core.settings.config import SessionStatus
from convtui.sessions.database.codec import text_hash
from convtui.sessions.database.connection import rows, rows_in
from convtui.sessions.database.errors import StoreError
from convtui.sessions.database.human_times import HumanTurnTimes
from convtui.sessions.database.ids import UTC_FORMAT
from convtui.sessions.database.store import Store

# One text: a reply, a code, one prompt message. A 1M-token context window holds about 4M
# characters, so a text past twice that was never a model's input or output.
MAX_BLOB_CHARS = 8 * 1024 * 1024
# Turns of one session, whatever its max_turns says (a file may claim any): ConvCodeWorld
# plays 10, a CodeIF-Bench conversation a few per instruction.
MAX_TURNS = 1_000

_STATUSES = frozenset(get_args(SessionStatus))
NOTHING = "nothing merged"
CHANGED = "convtui never writes this, so the file was changed outside it"


def check_sizes(source: Store, shown: Path) -> None:
    """Every blob's text at most ``MAX_BLOB_CHARS`` long and stored under its own hash (how
    many sessions and turns a file may add: sessions/merging/merge_limits.py)."""
    for key, text in source.db.conn.execute("SELECT hash, text FROM blobs"):
        if not isinstance(text, str):
            raise StoreError(f"{shown}: blob {short_hash(key)} holds no text: {NOTHING}; {CHANGED}")
        if len(text) > MAX_BLOB_CHARS:
            raise StoreError(
                f"{shown}: blob {short_hash(key)} holds {len(text):,} characters, more than a "
                f"merge takes ({MAX_BLOB_CHARS:,}): {NOTHING}; leave the file out"
            )
        if text_hash(text) != key:
            raise StoreError(
                f"{shown}: blob {short_hash(key)} is stored under a hash that is not its text's "
                f"({short_hash(text_hash(text))}): {NOTHING}; {CHANGED}"
            )


def check_links(source: Store, target: Store, study_id: str, shown: Path) -> list[str]:
    """The source's assignment links that a merge may take, as the sessions they link: each
    answered by a session the file holds, of the assignment's task and annotator, linked to
    no other assignment here or in ``target``, and an assignment of the target's study."""
    links = rows(
        source.db,
        "SELECT task_id, annotator, session_id FROM study_assignments "
        "WHERE study_id = ? AND session_id IS NOT NULL ORDER BY task_id, annotator",
        (study_id,),
    )
    uses = Counter(link["session_id"] for link in links)
    for link in links:
        task, annotator, session_id = link["task_id"], link["annotator"], link["session_id"]
        mine = f"{shown}: assignment {short(task)} of {short(annotator)} links session "
        mine += short(session_id)
        fix = f"{NOTHING}; {CHANGED}: leave it out, or clear that link in it"
        if uses[session_id] > 1:
            raise StoreError(f"{mine}, which answers {uses[session_id]} assignments there: {fix}")
        found = rows(
            source.db, "SELECT task_id, annotator FROM sessions WHERE id = ?", (session_id,)
        )
        if not found:
            raise StoreError(f"{mine}, which the file does not hold: {fix}")
        session = found[0]
        if session["task_id"] != task:
            raise StoreError(f"{mine}, which answers {short(session['task_id'])}: {fix}")
        if session["annotator"] != annotator:
            who = short(session["annotator"]) if session["annotator"] else "no annotator"
            raise StoreError(f"{mine}, which {who} recorded: {fix}")
        theirs = rows(
            target.db,
            "SELECT task_id, annotator, session_id FROM study_assignments "
            "WHERE study_id = ? AND (session_id = ? OR (task_id = ? AND annotator = ?))",
            (study_id, session_id, task, annotator),
        )
        slots = {(a["task_id"], a["annotator"]): a["session_id"] for a in theirs}
        if (task, annotator) not in slots:
            raise StoreError(f"{mine}, but {target.path} has no such assignment: {fix}")
        for (other_task, other_annotator), other in slots.items():
            if other == session_id and (other_task, other_annotator) != (task, annotator):
                raise StoreError(
                    f"{mine}, which already answers {short(other_task)} of "
                    f"{short(other_annotator)} in {target.path}: {fix}"
                )
    return list(uses)


def check_annotators(
    source: Store,
    session_ids: Collection[str],
    annotators: Collection[str],
    study: str | None,
    shown: Path,
) -> None:
    """The annotators the sessions a merge adds or links name, against who recorded the file.

    A session's ``annotator`` (and the assignment it answers) is written by whoever held the
    file: offline, the app asks for no token, and the file carries every annotator's token
    hash (it began as a copy of the study's database), so nothing in it proves who typed. The
    organiser knows who handed it in and says so (``annotators``, ``--annotator``): every
    session naming someone must name one of them. Into a study (``study``, the target's name
    for it), where a named session answers that person's assignment and counts as theirs, a
    file whose sessions name anyone is not merged without it."""
    named: dict[str, str] = {}  # annotator -> the first session naming them
    for row in rows_in(
        source.db,
        "SELECT id, annotator FROM sessions WHERE annotator IS NOT NULL AND id IN ({marks}) "
        "ORDER BY id",
        session_ids,
    ):
        named.setdefault(row["annotator"], row["id"])
    if not annotators:
        if study is not None and named:
            names = ", ".join(sorted(short(name) for name in named))
            raise StoreError(
                f"{shown}: its sessions say {names} recorded them, and study {short(study)} "
                f"counts them as theirs: say who handed the file in with --annotator NAME, "
                f"which every session must match: {NOTHING}"
            )
        return
    for who, session_id in sorted(named.items()):
        if who not in annotators:
            said = " or ".join(sorted(short(name) for name in annotators))
            raise StoreError(
                f"{shown}: session {short(session_id)} says {short(who)} recorded it, not "
                f"{said} (--annotator): {NOTHING}; merge {short(who)}'s work from their own "
                f"file, or add --annotator {short(who)} if they recorded in this one"
            )


def check_sessions(source: Store, session_ids: Collection[str], shown: Path) -> None:
    """Each session's counters and status as its turns bear them out (see ``_unsupported``),
    and no more turns than it may hold."""
    turns: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for turn in rows_in(
        source.db,
        "SELECT t.session_id, t.idx, t.passed, e.status AS execution FROM turns t "
        "LEFT JOIN executions e ON e.id = t.execution_id WHERE t.session_id IN ({marks})",
        session_ids,
    ):
        turns[turn["session_id"]].append(turn)
    for session in rows_in(source.db, "SELECT * FROM sessions WHERE id IN ({marks})", session_ids):
        own = sorted(turns[session["id"]], key=lambda t: t["idx"])
        problem = _unsupported(session, own)
        if problem is not None:
            raise StoreError(
                f"{shown}: session {short(session['id'])} {problem}: {NOTHING}; {CHANGED}: "
                "leave it out, or correct that session in it"
            )


def _unsupported(session: dict[str, Any], turns: list[dict[str, Any]]) -> str | None:
    """What in ``session`` its ``turns`` (in order) do not bear out, as the store writes a
    session (sessions/database/turns.py ``save_turn``: turns numbered from 0, ``turns_done`` their
    count, ``first_pass_turn`` the first whose execution passed) and as the turn loop ends one
    (core/play/loop.py: ``solved`` on a pass, ``exhausted`` at ``max_turns``); None when sound.
    A CodeIF-Bench session is solved when its code follows every instruction, which its
    executions' status does not say, so only its counters are checked."""
    status, limit, count = session["status"], session["max_turns"], len(turns)
    codeif = suite_of(str(session["task_id"])) == "codeif"
    if status not in _STATUSES:
        return f"has status {short(status)!r}, which convtui does not know"
    if count > MAX_TURNS:
        return f"holds {count:,} turns, more than a merge takes ({MAX_TURNS:,})"
    if not codeif and count > limit + 1:
        return f"holds {count} turns, more than its limit of {limit} allows"
    numbers = [t["idx"] for t in turns]
    if numbers != list(range(count)):
        return f"has turns numbered {short(', '.join(map(str, numbers)))}, not 0 to {count - 1}"
    for t in turns:
        if bool(t["passed"]) != (t["execution"] == "pass"):
            said, found = ("passed", "did not") if t["passed"] else ("failed", "passed")
            return f"says turn {t['idx']} {said} but its execution {found}"
    if session["turns_done"] != count:
        return f"says turns_done {session['turns_done']} but holds {count} turn(s)"
    first = next((t["idx"] for t in turns if t["passed"]), None)
    if session["first_pass_turn"] != first:
        said = session["first_pass_turn"]
        passing = "none of its turns passed" if first is None else f"turn {first} passed first"
        return f"says first_pass_turn {said} but {passing}"
    if status == "planned" and count:
        return f"is 'planned' but holds {count} turn(s)"
    if status in ("solved", "exhausted") and not count:
        return f"is {status!r} without a turn"
    if codeif:
        return None
    if status == "solved" and first is None:
        return f"is 'solved' but none of its {count} turn(s) passed"
    if status == "exhausted" and count < limit:
        return f"is 'exhausted' after {count} of its {limit} turns"
    return None


def check_times(source: Store, session_ids: Collection[str], shown: Path) -> None:
    """The person's times on the sessions' turns (sessions/database/human_times.py) as the app
    writes them: only in a session a person answered (not a simulator's), UTC times in the store's
    format, seconds and keystrokes not negative, the seconds from shown to sent known exactly when
    the showing is, and nothing but the sending known for a turn shown before its session was
    reopened."""
    sql = "SELECT id, user_kind FROM sessions WHERE id IN ({marks})"
    kinds = {r["id"]: r["user_kind"] for r in rows_in(source.db, sql, session_ids)}
    for session_id, by_turn in source.human_turn_times(session_ids).items():
        for idx, times in by_turn.items():
            problem = _odd_times(kinds.get(session_id), times)
            if problem is not None:
                raise StoreError(
                    f"{shown}: session {short(session_id)} turn {idx}: {problem}: {NOTHING}; "
                    f"{CHANGED}: leave it out, or correct that session in it"
                )


def _odd_times(user_kind: str | None, times: HumanTurnTimes) -> str | None:
    if user_kind == "simulator":
        return "a simulator's session holds a person's times"
    for name in ("shown_utc", "first_key_utc", "sent_utc"):
        value = getattr(times, name)
        if value is not None and not _is_utc(value):
            return f"{name} {short(value)!r} is not a UTC time as convtui writes one"
    for name in ("shown_to_sent_s", "typing_s", "keystrokes"):
        value = getattr(times, name)
        if value is not None and not (isinstance(value, (int, float)) and 0 <= value < math.inf):
            return f"{name} is {short(value)}, not a count of seconds or keys"
    if (times.shown_utc is None) != (times.shown_to_sent_s is None):
        return "shown_utc and shown_to_sent_s are not both known or both unknown"
    if times.resumed and times != times.unknown_before_sent():
        return "a turn shown before its session was reopened holds times from before then"
    return None


def _is_utc(value: object) -> bool:
    try:
        datetime.strptime(str(value), UTC_FORMAT)
    except ValueError:
        return False
    return True


def check_references(source: Store, session_ids: Collection[str], shown: Path) -> None:
    """Every prompt message the sessions' turns and model calls name is a blob of the file
    (these references are JSON, which no foreign key covers)."""
    named: dict[str, str] = {}
    for table, column, label in (
        ("turns", "prompt_json", "a turn"),
        ("model_calls", "messages_json", "a model call"),
    ):
        for row in rows_in(
            source.db,
            f"SELECT session_id, {column} AS refs FROM {table} WHERE session_id IN ({{marks}})",
            session_ids,
        ):
            hashes = message_hashes(row["refs"])
            if hashes is None:
                raise StoreError(
                    f"{shown}: {label} of session {short(row['session_id'])} holds messages "
                    f"that cannot be read: {NOTHING}; {CHANGED}"
                )
            named.update(dict.fromkeys(hashes, row["session_id"]))
    held = {
        r["hash"]
        for r in rows_in(source.db, "SELECT hash FROM blobs WHERE hash IN ({marks})", named)
    }
    for key, session_id in named.items():
        if key not in held:
            raise StoreError(
                f"{shown}: session {short(session_id)} names message {short_hash(key)}, which the "
                f"file does not hold: {NOTHING}; {CHANGED}"
            )


def message_hashes(refs: Any) -> list[str] | None:
    """The blob hashes of a ``[[role, hash], ...]`` list (sessions/database/codec.py), None when it
    is not one."""
    try:
        found = json.loads(refs)
    except (TypeError, ValueError):
        return None
    if not isinstance(found, list):
        return None
    if not all(
        isinstance(ref, list) and len(ref) == 2 and all(isinstance(v, str) for v in ref)
        for ref in found
    ):
        return None
    return [ref[1] for ref in found]


def short_hash(value: object) -> str:
    """A blob hash as a line shows it: enough of it to find the row."""
    return short(value)[:12] + "…"


def short(value: object) -> str:
    """A value read from the file, cut to a length one line can show."""
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "…"
