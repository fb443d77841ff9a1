"""Wiring for ``convtui sessions list|show|export``: open an existing store, check the
options, read or export, and hand values back for the CLI to print."""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

from convtui.core.errors import ConvtuiError
from convtui.core.session import SessionStatus
from convtui.sessions import Store
from convtui.sessions.browse import (
    SessionDetail,
    SessionSummary,
    list_sessions,
    load_session,
    resolve_session_ids,
    unique_prefix_length,
)
from convtui.sessions.export import (
    WrittenLogSet,
    export_convcodebench,
    export_jsonl,
    select_for_export,
)
from convtui.sessions.records import UserKind

USER_KINDS: tuple[str, ...] = get_args(UserKind)
STATUSES: tuple[str, ...] = get_args(SessionStatus)
EXPORT_FORMATS = ("jsonl", "convcodebench")


@contextmanager
def open_existing(db: Path) -> Iterator[Store]:
    """The store at ``db``, which must exist: browsing a mistyped path must not leave an
    empty database behind (``Store.open`` creates one)."""
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


def check_user(user: str | None) -> None:
    if user is not None and user not in USER_KINDS:
        raise ConvtuiError(f"--user must be one of {', '.join(USER_KINDS)}, not {user!r}")


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
    user: str | None,
    limit: int | None,
) -> SessionListing:
    statuses = parse_statuses(status)
    check_user(user)
    with open_existing(db) as store:
        found = list_sessions(
            store, task=task, status=statuses or None, user_kind=user, limit=limit
        )
        return SessionListing(found, unique_prefix_length(store, [s.id for s in found]))


def show_command(db: Path, session_id: str) -> SessionDetail:
    with open_existing(db) as store:
        return load_session(store, session_id)


@dataclass(frozen=True)
class ExportOptions:
    db: Path
    format: str
    out: Path | None  # None or "-": stdout for jsonl; a folder beside the db for convcodebench
    ids: tuple[str, ...] = ()
    all: bool = False
    task: str | None = None
    status: tuple[str, ...] = ()
    user: str | None = None
    include_unfinished: bool = False


@dataclass(frozen=True)
class ExportResult:
    format: str
    sessions: int
    out: str  # the file, "-" for stdout, or the folder
    sets: tuple[WrittenLogSet, ...] = ()


def export_command(options: ExportOptions) -> ExportResult:
    if options.format not in EXPORT_FORMATS:
        raise ConvtuiError(f"--format must be jsonl or convcodebench, not {options.format!r}")
    statuses = parse_statuses(options.status)
    check_user(options.user)
    filtered = bool(options.task or statuses or options.user)
    if not (options.ids or options.all or filtered):
        raise ConvtuiError(
            "name the sessions to export (ids or unique prefixes), or choose them with --all, "
            "--task, --status or --user"
        )
    to_stdout = options.out is None or str(options.out) == "-"
    if options.format == "convcodebench" and options.out is not None and to_stdout:
        raise ConvtuiError("--format convcodebench writes a folder: give --out a folder, not -")
    with open_existing(options.db) as store:
        ids = _select(store, options, statuses)
        if options.format == "convcodebench":
            folder = options.out or options.db.parent / f"{options.db.stem}-static-logs"
            sets = export_convcodebench(
                store, ids, folder, include_unfinished=options.include_unfinished
            )
            return ExportResult(
                "convcodebench", sum(s.sessions for s in sets), str(folder), tuple(sets)
            )
        if to_stdout:
            count = export_jsonl(
                store, ids, sys.stdout, include_unfinished=options.include_unfinished
            )
            return ExportResult("jsonl", count, "-")
        assert options.out is not None
        count = _export_jsonl_file(store, ids, options.out, options.include_unfinished)
        return ExportResult("jsonl", count, str(options.out))


def _select(store: Store, options: ExportOptions, statuses: tuple[str, ...]) -> list[str]:
    """The named sessions (narrowed by any filters), or every session the filters match."""
    named = resolve_session_ids(store, options.ids) if options.ids else None
    filtered = bool(options.task or statuses or options.user)
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
    if not chosen:
        raise ConvtuiError("no recorded sessions match this selection")
    return chosen


def _export_jsonl_file(store: Store, ids: Sequence[str], out: Path, unfinished: bool) -> int:
    """Write through a temporary file renamed into place, so a refusal or a crash never
    leaves a half-written (or empty) file where the export was asked for."""
    if out.is_dir():
        raise ConvtuiError(f"{out} is a folder; --format jsonl writes one file")
    select_for_export(store, ids, include_unfinished=unfinished)  # refuse before any mkdir
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    try:
        with partial.open("w", encoding="utf-8", newline="\n") as handle:
            count = export_jsonl(store, ids, handle, include_unfinished=unfinished)
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)
    return count
