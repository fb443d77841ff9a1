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
import tomllib
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from convtui.core.datasets import DatasetSource, DownloadError, download
from convtui.core.errors import ConvtuiError
from convtui.core.projects.checkout import SOURCE_DIR
from convtui.core.projects.envs import build_env

RELEASES_FILE = Path(__file__).with_name("releases.toml")
SOURCE_MARKER = ".convtui-source.json"  # in a project's tree: where the tree came from
_FETCH_TIMEOUT_S = 60.0  # per socket operation; a source distribution is a few megabytes

# fetch(url, destination, sha256) -> the file, checksum checked.
Fetch = Callable[[str, Path, str], Path]


class RebuildError(ConvtuiError):
    """A project could not be rebuilt; the message says which and why."""


@dataclass(frozen=True)
class Release:
    """How one project is rebuilt (one table of releases.toml)."""

    project_path: str
    route: str = "pypi"  # "pypi", or "none" with ``why``
    pypi: str = ""
    version: str = ""
    sdist_url: str = ""
    sha256: str = ""
    top: str = ""  # the folder inside the source distribution that is the project's root
    tests_in_sdist: bool = False
    requires: tuple[str, ...] = field(default=())
    github: str = ""
    commit: str = ""
    why: str = ""
    checked: str = ""

    @property
    def label(self) -> str:
        return f"{self.pypi}=={self.version}" if self.route == "pypi" else "no release"


def load_releases(path: Path = RELEASES_FILE) -> dict[str, Release]:
    """Every project's rebuild route, by DevEval project path."""
    with path.open("rb") as fh:
        raw = tomllib.load(fh)
    found: dict[str, Release] = {}
    for project_path, table in raw.items():
        if not isinstance(table, dict):
            continue
        known = {k: v for k, v in table.items() if k in Release.__dataclass_fields__}
        known["requires"] = tuple(known.get("requires", ()))
        known.setdefault("route", "pypi" if known.get("sdist_url") else "none")
        found[project_path] = Release(project_path=project_path, **known)
    return found


def fetch_file(url: str, dest: Path, sha256: str) -> Path:
    """``url`` saved as ``dest``, its SHA-256 checked (a copy already there and intact is
    kept): the datasets' download (core/datasets.py), which never leaves a partial file."""
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
) -> Path:
    """Lay ``release`` out as its project under ``root`` and build its environment; the
    project's tree. A tree that came from DevEval's archive is kept as it is."""
    if release.route != "pypi":
        raise RebuildError(f"{release.project_path}: no release to rebuild it from ({release.why})")
    target = root / SOURCE_DIR / release.project_path
    if target.is_dir() and source_of(target).get("route") == "archive":
        build_env(root, release.project_path, release.requires, python=python)
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
            (top / SOURCE_MARKER).write_text(
                json.dumps(
                    {"route": "pypi", "release": release.label, "sha256": release.sha256},
                    indent=1,
                )
            )
            shutil.rmtree(target, ignore_errors=True)
            top.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    build_env(root, release.project_path, release.requires, python=python)
    return target
