"""Recorded sessions for the snapshot tests, made by the real turn loop and store.

Snapshots must not depend on what SmolLM2 happens to write on a given CPU, so the model's
replies are recorded in the session's call journal before the app opens it: resuming a
session reuses a finished call instead of paying for it again (sessions/SCHEMA.md, "Resuming
a run"), which is exactly what the app does with these. The tests still run for real."""

from __future__ import annotations

import asyncio

from support.people import Says

from convtui.core.catalog.tasks import Task
from convtui.core.execution.executor import Executor
from convtui.core.models.registry import open_backend
from convtui.core.models.types import Completion
from convtui.core.play.loop import SessionLoop, TurnCompleted, build_prompt, cached_execute
from convtui.core.settings.config import SessionConfig
from convtui.core.turns.journal import CallRequest, request_hash
from convtui.sessions import Store

SESSION_ID = "01snapsh0tsess10n000000000"


def record_reply(store: Store, session_id: str, task: Task, config: SessionConfig, reply: str):
    """Journal ``reply`` as the model's answer to the session's next prompt."""
    turns = store.load_turns(session_id)
    prompt = build_prompt(task, config, turns)
    journal = store.journal(session_id)
    key = request_hash(config.model, prompt, config.params)
    call = journal.started(
        CallRequest(len(turns), "generate", key, prompt, config.params, config.model)
    )
    journal.finished(call, Completion(reply, "stop", 120, 40, 0.75, 1, "recorded", None))


def recorded_session(
    store: Store,
    executor: Executor,
    task: Task,
    config: SessionConfig,
    replies: list[str],
    feedback: list[str],
) -> str:
    """A session whose first ``len(feedback)`` turns are recorded (each with that feedback)
    and whose next reply waits in the journal; returns its id."""
    made = store.create_interactive_session(task.id, config, "human")
    with store.db.conn:
        store.db.execute("UPDATE sessions SET id = ? WHERE id = ?", (SESSION_ID, made))
    backend = open_backend(config.model)
    execute = cached_execute(executor, store.execution_cache())
    for idx, reply in enumerate(replies):
        record_reply(store, SESSION_ID, task, config, reply)
        if idx >= len(feedback):
            break
        loop = SessionLoop(
            task, config, backend, execute, Says(feedback[idx]), store.journal(SESSION_ID)
        )
        asyncio.run(_one_turn(loop, store))
    return SESSION_ID


async def _one_turn(loop, store) -> None:
    async for event in loop.run(store.load_turns(SESSION_ID)):
        if isinstance(event, TurnCompleted):
            store.save_turn(SESSION_ID, event.turn, event.status, event.cache_key)
            return
