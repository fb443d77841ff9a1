"""``convtui sessions merge``: sessions recorded in other databases brought into one."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from rich.markup import escape

from convtui.benchmarks.output import console, print_json
from convtui.core.plural import counted, noun
from convtui.sessions.merge import MergeResult, merge_files


def merge_command(sources: list[Path], db: Path, as_json: bool) -> list[MergeResult]:
    results = merge_files(sources, db)
    if as_json:
        print_json({"db": str(db), "sources": [asdict(r) for r in results]})
        return results
    screen = console()
    for r in results:
        if r.sessions_added:
            said = f"[bold]{r.sessions_added}[/bold] {noun(r.sessions_added, 'session')} added"
        else:
            said = "nothing to add"
        linked = (
            f", {counted(r.assignments_linked, 'assignment')} linked"
            if r.assignments_linked
            else ""
        )
        fidelity = (
            f", {counted(r.fidelity_added, 'fidelity row')} added" if r.fidelity_added else ""
        )
        screen.print(
            f"{escape(r.source)}: {said}, {r.sessions_present} already present{linked}{fidelity}"
            f" → {escape(str(db))}",
            soft_wrap=True,
        )
    return results
