"""CodeIF-Bench's completions layout (``convtui sessions export --format codeif``).

CodeIF-Bench's static evaluation (``static_conversation/function/test/evaluation.py``) reads a
JSONL file, one object per model answer: ``task_id`` (the dataset's own id, a number),
``requirement`` (the instruction category the answer was asked for) and ``completion`` (the
answer; a ```` ```python ```` block in it is what runs, else the whole text). Its inference
script writes the base answers (the task's prompt alone) without a ``requirement``, to a
file of their own; its IFR evaluation names that initial instruction ``Base``.

Here one file holds every round of every selected conversation, in task order and round
order: the first round of each is ``requirement: "Base"``, its ``completion`` is the round's
extracted code, and ``model`` (not read by the benchmark) names the model that wrote it, so
``convtui bench codeif --score-only`` can put the scores back under that name.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from convtui.core.codeif.records import round_source
from convtui.core.loaders import SUITE_PREFIX
from convtui.core.session import Turn
from convtui.sessions.browse import resolve_session_ids, sessions_by_id
from convtui.sessions.errors import ExportError
from convtui.sessions.export import select_for_export
from convtui.sessions.records import SessionRow
from convtui.sessions.store import Store

# The keys of one record, as the benchmark's scripts spell them (MODEL is ours).
TASK_ID = "task_id"
REQUIREMENT = "requirement"
COMPLETION = "completion"
MODEL = "model"

_TASK_PREFIX = f"{SUITE_PREFIX['codeif']}/"


def benchmark_task_id(task_id: str) -> int:
    """``CodeIF/11`` -> 11, the dataset's ``task_id``."""
    return int(task_id.removeprefix(_TASK_PREFIX))


def convtui_task_id(value: Any) -> str | None:
    """A record's ``task_id`` (11, ``"11"`` or ``"CodeIF/11"``) as convtui names the task;
    None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return f"{_TASK_PREFIX}{value}"
    if isinstance(value, str):
        number = value.removeprefix(_TASK_PREFIX)
        if number.isdigit():
            return f"{_TASK_PREFIX}{int(number)}"
    return None


def round_category(turn: Turn) -> str | None:
    """The instruction category of a recorded CodeIF round; None for any other turn."""
    found = round_source(turn.received)
    return found[1] if found else None


@dataclass(frozen=True)
class CodeifExport:
    """What an export writes: the records, in task and round order, of ``sessions``
    conversations."""

    sessions: int
    records: tuple[dict[str, Any], ...]

    def write(self, out: TextIO) -> None:
        for record in self.records:
            out.write(json.dumps(record) + "\n")  # as the benchmark's write_jsonl writes


def codeif_records(row: SessionRow, turns: Sequence[Turn]) -> list[dict[str, Any]]:
    """One session's rounds as completion records; none when it is not a CodeIF
    conversation (its turns are not CodeIF rounds)."""
    categories = [round_category(t) for t in turns]
    if not turns or None in categories:
        return []
    return [
        {
            TASK_ID: benchmark_task_id(row.task_id),
            REQUIREMENT: category,
            COMPLETION: turn.code,
            MODEL: row.model,
        }
        for turn, category in zip(turns, categories, strict=True)
    ]


def plan_codeif(
    store: Store, session_ids: Sequence[str], *, include_unfinished: bool = False
) -> CodeifExport:
    """The CodeIF conversations among ``session_ids`` in the benchmark's completions layout,
    read in one snapshot. Refused when the selection holds no CodeIF conversation, an
    unfinished one (unless ``include_unfinished``), or two of one task (the benchmark's files
    hold one per task)."""
    with store.reading():
        rows = [
            row
            for row in sessions_by_id(store, resolve_session_ids(store, session_ids))
            if row.task_id.startswith(_TASK_PREFIX)
        ]
        if rows:
            ids = [row.id for row in rows]
            rows = select_for_export(store, ids, include_unfinished=include_unfinished)
        by_task: dict[str, tuple[SessionRow, list[dict[str, Any]]]] = {}
        for row in rows:
            records = codeif_records(row, store.load_turns(row.id))
            if not records:
                continue
            if row.task_id in by_task:
                other = by_task[row.task_id][0]
                raise ExportError(
                    f"two conversations of {row.task_id} ({_where(other)} and {_where(row)}); "
                    "CodeIF-Bench's files hold one per task: choose with --run or session ids"
                )
            by_task[row.task_id] = (row, records)
    if not by_task:
        raise ExportError(
            "no CodeIF-Bench conversation to export in this selection: record some with "
            "convtui bench codeif"
        )
    ordered = sorted(by_task, key=benchmark_task_id)
    return CodeifExport(len(ordered), tuple(r for t in ordered for r in by_task[t][1]))


def _where(row: SessionRow) -> str:
    return f"session {row.id} of run {row.run_id}" if row.run_id else f"session {row.id}"
