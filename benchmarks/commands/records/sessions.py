"""Wiring for ``convtui sessions list|show|export``: open an existing store, check the
options, read or export, and print what was found or written."""

from __future__ import annotations

import io
import os
import sqlite3
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TextIO, get_args

from convtui.benchmarks.commands.records.export_result import ExportResult
from convtui.benchmarks.commands.records.session_views import (
    export_view,
    left_out_note,
    session_detail,
    session_table,
)
from convtui.benchmarks.output import console, print_json
from convtui.benchmarks.settings import ExportFormat
from convtui.core.catalog.loaders import load_catalog
from convtui.core.errors import ConvtuiError
from convtui.core.plural import counted
from convtui.core.settings.config import SessionStatus
from convtui.sessions import Store
from convtui.sessions.database.connection import refuse_foreign_file
from convtui.sessions.database.records import UserKind
from convtui.sessions.exchange.codeif_export import plan_codeif
from convtui.sessions.exchange.export import export_convcodebench, export_jsonl, select_for_export
from convtui.sessions.reading.browse import (
    SessionDetail,
    SessionSummary,
    list_sessions,
    load_session,
    resolve_session_ids,
    sessions_by_id,
    unique_prefix_length,
)
from convtui.sessions.reading.transcript import session_record

STATUSES: tuple[str, ...] = get_args(SessionStatus)


@contextmanager
def open_existing(db: Path) -> Iterator[Store]:
    """The store at ``db``, which must exist: browsing a mistyped path must not leave an
    empty database behind (``Store.open`` creates one)."""
    refuse_foreign_file(db)  # a folder is named as one, as every other command says it
    if not db.is_file():
        raise ConvtuiError(
            f"no results database at {db}: record sessions with convtui bench live or the TUI "
            "first, or pass --db"
        )
    try:
        store = Store.open(db)
    except sqlite3.DatabaseError as exc:
        raise ConvtuiError(f"{db} is not a convtui database: {exc}") from None
    with store:
        yield store


def parse_statuses(values: Sequence[str] | None) -> tuple[str, ...]:
    """``--status`` values, repeatable or comma-separated: ``--status solved,exhausted``."""
    found = tuple(part.strip() for value in values or () for part in value.split(",") if part)
    for status in found:
        if status not in STATUSES:
            raise ConvtuiError(f"--status must be one of {', '.join(STATUSES)}, not {status!r}")
    return found


@dataclass(frozen=True)
class SessionListing:
    """What ``sessions list`` prints: the sessions, and how many leading characters of their
    ids tell each apart from every recorded session (what the listing shows, and what
    ``show``, ``export`` and ``session --resume`` accept)."""

    sessions: list[SessionSummary]
    id_length: int


def list_command(
    db: Path,
    *,
    task: str | None,
    status: Sequence[str] | None,
    user: UserKind | None,
    limit: int | None,
    as_json: bool,
) -> None:
    listing = find_sessions(db, task=task, status=status, user=user, limit=limit)
    if as_json:
        print_json([asdict(s) for s in listing.sessions])
        return
    screen = console()
    screen.print(session_table(listing.sessions, screen.width, listing.id_length))


def find_sessions(
    db: Path,
    *,
    task: str | None,
    status: Sequence[str] | None,
    user: UserKind | None,
    limit: int | None,
) -> SessionListing:
    statuses = parse_statuses(status)
    with open_existing(db) as store:
        found = list_sessions(
            store, task=task, status=statuses or None, user_kind=user, limit=limit
        )
        return SessionListing(found, unique_prefix_length(store, [s.id for s in found]))


def show_command(db: Path, session_id: str, as_json: bool) -> None:
    with open_existing(db) as store:
        detail: SessionDetail = load_session(store, session_id)
    if as_json:
        print_json(session_record(detail))
        return
    console().print(session_detail(detail))


@dataclass(frozen=True)
class ExportOptions:
    db: Path
    format: ExportFormat
    # None or "-": stdout for jsonl and codeif; a folder beside the db for convcodebench
    out: Path | None
    ids: tuple[str, ...] = ()
    all: bool = False
    task: str | None = None
    status: tuple[str, ...] = ()
    user: UserKind | None = None
    include_unfinished: bool = False
    runs: tuple[str, ...] = ()  # only sessions of these runs (ids or prefixes)
    # convcodebench: the model's name in the files (ConvCodeWorld's --model_name)
    model_name: str | None = None


def export_command(options: ExportOptions) -> None:
    """Export, then say what was written where (nothing when stdout holds the export)."""
    result = export(options)
    if result.out != "-":
        console().print(export_view(result), soft_wrap=True)
    elif result.unfinished_left_out:  # the export is on stdout: say it on stderr
        console(stderr=True).print(left_out_note(result), soft_wrap=True)


def export(options: ExportOptions) -> ExportResult:
    statuses = parse_statuses(options.status)
    filtered = bool(options.task or statuses or options.user or options.runs)
    # --format codeif picks its own sessions (the CodeIF-Bench conversations) by default.
    if not (options.ids or options.all or filtered or options.format == "codeif"):
        raise ConvtuiError(
            "name the sessions to export (ids or unique prefixes), or choose them with --all, "
            "--task, --status, --user or --run"
        )
    to_stdout = options.out is None or str(options.out) == "-"
    if options.format == "convcodebench" and options.out is not None and to_stdout:
        raise ConvtuiError("--format convcodebench writes a folder: give --out a folder, not -")
    if options.model_name is not None and options.format != "convcodebench":
        raise ConvtuiError(
            "--model-name names the model in ConvCodeWorld's files: it needs --format convcodebench"
        )
    with open_existing(options.db) as store:
        # An empty default selection for codeif is refused by plan_codeif, naming CodeIF.
        ids = _select(store, options, statuses, allow_empty=options.format == "codeif")
        left_out = 0
        if not options.ids and not options.include_unfinished:
            ids, left_out = _finished_only(store, ids)
        result = _export_selected(store, options, ids, to_stdout)
    return replace(result, unfinished_left_out=left_out)


def _finished_only(store: Store, ids: Sequence[str]) -> tuple[list[str], int]:
    """The finished sessions among ``ids`` and how many were not; refused when none is."""
    rows = sessions_by_id(store, ids)
    finished = [row.id for row in rows if row.finished]
    if rows and not finished:
        raise ConvtuiError(
            f"the {counted(len(rows), 'session')} selected are all unfinished (planned or "
            "running): pass --include-unfinished to export them as they are"
        )
    return finished, len(rows) - len(finished)


def _export_selected(
    store: Store, options: ExportOptions, ids: list[str], to_stdout: bool
) -> ExportResult:
    """Write ``ids`` in the format asked for."""
    if options.format == "convcodebench":
        folder = options.out or options.db.parent / f"{options.db.stem}-static-logs"
        sets = export_convcodebench(
            store,
            ids,
            folder,
            include_unfinished=options.include_unfinished,
            headers=_code_headers(store, ids),
            model_name=options.model_name,
        )
        selected = sum(s.sessions for s in sets if not s.added)
        return ExportResult("convcodebench", selected, str(folder), tuple(sets))
    if options.format == "codeif":
        return _export_codeif(store, ids, options.out, options.include_unfinished, options.db)
    if to_stdout:
        count = export_jsonl(store, ids, sys.stdout, include_unfinished=options.include_unfinished)
        return ExportResult("jsonl", count, "-")
    assert options.out is not None
    count = _export_jsonl_file(store, ids, options.out, options.include_unfinished)
    return ExportResult("jsonl", count, str(options.out))


def _export_codeif(
    store: Store, ids: Sequence[str], out: Path | None, unfinished: bool, db: Path
) -> ExportResult:
    """A folder (the default, ``<db>-codeif`` beside the database; or any ``--out`` that is
    a folder or names no file): one set of the benchmark's files per run. ``--out FILE``
    (``.jsonl``/``.json``) or ``-``: one stream, one conversation per task."""
    planned = plan_codeif(store, ids, include_unfinished=unfinished)  # refuse before writing
    rounds = len(planned.records)
    if out is not None and str(out) == "-":
        buffer = io.StringIO()
        planned.write(buffer)  # refused before anything reaches stdout
        sys.stdout.write(buffer.getvalue())
        return ExportResult("codeif", planned.sessions, "-", rounds=rounds)
    if out is not None and not out.is_dir() and out.suffix in (".jsonl", ".json"):
        planned.write(io.StringIO())  # refused before the file is touched
        with _replacing(out) as handle:
            planned.write(handle)
        return ExportResult("codeif", planned.sessions, str(out), rounds=rounds)
    folder = out or db.parent / f"{db.stem}-codeif"
    planned.write_folder(folder)
    return ExportResult("codeif", planned.sessions, str(folder), rounds=rounds)


def _select(
    store: Store, options: ExportOptions, statuses: tuple[str, ...], *, allow_empty: bool = False
) -> list[str]:
    """The named sessions (narrowed by any filters), or every session the filters match."""
    named = resolve_session_ids(store, options.ids) if options.ids else None
    filtered = bool(options.task or statuses or options.user)
    if options.runs:
        named = _of_runs(store, options.runs, named)
    matching = None
    if filtered or named is None:
        matching = [
            row.id
            for row in list_sessions(
                store, task=options.task, status=statuses or None, user_kind=options.user
            )
        ]
    if named is None:
        chosen = matching or []
    elif matching is None:
        chosen = named
    else:
        keep = set(matching)
        chosen = [sid for sid in named if sid in keep]
    if not chosen and not allow_empty:
        raise ConvtuiError("no recorded sessions match this selection")
    return chosen


def _of_runs(store: Store, runs: Sequence[str], named: list[str] | None) -> list[str]:
    """The sessions (among ``named`` when given) of the runs ``runs`` names by id or prefix;
    refused when one names no run."""
    found = {row.id: row.run_id for row in list_sessions(store, interactive=False) if row.run_id}
    for run in runs:
        if not any(run_id.startswith(run) for run_id in found.values()):
            raise ConvtuiError(f"no run {run!r} with sessions in this database")
    keep = {sid for sid, run_id in found.items() if run_id.startswith(tuple(runs))}
    if named is None:
        return [sid for sid in found if sid in keep]
    return [sid for sid in named if sid in keep]


def _export_jsonl_file(store: Store, ids: Sequence[str], out: Path, unfinished: bool) -> int:
    if out.is_dir():
        raise ConvtuiError(f"{out} is a folder; --format jsonl writes one file")
    select_for_export(store, ids, include_unfinished=unfinished)  # refuse before any mkdir
    with _replacing(out) as handle:
        return export_jsonl(store, ids, handle, include_unfinished=unfinished)


@contextmanager
def _replacing(out: Path) -> Iterator[TextIO]:
    """Write through a temporary file renamed into place, so a refusal or a crash never
    leaves a half-written (or empty) file where the export was asked for."""
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    try:
        with partial.open("w", encoding="utf-8", newline="\n") as handle:
            yield handle
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)


def _code_headers(store: Store, ids: Sequence[str]) -> dict[str, str]:
    """Task id -> its code prompt, for turn 0's eval entries under --protocol convcodeworld
    (BigCodeBench ran the code prompt before the solution); none when the data is absent,
    since those entries are not read by a replay."""
    task_ids = {store.session(sid).task_id for sid in ids}
    try:
        catalog = load_catalog("bigcodebench")
    except ConvtuiError:
        return {}
    return {t: catalog.get(t).code_header for t in task_ids if t in catalog}
