"""A project's own environment: a virtual environment with its dependencies and the tools
the benchmark's tests import, built once under the projects root and reused by every run.

Built aside (``<env>.building``) and renamed into place when pip succeeded, so a failed or
interrupted build never leaves something that looks ready; a marker records what it holds,
and a build asked for the same requirements again does nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from convtui.core.errors import ConvtuiError
from convtui.core.projects.checkout import SOURCE_DIR, env_dir
from convtui.core.projects.releases import Release

# What every environment gets beside the project's own requirements: pytest runs the tests,
# and CodeIF-Bench's Code Complexity and Code Standard tests import radon, mccabe and
# pycodestyle. pytest is the authors' (environment.txt: pytest 7.4.0) unless the project pins
# its own: from 8.4 on, an async test with no plugin to run it fails where 7.4 skips it (and
# their harness took a skip for a pass), which changes verdicts.
PYTEST = "pytest==7.4.0"
TOOLS: tuple[str, ...] = ("radon", "mccabe", "pycodestyle")


def _tools(requires: Sequence[str]) -> list[str]:
    pinned = any(
        r.replace(" ", "").lower().startswith(("pytest=", "pytest<", "pytest>")) for r in requires
    )
    return [*([] if pinned else [PYTEST]), *TOOLS]


MARKER = ".convtui-env.json"
_PIP_TAIL_LINES = 3


class EnvBuildError(ConvtuiError):
    """A project's environment could not be built (a dependency that will not install)."""


def env_ready(root: Path, project_path: str, requires: Sequence[str] = ()) -> bool:
    """Whether the project's environment is built with exactly ``requires``."""
    marker = env_dir(root, project_path) / MARKER
    try:
        recorded = json.loads(marker.read_text())
    except (OSError, ValueError):
        return False
    return recorded.get("requires") == [*_tools(requires), *requires]


def build_env(
    root: Path,
    project_path: str,
    requires: Sequence[str] = (),
    *,
    python: str | None = None,
    install_version: str = "",
) -> Path:
    """Build (or keep) the project's environment; its folder. ``python`` is the interpreter
    it is made from (default: the one running convtui, so candidates run on the version the
    harness was tested with). ``install_version``: the project's own tree is installed too,
    as that version (its runs still import the code of their copy, first on the path)."""
    target = env_dir(root, project_path)
    if install_version:
        requires = (*requires, f"{root / SOURCE_DIR / project_path}")
    if env_ready(root, project_path, requires):
        return target
    base: str = python or getattr(sys, "_base_executable", None) or sys.executable
    failed = failure_file(root, project_path)
    failed.unlink(missing_ok=True)
    try:
        return _build(target, base, project_path, requires, install_version)
    except EnvBuildError as exc:
        # Kept beside the environment, so doctor can say why a task cannot run here.
        failed.parent.mkdir(parents=True, exist_ok=True)
        failed.write_text(str(exc))
        raise


def failure_file(root: Path, project_path: str) -> Path:
    """Where the last failed build of the project's environment said why."""
    target = env_dir(root, project_path)
    return target.with_name(target.name + ".failed")


def _build(
    target: Path, base: str, project_path: str, requires: Sequence[str], version: str = ""
) -> Path:
    building = target.with_name(target.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    building.parent.mkdir(parents=True, exist_ok=True)
    try:
        _step([base, "-m", "venv", str(building)], f"creating the environment of {project_path}")
        _step(
            [
                str(building / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--no-input",
                "-q",
                *_tools(requires),
                *requires,
            ],
            f"installing {project_path}'s requirements ({', '.join(requires) or 'none'})",
            # setuptools-scm cannot read a version from a tree without its git history.
            {"SETUPTOOLS_SCM_PRETEND_VERSION": version} if version else None,
        )
        marker = {"requires": [*_tools(requires), *requires]}
        (building / MARKER).write_text(json.dumps(marker, indent=1))
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    shutil.rmtree(target, ignore_errors=True)
    building.rename(target)
    return target


def _step(argv: list[str], what: str, env: dict[str, str] | None = None) -> None:
    done = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **env} if env else None,
    )
    if done.returncode != 0:
        tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-_PIP_TAIL_LINES:])
        raise EnvBuildError(f"{what} failed: {tail or f'exit status {done.returncode}'}")


def build_envs(
    root: Path,
    releases: Mapping[str, Release],
    *,
    on_project: Callable[[str, str | None], None] | None = None,
) -> dict[str, str | None]:
    """Build the environment of every project under the root's ``Source_Code`` (``<Domain>/
    <Project>``), with the requirements ``releases`` names for it (none beyond the tools for
    a project it does not name); per project, None when built, else why not. A project that
    fails does not stop the others."""
    found: dict[str, str | None] = {}
    source = root / SOURCE_DIR
    projects = (
        sorted(
            f"{domain.name}/{project.name}"
            for domain in source.iterdir()
            if domain.is_dir() and not domain.name.startswith(".")
            for project in domain.iterdir()
            if project.is_dir() and not project.name.startswith(".")
        )
        if source.is_dir()
        else []
    )
    for project_path in projects:
        try:
            release = releases.get(project_path)
            build_env(
                root,
                project_path,
                release.requires if release else (),
                install_version=release.install_version if release else "",
            )
            found[project_path] = None
        except EnvBuildError as exc:
            found[project_path] = str(exc)
        if on_project is not None:
            on_project(project_path, found[project_path])
    return found
