"""`convtui session --annotator NAME`: the person giving feedback is recorded with a human
session (scripted model), the login name by default; simulated users record none."""

from __future__ import annotations

import getpass
from pathlib import Path

from textual.pilot import Pilot
from tui_harness import (
    AppFactory,
    awaiting_feedback,
    config_for,
    play,
    rows,
    session_options,
    type_feedback,
)

from convtui.sessions import Store
from convtui.tui.launch import SessionOptions, default_annotator, plan_launch


def test_the_annotator_named_is_recorded_with_the_session(apps: AppFactory) -> None:
    async def scenario(pilot: Pilot) -> None:
        await awaiting_feedback(pilot)
        await type_feedback(pilot, "Use statistics.mean.")
        await pilot.press("ctrl+j")
        await awaiting_feedback(pilot, turn=1)

    play(apps, scenario, annotator="ana")
    assert rows(apps.db, "SELECT user_kind, annotator FROM sessions") == [("human", "ana")]


def test_a_task_picked_later_records_the_same_annotator(apps: AppFactory, tmp_path: Path) -> None:
    options = session_options(apps.model, tmp_path / "x.db")
    with Store.open(tmp_path / "x.db") as store:
        config = config_for(model=apps.model)
        assert plan_launch(options, apps.catalog, store, config).annotator == default_annotator()
        named = plan_launch(
            SessionOptions(**{**options.__dict__, "annotator": "bo", "task": "BigCodeBench/2"}),
            apps.catalog,
            store,
            config,
        )
    assert named.annotator == "bo" and named.plan is not None and named.plan.annotator == "bo"


def test_the_default_annotator_is_the_login_name(monkeypatch) -> None:
    monkeypatch.setattr(getpass, "getuser", lambda: "someone")
    assert default_annotator() == "someone"

    def no_name() -> str:
        raise KeyError("uid 1234 has no name")

    monkeypatch.setattr(getpass, "getuser", no_name)
    assert default_annotator() == "anonymous"


def test_a_simulated_user_records_no_annotator(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db") as store:
        sid = store.create_interactive_session(
            "BigCodeBench/2", config_for(), "simulator", annotator="ana"
        )
        assert store.session(sid).annotator is None
