"""Export then import under --protocol convcodeworld: there the feedback a turn was given is
recorded with that turn (``Turn.received``), so file k carries turn k's own ``received`` and
the import gives it back to turn k, not to turn k-1."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from store_values import logged_config, turn

from convtui.core.feedback.render import failure_details
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.turns.record import Turn, TurnFeedback
from convtui.sessions import Store
from convtui.sessions.exchange.ccw_import import import_logs
from convtui.sessions.exchange.export import export_convcodebench

STEM = "bigcodebench_acme_coder-1b_CF_EF_UNIT_SEF_by_gpt-4o"


def given(t: Turn, task_id: str) -> Turn:
    """Turn ``t`` with the words ConvCodeWorld's turn t.idx was given about turn t.idx-1."""
    if t.idx == 0:
        return t
    words = TurnFeedback(
        compilation="No syntax errors",
        execution=f"TEST_TYPES\nAssertionError {t.idx - 1} in {task_id}\n",
        user=f"Turn {t.idx}: drop the + {t.idx} on {task_id}.",
        user_source="simulator:expert:gpt-4o",
    )
    return replace(t, received=words)


def test_convcodeworld_sessions_keep_their_in_turn_feedback(tmp_path: Path) -> None:
    cfg = logged_config("convcodeworld", FeedbackConfig("partial", "expert"))
    patterns = {"BigCodeBench/3": (False, False, True), "BigCodeBench/8": (False, False, False)}
    with Store.open(tmp_path / "live.db") as store:
        run_id = store.create_run("live", cfg, "ids=3,8", sorted(patterns))
        for row in store.run_sessions(run_id):
            verdicts = patterns[row.task_id]
            for idx, passed in enumerate(verdicts):
                last = idx + 1 == len(verdicts)
                status = ("solved" if passed else "exhausted") if last else "running"
                store.save_turn(row.id, given(turn(idx, passed=passed), row.task_id), status)
        original = {row.task_id: store.load_turns(row.id) for row in store.run_sessions(run_id)}
        export_convcodebench(store, [r.id for r in store.run_sessions(run_id)], tmp_path / "out")

    second = tmp_path / "out" / "results" / "v0.3.6" / f"{STEM}_ITER=2.jsonl"
    lines = {json.loads(x)["task_id"]: json.loads(x) for x in second.read_text().splitlines()}
    # File 2 holds turn 2's own received words, not turn 1's.
    assert lines["BigCodeBench/8"]["user_feedback"] == "Turn 2: drop the + 2 on BigCodeBench/8."

    with Store.open(tmp_path / "back.db") as store:
        (imported,) = import_logs(store, tmp_path / "out")
        assert store.run(imported.run_id).config.protocol == "convcodeworld"
        back = {
            row.task_id: store.load_turns(row.id) for row in store.run_sessions(imported.run_id)
        }
    for task_id, turns in original.items():
        assert [t.code for t in back[task_id]] == [t.code for t in turns]
        assert [t.passed for t in back[task_id]] == [t.passed for t in turns]
        assert [t.received for t in back[task_id]] == [t.received for t in turns]
        for was, now in zip(turns, back[task_id], strict=True):
            if was.execution is not None and not was.passed:
                assert failure_details(now.execution, bcb_messages=True) == failure_details(
                    was.execution, bcb_messages=True
                )
