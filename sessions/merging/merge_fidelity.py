"""What ``sessions merge`` does with the results of ``convtui study fidelity`` (the m013
tables, sessions/studies/fidelity.py): check them, compare them with the target's, and copy them.

Every fidelity row hangs off a recorded turn (a state: ``(session_id, turn_idx)``), and every
session of a source ends in the target (copied, or there already with the same turns), so
every fidelity row of the source travels: its calls under their ids (ULID-like, like model
calls'), its feedback and target turns under their keys (state, source, and target and
protocol), with the texts they name. A target turn's execution is the file's own integer row:
it is found or inserted in the target's ``executions`` by cache key and result (as a copied
turn's is, ``record_execution``), and the copied turn links to that row.

A row the target holds already is compared by content: equal, it is skipped, so merging twice
adds nothing; different, the merge is refused before anything is written. A call the target
holds under another id, with the same request at the same place (state, role, source,
purpose, seq) and the same outcome (status, answer, error), is that call too: two files that
ran the same fidelity study hold the same calls under ids of their own, and the second merge
adds none of them (before, the call log's rows doubled); a feedback or turn that names such a
call names the target's. A call still
``started`` in the source died with (or is still in) the process that made it elsewhere: it is
taken as ``abandoned``, as the target's next fidelity run would mark it, and a call the target
holds ``abandoned`` takes the source's outcome once the source has one. Which call a feedback
or turn names, the cost of a call and when a row was written are not its content.

The source is untrusted (sessions/merging/merge_checks.py): ``check_fidelity`` takes its rows only
as ``study fidelity`` writes them.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from convtui.core.catalog.loaders import suite_of
from convtui.core.settings.persona import PERSONAS
from convtui.core.studies.fidelity_states import is_state
from convtui.sessions.database.blobs import get_texts
from convtui.sessions.database.connection import rows, rows_in
from convtui.sessions.database.errors import StoreError
from convtui.sessions.database.executions import load_executions, record_execution
from convtui.sessions.database.store import Store
from convtui.sessions.merging.copying import copy_blobs, insert_row
from convtui.sessions.merging.merge_checks import (
    CHANGED,
    NOTHING,
    message_hashes,
    short,
    short_hash,
)
from convtui.sessions.merging.merge_undo import Change

_ROLES = frozenset({"simulator", "target"})
_CALL_STATUSES = frozenset({"started", "ok", "error", "abandoned"})
_FEEDBACK_STATUSES = frozenset({"said", "silent"})
_PERSONAS = frozenset(PERSONAS)

# A call: the request it made (what its id stands for) and what came of it.
_CALL_REQUEST = (
    "session_id",
    "turn_idx",
    "role",
    "source",
    "purpose",
    "seq",
    "kind",
    "request_hash",
    "model",
    "messages_json",
    "params_json",
    "started_utc",
)
_CALL_OUTCOME = (
    "status",
    "response_blob",
    "finish_reason",
    "input_tokens",
    "output_tokens",
    "latency_s",
    "attempts",
    "response_model",
    "resolved_model",
    "endpoint",
    "error",
    "finished_utc",
)
# A call by content, whatever its id: what was asked, where, and what came of it.
_CALL_CONTENT = (
    *(f for f in _CALL_REQUEST if f != "started_utc"),
    "status",
    "response_blob",
    "error",
)
_FINISHED = ("ok", "error")
_COUNTS = ("tests_passed", "tests_total")
# A simulator's feedback and a target's turn, by content (keys, then what was found).
_FEEDBACK_KEY = ("session_id", "turn_idx", "source")
_FEEDBACK_FIELDS = (
    "model",
    "persona",
    "protocol",
    "prompt_sha256",
    "status",
    "text_blob",
    "request_hash",
    "notes_json",
)
_TURN_KEY = ("session_id", "turn_idx", "source", "target", "protocol")
_TURN_FIELDS = ("request_hash", "reply_blob", "code_blob", "passed", "tests_passed", "tests_total")


@dataclass
class FidelityPlan:
    """What a merge writes into the fidelity tables: rows the target lacks, and the target's
    abandoned calls that the source holds finished."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    finished: list[dict[str, Any]] = field(default_factory=list)
    # The source's call id -> the target's id of the same call held under another id.
    same_calls: dict[str, str] = field(default_factory=dict)
    feedback: list[dict[str, Any]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)


def check_fidelity(source: Store, shown: Path) -> None:
    """The fidelity rows of ``source`` as ``study fidelity`` writes them: each on a state of
    the file (a turn where a person gave their words), roles, statuses and personas it writes,
    an ``ok`` call with its answer, a feedback ``said`` exactly when it has a text, every text
    they name a blob of the file, the call a feedback or target turn names an answered call of
    the file with the same request, and a target turn's execution one of the file, of its
    session's task, with the test counts (and, outside CodeIF-Bench, the verdict) it says."""
    calls = rows(source.db, "SELECT * FROM fidelity_calls ORDER BY id")
    feedback = rows(source.db, "SELECT * FROM fidelity_feedback ORDER BY session_id, turn_idx")
    turns = rows(source.db, "SELECT * FROM fidelity_turns ORDER BY session_id, turn_idx")
    if not (calls or feedback or turns):
        return
    states = _states(source, {r["session_id"] for r in (*calls, *feedback, *turns)}, shown)
    named: dict[str, str] = {}  # text hash -> the row that names it
    by_id = {c["id"]: c for c in calls}
    for call in calls:
        what = f"fidelity call {short(call['id'])}"
        _check_call(call, (call["session_id"], call["turn_idx"]) in states, what, shown)
        named.update(dict.fromkeys(_call_texts(call), what))
    for row in feedback:
        what = _feedback_name(row)
        _refuse_unless((row["session_id"], row["turn_idx"]) in states, shown, what, _NO_STATE)
        _refuse_unless(row["status"] in _FEEDBACK_STATUSES, shown, what, _status(row))
        persona = f"has persona {short(row['persona'])!r}, which convtui does not know"
        _refuse_unless(row["persona"] in _PERSONAS, shown, what, persona)
        said = row["status"] == "said"
        _refuse_unless(said == (row["text_blob"] is not None), shown, what, _words(row))
        _refuse_unless(_is_list(row["notes_json"]), shown, what, "holds notes it cannot read")
        _check_linked_call(row, by_id, what, shown)
        if said:
            named[row["text_blob"]] = what
    _check_turns(source, turns, states, by_id, shown)
    for row in turns:
        named.update(dict.fromkeys((row["reply_blob"], row["code_blob"]), _turn_name(row)))
    sql = "SELECT hash FROM blobs WHERE hash IN ({marks})"
    held = {r["hash"] for r in rows_in(source.db, sql, named)}
    for key, what in named.items():
        lacking = f"names text {short_hash(key)}, which the file does not hold"
        _refuse_unless(key in held, shown, what, lacking)


_NO_STATE = "is on no turn of the file where a person gave their words"


def _check_call(call: dict[str, Any], on_state: bool, what: str, shown: Path) -> None:
    _refuse_unless(on_state, shown, what, _NO_STATE)
    _refuse_unless(call["role"] in _ROLES, shown, what, f"has role {short(call['role'])!r}")
    _refuse_unless(call["status"] in _CALL_STATUSES, shown, what, _status(call))
    readable = message_hashes(call["messages_json"]) is not None
    _refuse_unless(readable, shown, what, "holds messages it cannot read")
    answered = call["status"] != "ok" or call["response_blob"] is not None
    _refuse_unless(answered, shown, what, "is 'ok' without its answer")


def _check_turns(
    source: Store,
    turns: list[dict[str, Any]],
    states: Collection[tuple[str, int]],
    calls: dict[str, dict[str, Any]],
    shown: Path,
) -> None:
    executions = {
        r["id"]: r
        for r in rows_in(
            source.db,
            "SELECT id, task_id, status, tests_passed, tests_total FROM executions "
            "WHERE id IN ({marks})",
            [t["execution_id"] for t in turns],
        )
    }
    sql = "SELECT id, task_id FROM sessions WHERE id IN ({marks})"
    named = [t["session_id"] for t in turns]
    tasks = {r["id"]: r["task_id"] for r in rows_in(source.db, sql, named)}
    for row in turns:
        what = _turn_name(row)
        _refuse_unless((row["session_id"], row["turn_idx"]) in states, shown, what, _NO_STATE)
        _check_linked_call(row, calls, what, shown)
        found = executions.get(row["execution_id"])
        if found is None:
            execution = short(row["execution_id"])
            _refuse(shown, what, f"names execution {execution}, which the file does not hold")
        task = tasks[row["session_id"]]
        if found["task_id"] != task:
            other = short(found["task_id"])
            _refuse(shown, what, f"names an execution of {other}, not of {short(task)}")
        said, ran = _pick(row, _COUNTS), _pick(found, _COUNTS)
        counts = f"says {said[0]}/{said[1]} tests passed but its execution {ran[0]}/{ran[1]}"
        _refuse_unless(said == ran, shown, what, counts)
        _refuse_unless(row["passed"] in (0, 1), shown, what, f"has passed {short(row['passed'])}")
        if suite_of(str(task)) != "codeif" and bool(row["passed"]) != (found["status"] == "pass"):
            verdict = ("passed", "did not") if row["passed"] else ("failed", "passed")
            _refuse(shown, what, f"says it {verdict[0]} but its execution {verdict[1]}")


def _check_linked_call(
    row: dict[str, Any], calls: dict[str, dict[str, Any]], what: str, shown: Path
) -> None:
    """The call a feedback or target turn names: the file's, answered, of its request."""
    if row["call_id"] is None:
        return
    call = calls.get(row["call_id"])
    named = f"names call {short(row['call_id'])}, which"
    if call is None:
        _refuse(shown, what, f"{named} the file does not hold")
    elif call["status"] != "ok":
        _refuse(shown, what, f"{named} did not answer")
    elif call["request_hash"] != row["request_hash"]:
        _refuse(shown, what, f"{named} answered another request")


def _states(source: Store, session_ids: Collection[str], shown: Path) -> set[tuple[str, int]]:
    """The states of ``session_ids`` (sessions/studies/fidelity.py ``read_states``)."""
    sql = "SELECT id, user_kind FROM sessions WHERE id IN ({marks})"
    found = set()
    for session in rows_in(source.db, sql, session_ids):
        try:
            turns = source.load_turns(session["id"])
        except (ValueError, KeyError, TypeError) as exc:
            raise StoreError(
                f"{shown}: session {short(session['id'])} cannot be read as convtui wrote it "
                f"({exc}): {NOTHING}"
            ) from None
        found |= {(session["id"], t.idx) for t in turns if is_state(t, session["user_kind"])}
    return found


def _is_list(text: Any) -> bool:
    try:
        return isinstance(json.loads(text), list)
    except (TypeError, ValueError):
        return False


def _status(row: dict[str, Any]) -> str:
    return f"has status {short(row['status'])!r}, which convtui does not know"


def _words(row: dict[str, Any]) -> str:
    has = "with" if row["text_blob"] is not None else "without"
    return f"is {short(row['status'])!r} {has} words"


def _feedback_name(row: dict[str, Any]) -> str:
    return (
        f"fidelity feedback of {short(row['source'])} on session {short(row['session_id'])} "
        f"turn {short(row['turn_idx'])}"
    )


def _turn_name(row: dict[str, Any]) -> str:
    return (
        f"fidelity turn of {short(row['target'])} ({short(row['protocol'])}) handed "
        f"{short(row['source'])} on session {short(row['session_id'])} turn "
        f"{short(row['turn_idx'])}"
    )


def _refuse_unless(sound: bool, shown: Path, what: str, problem: str) -> None:
    if not sound:
        _refuse(shown, what, problem)


def _refuse(shown: Path, what: str, problem: str) -> NoReturn:
    raise StoreError(f"{shown}: {what} {problem}: {NOTHING}; {CHANGED}")


def plan_fidelity(source: Store, target: Store, where: str) -> FidelityPlan:
    """What merging ``source``'s fidelity rows writes into ``target``; a StoreError (nothing
    written) for a row both hold with different content."""
    plan = FidelityPlan()
    calls = rows(source.db, "SELECT * FROM fidelity_calls ORDER BY id")
    sql = "SELECT * FROM fidelity_calls WHERE id IN ({marks})"
    theirs = {r["id"]: r for r in rows_in(target.db, sql, [c["id"] for c in calls])}
    held = _calls_by_content(target, {c["session_id"] for c in calls})
    for call in calls:
        if call["status"] == "started":
            call["status"] = "abandoned"
        other = theirs.get(call["id"])
        if other is None:
            same = held.get(_pick(call, _CALL_CONTENT))
            if same is None:
                plan.calls.append(call)
            else:
                plan.same_calls[call["id"]] = same
            continue
        differs = _differs(call, other, _CALL_REQUEST)
        if differs is None and call["status"] in _FINISHED and other["status"] in _FINISHED:
            differs = _differs(call, other, _CALL_OUTCOME)
        if differs is not None:
            raise StoreError(
                f"fidelity call {call['id']} differs ({differs}) between {where}: not merged"
            )
        if call["status"] in _FINISHED and other["status"] == "abandoned":
            plan.finished.append(call)
    feedback = ("fidelity_feedback", _FEEDBACK_KEY, _FEEDBACK_FIELDS)
    plan.feedback = _new_rows(source, target, *feedback, where)
    plan.turns = _new_rows(source, target, "fidelity_turns", _TURN_KEY, _TURN_FIELDS, where)
    return plan


def _calls_by_content(target: Store, session_ids: Collection[str]) -> dict[tuple[Any, ...], str]:
    """The target's calls on ``session_ids`` by content (``_CALL_CONTENT``) -> an id of each."""
    sql = "SELECT * FROM fidelity_calls WHERE session_id IN ({marks}) ORDER BY id"
    found: dict[tuple[Any, ...], str] = {}
    for row in rows_in(target.db, sql, session_ids):
        found.setdefault(_pick(row, _CALL_CONTENT), row["id"])
    return found


def _new_rows(
    source: Store,
    target: Store,
    table: str,
    key: tuple[str, ...],
    fields: tuple[str, ...],
    where: str,
) -> list[dict[str, Any]]:
    """The rows of ``table`` in ``source`` that ``target`` lacks (by ``key``); refuses one
    both hold with other ``fields``."""
    mine = rows(source.db, f"SELECT * FROM {table} ORDER BY {', '.join(key)}")
    theirs: dict[tuple[Any, ...], dict[str, Any]] = {}
    sql = f"SELECT * FROM {table} WHERE session_id IN ({{marks}})"
    for row in rows_in(target.db, sql, {r["session_id"] for r in mine}):
        theirs[_pick(row, key)] = row
    new = []
    for row in mine:
        other = theirs.get(_pick(row, key))
        if other is None:
            new.append(row)
            continue
        differs = _differs(row, other, fields)
        if differs is not None:
            what = _feedback_name(row) if table == "fidelity_feedback" else _turn_name(row)
            raise StoreError(f"{what} differs ({differs}) between {where}: not merged")
    return new


def _pick(row: dict[str, Any], fields: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(row[f] for f in fields)


def _differs(mine: dict[str, Any], theirs: dict[str, Any], fields: tuple[str, ...]) -> str | None:
    return next((f for f in fields if mine[f] != theirs[f]), None)


def copy_fidelity(source: Store, target: Store, plan: FidelityPlan) -> int:
    """Write ``plan`` (inside the caller's write transaction); returns the rows added."""
    for call in plan.calls:
        copy_blobs(source, target, _call_texts(call))
        insert_row(target, "fidelity_calls", call)
    for call in plan.finished:
        copy_blobs(source, target, _call_texts(call))
        names = ", ".join(f"{name} = ?" for name in _CALL_OUTCOME)
        target.db.execute(
            f"UPDATE fidelity_calls SET {names} WHERE id = ? AND status = 'abandoned'",
            [*_pick(call, _CALL_OUTCOME), call["id"]],
        )
    for row in plan.feedback:
        copy_blobs(source, target, [row["text_blob"]] if row["text_blob"] else [])
        insert_row(target, "fidelity_feedback", _named_call(row, plan))
    executions: dict[int, int] = {}  # the source's execution id -> the target's
    for row in plan.turns:
        copy_blobs(source, target, [row["reply_blob"], row["code_blob"]])
        mine = row["execution_id"]
        if mine not in executions:
            executions[mine] = _copy_execution(source, target, mine)
        turn = {**_named_call(row, plan), "execution_id": executions[mine]}
        insert_row(target, "fidelity_turns", turn)
    return len(plan.calls) + len(plan.feedback) + len(plan.turns)


def finished_changes(target: Store, plan: FidelityPlan) -> list[Change]:
    """The target's abandoned calls that ``copy_fidelity`` will finish, as they are and as
    they will be (what ``sessions merge --undo`` puts back); call inside the write
    transaction, before ``copy_fidelity``."""
    sql = "SELECT * FROM fidelity_calls WHERE status = 'abandoned' AND id IN ({marks})"
    held = {r["id"]: r for r in rows_in(target.db, sql, [c["id"] for c in plan.finished])}
    return [
        Change(
            "fidelity_calls",
            {"id": call["id"]},
            dict(zip(_CALL_OUTCOME, _pick(held[call["id"]], _CALL_OUTCOME), strict=True)),
            dict(zip(_CALL_OUTCOME, _pick(call, _CALL_OUTCOME), strict=True)),
        )
        for call in plan.finished
        if call["id"] in held
    ]


def _named_call(row: dict[str, Any], plan: FidelityPlan) -> dict[str, Any]:
    """``row`` naming the target's own id of its call where the target held it already."""
    call = row["call_id"]
    return {**row, "call_id": plan.same_calls.get(call, call)} if call is not None else row


def _call_texts(call: dict[str, Any]) -> Iterator[str]:
    yield from message_hashes(call["messages_json"]) or []
    if call["response_blob"] is not None:
        yield call["response_blob"]


def _copy_execution(source: Store, target: Store, execution_id: int) -> int:
    """The id of the target's row holding exactly the result of ``source``'s execution:
    found by cache key and result, or inserted with its tests (``record_execution``, as a
    copied turn's execution is)."""
    db = source.db
    sql = "SELECT cache_key, task_id, code_blob FROM executions WHERE id = ?"
    row = rows(db, sql, (execution_id,))[0]
    code = get_texts(db, [row["code_blob"]])[row["code_blob"]]
    result = load_executions(db, [execution_id])[execution_id]
    return record_execution(target.db, row["cache_key"], row["task_id"], code, result)
