"""What ``report`` says about the instructions ``--protocol convtui`` left out of its scores
(core/codeif/leave_out.py): how many tasks' instruction of each category a group left out,
and why, in its JSON (``left_out``) and in a table beside the scores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol


class CodeifSession(Protocol):
    """What these tables read of a session (codeif_report.py's CodeifSession), named here so
    that this module needs nothing of the report that imports it."""

    @property
    def task_id(self) -> str: ...

    @property
    def left_out(self) -> Mapping[str, str]: ...


class CodeifGroup(Protocol):
    """What these tables read of a group (codeif_report.py's CodeifGroup)."""

    @property
    def label(self) -> str: ...

    @property
    def sessions(self) -> Sequence[CodeifSession]: ...


def left_out_by_category(sessions: Sequence[CodeifSession]) -> dict[str, dict[str, str]]:
    """Category -> {task: why} for every instruction the sessions' scores left out."""
    found: dict[str, dict[str, str]] = {}
    for session in sessions:
        for category, why in session.left_out.items():
            found.setdefault(category, {})[session.task_id] = why
    return found


def left_out_json(sessions: Sequence[CodeifSession]) -> dict[str, dict[str, object]]:
    """What a group's JSON says: per category, how many tasks, and why each."""
    return {
        category: {"tasks": len(why), "why": why}
        for category, why in left_out_by_category(sessions).items()
    }


def left_out_table(groups: Sequence[CodeifGroup]):
    from rich.table import Table

    table = Table(
        title="Left out of --protocol convtui's scores (core/codeif/errata.csv)",
        header_style="bold",
        caption="An instruction whose every test cannot judge an answer and has no certain "
        "repair: its rounds are played, not scored.",
    )
    for name in ("group", "category", "tasks", "why"):
        table.add_column(name, justify="right" if name == "tasks" else "left")
    for group in groups:
        for category, why in left_out_by_category(group.sessions).items():
            reasons = "; ".join(f"{task}: {text}" for task, text in sorted(why.items()))
            table.add_row(group.label, category, str(len(why)), reasons)
    return table
