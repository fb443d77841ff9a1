"""The database schema as versioned migrations (documented in SCHEMA.md).

Migrations run through sqlite-utils' ``Migrations("convtui")``: each one commits together with
its row in ``_sqlite_migrations``. A migration is never edited once released; a change to the
schema is a new function appended below, plus a fixture DB of the previous version under
tests/fixtures that a test upgrades.

Tables are STRICT so a wrong type is an error rather than silently stored text. CHECK
constraints cover only the values this package owns (run kinds and states, call states, user
kinds, flags): statuses defined in ``convtui.core`` (session, execution and test statuses,
call purposes) are checked by their types in Python, so that a new status there never needs a
table rebuild here.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

from convtui.sessions.database.errors import StoreError
from convtui.sessions.database.persona_check import lacks_a_persona, widen_persona_check

MIGRATIONS = Migrations("convtui")
_NAMES: list[str] = []  # registered migration names, in order

_V1 = """
CREATE TABLE blobs (
    hash TEXT PRIMARY KEY,
    text TEXT NOT NULL
) STRICT;

CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('live', 'static', 'interactive')),
    config_json TEXT NOT NULL,
    config_hash TEXT NOT NULL,
    model TEXT NOT NULL,
    simulator TEXT,
    feedback_json TEXT NOT NULL,
    context TEXT NOT NULL,
    selection TEXT NOT NULL,
    task_count INTEGER NOT NULL,
    max_turns INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'planned'
        CHECK (status IN ('planned', 'running', 'done', 'interrupted')),
    created_utc TEXT NOT NULL,
    finished_utc TEXT,
    code_version TEXT NOT NULL,
    host TEXT,
    pid INTEGER,
    lease_until_utc TEXT
) STRICT;
CREATE INDEX runs_by_config ON runs (config_hash, selection);

CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    run_id TEXT REFERENCES runs (id),
    task_id TEXT NOT NULL,
    model TEXT NOT NULL,
    feedback TEXT NOT NULL,
    user_kind TEXT NOT NULL CHECK (user_kind IN ('none', 'human', 'simulator', 'assist')),
    simulator TEXT,
    max_turns INTEGER NOT NULL,
    config_json TEXT,
    status TEXT NOT NULL DEFAULT 'planned',
    first_pass_turn INTEGER,
    turns_done INTEGER NOT NULL DEFAULT 0,
    error TEXT NOT NULL DEFAULT '',
    created_utc TEXT NOT NULL,
    updated_utc TEXT NOT NULL,
    UNIQUE (run_id, task_id, feedback)
) STRICT;
CREATE INDEX sessions_by_task ON sessions (task_id);

CREATE TABLE executions (
    id INTEGER PRIMARY KEY,
    cache_key TEXT,
    in_cache INTEGER NOT NULL CHECK (in_cache IN (0, 1)),
    result_hash TEXT NOT NULL,
    task_id TEXT NOT NULL,
    code_blob TEXT NOT NULL REFERENCES blobs (hash),
    status TEXT NOT NULL,
    detail TEXT NOT NULL,
    tests_passed INTEGER NOT NULL,
    tests_total INTEGER NOT NULL,
    duration_s REAL NOT NULL,
    output TEXT NOT NULL,
    output_bytes INTEGER NOT NULL,
    isolation TEXT NOT NULL,
    missing_module TEXT,
    tampered INTEGER NOT NULL CHECK (tampered IN (0, 1)),
    created_utc TEXT NOT NULL,
    CHECK (in_cache = 0 OR (cache_key IS NOT NULL AND status NOT IN ('timeout', 'crash')))
) STRICT;
CREATE UNIQUE INDEX executions_cache ON executions (cache_key) WHERE in_cache = 1;
CREATE INDEX executions_by_key ON executions (cache_key);

CREATE TABLE execution_tests (
    execution_id INTEGER NOT NULL REFERENCES executions (id),
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    duration_s REAL NOT NULL,
    traceback TEXT NOT NULL,
    PRIMARY KEY (execution_id, position)
) STRICT, WITHOUT ROWID;

CREATE TABLE model_calls (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    turn_idx INTEGER NOT NULL,
    purpose TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    model TEXT NOT NULL,
    messages_json TEXT NOT NULL,
    params_json TEXT,
    status TEXT NOT NULL CHECK (status IN ('started', 'ok', 'error', 'abandoned')),
    response_blob TEXT REFERENCES blobs (hash),
    finish_reason TEXT,
    input_tokens INTEGER,
    output_tokens INTEGER,
    latency_s REAL,
    attempts INTEGER NOT NULL DEFAULT 0,
    response_model TEXT,
    resolved_model TEXT,
    error TEXT NOT NULL DEFAULT '',
    cache_hit INTEGER NOT NULL DEFAULT 0 CHECK (cache_hit IN (0, 1)),
    reused_call_id TEXT REFERENCES model_calls (id),
    started_utc TEXT NOT NULL,
    finished_utc TEXT
) STRICT;
CREATE INDEX model_calls_by_slot ON model_calls (session_id, turn_idx, purpose);
CREATE INDEX model_calls_by_request ON model_calls (request_hash);

CREATE TABLE call_attempts (
    call_id TEXT NOT NULL REFERENCES model_calls (id),
    number INTEGER NOT NULL,
    status TEXT NOT NULL,
    latency_s REAL NOT NULL,
    error TEXT NOT NULL,
    retry_after_s REAL,
    PRIMARY KEY (call_id, number)
) STRICT, WITHOUT ROWID;

CREATE TABLE turns (
    session_id TEXT NOT NULL REFERENCES sessions (id),
    idx INTEGER NOT NULL,
    reply_blob TEXT NOT NULL REFERENCES blobs (hash),
    code_blob TEXT NOT NULL REFERENCES blobs (hash),
    compiled INTEGER NOT NULL CHECK (compiled IN (0, 1)),
    compile_feedback TEXT NOT NULL,
    execution_id INTEGER REFERENCES executions (id),
    execution_feedback TEXT,
    verbal_feedback TEXT,
    feedback_source TEXT NOT NULL,
    generate_call_id TEXT REFERENCES model_calls (id),
    simulate_call_id TEXT REFERENCES model_calls (id),
    prompt_json TEXT NOT NULL,
    prompt_hash TEXT NOT NULL,
    notes_json TEXT NOT NULL,
    passed INTEGER NOT NULL CHECK (passed IN (0, 1)),
    created_utc TEXT NOT NULL,
    PRIMARY KEY (session_id, idx)
) STRICT;

-- Read-only conveniences for ad-hoc SQL: the blob texts joined back in.
CREATE VIEW turn_texts AS
SELECT t.session_id, t.idx, r.text AS reply, c.text AS code, t.compiled, t.compile_feedback,
       t.execution_id, t.execution_feedback, t.verbal_feedback, t.feedback_source, t.passed,
       t.created_utc
FROM turns t JOIN blobs r ON r.hash = t.reply_blob JOIN blobs c ON c.hash = t.code_blob;

CREATE VIEW model_call_texts AS
SELECT m.id, m.session_id, m.turn_idx, m.purpose, m.model, m.status, b.text AS response,
       m.input_tokens, m.output_tokens, m.latency_s, m.attempts, m.cache_hit, m.error,
       m.started_utc, m.finished_utc
FROM model_calls m LEFT JOIN blobs b ON b.hash = m.response_blob;
"""


def _migration(fn: Callable[[Database], None]) -> Callable[[Database], None]:
    _NAMES.append(fn.__name__)
    return MIGRATIONS()(fn)


@_migration
def m001_initial(db: Database) -> None:
    """Runs, sessions, turns, model calls and their attempts, executions and their tests."""
    db.executescript(_V1)


@_migration
def m002_feedback_drafts(db: Database) -> None:
    """Assisted feedback (``--user assist:*``): the simulator's draft a person was shown, and
    whether they edited it before sending; the turn_texts view shows both."""
    db.executescript(
        """
        ALTER TABLE turns ADD COLUMN feedback_draft TEXT;
        ALTER TABLE turns ADD COLUMN feedback_edited INTEGER CHECK (feedback_edited IN (0, 1));
        DROP VIEW turn_texts;
        CREATE VIEW turn_texts AS
        SELECT t.session_id, t.idx, r.text AS reply, c.text AS code, t.compiled,
               t.compile_feedback, t.execution_id, t.execution_feedback, t.verbal_feedback,
               t.feedback_source, t.feedback_draft, t.feedback_edited, t.passed, t.created_utc
        FROM turns t JOIN blobs r ON r.hash = t.reply_blob JOIN blobs c ON c.hash = t.code_blob;
        """
    )


@_migration
def m003_call_positions(db: Database) -> None:
    """ConvCodeWorld's turns make several model calls (repairs, a stale-EF call, the
    simulator): each call's position in its turn (``seq``) and whether it was chat messages or
    one raw prompt (``kind``); and the feedback a turn's calls were given, as ConvCodeWorld
    records it with the turn's solution (``received_json``)."""
    db.executescript(
        """
        ALTER TABLE model_calls ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE model_calls ADD COLUMN kind TEXT NOT NULL DEFAULT 'chat'
            CHECK (kind IN ('chat', 'text'));
        ALTER TABLE turns ADD COLUMN received_json TEXT;
        """
    )


@_migration
def m004_error_messages(db: Database) -> None:
    """The exception text that ended a run outside any test (``str(exc)``), which
    BigCodeBench shows as its ``ALL`` entry; ``detail`` keeps convtui's wording."""
    db.executescript("ALTER TABLE executions ADD COLUMN error_message TEXT NOT NULL DEFAULT '';")


@_migration
def m005_replays(db: Database) -> None:
    """Static replays (``convtui bench static``) and the logs they read: a replayed session
    names the reference session whose turns it was given (``reference_session_id``); a
    session a person recorded names them (``annotator``), so human log sets can be told
    apart; a static run keeps the log set it replayed (``replay_json``) and a run loaded
    from elsewhere says where from (``origin``: an imported ConvCodeWorld folder, or the
    database a reference session was copied out of)."""
    db.executescript(
        """
        ALTER TABLE sessions ADD COLUMN reference_session_id TEXT REFERENCES sessions (id);
        ALTER TABLE sessions ADD COLUMN annotator TEXT;
        ALTER TABLE runs ADD COLUMN replay_json TEXT;
        ALTER TABLE runs ADD COLUMN origin TEXT;
        CREATE INDEX sessions_by_reference ON sessions (reference_session_id);
        """
    )


@_migration
def m006_run_settings(db: Database) -> None:
    """What a run records about itself beyond its identity (``settings_json``, a JSON object):
    a CodeIF-Bench run's metric definition (``metrics``: authors or paper, what report shows
    unless told otherwise) and the data file its tasks were read from (``data``: path and
    SHA-256). Changing them does not make another run, so they are not part of the
    selection or the config hash."""
    db.executescript("ALTER TABLE runs ADD COLUMN settings_json TEXT;")


@_migration
def m007_run_benchmark(db: Database) -> None:
    """Which benchmark a run plays (``benchmark``: ``bigcodebench`` or ``codeif``) and how
    (``mode``), as columns: readers picked CodeIF-Bench runs by the start of their selection
    and a run's mode out of its fields, which ties every reader to how the selection is
    spelled. The selection itself is unchanged (it is what resumes a run), and existing rows
    are filled from it and from ``kind``. The defaults only fill the rows already there:
    every insert names both columns."""
    db.executescript(
        """
        ALTER TABLE runs ADD COLUMN benchmark TEXT NOT NULL DEFAULT 'bigcodebench'
            CHECK (benchmark IN ('bigcodebench', 'codeif'));
        ALTER TABLE runs ADD COLUMN mode TEXT NOT NULL DEFAULT 'live'
            CHECK (mode IN ('live', 'static', 'dynamic', 'replay'));
        UPDATE runs SET mode = 'static' WHERE kind = 'static';
        UPDATE runs SET benchmark = 'codeif' WHERE substr(selection, 1, 7) = 'codeif;';
        """
    )
    # A CodeIF-Bench selection is `codeif;mode=<mode>;protocol=…`; one without a mode field
    # reads as static, as the report read it.
    codeif = db.execute("SELECT id, selection FROM runs WHERE benchmark = 'codeif'").fetchall()
    for run_id, selection in codeif:
        fields = dict(p.split("=", 1) for p in selection.split(";")[1:] if "=" in p)
        mode = fields.get("mode", "static")
        db.execute(
            "UPDATE runs SET mode = ? WHERE id = ?",
            (mode if mode in ("static", "dynamic", "replay") else "static", run_id),
        )


@_migration
def m008_studies(db: Database) -> None:
    """Human-feedback studies live beside their sessions, so a study database is the one file
    to back up, merge and replay: the study (its spec and the config every session runs),
    its annotators (a token's SHA-256, never the token), and who was given which task, in
    which order, with the session that answers it once one is opened. An assignment handed
    on from an annotator who left stays, marked ``reassigned``, so the record keeps who had
    it first."""
    db.executescript(
        """
        CREATE TABLE studies (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            spec_json TEXT NOT NULL,
            config_json TEXT NOT NULL,
            created_utc TEXT NOT NULL
        ) STRICT;
        CREATE TABLE study_annotators (
            study_id TEXT NOT NULL REFERENCES studies(id),
            name TEXT NOT NULL,
            token_hash TEXT NOT NULL UNIQUE,
            active INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
            created_utc TEXT NOT NULL,
            PRIMARY KEY (study_id, name)
        ) STRICT;
        CREATE TABLE study_assignments (
            study_id TEXT NOT NULL REFERENCES studies(id),
            task_id TEXT NOT NULL,
            annotator TEXT NOT NULL,
            position INTEGER NOT NULL,
            session_id TEXT REFERENCES sessions(id),
            reassigned_to TEXT,
            PRIMARY KEY (study_id, task_id, annotator),
            FOREIGN KEY (study_id, annotator) REFERENCES study_annotators(study_id, name)
        ) STRICT;
        CREATE INDEX study_assignments_by_annotator
            ON study_assignments(study_id, annotator, position);
        """
    )


@_migration
def m009_call_endpoints(db: Database) -> None:
    """Which server answered (``endpoint``: its base URL) on every model call and attempt: a
    model spec may name several replicas, and the attempts of one call may go to different
    ones. NULL for models not behind a URL and for calls recorded before."""
    db.executescript(
        """
        ALTER TABLE model_calls ADD COLUMN endpoint TEXT;
        ALTER TABLE call_attempts ADD COLUMN endpoint TEXT;
        DROP VIEW model_call_texts;
        CREATE VIEW model_call_texts AS
        SELECT m.id, m.session_id, m.turn_idx, m.purpose, m.model, m.status, b.text AS response,
               m.input_tokens, m.output_tokens, m.latency_s, m.attempts, m.cache_hit, m.error,
               m.started_utc, m.finished_utc, m.endpoint
        FROM model_calls m LEFT JOIN blobs b ON b.hash = m.response_blob;
        """
    )


@_migration
def m010_typed_feedback(db: Database) -> None:
    """Words a person typed into the app but has not sent yet, per session and turn (the
    turn that waits for them): kept while they type, so a closed browser tab, a killed server
    or a crash loses none of them, and removed in the transaction that records the turn. A
    CodeIF-Bench session also keeps which instruction the words are about."""
    db.executescript(
        """
        CREATE TABLE typed_feedback (
            session_id TEXT NOT NULL REFERENCES sessions (id),
            turn_idx INTEGER NOT NULL,
            text TEXT NOT NULL,
            instruction TEXT,
            written_utc TEXT NOT NULL,
            PRIMARY KEY (session_id, turn_idx)
        ) STRICT;
        """
    )


@_migration
def m011_error_tracebacks(db: Database) -> None:
    """The traceback of the exception that ended a run outside any test (the code raised
    while loading), which convtui's protocol shows as execution feedback where BigCodeBench
    showed ``error_message``; empty otherwise."""
    db.executescript("ALTER TABLE executions ADD COLUMN error_traceback TEXT NOT NULL DEFAULT '';")


@_migration
def m012_human_turn_times(db: Database) -> None:
    """A person's time on each turn they answered in the app (human and assisted sessions):
    when the turn's code and test results were first shown to them, when they first typed,
    when they sent, the seconds between, and the time spent typing. A table of its own
    rather than columns on ``turns``: only turns a person answered have times (a benchmark's
    turns would carry empty columns), and a turn's content, which merges compare, stays what
    it was. Written in the transaction that records the turn; unknown parts are NULL (a
    session reopened after the turn may have been shown, ``resumed`` 1)."""
    db.executescript(
        """
        CREATE TABLE human_turn_times (
            session_id TEXT NOT NULL,
            turn_idx INTEGER NOT NULL,
            shown_utc TEXT,
            first_key_utc TEXT,
            sent_utc TEXT NOT NULL,
            shown_to_sent_s REAL,
            typing_s REAL,
            keystrokes INTEGER,
            resumed INTEGER NOT NULL CHECK (resumed IN (0, 1)),
            PRIMARY KEY (session_id, turn_idx),
            FOREIGN KEY (session_id, turn_idx) REFERENCES turns (session_id, idx)
        ) STRICT;
        """
    )


@_migration
def m013_fidelity(db: Database) -> None:
    """Is the simulated user a person? (``convtui study fidelity``, sessions/studies/fidelity.py):
    simulators asked for their feedback on the states where a person gave theirs, and target
    models' one turn from each state handed each feedback. Tables of their own, beside the
    recorded sessions and never in them: a model call of the sessions' own tables belongs to a
    session and a turn (``model_calls.session_id`` NOT NULL), and the sessions a person
    recorded must stay exactly as they were. Executions go through the shared ``executions``
    cache. ``fidelity_feedback.persona``'s CHECK names the personas of its day; opening a file
    widens it to every persona convtui knows (persona_check.py)."""
    db.executescript(
        """
        CREATE TABLE fidelity_calls (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id),
            turn_idx INTEGER NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('simulator', 'target')),
            source TEXT NOT NULL,
            purpose TEXT NOT NULL,
            seq INTEGER NOT NULL,
            kind TEXT NOT NULL,
            request_hash TEXT NOT NULL,
            model TEXT NOT NULL,
            messages_json TEXT NOT NULL,
            params_json TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('started', 'ok', 'error', 'abandoned')),
            response_blob TEXT REFERENCES blobs (hash),
            finish_reason TEXT,
            input_tokens INTEGER,
            output_tokens INTEGER,
            latency_s REAL,
            attempts INTEGER,
            response_model TEXT,
            resolved_model TEXT,
            endpoint TEXT,
            error TEXT NOT NULL DEFAULT '',
            started_utc TEXT NOT NULL,
            finished_utc TEXT
        ) STRICT;
        CREATE INDEX fidelity_calls_by_request ON fidelity_calls (request_hash, purpose, seq);

        CREATE TABLE fidelity_feedback (
            session_id TEXT NOT NULL,
            turn_idx INTEGER NOT NULL,
            source TEXT NOT NULL,
            model TEXT NOT NULL,
            persona TEXT NOT NULL CHECK (persona IN ('novice', 'expert')),
            protocol TEXT NOT NULL,
            prompt_sha256 TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('said', 'silent')),
            text_blob TEXT REFERENCES blobs (hash),
            call_id TEXT REFERENCES fidelity_calls (id),
            request_hash TEXT,
            input_tokens INTEGER,
            output_tokens INTEGER,
            latency_s REAL,
            notes_json TEXT NOT NULL,
            created_utc TEXT NOT NULL,
            PRIMARY KEY (session_id, turn_idx, source),
            FOREIGN KEY (session_id, turn_idx) REFERENCES turns (session_id, idx)
        ) STRICT;

        CREATE TABLE fidelity_turns (
            session_id TEXT NOT NULL,
            turn_idx INTEGER NOT NULL,
            source TEXT NOT NULL,
            target TEXT NOT NULL,
            protocol TEXT NOT NULL,
            request_hash TEXT NOT NULL,
            call_id TEXT REFERENCES fidelity_calls (id),
            reply_blob TEXT NOT NULL REFERENCES blobs (hash),
            code_blob TEXT NOT NULL REFERENCES blobs (hash),
            execution_id INTEGER NOT NULL REFERENCES executions (id),
            passed INTEGER NOT NULL CHECK (passed IN (0, 1)),
            tests_passed INTEGER NOT NULL,
            tests_total INTEGER NOT NULL,
            created_utc TEXT NOT NULL,
            PRIMARY KEY (session_id, turn_idx, source, target, protocol),
            FOREIGN KEY (session_id, turn_idx) REFERENCES turns (session_id, idx)
        ) STRICT;
        """
    )


@_migration
def m014_merges(db: Database) -> None:
    """What each ``sessions merge`` added, so that ``sessions merge --undo`` takes back exactly
    that while annotators of a served study go on recording into the same file
    (sessions/merging/merge_undo.py). A merge writes under the write lock, and SQLite gives each new
    row of a rowid table the next rowid, so what one source added to a table is one range of
    rowids (``merge_ranges``); the rows it changed rather than added (an assignment's link, a
    fidelity call it finished) are kept with what they held before and after
    (``merge_changes``); and a range's ``digest`` hashes its rows as the merge left them, so an
    undo sees whether anything was changed since. ``batch`` is one command's: ``--undo`` takes
    back all its sources."""
    db.executescript(
        """
        CREATE TABLE merges (
            id TEXT PRIMARY KEY,
            batch TEXT NOT NULL,
            source TEXT NOT NULL,
            merged_utc TEXT NOT NULL,
            undone_utc TEXT
        ) STRICT;
        CREATE INDEX merges_by_batch ON merges (batch);

        CREATE TABLE merge_ranges (
            merge_id TEXT NOT NULL REFERENCES merges (id),
            tbl TEXT NOT NULL,
            first_rowid INTEGER NOT NULL,
            last_rowid INTEGER NOT NULL,
            digest TEXT NOT NULL,
            PRIMARY KEY (merge_id, tbl)
        ) STRICT;

        CREATE TABLE merge_changes (
            merge_id TEXT NOT NULL REFERENCES merges (id),
            tbl TEXT NOT NULL,
            key_json TEXT NOT NULL,
            was_json TEXT NOT NULL,
            now_json TEXT NOT NULL,
            PRIMARY KEY (merge_id, tbl, key_json)
        ) STRICT;
        """
    )


SCHEMA_VERSION = _NAMES[-1]  # the last migration: what a fully migrated DB has applied


def applied_migrations(db: Database) -> list[str]:
    return [m.name for m in MIGRATIONS.applied(db)]


def migrate(db: Database) -> None:
    """Bring ``db`` to the current schema; safe when several processes open it at once.

    The pending check and the migrations run inside one ``BEGIN IMMEDIATE`` transaction (each
    migration's own ``atomic()`` becomes a savepoint in it), so a second process waits for the
    first instead of racing it into "table already exists". The persona CHECK is then widened
    to every persona convtui knows where the file's lacks one (persona_check.py)."""
    if applied_migrations(db) == _NAMES and not lacks_a_persona(db):
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        newer = [name for name in applied_migrations(db) if name not in _NAMES]
        if newer:
            raise StoreError(
                f"this database was written by a newer convtui (migrations "
                f"{', '.join(newer)}); upgrade convtui to open it"
            )
        MIGRATIONS.apply(db)
        if lacks_a_persona(db):
            widen_persona_check(db)
    except BaseException:
        db.rollback()
        raise
    db.execute("COMMIT")
