"""``convtui session --executor ray``: the app opened from the session's options, as the
command line opens it, runs its candidates on a real two-node Ray cluster started on this
machine (support/ray_cluster.py), and records the turn as a local session would.

The model is the scripted ``mock:`` one (its reply fails a test, so the session waits for
feedback); everything else is real."""

from __future__ import annotations

import asyncio

import pytest
from support.data import needs_bigcodebench
from textual.pilot import Pilot
from tui_harness import TASK, WRONG, awaiting_feedback, rows, session_options, write_script

from convtui.core.execution.choice import parse_executor
from convtui.tui import make_app
from convtui.tui.launch import open_services, plan_launch, session_config

pytestmark = [needs_bigcodebench, pytest.mark.slow, pytest.mark.timeout(300)]


def test_a_session_plays_its_turn_on_a_ray_cluster(tmp_path, catalog) -> None:
    pytest.importorskip("ray", reason="--executor ray needs pip install -e '.[ray]'")
    from support.ray_cluster import start_cluster

    from convtui.core.execution.cluster.pool import RayExecutor

    cluster = start_cluster()
    try:
        options = session_options(
            write_script(tmp_path / "replies.jsonl", [WRONG]),
            tmp_path / "s.db",
            task=TASK,
            executor=parse_executor(f"ray:{cluster.address}"),
        )
        config = session_config(options, "human")
        services = open_services(options, config)
        try:
            assert isinstance(services.executor, RayExecutor)
            nodes = {slot.node_id for slot in services.executor.slots()}
            assert len(nodes) == 2  # a slot on each node of the cluster
            launch = plan_launch(options, catalog, services.store, config)

            async def scenario(pilot: Pilot) -> None:
                screen = await awaiting_feedback(pilot)
                result = screen.live.result  # type: ignore[union-attr]
                assert result is not None and result.status == "fail"

            app = make_app(services, launch)

            async def main() -> None:
                async with app.run_test(size=(120, 40)) as pilot:
                    await scenario(pilot)

            asyncio.run(main())
        finally:
            services.close()
    finally:
        cluster.shutdown()
    # The execution that ran on the cluster is recorded (the turn itself is saved with the
    # feedback it waits for).
    [(status, total)] = rows(tmp_path / "s.db", "SELECT status, tests_total FROM executions")
    assert status == "fail" and total > 0
