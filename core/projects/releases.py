"""releases.toml read: per DevEval project, how it is rebuilt from PyPI (the release, its
checksum, the folder that is the project, the requirements its tests need, the files laid
over it from the rows' quotes, the folders its code is imported from), or why it cannot be.
See the file's header for how it was made."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

RELEASES_FILE = Path(__file__).with_name("releases.toml")


@dataclass(frozen=True)
class Release:
    """How one project is rebuilt (one table of releases.toml)."""

    project_path: str
    # "release" (the source distribution is the project, tests included), "release+quoted"
    # (with ``quoted_files`` laid over it, core/projects/quoted.py), "release+github" (the
    # tests are only in ``github``'s history at ``commit``), or "none" with ``why``.
    route: str = "none"
    pypi: str = ""
    version: str = ""
    sdist_url: str = ""
    sha256: str = ""
    top: str = ""  # the folder inside the source distribution that is the project's root
    tests_in_sdist: bool = False
    requires: tuple[str, ...] = field(default=())
    github: str = ""
    commit: str = ""
    quoted_files: tuple[str, ...] = ()
    pythonpath: tuple[str, ...] = ()  # folders (a src layout) its tests import from
    # Installed into its environment as this version (a project that reads its own version
    # from installed metadata); "" for the others.
    install_version: str = ""
    why: str = ""
    checked: str = ""

    @property
    def label(self) -> str:
        return f"{self.pypi}=={self.version}" if self.sdist_url else "no release"

    @property
    def rebuildable(self) -> bool:
        """Whether PyPI alone gives the project: its source distribution, tests included."""
        return self.route in ("release", "release+quoted")

    @property
    def obstacle(self) -> str:
        """Why PyPI alone does not give it ("" when it does)."""
        if self.rebuildable:
            return ""
        if self.route == "release+github":
            return (
                f"its release {self.label} lacks the tests, which are in {self.github}'s history "
                f"(commit {self.commit[:12]}), out of reach here: get DevEval's archive "
                "(`convtui projects fetch`)"
            )
        return f"no release holds its tasks' code at their lines ({self.why or 'none found'})"


@cache
def load_releases(path: Path = RELEASES_FILE) -> dict[str, Release]:
    """Every project's rebuild route, by DevEval project path."""
    with path.open("rb") as fh:
        raw = tomllib.load(fh)
    found: dict[str, Release] = {}
    for project_path, table in raw.items():
        if not isinstance(table, dict):
            continue
        known = {k: v for k, v in table.items() if k in Release.__dataclass_fields__}
        for listed in ("requires", "quoted_files", "pythonpath"):
            known[listed] = tuple(known.get(listed, ()))
        found[project_path] = Release(project_path=project_path, **known)
    return found
