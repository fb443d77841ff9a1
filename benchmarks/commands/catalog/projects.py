"""Wiring for ``convtui projects fetch``: DevEval's archive downloaded (resumable, checksum
checked) and unpacked under the projects root (core/projects/archive.py), its progress drawn
on stderr."""

from __future__ import annotations

import time
from pathlib import Path

from rich.progress import (
    BarColumn,
    DownloadColumn,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from convtui.benchmarks.output import console, warn
from convtui.benchmarks.progress import RunProgress, elapsed_text
from convtui.core.projects.archive import (
    ARCHIVE_NAME,
    Fetched,
    Step,
    archive_url,
    fetch_projects,
    size_text,
)
from convtui.core.projects.envs import build_envs
from convtui.core.projects.location import projects_root
from convtui.core.projects.releases import load_releases


class ArchiveProgress(RunProgress):
    """The download's bar; where stderr is not a terminal, a plain line now and then instead
    (benchmarks/progress.py): ``412.3 MB of 905.1 MB (45%), elapsed 1m20s · Source_Code.tar.gz``."""

    def plain_lines(self) -> list[str]:
        elapsed = elapsed_text(time.monotonic() - self._started_at)
        lines = []
        for task in self.tasks:
            done = int(task.completed)
            if task.total:
                share = f"{size_text(done)} of {size_text(int(task.total))}"
                share += f" ({100 * done // int(task.total)}%)"
            else:
                share = size_text(done)
            lines.append(f"{share}, elapsed {elapsed} · {task.description}")
        return lines


def archive_bar() -> ArchiveProgress:
    """A bar in bytes on stderr (none on CI, whose log it would only fill)."""
    return ArchiveProgress.on_stderr(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )


def fetch_command(
    projects: Path | None, url: str | None, sha256: str | None, keep_archive: bool
) -> None:
    """Download and unpack DevEval's projects; one line on stdout says where they are."""
    root = projects_root(projects)
    source = url or archive_url()
    out = console(stderr=True)
    bar = archive_bar()
    line: TaskID | None = None

    def on_step(step: Step) -> None:
        nonlocal line
        if step.stage == "unpack":
            bar.stop()
            out.print(f"unpacking into {root} …", markup=False)
        elif line is None:
            size = size_text(step.total) if step.total else "about 0.9 GB"
            out.print(f"downloading {source} ({size}) into {root}", markup=False)
            if step.done:
                out.print(f"resuming at {size_text(step.done)}", markup=False)
            line = bar.add_task(ARCHIVE_NAME, total=step.total, completed=step.done)
            bar.start()
        else:
            bar.update(line, completed=step.done, total=step.total)

    try:
        fetched = fetch_projects(
            root, url=source, sha256=sha256, keep_archive=keep_archive, on_step=on_step
        )
    finally:
        bar.stop()
    _report(fetched, source)
    _environments(root)


def _environments(root: Path) -> None:
    """Each project's environment (its requirements from releases.toml where it names them),
    one line per project on stderr; a project whose requirements do not install is named in
    a warning and left for `convtui doctor --suite codeif` to report."""
    out = console(stderr=True)

    def said(project: str, problem: str | None) -> None:
        if problem is None:
            out.print(f"environment of {project}: ready", markup=False)
        else:
            warn(problem)

    failed = [p for p, why in build_envs(root, load_releases(), on_project=said).items() if why]
    if failed:
        warn(
            f"{len(failed)} environments could not be built ({', '.join(failed)}); their "
            "tasks cannot run here until they are"
        )


def _report(fetched: Fetched, source: str) -> None:
    if fetched.already:
        console().print(
            f"DevEval's projects are already under {fetched.tree} ({fetched.projects} "
            f"projects, archive sha256 {fetched.sha256}); delete that folder to fetch them "
            "again",
            markup=False,
            soft_wrap=True,
        )
        return
    if fetched.checked == "unchecked":
        warn(
            f"the archive's SHA-256 {fetched.sha256} was not verified: {source} sent no "
            "SHA-256 and no --sha256 was given"
        )
    checked = {"given": "as --sha256 says", "server": "as the server says", "unchecked": ""}
    digest = f"sha256 {fetched.sha256} {checked[fetched.checked]}".rstrip()
    kept = f"; the archive is kept at {fetched.archive}" if fetched.archive else ""
    console().print(
        f"DevEval's {fetched.projects} projects are under {fetched.tree} ({digest}){kept}; "
        "`convtui projects list` says which tasks can run here",
        markup=False,
        soft_wrap=True,
    )
