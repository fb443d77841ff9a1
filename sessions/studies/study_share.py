"""A study exported for sharing (``convtui study export --format parquet``): a folder that
``datasets.load_dataset(folder)`` reads, holding the turns as Parquet
(sessions/studies/study_dataset.py) and a dataset card, README.md (sessions/studies/study_card.py),
with the study's guidelines beside it as guidelines.md when it has any.

Everything is read before a byte is written; each file is written beside its place and
moved in, so an export that fails leaves no half file behind."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from convtui.sessions.database.errors import ExportError
from convtui.sessions.database.store import Store
from convtui.sessions.studies.fidelity import stored_turns
from convtui.sessions.studies.study_card import GUIDELINES_NAME, render_card
from convtui.sessions.studies.study_dataset import (
    FIDELITY_COLUMNS,
    FIDELITY_PATH,
    PARQUET_PATH,
    write_parquet,
)
from convtui.sessions.studies.study_export import read_study_transcripts
from convtui.sessions.studies.study_fidelity_card import fidelity_rows

CARD_NAME = "README.md"


@dataclass(frozen=True)
class StudyExport:
    """What an export wrote: the files (Parquet first, the fidelity rows when there are
    some, then the card and, if the study has them, its guidelines) and what they hold."""

    study: str
    out: Path
    files: tuple[Path, ...]
    rows: int
    sessions: int
    unfinished_sessions: int
    annotators: tuple[str, ...]
    tasks: tuple[str, ...]


def export_study(
    store: Store, out: Path, *, force: bool = False, finished_only: bool = False
) -> StudyExport:
    """Write the study in ``store`` under ``out`` as Parquet and a dataset card. A folder
    that already holds something is refused unless ``force`` (then the export's own files
    are replaced and anything else there is left alone); so is a database without a study
    (StudyError)."""
    transcripts = read_study_transcripts(store, finished_only=finished_only)
    refuse_occupied(out, force=force)
    rows = transcripts.rows()
    parquet = out / PARQUET_PATH
    # The simulated-user fidelity study on these sessions, when one was recorded.
    fidelity = stored_turns(store, [s.detail.session.id for s in transcripts.sessions])
    write_parquet(rows, parquet)
    files: tuple[Path, ...] = (parquet,)
    if fidelity:
        extra = out / FIDELITY_PATH
        write_parquet(fidelity_rows(transcripts.study.name, fidelity), extra, FIDELITY_COLUMNS)
        files += (extra,)
    card = out / CARD_NAME
    _write(card, render_card(transcripts, len(rows), fidelity))
    files += (card,)
    guidelines = transcripts.study.spec.guidelines
    if guidelines is not None:
        # The stored text, as the annotators saw it: its SHA-256 is the one the card names.
        files += (_write(out / GUIDELINES_NAME, guidelines.text),)
    sessions = [s.detail.session for s in transcripts.sessions]
    return StudyExport(
        study=transcripts.study.name,
        out=out,
        files=files,
        rows=len(rows),
        sessions=len(sessions),
        unfinished_sessions=sum(not s.finished for s in sessions),
        annotators=tuple(dict.fromkeys(s.annotator for s in transcripts.sessions)),
        tasks=tuple(dict.fromkeys(s.task_id for s in sessions)),
    )


def _write(path: Path, text: str) -> Path:
    """``text`` into ``path``, written beside it and moved in; byte for byte (no newline
    translation), so the file's digest is the text's."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_bytes(text.encode("utf-8"))
    os.replace(partial, path)
    return path


def refuse_occupied(out: Path, *, force: bool) -> None:
    """``out`` must be a new or empty folder, or ``force`` given."""
    if out.exists() and not out.is_dir():
        raise ExportError(f"{out} is a file: --out names the folder to write the export into")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise ExportError(
            f"{out} is not empty: name a new folder, or pass --force to write the export's "
            "files over what is there"
        )
