"""Which CodeIF-Bench data file a run was checked against, and reading it back.

The benchmark's tests have been rewritten since its first release: the authors' published
verdicts were graded on the first version (v0), today's file has other tests and more
instructions. A run records the file it read (path and SHA-256, ``runs.settings_json``) so
that the report rebuilds its rounds against the same tests and says which data it used.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from convtui.core.datasets import DATASETS, locate
from convtui.core.errors import ConvtuiError
from convtui.core.loaders import TaskCatalog, load_codeif

DIGEST_CHARS = 16  # hex digits of the SHA-256 kept in selections and shown in reports


@dataclass(frozen=True)
class CodeifData:
    """A CodeIF-Bench data file, its digest and its tasks."""

    path: Path
    sha256: str  # the first DIGEST_CHARS hex digits
    catalog: TaskCatalog

    def settings(self) -> dict[str, Any]:
        """What a run records about it (runs.settings_json)."""
        return {"data": {"path": str(self.path.resolve()), "sha256": self.sha256}}


def load_codeif_data(data: Path | str | None = None) -> CodeifData:
    """The data file ``--data`` names (a file or a folder), else the default one
    (``$CONVTUI_DATA_DIR``, the cache, a download: core/datasets.py)."""
    return _read(locate(DATASETS["codeif"], data).resolve())


@cache
def _read(path: Path) -> CodeifData:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:DIGEST_CHARS]
    return CodeifData(path, digest, TaskCatalog(load_codeif(path)))


def catalog_for_run(settings: Mapping[str, Any]) -> tuple[TaskCatalog, str]:
    """The tasks a run was checked against, and the file's digest ("" for a run that
    recorded none: it used the default file, which is read)."""
    recorded = settings.get("data")
    if not recorded:
        try:
            default = load_codeif_data()
        except ConvtuiError as exc:
            raise ConvtuiError(f"reading CodeIF-Bench results needs the tasks: {exc}") from exc
        return default.catalog, ""
    path, digest = Path(recorded["path"]), recorded["sha256"]
    if path.is_file():
        found = _read(path)
        if found.sha256 == digest:
            return found.catalog, digest
    try:
        usual: CodeifData | None = load_codeif_data()
    except ConvtuiError:
        usual = None
    if usual is not None and usual.sha256 == digest:
        return usual.catalog, digest
    raise ConvtuiError(
        f"a CodeIF-Bench run was checked against {path} (sha256 {digest}…), which is no longer "
        "there or has changed: put that file back, or set CONVTUI_DATA_DIR to a folder "
        "holding it"
    )
