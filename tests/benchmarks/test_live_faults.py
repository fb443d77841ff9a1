"""Model-server failures during a live run: retried, and when they do not stop, recorded as a
failed session that the same command resumes later, with no finished turn lost.

The server here is a scripted fake for fault injection ONLY (429s and 500s on demand, which
a real server cannot be made to give); the executor and the SQLite store are real."""

from __future__ import annotations

import asyncio
from pathlib import Path

from support.data import needs_bigcodebench
from support.fault_server import FakeServer, ok, status

from convtui.benchmarks.runs.lifecycle import open_run
from convtui.benchmarks.runs.live import live_run, run_live
from convtui.core.execution.executor import Executor
from convtui.core.execution.types import Limits
from convtui.core.models import open_backend
from convtui.core.models.retry import Retrier, RetryPolicy
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig
from convtui.sessions import Store

pytestmark = needs_bigcodebench

WRONG = "```python\nimport random\ndef task_func(*args, **kwargs):\n    return None\n```"


async def _no_wait(seconds: float) -> None:
    return None


def play(
    server: FakeServer, db: Path, config: SessionConfig, task, executor: Executor
) -> tuple[str, object]:
    async def go():
        backend = open_backend(
            server.url, retrier=Retrier(RetryPolicy(max_retries=2, min_delay_s=0.0), sleep=_no_wait)
        )
        try:
            with Store.open(db) as store:
                new = live_run(config, [config.feedback], "ids=2", [task])
                run_id = open_run(store, new).run_id
                result = await run_live(store, run_id, config, [task], executor, backend, None, 1)
                return run_id, result
        finally:
            await backend.aclose()

    return asyncio.run(go())


def test_rate_limits_and_server_errors_end_in_a_recorded_failure_then_resume(
    tmp_path, bigcodebench, executor
):
    task = bigcodebench.get("BigCodeBench/2")
    config = SessionConfig(
        model="fake",
        feedback=FeedbackConfig("full"),
        max_turns=3,
        limits=Limits(per_test_s=10, wall_s=20),
    )
    server = FakeServer(default=status(500, "overloaded"))
    server.then(ok(WRONG), status(429, "slow down", {"Retry-After": "0"}), ok(WRONG))
    server.start()
    db = tmp_path / "results.db"
    try:
        run_id, result = play(server, db, config, task, executor)
        assert result.failed == 1  # turn 2 never got an answer: 3 attempts, all 500
        with Store.open(db) as store:
            (session,) = store.run_sessions(run_id)
            assert session.status == "failed" and "500" in session.error
            assert [t.idx for t in store.load_turns(session.id)] == [0, 1]
            assert store.run(run_id).status == "interrupted"
            attempts = store.db.execute(
                "SELECT a.status FROM call_attempts a JOIN model_calls m ON m.id = a.call_id "
                "ORDER BY m.id, a.number"
            ).fetchall()
            assert [a[0] for a in attempts] == [
                "ok",
                "rate_limit",
                "ok",
                "transient",
                "transient",
                "transient",
            ]
        # The server recovers; the same run picks up at turn 2 and pays for nothing twice.
        server.default = ok(WRONG)
        before = len(server.chat_requests)
        again, result = play(server, db, config, task, executor)
        assert again == run_id and result.failed == 0
        assert len(server.chat_requests) == before + 1
        with Store.open(db) as store:
            (session,) = store.run_sessions(run_id)
            assert session.status == "exhausted" and session.turns_done == 3
            assert store.run(run_id).status == "done"
    finally:
        server.stop()


def test_the_run_summary_says_why_sessions_failed_and_where_to_read_one(tmp_path):
    """Fault injected through the scripted model: its script has no reply for the coder, so
    every session fails on a model error. The summary names the error (alike ones once) and
    the command that shows a failed session, not only "2 failed on model errors"."""
    import json as json_module

    from support.cli import invoke

    script = tmp_path / "silent.jsonl"
    script.write_text('{"purpose": "simulate", "text": "never asked"}\n', encoding="utf-8")
    db = tmp_path / "f.db"
    args = ["bench", "live", "--model", f"mock:{script}", "--ids", "2,3", "--turns", "1"]
    args += ["--feedback", "CF,EF:full", "--protocol", "convtui", "--db", str(db)]
    done = invoke(*args)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "2 failed on model errors" in lines[0]
    assert lines[1].startswith("  2 sessions: ") and "generate" in lines[1], done.stdout
    with Store.open(db) as store:
        (run_id,) = {r[0] for r in store.db.execute("SELECT id FROM runs").fetchall()}
        failed = sorted(s.id for s in store.run_sessions(run_id))
    assert f"see one: convtui sessions show {failed[0]} --db {db}" in lines[2]
    data = json_module.loads(invoke(*args, "--json").stdout)
    assert data["failures"] == [
        {"error": data["failures"][0]["error"], "sessions": 2, "first_session_id": failed[0]}
    ]
