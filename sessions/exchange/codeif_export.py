"""CodeIF-Bench's completions layout (``convtui sessions export --format codeif``).

CodeIF-Bench's static evaluation (``static_conversation/function/test/evaluation.py``) reads a
JSONL file, one object per model answer: ``task_id`` (the dataset's own id, a number),
``requirement`` (the instruction category the answer was asked for) and ``completion`` (the
answer; a ```` ```python ```` block in it is what runs, else the whole text). Its inference
script writes the base answers (the task's prompt alone) without a ``requirement``, to a
file of their own; its IFR evaluation names that initial instruction ``Base``.

A folder export (the default) writes each run's conversations as those scripts read them:
``<out>/<mode>-<model>-<run>/base.jsonl`` (the base answers) and ``n_round.jsonl`` (the
follow-ups, in each task's round order) for static conversations (and replays and app
sessions, which have one instruction per round too), ``rounds.jsonl`` for dynamic ones, and
``<out>/convtui-export.json`` listing every set; so a database holding static and dynamic
runs exports whole. A single file (``--out FILE`` or ``-``) holds every round of one
conversation per task, the base round first (``requirement: "Base"``). Each record's
``completion`` is the round's extracted code, and ``model`` (not read by the benchmark)
names the model that wrote it, so ``convtui bench codeif --score-only`` (which reads both
forms) can put the scores back under that name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from convtui.core.catalog.loaders import SUITE_PREFIX
from convtui.core.codeif.records import round_source
from convtui.core.turns.record import Turn
from convtui.sessions.database.errors import ExportError
from convtui.sessions.database.records import SessionRow
from convtui.sessions.database.store import Store
from convtui.sessions.exchange.export import select_for_export
from convtui.sessions.reading.browse import resolve_session_ids, sessions_by_id

# The keys of one record, as the benchmark's scripts spell them (MODEL and KIND are ours).
TASK_ID = "task_id"
REQUIREMENT = "requirement"
COMPLETION = "completion"
MODEL = "model"
KIND = "kind"  # a dynamic round's kind: instruction or feedback
BASE_CATEGORY = "Base"
BASE_FILE = "base.jsonl"
FOLLOW_UP_FILE = "n_round.jsonl"
DYNAMIC_FILE = "rounds.jsonl"
MANIFEST = "convtui-export.json"

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
class CodeifConversations:
    """The conversations of one run (or one app session), in task order: what one set of
    the benchmark's files holds."""

    label: str  # a folder name: <mode>-<model>-<run or session id>
    run_id: str | None
    session_id: str | None  # an app session's (no run)
    mode: str  # static, dynamic, replay, or person (a session played in the app)
    protocol: str
    model: str
    records: tuple[dict[str, Any], ...]
    sessions: int

    @property
    def files(self) -> dict[str, tuple[dict[str, Any], ...]]:
        """File name -> records. A static conversation is written as the authors' scripts
        read it: the base answers in ``base.jsonl`` (their inference's zero-shot file:
        ``task_id``, ``completion``; ``evaluation.py`` ``way == 1``), the follow-ups in
        ``n_round.jsonl`` (``task_id``, ``requirement``, ``completion``; ways 3 to 7). A
        dynamic one repeats instructions in feedback rounds, which those scripts cannot read:
        every round goes to ``rounds.jsonl`` in order, its kind named."""
        if self.mode == "dynamic":
            return {DYNAMIC_FILE: self.records}
        base = tuple(
            {k: v for k, v in r.items() if k not in (REQUIREMENT, KIND)}
            for r in self.records
            if r[REQUIREMENT] == BASE_CATEGORY
        )
        follow_ups = tuple(
            {k: v for k, v in r.items() if k != KIND}
            for r in self.records
            if r[REQUIREMENT] != BASE_CATEGORY
        )
        return {BASE_FILE: base, FOLLOW_UP_FILE: follow_ups}


@dataclass(frozen=True)
class CodeifExport:
    """What an export writes: one :class:`CodeifConversations` per run (or app session)."""

    groups: tuple[CodeifConversations, ...]

    @property
    def sessions(self) -> int:
        return sum(g.sessions for g in self.groups)

    @property
    def records(self) -> tuple[dict[str, Any], ...]:
        return tuple(r for g in self.groups for r in g.records)

    def write(self, out: TextIO) -> None:
        """One stream, every round of one conversation per task, the base round first (what
        ``bench codeif --score-only`` reads); refused when a task has two conversations."""
        if len(self.groups) > 1:
            tasks = [
                r[TASK_ID]
                for g in self.groups
                for r in g.records
                if r[REQUIREMENT] == BASE_CATEGORY
            ]
            if len(tasks) != len(set(tasks)):
                twice = sorted({t for t in tasks if tasks.count(t) > 1})[0]
                raise ExportError(
                    f"two conversations of {_TASK_PREFIX}{twice} ({self.groups[0].label} and "
                    f"others): one file holds one per task; give --out a folder (one set of "
                    "files per run) or choose with --run or session ids"
                )
        for record in self.records:
            out.write(_line({k: v for k, v in record.items() if k != KIND}))

    def write_folder(self, folder: Path) -> list[Path]:
        """Each run's files under ``folder/<label>/``, and ``convtui-export.json`` listing
        them; returns the files written."""
        written = []
        manifest = []
        for group in self.groups:
            where = folder / group.label
            where.mkdir(parents=True, exist_ok=True)
            for name, records in group.files.items():
                path = where / name
                path.write_text("".join(_line(r) for r in records), encoding="utf-8")
                written.append(path)
            manifest.append(
                {
                    "folder": group.label,
                    "run_id": group.run_id,
                    "session_id": group.session_id,
                    "mode": group.mode,
                    "protocol": group.protocol,
                    "model": group.model,
                    "conversations": group.sessions,
                    "files": sorted(group.files),
                }
            )
        index = folder / MANIFEST
        index.write_text(json.dumps({"codeif": manifest}, indent=1) + "\n", encoding="utf-8")
        return [*written, index]


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record) + "\n"  # as the benchmark's write_jsonl writes


def codeif_records(row: SessionRow, turns: Sequence[Turn]) -> list[dict[str, Any]]:
    """One session's rounds as completion records; none when it is not a CodeIF
    conversation (its turns are not CodeIF rounds)."""
    found = [round_source(t.received) for t in turns]
    if not turns or None in found:
        return []
    return [
        {
            TASK_ID: benchmark_task_id(row.task_id),
            REQUIREMENT: source[1],
            COMPLETION: turn.code,
            MODEL: row.model,
            KIND: source[0],
        }
        for turn, source in zip(turns, found, strict=True)
        if source is not None
    ]


def plan_codeif(
    store: Store, session_ids: Sequence[str], *, include_unfinished: bool = False
) -> CodeifExport:
    """The CodeIF conversations among ``session_ids``, one group per run (or app session),
    read in one snapshot. Refused when the selection holds no CodeIF conversation, or an
    unfinished one (unless ``include_unfinished``)."""
    with store.reading():
        rows = [
            row
            for row in sessions_by_id(store, resolve_session_ids(store, session_ids))
            if row.task_id.startswith(_TASK_PREFIX)
        ]
        if rows:
            ids = [row.id for row in rows]
            rows = select_for_export(store, ids, include_unfinished=include_unfinished)
        by_group: dict[str, list[tuple[SessionRow, list[dict[str, Any]]]]] = {}
        for row in rows:
            records = codeif_records(row, store.load_turns(row.id))
            if records:
                by_group.setdefault(row.run_id or f"session:{row.id}", []).append((row, records))
        groups = [_group(store, key, found) for key, found in sorted(by_group.items())]
    if not groups:
        raise ExportError(
            "no CodeIF-Bench conversation to export in this selection: record some with "
            "convtui bench codeif"
        )
    return CodeifExport(tuple(groups))


def _group(
    store: Store, key: str, found: list[tuple[SessionRow, list[dict[str, Any]]]]
) -> CodeifConversations:
    row = found[0][0]
    if row.run_id is None:
        mode, protocol, ident = "person", "convtui", row.id
    else:
        run = store.run(row.run_id)
        fields = _selection_fields(run.selection)
        mode, protocol, ident = run.mode, fields.get("protocol", ""), key
    ordered = sorted(found, key=lambda f: benchmark_task_id(f[0].task_id))
    model = _folder_part(row.model)
    return CodeifConversations(
        label=f"{mode}-{model}-{ident[:12]}",
        run_id=row.run_id,
        session_id=None if row.run_id else row.id,
        mode=mode,
        protocol=protocol,
        model=row.model,
        records=tuple(r for _, records in ordered for r in records),
        sessions=len(ordered),
    )


def _selection_fields(selection: str) -> dict[str, str]:
    """``codeif;mode=static;protocol=codeif;…`` -> its ``key=value`` fields."""
    return dict(p.split("=", 1) for p in selection.split(";")[1:] if "=" in p)


def _folder_part(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_")[:60] or "model"


def _where(row: SessionRow) -> str:
    return f"session {row.id} of run {row.run_id}" if row.run_id else f"session {row.id}"
