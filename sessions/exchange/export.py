"""Exporting recorded sessions: JSONL transcripts (one object per session) and
ConvCodeWorld's static layout (``convtui sessions export``; sessions/exchange/ccw_files.py).

Both read the whole selection in one snapshot, check it before writing a byte, and write
sessions in a fixed order with sorted keys, so the same database exports identical files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from convtui.sessions.database.errors import ExportError
from convtui.sessions.database.records import SessionRow
from convtui.sessions.database.store import Store
from convtui.sessions.exchange.static_logs import WrittenLogSet, write_log_sets
from convtui.sessions.exchange.static_plan import plan_log_sets
from convtui.sessions.reading.browse import load_session, resolve_session_ids, sessions_by_id
from convtui.sessions.reading.transcript import json_line, session_record

__all__ = ["WrittenLogSet", "export_convcodebench", "export_jsonl", "select_for_export"]


def select_for_export(
    store: Store, session_ids: Sequence[str], *, include_unfinished: bool = False
) -> list[SessionRow]:
    """The sessions named by ``session_ids`` (full ids or unique prefixes), in creation
    order. Unfinished ones (``planned``, ``running``) are refused unless
    ``include_unfinished``: a transcript still being written is not yet a log."""
    ids = resolve_session_ids(store, session_ids)
    if not ids:
        raise ExportError("no sessions to export")
    rows = sorted(sessions_by_id(store, ids), key=lambda row: row.id)
    unfinished = [row for row in rows if not row.finished]
    if unfinished and not include_unfinished:
        shown = ", ".join(f"{row.id} ({row.status})" for row in unfinished[:5])
        more = f" and {len(unfinished) - 5} more" if len(unfinished) > 5 else ""
        raise ExportError(
            f"cannot export unfinished sessions: {shown}{more}; leave them out or pass "
            "--include-unfinished"
        )
    return rows


def export_jsonl(
    store: Store,
    session_ids: Sequence[str],
    out: TextIO,
    *,
    include_unfinished: bool = False,
) -> int:
    """Write one JSON object per session to ``out`` (see
    :mod:`convtui.sessions.reading.transcript`); returns how many. Nothing is written when the
    selection is refused."""
    with store.reading():
        rows = select_for_export(store, session_ids, include_unfinished=include_unfinished)
        for row in rows:
            # One session at a time: a large database never has to fit in memory.
            out.write(json_line(session_record(load_session(store, row.id))))
    return len(rows)


def export_convcodebench(
    store: Store,
    session_ids: Sequence[str],
    out_dir: Path,
    *,
    include_unfinished: bool = False,
    headers: Mapping[str, str] | None = None,
    model_name: str | None = None,
) -> list[WrittenLogSet]:
    """Write the sessions under ``out_dir`` as ConvCodeWorld's static mode reads them, a log
    set per (model, Ω, user); a static replay's sessions where ConvCodeWorld's static mode
    writes a replay, with the reference set beside them; ``headers`` as in
    :func:`write_log_sets`. ``model_name`` names the selection's one model in the files
    (ConvCodeWorld's ``--model_name``; default: sessions/exchange/ccw_files.py ``file_model_name``).

    Refused, before anything is written, when a set would mix configs, kinds of user, or two
    sessions of one task, when ``model_name`` would not pair ConvCodeWorld's files or the
    selection holds several models, or when a target folder holds something other than an
    earlier export (which is replaced)."""
    with store.reading():
        rows = select_for_export(store, session_ids, include_unfinished=include_unfinished)
        plans = plan_log_sets(store, rows, model_name=model_name)
        return write_log_sets(store, plans, out_dir, headers)
