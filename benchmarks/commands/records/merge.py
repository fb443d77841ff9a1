"""``convtui sessions merge``: sessions recorded in other databases brought into one, and
``--undo``: the last merge taken back."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from rich.markup import escape

from convtui.benchmarks.output import console, print_json
from convtui.core.errors import ConvtuiError
from convtui.core.plural import counted, noun
from convtui.sessions.merging.merge import MergeOptions, MergeResult, merge_files
from convtui.sessions.merging.merge_undo import UndoResult, undo_last


def merge_command(
    sources: list[Path], db: Path, options: MergeOptions, as_json: bool
) -> list[MergeResult]:
    if not sources:
        raise ConvtuiError(
            "give the databases to merge into --db (or --undo to take back the last merge)"
        )
    results = merge_files(sources, db, options)
    if as_json:
        print_json(
            {"db": str(db), "dry_run": options.dry_run, "sources": [asdict(r) for r in results]}
        )
        return results
    screen = console()
    for r in results:
        line = _dry_line(r, db) if r.dry_run else _merged_line(r, db)
        screen.print(f"{escape(r.source)}: {line}", soft_wrap=True)
    return results


def _merged_line(r: MergeResult, db: Path) -> str:
    if r.sessions_added:
        said = (
            f"[bold]{r.sessions_added}[/bold] {noun(r.sessions_added, 'session')} added "
            f"({counted(r.turns_added, 'turn')})"
        )
    else:
        said = "nothing to add"
    linked = (
        f", {counted(r.assignments_linked, 'assignment')} linked" if r.assignments_linked else ""
    )
    fidelity = f", {counted(r.fidelity_added, 'fidelity row')} added" if r.fidelity_added else ""
    return f"{said}, {r.sessions_present} already present{linked}{fidelity} → {escape(str(db))}"


def _dry_line(r: MergeResult, db: Path) -> str:
    would = [
        f"[bold]{counted(r.sessions_added, 'session')}[/bold] ({counted(r.turns_added, 'turn')})",
        f"link {counted(r.assignments_linked, 'assignment')}",
        f"add {counted(r.fidelity_added, 'fidelity row')}",
    ]
    return (
        f"would add {would[0]}, {would[1]}, {would[2]}; {r.sessions_present} already present "
        f"(dry run: nothing written to {escape(str(db))})"
    )


def undo_command(sources: list[Path], db: Path, *, dry_run: bool, as_json: bool) -> UndoResult:
    if sources:
        raise ConvtuiError(
            "--undo takes back the last merge into --db, whatever files it took: give no "
            "files with it"
        )
    if dry_run:
        raise ConvtuiError("--undo has no --dry-run: it changes nothing when it is refused")
    result = undo_last(db)
    if as_json:
        print_json(asdict(result))
        return result
    parts = [
        counted(result.sessions_removed, "session"),
        counted(result.runs_removed, "run"),
        counted(result.links_cleared, "assignment link"),
        counted(result.fidelity_removed, "fidelity row"),
    ]
    console().print(
        f"{escape(str(db))}: took back the merge of {escape(', '.join(result.sources))} "
        f"(merged {result.merged_utc}): removed {', '.join(parts)}",
        soft_wrap=True,
    )
    return result
