"""Rebuilding DevEval's projects from what a machine without the Hub reaches: PyPI's source
distributions. ``releases.toml`` (beside this file) names, per project, the release whose
source distribution holds every task's reference code at the recorded lines, how it was
checked, and the requirements its tests need; a project with no such release says why.

A rebuilt project counts only where each of its tasks' reference code sits at its lines and
its ground truth passes (core/projects/checkout.py, ``convtui doctor --suite codeif``): the
rebuild lays the release out as DevEval's copy would be and builds its environment; it never
replaces a copy that came from DevEval's archive.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tarfile
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

from convtui.core.catalog.datasets import DatasetSource, DownloadError, download
from convtui.core.catalog.tasks import Task
from convtui.core.errors import ConvtuiError
from convtui.core.projects.checkout import SOURCE_DIR
from convtui.core.projects.envs import build_env
from convtui.core.projects.quoted import quoted_files
from convtui.core.projects.releases import Release

SOURCE_MARKER = ".convtui-source.json"  # in a project's tree: where the tree came from
_FETCH_TIMEOUT_S = 60.0  # per socket operation; a source distribution is a few megabytes

# fetch(url, destination, sha256) -> the file, checksum checked.
Fetch = Callable[[str, Path, str], Path]


class RebuildError(ConvtuiError):
    """A project could not be rebuilt; the message says which and why."""


def fetch_file(url: str, dest: Path, sha256: str) -> Path:
    """``url`` saved as ``dest``, its SHA-256 checked (a copy already there and intact is
    kept): the datasets' download (core/catalog/datasets.py), which never leaves a partial file."""
    if dest.is_file() and hashlib.sha256(dest.read_bytes()).hexdigest() == sha256:
        return dest
    source = DatasetSource(dest.name, dest.name, (dest.name,), url, sha256)
    try:
        return download(source, dest.parent, url=url, timeout=_FETCH_TIMEOUT_S)
    except DownloadError as exc:
        raise RebuildError(str(exc)) from exc


def source_of(tree: Path) -> dict:
    """What a project's tree records about where it came from ({} when nothing)."""
    try:
        recorded = json.loads((tree / SOURCE_MARKER).read_text())
    except (OSError, ValueError):
        return {}
    return recorded if isinstance(recorded, dict) else {}


def _unpack(archive: Path, into: Path) -> None:
    """A source distribution's files under ``into``, refusing members that would land
    outside it (tarfile's ``data`` filter; zip names checked by hand)."""
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zipped:
            for name in zipped.namelist():
                target = (into / name).resolve()
                if not target.is_relative_to(into.resolve()):
                    raise RebuildError(f"{archive.name}: member {name!r} leaves the folder")
            zipped.extractall(into)
        return
    try:
        with tarfile.open(archive) as tarred:
            tarred.extractall(into, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise RebuildError(f"{archive.name} cannot be unpacked: {exc}") from exc


def rebuild_project(
    root: Path,
    release: Release,
    *,
    cache: Path,
    fetch: Fetch,
    python: str | None = None,
    tasks: Sequence[Task] = (),
) -> Path:
    """Lay ``release`` out as its project under ``root`` and build its environment; the
    project's tree. A tree that came from DevEval's archive is kept as it is. ``tasks``: the
    repository tasks, whose quotes rebuild the files a "release+quoted" route names."""
    if not release.rebuildable:
        raise RebuildError(f"{release.project_path}: {release.obstacle}")
    target = root / SOURCE_DIR / release.project_path
    if target.is_dir() and source_of(target).get("route") == "archive":
        _environment(root, release, python)
        return target
    if not (target.is_dir() and source_of(target).get("sha256") == release.sha256):
        name = release.sdist_url.rsplit("/", 1)[-1]
        archive = fetch(release.sdist_url, cache / name, release.sha256)
        staging = target.with_name(f".{target.name}.unpacking")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        try:
            _unpack(archive, staging)
            top = staging / release.top
            if not top.is_dir():
                raise RebuildError(
                    f"{release.label}: its source distribution has no folder {release.top!r}"
                )
            _lay_quotes(top, release, tasks)
            source = {"route": "pypi", "release": release.label, "sha256": release.sha256}
            _put_in_place(top, target, source)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    _environment(root, release, python)
    return target


def _put_in_place(tree: Path, target: Path, source: dict) -> None:
    """``tree`` becomes the project's copy at ``target``, recording where it came from; a
    copy there before is replaced whole (a rename: never half of each)."""
    (tree / SOURCE_MARKER).write_text(json.dumps(source, indent=1))
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    tree.rename(target)


def _environment(root: Path, release: Release, python: str | None) -> None:
    build_env(
        root,
        release.project_path,
        release.requires,
        python=python,
        install_version=release.install_version,
    )


def _lay_quotes(top: Path, release: Release, tasks: Sequence[Task]) -> None:
    """The files ``release.quoted_files`` names, as the project's tasks quote them."""
    if not release.quoted_files:
        return
    mine = [t for t in tasks if t.site and t.site.project_path == release.project_path]
    quoted = quoted_files(top, mine)
    for path in release.quoted_files:
        if path not in quoted:
            raise RebuildError(
                f"{release.project_path}: no task quotes {path} whole (releases.toml names it)"
            )
        target = (top / path).resolve()
        if not target.is_relative_to(top.resolve()):
            raise RebuildError(f"{release.project_path}: {path} leaves the project")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(quoted[path], encoding="utf-8")


def adopt_tree(root: Path, release: Release, tree: Path, *, python: str | None = None) -> Path:
    """A project laid out from a tree of its own (a checkout of the commit releases.toml
    names, for a project whose release lacks its tests): copied under ``root`` as it is,
    recorded as coming from there, and its environment built. Whether each task's code is
    at its lines is checked as for any copy (core/projects/checkout.py)."""
    if not tree.is_dir():
        raise RebuildError(f"{tree} is not a folder")
    target = root / SOURCE_DIR / release.project_path
    if target.is_dir() and source_of(target).get("route") == "archive":
        raise RebuildError(
            f"{release.project_path} under {root} came from DevEval's archive; it is kept"
        )
    staging = target.with_name(f".{target.name}.copying")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        shutil.copytree(
            tree, staging, symlinks=True, ignore=shutil.ignore_patterns(".git", "__pycache__")
        )
        _put_in_place(staging, target, {"route": "tree", "from": str(tree.resolve())})
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _environment(root, release, python)
    return target
