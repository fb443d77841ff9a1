"""A small study for the tests of the study store, the study app and merging: a spec with
the values those tests do not care about filled in, and the study written to a database."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from convtui.core.session import SessionConfig
from convtui.core.study import StudySpec, assign, token_hash
from convtui.sessions import Store
from convtui.sessions.studies import create_study

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
