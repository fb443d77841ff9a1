"""``convtui projects``: DevEval's projects for CodeIF-Bench's repository tasks."""

from __future__ import annotations

import typer

from convtui.errors import user_errors
from convtui.options import JsonOpt
from convtui.project_options import (
    ArchiveSha256Opt,
    ArchiveUrlOpt,
    KeepArchiveOpt,
    ProjectNamesArg,
    ProjectsDirOpt,
    ProjectTreeOpt,
)

app = typer.Typer(
    no_args_is_help=True,
    help="DevEval projects for CodeIF-Bench's repository tasks: get them, check them.",
)


@app.command("rebuild")
def projects_rebuild(
    names: ProjectNamesArg = None,
    projects: ProjectsDirOpt = None,
    tree: ProjectTreeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Rebuild DevEval's projects from PyPI source distributions, where a release holds every
    task's reference code at its recorded lines (core/projects/releases.toml says which), and
    build each one's environment. Needs PyPI, not the Hugging Face Hub. A project whose
    release lacks its tests takes them from its history: check out the commit releases.toml
    names and pass that folder with --tree.

    Example: [bold]convtui projects rebuild sqlitedict[/bold]"""
    with user_errors():
        from convtui.benchmarks.commands.catalog.project_builds import rebuild_command

        exit_code = rebuild_command(names or [], projects, as_json, tree)
    raise typer.Exit(exit_code)


@app.command("list")
def projects_list(projects: ProjectsDirOpt = None, as_json: JsonOpt = False) -> None:
    """List the 42 projects the repository tasks need: their levels and tasks, where the copy
    here came from, whether its environment is built, and how many of its tasks can run.

    Example: [bold]convtui projects list[/bold]"""
    with user_errors():
        from convtui.benchmarks.commands.catalog.project_builds import list_command

        list_command(projects, as_json)


@app.command("fetch")
def projects_fetch(
    projects: ProjectsDirOpt = None,
    url: ArchiveUrlOpt = None,
    sha256: ArchiveSha256Opt = None,
    keep_archive: KeepArchiveOpt = False,
) -> None:
    """Download DevEval's archive of the 42 projects the repository tasks run inside
    (Source_Code.tar.gz, about 0.9 GB, from the Hugging Face dataset LJ0815/DevEval) and
    unpack it as Source_Code/ under the projects root (--projects, else
    $CONVTUI_PROJECTS_DIR, else ~/.cache/convtui/projects). An interrupted download resumes
    where it stopped when run again; an archive whose SHA-256 differs is deleted and nothing
    is unpacked. Needs the Hub (or a mirror); without it, `convtui projects rebuild`.

    Example: [bold]convtui projects fetch[/bold]"""
    with user_errors():
        from convtui.benchmarks.commands.catalog.projects import fetch_command

        fetch_command(projects, url, sha256, keep_archive)
