"""A small study for the tests of the study store, the study app and merging: a spec with
the values those tests do not care about filled in, and the study written to a database."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from convtui.core.settings.config import SessionConfig
from convtui.core.studies.spec import StudySpec, assign, token_hash
from convtui.sessions import Store
from convtui.sessions.studies.study_rows import create_study

PILOT_TASKS = tuple(f"BigCodeBench/{n}" for n in (2, 3, 8, 13, 16, 19))
PILOT = StudySpec(
    name="pilot",
    tasks=PILOT_TASKS,
    model="mock:replies.jsonl",
    feedback="CF,EF:full,VF:expert",
    turns=2,
    protocol="convtui",
    user="human",
    annotators=("ana", "ben", "cy"),
    overlap=2,
    seed=1,
)


def study_spec(**changes: Any) -> StudySpec:
    """The pilot study with ``changes``."""
    return replace(PILOT, **changes)


def write_study(
    db: Path, spec: StudySpec, config: SessionConfig | None = None, salt: str = ""
) -> str:
    """``spec`` written to ``db`` with its assignment and a token per annotator (the hash of
    ``token-of-<name><salt>``); returns the study's id."""
    given = assign(spec.tasks, spec.annotators, spec.overlap, spec.seed)
    hashes = {name: token_hash(f"token-of-{name}{salt}") for name in spec.annotators}
    with Store.open(db) as store:
        return create_study(store, spec, config or spec.config(), given, hashes)


SPLIT_TASKS = ("BigCodeBench/2", "BigCodeBench/3", "BigCodeBench/8", "BigCodeBench/13")


def split_study(db: Path, model: str, **changes: Any) -> StudySpec:
    """4 tasks, ana and ben, each task to one of them: 2 assignments each (``changes``
    aside), written to ``db``; returns the spec."""
    spec = study_spec(
        tasks=SPLIT_TASKS,
        model=model,
        feedback="CF,EF:full,VF:novice",
        annotators=("ana", "ben"),
        overlap=1,
        seed=3,
        **changes,
    )
    write_study(db, spec)
    return spec


# A reply the scripted model gives that fails every test: each session waits for feedback.
WRONG_CODE = "```python\ndef task_func(*args, **kwargs):\n    return None\n```"


def scripted_study(folder: Path, reply: str = WRONG_CODE, **changes: Any) -> Path:
    """The pilot study (two feedback turns, with ``changes``) in ``folder/study.db``, its
    model the scripted ``mock:replies.jsonl`` in the same folder, always answering
    ``reply``; a served study's tests run the server from that folder."""
    (folder / "replies.jsonl").write_text(json.dumps({"purpose": "generate", "text": reply}))
    db = folder / "study.db"
    write_study(db, study_spec(**{"model": "mock:replies.jsonl", "turns": 2, **changes}))
    return db
