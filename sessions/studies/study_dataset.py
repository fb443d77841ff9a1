"""The shared table of a study's turns: its columns (named, typed and described once, here),
the Parquet file written from sessions/studies/study_export.py's rows, and the same columns as a
Hugging Face dataset card declares them. pyarrow comes with the ``study`` extra and is
imported only when a file is written."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from textwrap import dedent
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

from convtui.core.extras import install_hint
from convtui.core.studies.person_times import PAUSE_S
from convtui.sessions.database.errors import ExportError

if TYPE_CHECKING:
    import pyarrow as pa

# The file, relative to the export folder; the card's `configs` point at it. A fixed name, so
# exporting again over an earlier export (--force) replaces it rather than adding a second.
PARQUET_PATH = "data/transcripts.parquet"

ColumnKind = Literal["string", "int32", "float64", "bool", "timestamp", "strings", "feedback"]


@dataclass(frozen=True)
class Column:
    name: str
    kind: ColumnKind
    description: str


def _kind(word: str) -> ColumnKind:
    if word not in get_args(ColumnKind):
        raise ValueError(f"no column kind {word!r}")
    return cast(ColumnKind, word)


def _columns(table: str) -> tuple[Column, ...]:
    """The columns of ``table``, a line each: name, kind and description, the description
    going on over the lines below it that start with white space."""
    rows: list[list[str]] = []
    for line in dedent(table).strip().splitlines():
        if line[0].isspace():
            rows[-1].append(line.strip())
        else:
            rows.append(line.split(maxsplit=2))
    return tuple(Column(name, _kind(kind), " ".join(words)) for name, kind, *words in rows)


# Written as a table (a wrapped description is joined back with single spaces), so that each
# column is one aligned row as the card's column table shows it. COLUMNS is an f-string for
# PAUSE_S, so a brace meant literally is doubled there.
COLUMNS: tuple[Column, ...] = _columns(
    f"""
    study                   string     The study's name.
    task_id                 string     The task, e.g. `BigCodeBench/13`.
    annotator               string     The annotator whose assignment the session answers.
    assignment_state        string     `done` (its session ended), `started` (its session was still
                                       open when exported) or `reassigned` (the annotator left and
                                       the task went to `reassigned_to`).
    reassigned_to           string     Who took the assignment over; null if nobody.
    session_id              string     The recorded session (`convtui sessions show ID`).
    session_status          string     How the session ended: `solved`, `exhausted`, `stalled`,
                                       `failed`, `accepted` (good enough to the annotator although
                                       tests fail), `abandoned`; `running` while unfinished.
    turn                    int32      The turn's index: 0 is the first attempt, each later one
                                       follows feedback.
    turns_done              int32      How many turns the session recorded.
    first_pass_turn         int32      The session's first passing turn; null if none.
    model                   string     The code model (convtui's model spec).
    protocol                string     `convtui` or `convcodeworld` (docs/design.md, Parity).
    omega                   string     The feedback setting Ω, e.g. `CF,EF:full,VF:expert`.
    context                 string     What the model saw: `markov` (last code) or `full` (all).
    user_kind               string     `human` (a person wrote f_v) or `assist` (a simulator
                                       drafted).
    max_turns               int32      Generations allowed in all (turn 0 and the feedback turns).
    reply                   string     The model's whole reply.
    code                    string     The code taken from the reply: what was compiled and tested.
    compiled                bool       Whether the code compiled.
    verdict                 string     The test run: `pass`, `fail`, `error`, `timeout`, `crash` or
                                       `env_error`; null when the tests did not run.
    passed                  bool       Whether every test passed.
    tests_passed            int32      Tests that passed; null when the tests did not run.
    tests_total             int32      Tests expected; null when the tests did not run.
    feedback                feedback   The feedback about this turn's code, which the next turn's
                                       prompt carries, in order: a list of `{{source, text}}`,
                                       `source` one of `compilation`, `execution`, `verbal-human`,
                                       `verbal-simulated`.
    verbal_source           string     Who gave the verbal feedback as the store records it:
                                       `human`, `simulator:<model>` or `none`.
    feedback_draft          string     Under `assist`: the simulator's draft shown; else null.
    feedback_edited         bool       Whether the person changed the draft; null without one.
    notes                   strings    The harness's notes on the turn (redactions, regenerations).
    config_hash             string     The hash of the session's full configuration.
    session_created_utc     timestamp  When the session was opened (UTC).
    session_updated_utc     timestamp  When the session last changed (UTC).
    turn_created_utc        timestamp  When the turn was recorded (UTC).
    shown_utc               timestamp  When the turn's code and test results were first shown to the
                                       annotator, waiting for their feedback (UTC). Null on a turn
                                       no person answered, and where unknown: the session was
                                       reopened after the turn had been shown (then only `sent_utc`
                                       is known).
    first_key_utc           timestamp  The annotator's first keystroke in the composer for the words
                                       they sent (UTC; before `shown_utc` when they typed while the
                                       turn was being made); null if they typed nothing, or unknown.
    sent_utc                timestamp  When the annotator sent their feedback (or went on without
                                       words, or ended the session) (UTC); null on a turn no person
                                       answered.
    shown_to_sent_s         float64    Seconds from `shown_utc` to `sent_utc`, on the app's
                                       monotonic clock; null if unknown.
    typing_s                float64    Seconds spent typing: the intervals between keystrokes that
                                       changed the text, a gap over {PAUSE_S:g} s counted as
                                       thinking, not typing; null if unknown.
    keystrokes              int32      Keystrokes that changed the text; null if unknown.
    """
)


# The simulated-user fidelity study's target turns (``convtui study fidelity``,
# sessions/studies/fidelity.py), when the database holds some: a second config of the dataset.
FIDELITY_PATH = "data/fidelity.parquet"
FIDELITY_COLUMNS: tuple[Column, ...] = _columns(
    """
    study                   string     The study's name.
    state                   string     The state: `<session_id>/<turn>`, a turn a person answered.
    session_id              string     The person's recorded session (a row of the transcripts).
    turn                    int32      The turn of that session the feedback is about.
    task_id                 string     The task.
    annotator               string     Who gave the person's feedback on the state.
    source                  string     The feedback handed to the target: `none` (the control),
                                       `person`, `draft:<persona>:<model>` (an assisted session's
                                       draft) or `simulator:<persona>:<model>` (with
                                       ` [convcodeworld]` after it when asked with
                                       ConvCodeWorld's prompts).
    feedback                string     The words handed on; null for the control or a silent one.
    simulator_model         string     A simulated source's model spec; else null.
    simulator_persona       string     A simulated source's persona; else null.
    simulator_protocol      string     Whose prompts the simulator was given; else null.
    simulator_prompt_sha256 string     The SHA-256 of the simulator's prompt templates; null where
                                       unknown.
    target                  string     The model handed the feedback for one turn.
    target_protocol         string     The protocol its turn's prompt was built by.
    passed                  bool       Whether the target's code passed every test.
    tests_passed            int32      Tests its code passed.
    tests_total             int32      Tests expected.
    """
)


def _arrow_type(kind: ColumnKind) -> pa.DataType:
    import pyarrow as pa

    return {
        "string": pa.string(),
        "int32": pa.int32(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
        "timestamp": pa.timestamp("us", tz="UTC"),
        "strings": pa.list_(pa.string()),
        "feedback": pa.list_(pa.struct([("source", pa.string()), ("text", pa.string())])),
    }[kind]


# The same types as a dataset card's `dataset_info.features` spells them (what
# datasets.Features writes for the Arrow types above).
_CARD_TYPES: dict[ColumnKind, dict[str, Any]] = {
    "string": {"dtype": "string"},
    "int32": {"dtype": "int32"},
    "float64": {"dtype": "float64"},
    "bool": {"dtype": "bool"},
    "timestamp": {"dtype": "timestamp[us, tz=UTC]"},
    "strings": {"list": "string"},
    "feedback": {
        "list": [{"name": "source", "dtype": "string"}, {"name": "text", "dtype": "string"}]
    },
}


# The types as the card's column table names them (Arrow's names, shortened).
_SHOWN_TYPES: dict[ColumnKind, str] = {
    "string": "string",
    "int32": "int32",
    "float64": "float64",
    "bool": "bool",
    "timestamp": "timestamp (UTC)",
    "strings": "list of string",
    "feedback": "list of {source, text}",
}


def shown_type(kind: ColumnKind) -> str:
    return _SHOWN_TYPES[kind]


def card_features(columns: Sequence[Column] = COLUMNS) -> list[dict[str, Any]]:
    """The columns as a card's ``dataset_info.features`` list."""
    return [{"name": c.name, **_CARD_TYPES[c.kind]} for c in columns]


def write_parquet(
    rows: Sequence[dict[str, Any]], path: Path, columns: Sequence[Column] = COLUMNS
) -> None:
    """``rows`` (each with every one of ``columns``) as one Parquet file at ``path``,
    written beside it first and moved into place, so a reader never sees half a file."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ExportError(f"the Parquet export needs pyarrow: {install_hint('study')}") from None
    schema = pa.schema([(c.name, _arrow_type(c.kind)) for c in columns])
    table = pa.Table.from_pylist(list(rows), schema=schema)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    pq.write_table(table, partial)
    os.replace(partial, path)
