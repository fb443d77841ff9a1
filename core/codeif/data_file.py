"""Which CodeIF-Bench data files a run was checked against, and reading them back.

The benchmark's tests have been rewritten since its first release: the authors' published
verdicts were graded on the first version (v0), today's files have other tests and more
instructions. A run records the files it read (paths and SHA-256, ``runs.settings_json``) so
that the report rebuilds its rounds against the same tests and says which data it used. By
default the suite is four files: the 50 function tasks and the three repository levels;
``--data FILE`` reads one of them (a ``-v0`` file, say) alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from convtui.core.catalog.loaders import TaskCatalog, codeif_files, load_codeif
from convtui.core.errors import ConvtuiError

DIGEST_CHARS = 16  # hex digits of the SHA-256 kept in selections and shown in reports


class DataFile(NamedTuple):
    """One file read, and the first DIGEST_CHARS hex digits of its SHA-256."""

    path: Path
    sha256: str


@dataclass(frozen=True)
class CodeifData:
    """The CodeIF-Bench data files read, their digest and their tasks. ``sha256`` is the one
    file's digest when one was read (so runs recorded before the repository levels keep
    theirs), else a digest of the files' digests in order."""

    files: tuple[DataFile, ...]
    sha256: str
    catalog: TaskCatalog

    @property
    def path(self) -> Path:
        """The first file read (the function tasks, unless ``--data`` named another)."""
        return self.files[0].path

    def settings(self) -> dict[str, Any]:
        """What a run records about them (runs.settings_json)."""
        first = self.files[0]
        recorded: dict[str, Any] = {"path": str(first.path.resolve()), "sha256": self.sha256}
        if len(self.files) > 1:
            recorded["files"] = [
                {"path": str(f.path.resolve()), "sha256": f.sha256} for f in self.files
            ]
        return {"data": recorded}


def load_codeif_data(data: Path | str | None = None) -> CodeifData:
    """The data file ``--data`` names, or the files in the folder it names, else the default
    ones (``$CONVTUI_DATA_DIR``, the cache, a download: core/catalog/datasets.py)."""
    return _read(tuple(path.resolve() for path in codeif_files(data)))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:DIGEST_CHARS]


def _combined(digests: Sequence[str]) -> str:
    if len(digests) == 1:
        return digests[0]
    return hashlib.sha256(",".join(digests).encode()).hexdigest()[:DIGEST_CHARS]


@cache
def _read(paths: tuple[Path, ...]) -> CodeifData:
    files = tuple(DataFile(path, _digest(path)) for path in paths)
    tasks = [task for path in paths for task in load_codeif(path)]
    return CodeifData(files, _combined([f.sha256 for f in files]), TaskCatalog(tasks))


def catalog_for_run(settings: Mapping[str, Any]) -> tuple[TaskCatalog, str]:
    """The tasks a run was checked against, and the files' digest ("" for a run that
    recorded none: it used the default files, which are read)."""
    recorded = settings.get("data")
    if not recorded:
        try:
            default = load_codeif_data()
        except ConvtuiError as exc:
            raise ConvtuiError(f"reading CodeIF-Bench results needs the tasks: {exc}") from exc
        return default.catalog, ""
    digest = recorded["sha256"]
    listed = recorded.get("files") or [{"path": recorded["path"], "sha256": digest}]
    paths = tuple(Path(f["path"]) for f in listed)
    if all(p.is_file() for p in paths):
        found = _read(paths)
        if found.sha256 == digest:
            return found.catalog, digest
    try:
        usual: CodeifData | None = load_codeif_data()
    except ConvtuiError:
        usual = None
    if usual is not None and usual.sha256 == digest:
        return usual.catalog, digest
    if usual is not None and len(listed) == 1 and usual.files[0].sha256 == digest:
        # A run from before the repository levels: the function file alone.
        return _read((usual.files[0].path,)).catalog, digest
    where = ", ".join(str(p) for p in paths)
    raise ConvtuiError(
        f"a CodeIF-Bench run was checked against {where} (sha256 {digest}…), which is no "
        "longer there or has changed: put those files back, or set CONVTUI_DATA_DIR to a "
        "folder holding them"
    )
