"""What ``convtui sessions export`` wrote (sessions.py exports; session_views.py says what),
in a module of its own so that the views never import the body."""

from __future__ import annotations

from dataclasses import dataclass

from convtui.sessions.exchange.export import WrittenLogSet


@dataclass(frozen=True)
class ExportResult:
    format: str
    sessions: int
    out: str  # the file, "-" for stdout, or the folder
    sets: tuple[WrittenLogSet, ...] = ()
    rounds: int | None = None  # codeif: the records written
    # Chosen by --all or a filter but still running or planned, so left out (named ids are
    # refused instead: naming one says it is wanted).
    unfinished_left_out: int = 0
