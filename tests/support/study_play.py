"""Study sessions played for real, without the app: the turn loop, the real sandbox and the
store, as ``convtui session --study`` records them, with each session's replies scripted on
its own (``mock:``) so that a test decides at which turn each annotator's session passes.

The session runs under the study's config (its model spec is what the rows name); only the
backend that answers is the session's own script."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from convtui.core.catalog.tasks import Task
from convtui.core.execution.executor import Executor
from convtui.core.models.registry import open_backend
from convtui.core.play.loop import SessionEnded, SessionLoop, TurnCompleted, cached_execute
from convtui.sessions import Store
from convtui.sessions.studies.study_rows import load_study, start_assignment
from support.people import Says
from support.scripted import script

# A reply that runs and fails every task's tests (no task wants None back).
FAILS = "```python\nimport random\ndef task_func(*args, **kwargs):\n    return None\n```"


def solving_at(task: Task, turn: int | None) -> list[str]:
    """Replies that fail until ``turn``, where the task's own solution passes (None: never)."""
    if turn is None:
        return [FAILS]
    return [FAILS] * turn + [f"```python\n{task.ground_truth}\n```"]


def play_assignment(
    db: Path,
    executor: Executor,
    task: Task,
    annotator: str,
    replies: Sequence[str],
    scripts: Path,
    status: str | None = None,
    words: str | None = None,
) -> str:
    """``annotator``'s assignment of ``task`` in the study at ``db``, played to its end with
    ``replies`` (the last repeating) and the person's ``words`` at every turn (by default
    ``<annotator>: look at the failing test.``); ``status`` then overrides how it ended
    (``abandoned``: given up). Returns the session's id."""
    with Store.open(db) as store:
        study = load_study(store)
        session_id = start_assignment(store, study.id, task.id, annotator, study.config, "human")
        name = f"{annotator}-{task.id.replace('/', '-')}.jsonl"
        backend = open_backend(script(scripts / name, replies))
        loop = SessionLoop(
            task,
            study.config,
            backend,
            cached_execute(executor, store.execution_cache()),
            Says(words if words is not None else f"{annotator}: look at the failing test."),
            store.journal(session_id),
        )

        async def play() -> None:
            async for event in loop.run(()):
                if isinstance(event, TurnCompleted):
                    store.save_turn(session_id, event.turn, event.status, event.cache_key)
                elif isinstance(event, SessionEnded) and event.status == "failed":
                    raise AssertionError(f"{task.id} failed: {event.error}")

        asyncio.run(play())
        if status is not None:
            store.set_session_status(session_id, status)
    return session_id
