"""A small database for ``convtui study fidelity``: a study whose two annotators each answered
one task with fixed words (support/study_play.py: the real turn loop, sandbox and store), and a
target model that writes the task's reference solution exactly when the feedback it is handed
says ``USE THE REFERENCE`` (else code that fails), so a test knows every outcome in advance."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from convtui.core.catalog.tasks import Task
from convtui.core.models.base import ModelBackend
from convtui.core.models.types import ChatMessage, Completion, GenerationParams
from convtui.core.settings.config import SessionConfig
from support.scripted import script
from support.studies import study_spec, write_study
from support.study_play import FAILS, play_assignment

KEYWORD = "USE THE REFERENCE"
# annotator -> (task, the words they give at every turn).
PEOPLE = {
    "ana": ("BigCodeBench/2", f"ana: {KEYWORD}, please."),
    "ben": ("BigCodeBench/8", "ben: look at the failing test."),
}
# The sessions' own tables: what the fidelity study must leave byte-identical.
OWN_TABLES = (
    "runs",
    "sessions",
    "turns",
    "model_calls",
    "call_attempts",
    "human_turn_times",
    "typed_feedback",
    "studies",
    "study_annotators",
    "study_assignments",
)


def record_study(
    db: Path,
    executor,
    catalog,
    scripts: Path,
    people: Mapping[str, tuple[str, str]] = PEOPLE,
    turns: int = 2,
    max_tokens: int | None = None,
) -> dict[str, str]:
    """``people``'s sessions (``turns`` feedback turns each: states at turns 0 to
    ``turns - 1``), recorded into ``db``; annotator -> session id. ``max_tokens`` bounds the
    replies of the study's code model and simulator (what a fidelity run then asks for)."""
    scripts.mkdir(exist_ok=True)
    spec = study_spec(
        tasks=tuple(task for task, _ in people.values()),
        model=script(scripts / "study-model.jsonl", [FAILS]),
        annotators=tuple(people),
        overlap=1,
        seed=0,
        turns=turns,
    )
    config = spec.config() if max_tokens is None else bounded(spec.config(), max_tokens)
    write_study(db, spec, config)
    ids = {}
    for annotator, (task_id, words) in people.items():
        task = catalog.get(task_id)
        ids[annotator] = play_assignment(
            db, executor, task, annotator, [FAILS], scripts, words=words
        )
    return ids


def bounded(config: SessionConfig, max_tokens: int) -> SessionConfig:
    """``config`` with the replies of its code model and simulator bounded to ``max_tokens``
    (a fidelity run asks its simulators and targets for no more): a study file has no such
    setting, and a real model's long replies are only slower, not more to check."""
    return replace(
        config,
        params=replace(config.params, max_tokens=max_tokens),
        simulator_params=replace(config.simulator_params, max_tokens=max_tokens),
    )


class Keyed(ModelBackend):
    """A target that answers with the reference solution of the task its prompt holds when
    the prompt's last message (the feedback it is handed now, not the conversation's earlier
    words) says :data:`KEYWORD`, else with :data:`FAILS`; counts its calls."""

    def __init__(self, spec: str, tasks: Sequence[Task]) -> None:
        self.spec = spec
        self.model = spec
        self.tasks = tuple(tasks)
        self.calls = 0

    def connection_key(self) -> str:
        return self.spec

    async def check(self) -> None:
        return None

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        params: GenerationParams,
        *,
        on_text=None,
        on_attempt=None,
        call=None,
    ) -> Completion:
        self.calls += 1
        said = "\n".join(m.content for m in messages)
        text = FAILS
        if KEYWORD in messages[-1].content:
            task = next(t for t in self.tasks if t.prompt in said)
            text = f"```python\n{task.ground_truth}\n```"
        return Completion(text, "stop", 1, 1, 0.0, 1, self.spec, None, False)


def dump(db: Path, tables: Sequence[str] = OWN_TABLES) -> list[str]:
    """``sqlite3 .dump`` of ``tables`` only (their schema and rows), as text lines."""
    with sqlite3.connect(db) as conn:
        return [
            line
            for line in conn.iterdump()
            if any(
                line.startswith((f'INSERT INTO "{t}"', f"CREATE TABLE {t} ", f"CREATE TABLE {t}("))
                for t in tables
            )
        ]


def count(db: Path, sql: str) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute(sql).fetchone()[0])
