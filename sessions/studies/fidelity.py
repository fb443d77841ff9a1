"""The store of ``convtui study fidelity`` (tables ``fidelity_calls``, ``fidelity_feedback``,
``fidelity_turns``, m013; SCHEMA.md): the states read from the recorded sessions, each
simulator's feedback on them and each target's one turn from them, written as they happen.

The sessions' own tables (runs, sessions, turns, model_calls, call_attempts,
human_turn_times, typed_feedback, studies, study_*) are only read here: the fidelity rows
point at a recorded turn by ``(session_id, turn_idx)`` and never change it. Texts go to
``blobs`` and test runs through the shared ``executions`` cache, which they share with the
sessions (new rows there, never a changed one).

Each call is a ``fidelity_calls`` row before it is made (``started``) and holds its answer
as soon as it returns (``ok``), before anything is done with it; a finished call with the
same request is reused instead of made again. A state's feedback (``fidelity_feedback``) and
a target's turn (``fidelity_turns``) are written once their outcome is known: a run killed in
between asks nothing again (the call's answer is there) and runs nothing again (the
execution is in the cache)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from convtui.core.models.types import Attempt, Completion
from convtui.core.settings.persona import PERSONAS, Persona, is_persona
from convtui.core.studies.fidelity import NO_FEEDBACK, PERSON
from convtui.core.studies.fidelity_states import (
    SimulatorIdentity,
    State,
    draft_identity,
    is_state,
    state_id,
)
from convtui.core.turns.journal import CallPurpose, CallRequest
from convtui.core.turns.record import Turn
from convtui.sessions.database.blobs import get_texts, put_text, put_texts
from convtui.sessions.database.codec import (
    canonical_json,
    completion_columns,
    completion_from_row,
    messages_to_refs,
    params_to_dict,
)
from convtui.sessions.database.connection import reading, rows, writing
from convtui.sessions.database.errors import StoreError
from convtui.sessions.database.executions import record_execution
from convtui.sessions.database.ids import new_id, utc_now
from convtui.sessions.database.store import Store

# The tables this module writes; every other table of the file is only read here.
FIDELITY_TABLES = ("fidelity_calls", "fidelity_feedback", "fidelity_turns")


def read_states(store: Store) -> list[State]:
    """Every state of the file: the turns of human and assisted sessions (in a study or not)
    that carry a person's words, in session creation order, then turn order."""
    db = store.db
    with reading(db):
        found = rows(
            db,
            "SELECT id, task_id, annotator, user_kind FROM sessions "
            "WHERE user_kind IN ('human', 'assist') ORDER BY id",
        )
    states = []
    for row in found:
        turns = tuple(store.load_turns(row["id"]))
        wanted = [t for t in turns if is_state(t, row["user_kind"])]
        if not wanted:
            continue
        config = store.session_config(row["id"])
        states += [
            State(
                row["id"],
                row["task_id"],
                row["annotator"],
                row["user_kind"],
                config,
                turns[: t.idx + 1],
            )
            for t in wanted
        ]
    return states


class FidelityJournal:
    """``CallJournal`` (core/turns/journal.py) for the calls made for one state: a
    simulator's (``role`` ``simulator``) or a target's (``target``) on behalf of ``source``.

    ``find`` reuses any finished call with the same request, purpose and position, whichever
    state or source made it (the request hash covers the model, every message and the
    parameters: at temperature 0 the same request is the same answer), and records nothing
    for the reuse, so a second run leaves the table as it was. Attempts are not kept one by
    one (``attempts`` counts them): the sessions' ``call_attempts`` belong to their calls."""

    def __init__(
        self, store: Store, state: State, role: str, source: str, session_key: str
    ) -> None:
        self._store = store
        self._state = state
        self._role = role
        self._source = source
        # The key backends see (CallInfo.session): one per state, role and source.
        self.session_id = session_key

    def find(
        self, turn_idx: int, purpose: CallPurpose, request_hash: str, *, seq: int = 0
    ) -> Completion | None:
        db = self._store.db
        found = rows(
            db,
            "SELECT * FROM fidelity_calls WHERE request_hash = ? AND purpose = ? AND seq = ? "
            "AND status = 'ok' ORDER BY id LIMIT 1",
            (request_hash, purpose, seq),
        )
        if not found:
            return None
        row = found[0]
        text = get_texts(db, [row["response_blob"]])[row["response_blob"]]
        return completion_from_row({**row, "cache_hit": 1}, text)

    def started(self, call: CallRequest) -> str:
        db = self._store.db
        call_id = new_id()
        with writing(db):
            refs, texts = messages_to_refs(call.messages)
            put_texts(db, texts)
            db.execute(
                "INSERT INTO fidelity_calls (id, session_id, turn_idx, role, source, purpose, "
                "seq, kind, request_hash, model, messages_json, params_json, status, "
                "started_utc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'started', ?)",
                (
                    call_id,
                    self._state.session_id,
                    self._state.turn_idx,
                    self._role,
                    self._source,
                    call.purpose,
                    call.seq,
                    call.kind,
                    call.request_hash,
                    call.model,
                    refs,
                    canonical_json(params_to_dict(call.params)),
                    utc_now(),
                ),
            )
        return call_id

    def attempt(self, call_id: str, attempt: Attempt) -> None:
        """Nothing to write: the finished call counts its attempts."""

    def finished(self, call_id: str, completion: Completion | None, error: str = "") -> None:
        db = self._store.db
        with writing(db):
            outcome: dict[str, Any] = {"status": "error", "error": error}
            if completion is not None:
                # The answer is kept the moment it returns, before anything uses it.
                outcome = {
                    "status": "ok",
                    "error": error,
                    "response_blob": put_text(db, completion.text),
                    **completion_columns(completion),
                }
            outcome["finished_utc"] = utc_now()
            names = ", ".join(f"{name} = ?" for name in outcome)
            db.execute(
                f"UPDATE fidelity_calls SET {names} WHERE id = ?", [*outcome.values(), call_id]
            )


def abandon_started_calls(store: Store) -> int:
    """Calls still ``started`` died with the process that made them (one fidelity run at a
    time writes a file): ``abandoned``, so they are asked again. Returns how many."""
    db = store.db
    with writing(db):
        return db.execute(
            "UPDATE fidelity_calls SET status = 'abandoned' WHERE status = 'started'"
        ).rowcount


def _call_id(db: Any, request_hash: str) -> str | None:
    found = db.execute(
        "SELECT id FROM fidelity_calls WHERE request_hash = ? AND status = 'ok' "
        "ORDER BY id LIMIT 1",
        (request_hash,),
    ).fetchone()
    return None if found is None else str(found[0])


@dataclass(frozen=True)
class FeedbackRow:
    """A simulator's feedback on a state: ``text`` None when it said nothing (a novice whose
    visible tests pass)."""

    state_id: str
    source: str
    identity: SimulatorIdentity
    text: str | None
    call_id: str | None
    input_tokens: int | None
    output_tokens: int | None
    latency_s: float | None
    notes: tuple[str, ...]


def save_feedback(
    store: Store,
    state: State,
    identity: SimulatorIdentity,
    text: str | None,
    request_hash: str | None,
    call: Completion | None,
    notes: Iterable[str] = (),
) -> None:
    """Record ``identity``'s feedback on ``state`` (once: a second save changes nothing). Its
    persona must be one convtui knows (the table holds no CHECK of it since m015)."""
    if not is_persona(identity.persona):
        raise StoreError(f"{identity.persona!r} is not a persona: one of {', '.join(PERSONAS)}")
    db = store.db
    with writing(db):
        db.execute(
            "INSERT OR IGNORE INTO fidelity_feedback (session_id, turn_idx, source, model, "
            "persona, protocol, prompt_sha256, status, text_blob, call_id, request_hash, "
            "input_tokens, output_tokens, latency_s, notes_json, created_utc) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                state.session_id,
                state.turn_idx,
                identity.source,
                identity.model,
                identity.persona,
                identity.protocol,
                identity.prompt_sha256 or "",
                "silent" if text is None else "said",
                None if text is None else put_text(db, text),
                _call_id(db, request_hash) if request_hash else None,
                request_hash,
                call.input_tokens if call else None,
                call.output_tokens if call else None,
                call.latency_s if call else None,
                canonical_json(list(notes)),
                utc_now(),
            ),
        )


def feedback_rows(store: Store) -> dict[tuple[str, str], FeedbackRow]:
    """(state id, source) -> the simulator feedback recorded."""
    db = store.db
    with reading(db):
        found = rows(db, "SELECT * FROM fidelity_feedback")
        texts = get_texts(db, [r["text_blob"] for r in found if r["text_blob"]])
    out = {}
    for r in found:
        persona: Persona = r["persona"]
        identity = SimulatorIdentity(r["model"], persona, r["protocol"], r["prompt_sha256"] or None)
        key = state_id(r["session_id"], r["turn_idx"])
        out[(key, r["source"])] = FeedbackRow(
            key,
            r["source"],
            identity,
            texts[r["text_blob"]] if r["text_blob"] else None,
            r["call_id"],
            r["input_tokens"],
            r["output_tokens"],
            r["latency_s"],
            tuple(_json_list(r["notes_json"])),
        )
    return out


def _json_list(text: str) -> list[str]:
    return [str(item) for item in json.loads(text)]


@dataclass(frozen=True)
class TargetTurnRow:
    """A target's one turn from a state handed ``source``'s feedback: its verdict."""

    state_id: str
    source: str
    target: str
    protocol: str
    call_id: str | None
    execution_id: int
    passed: bool
    tests_passed: int
    tests_total: int


def save_target_turn(
    store: Store,
    state: State,
    source: str,
    target: str,
    protocol: str,
    turn: Turn,
    cache_key: str | None,
) -> None:
    """Record ``target``'s ``turn`` from ``state`` handed ``source``'s feedback, linked to
    the execution row holding exactly its result (found by cache key, or inserted), in one
    transaction (once: a second save changes nothing)."""
    assert turn.execution is not None  # evaluate() always runs the code
    db = store.db
    tests_passed, tests_total = turn.execution.counts()
    with writing(db):
        execution_id = record_execution(db, cache_key, state.task_id, turn.code, turn.execution)
        db.execute(
            "INSERT OR IGNORE INTO fidelity_turns (session_id, turn_idx, source, target, "
            "protocol, request_hash, call_id, reply_blob, code_blob, execution_id, passed, "
            "tests_passed, tests_total, created_utc) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                state.session_id,
                state.turn_idx,
                source,
                target,
                protocol,
                turn.prompt_hash,
                _call_id(db, turn.prompt_hash),
                put_text(db, turn.reply),
                put_text(db, turn.code),
                execution_id,
                int(turn.passed),
                tests_passed,
                tests_total,
                utc_now(),
            ),
        )


def target_turn_rows(store: Store) -> dict[tuple[str, str, str, str], TargetTurnRow]:
    """(state id, source, target, protocol) -> the target's turn recorded."""
    db = store.db
    with reading(db):
        found = rows(db, "SELECT * FROM fidelity_turns")
    return {
        (
            state_id(r["session_id"], r["turn_idx"]),
            r["source"],
            r["target"],
            r["protocol"],
        ): TargetTurnRow(
            state_id(r["session_id"], r["turn_idx"]),
            r["source"],
            r["target"],
            r["protocol"],
            r["call_id"],
            r["execution_id"],
            bool(r["passed"]),
            r["tests_passed"],
            r["tests_total"],
        )
        for r in found
    }


def fidelity_counts(store: Store) -> dict[str, int]:
    """Rows per fidelity table (and calls made: ``ok`` or not, never reused ones)."""
    db = store.db
    with reading(db):
        return {
            table: int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            for table in FIDELITY_TABLES
        }


def served_models(store: Store) -> dict[str, tuple[str, ...]]:
    """Each simulator spec -> the model names its server answered as (sorted): a spec that
    is a URL names a server, not a model, and the server may change what it serves."""
    db = store.db
    with reading(db):
        found = db.execute(
            "SELECT DISTINCT model, response_model FROM fidelity_calls "
            "WHERE role = 'simulator' AND status = 'ok' AND response_model IS NOT NULL "
            "AND response_model != '' ORDER BY model, response_model"
        ).fetchall()
    served: dict[str, list[str]] = {}
    for spec, name in found:
        served.setdefault(spec, []).append(name)
    return {spec: tuple(names) for spec, names in served.items()}


@dataclass(frozen=True)
class StoredTurn:
    """A target's turn as the export shares it: the state, the source and the words it
    handed on (None: none at all), who that source is (None for the person and the control),
    and the turn's verdict."""

    @property
    def target(self) -> str:
        """The target's spec, with the protocol its turn was built by when that is not the
        session's own (a target under two protocols is two targets)."""
        if self.turn.protocol == self.state.config.protocol:
            return self.turn.target
        return f"{self.turn.target} [{self.turn.protocol}]"

    state: State
    source: str
    text: str | None
    identity: SimulatorIdentity | None
    turn: TargetTurnRow


def stored_turns(store: Store, session_ids: Iterable[str] | None = None) -> list[StoredTurn]:
    """Every target turn the file holds (of the states of ``session_ids`` only, when given),
    in state, source and target order; a turn whose words are no longer known (a simulator
    row missing) is left out."""
    wanted = None if session_ids is None else set(session_ids)
    states = {s.state_id: s for s in read_states(store) if wanted is None or s.session_id in wanted}
    said = feedback_rows(store)
    out = []
    for (sid, source, *_), row in sorted(target_turn_rows(store).items()):
        state = states.get(sid)
        if state is None:
            continue
        found = _words(state, source, said)
        if found is not None:
            out.append(StoredTurn(state, source, found[0], found[1], row))
    return out


def _words(
    state: State, source: str, said: dict[tuple[str, str], FeedbackRow]
) -> tuple[str | None, SimulatorIdentity | None] | None:
    """(the words ``source`` handed on at ``state``, who it is), or None when not known."""
    if source == NO_FEEDBACK:
        return None, None
    if source == PERSON:
        return state.person_text, None
    if source == state.draft_source:
        return state.draft, draft_identity(state)
    row = said.get((state.state_id, source))
    return None if row is None else (row.text, row.identity)
