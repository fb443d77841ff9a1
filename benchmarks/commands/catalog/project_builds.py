"""Wiring for ``convtui projects rebuild|list``: DevEval's projects rebuilt from PyPI where the
Hub is out of reach, and what each project and its tasks can do here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.table import Table
from rich.text import Text

from convtui.benchmarks.output import console, print_json, warn
from convtui.core.catalog.datasets import cache_dir
from convtui.core.catalog.tasks import Task
from convtui.core.codeif.data_file import load_codeif_data
from convtui.core.errors import ConvtuiError
from convtui.core.projects.checkout import SOURCE_DIR, env_python, forget_trees, task_problem
from convtui.core.projects.location import projects_root
from convtui.core.projects.rebuild import (
    RebuildError,
    adopt_tree,
    fetch_file,
    rebuild_project,
    source_of,
)
from convtui.core.projects.releases import Release, load_releases


def _repository_tasks() -> list[Task]:
    return [t for t in load_codeif_data().catalog if t.site is not None]


def _chosen(names: Sequence[str], releases: dict[str, Release]) -> list[Release]:
    """The releases ``names`` name (a project's name or its DevEval path), every one that has
    a route when none is named."""
    if not names:
        return [r for r in releases.values() if r.rebuildable]
    by_name = {path.rsplit("/", 1)[-1].lower(): path for path in releases}
    chosen = []
    for name in names:
        path = name if name in releases else by_name.get(name.strip().lower())
        if path is None:
            known = ", ".join(sorted(by_name))
            raise ConvtuiError(f"unknown project {name!r}; known projects: {known}")
        chosen.append(releases[path])
    return chosen


def rebuild_command(
    names: Sequence[str], projects: Path | None, as_json: bool, tree: Path | None = None
) -> int:
    """Exit code 1 when a project could not be rebuilt."""
    root = projects_root(projects)
    releases = load_releases()
    chosen = _chosen(names, releases)
    if tree is not None and len(chosen) != 1:
        raise ConvtuiError("--tree gives one project's tree: name that one project")
    tasks = _repository_tasks()
    cache = cache_dir() / "sdists"
    results = []
    out = console(stderr=True)
    for release in chosen:
        if not as_json:
            out.print(f"{release.project_path}: {release.label} …", highlight=False)
        try:
            if tree is not None:
                adopt_tree(root, release, tree)
            else:
                rebuild_project(root, release, cache=cache, fetch=fetch_file, tasks=tasks)
            error = ""
        except RebuildError as exc:
            error = str(exc)
            warn(error)
        forget_trees()  # the tree just laid out, not one read before it
        mine = [t for t in tasks if t.site and t.site.project_path == release.project_path]
        problems = {t.id: task_problem(t, root) for t in mine}
        results.append(
            {
                "project": release.project_path,
                "release": release.label,
                "error": error,
                "tasks": len(mine),
                "usable": sum(p is None for p in problems.values()),
                "problems": {k: v for k, v in problems.items() if v},
            }
        )
    if as_json:
        print_json({"root": str(root), "projects": results})
    else:
        console().print(_rebuilt_table(results, root))
    return 1 if any(r["error"] for r in results) else 0


def _rebuilt_table(results: list[dict], root: Path) -> Table:
    table = Table(
        title=f"projects rebuilt under {root}",
        header_style="bold",
        caption="usable: the project, its environment and the reference code at the task's "
        "lines are there; `convtui doctor --suite codeif` runs the reference against its tests",
    )
    table.add_column("project", no_wrap=True)
    table.add_column("release")
    table.add_column("tasks usable", justify="right")
    table.add_column("why not", overflow="fold")
    for r in results:
        why = r["error"] or "; ".join(sorted(set(r["problems"].values())))
        table.add_row(Text(r["project"]), Text(r["release"]), f"{r['usable']}/{r['tasks']}", why)
    return table


@dataclass(frozen=True)
class ProjectRow:
    """One project as ``projects list`` shows it."""

    project: str
    levels: list[str]
    tasks: list[str]
    source: str  # where the copy here came from ("" when there is none)
    rebuild_from: str  # the release releases.toml names ("" when none)
    environment: bool
    usable: int  # its tasks that can run here


def _rows(root: Path) -> list[ProjectRow]:
    releases = load_releases()
    by_project: dict[str, list[Task]] = {}
    for task in _repository_tasks():
        if task.site is not None:
            by_project.setdefault(task.site.project_path, []).append(task)
    rows = []
    for path, tasks in sorted(by_project.items()):
        tree = root / SOURCE_DIR / path
        source = source_of(tree)
        release = releases.get(path)
        rows.append(
            ProjectRow(
                project=path,
                levels=sorted({t.level for t in tasks}),
                tasks=[t.id for t in tasks],
                source=source.get("release")
                or source.get("route")
                or ("present" if tree.is_dir() else ""),
                rebuild_from=release.label if release else "",
                environment=env_python(root, path).exists(),
                usable=sum(task_problem(t, root) is None for t in tasks),
            )
        )
    return rows


def list_command(projects: Path | None, as_json: bool) -> None:
    """Every project the repository tasks need: its tasks, where its tree came from, whether
    its environment is built, and how many of its tasks can run here."""
    root = projects_root(projects)
    rows = _rows(root)
    if as_json:
        print_json({"root": str(root), "projects": [asdict(r) for r in rows]})
        return
    table = Table(
        title=f"DevEval projects under {root}",
        header_style="bold",
        caption="get them: `convtui projects fetch` (DevEval's archive) or "
        "`convtui projects rebuild` (PyPI, where a release matches)",
    )
    for name in ("project", "levels", "tasks", "here from", "rebuild from", "env", "usable"):
        table.add_column(name, justify="right" if name in ("tasks", "usable") else "left")
    for r in rows:
        table.add_row(
            Text(r.project),
            ", ".join(r.levels),
            str(len(r.tasks)),
            Text(r.source or "-"),
            Text(r.rebuild_from or "-"),
            "yes" if r.environment else "no",
            f"{r.usable}/{len(r.tasks)}",
        )
    console().print(table)
