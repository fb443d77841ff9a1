"""Where a candidate runs (``exec_request``: against its task's own tests, or inside its
project), and a project as a repository task's run uses it: where its tree and environment
lie under the projects root, what identifies them in the result cache, whether a task can run
there, and the files a run writes over its copy.

Under the root: ``Source_Code/<Domain>/<Project>`` (DevEval's layout, from its archive or
rebuilt) and ``envs/<Domain>__<Project>`` (a virtual environment with the project's
dependencies and pytest, built once).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from convtui.core.catalog.tasks import ProjectSite, Task, TestSpec
from convtui.core.errors import ConvtuiError
from convtui.core.execution.requests import task_imports, task_modules
from convtui.core.execution.types import ExecRequest, Limits, ProjectRun
from convtui.core.projects.location import projects_root
from convtui.core.projects.releases import load_releases
from convtui.core.projects.splice import SpliceError, insert_tests, module_of, splice

SOURCE_DIR = "Source_Code"
ENVS_DIR = "envs"
# The authors' harness gives a candidate's tests 60 s in all (``func_set_timeout(60)``); a
# run here gets twice that by default, the codeif protocol theirs (core/codeif/programs.py).
PROJECT_LIMITS = Limits(per_test_s=120.0, wall_s=120.0)
FETCH_HINT = "get the projects with `convtui projects fetch` (or `convtui projects rebuild`)"


class ProjectUnavailable(ConvtuiError):
    """A repository task's project is not usable here; the message says why and what to do."""


def project_dir(root: Path, site: ProjectSite) -> Path:
    """The project's tree under the projects root."""
    return root / SOURCE_DIR / site.project_path


def env_dir(root: Path, project_path: str) -> Path:
    """The project's environment under the projects root."""
    return root / ENVS_DIR / project_path.replace("/", "__")


def env_python(root: Path, project_path: str) -> Path:
    """The interpreter of the project's environment."""
    return env_dir(root, project_path) / "bin" / "python"


@cache
def _tree_digest(path: str, python: str) -> str:
    """A digest of every file of the project (name and content) and of its environment's
    interpreter path and installed distributions' names: what a verdict depends on."""
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", ".git", ".pytest_cache"))
        for name in sorted(files):
            if name.endswith(".pyc"):
                continue
            full = os.path.join(folder, name)
            digest.update(os.path.relpath(full, path).encode() + b"\0")
            if not os.path.islink(full):
                with open(full, "rb") as fh:
                    digest.update(hashlib.sha256(fh.read()).digest())
    site = Path(python).parent.parent / "lib"
    for found in sorted(site.glob("python*/site-packages/*.dist-info")):
        digest.update(found.name.encode() + b"\0")
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Checkout:
    """One task's project under one projects root."""

    task: Task
    root: Path

    @property
    def site(self) -> ProjectSite:
        if self.task.site is None:
            raise ValueError(f"{self.task.id} is not a repository task")
        return self.task.site

    @property
    def tree(self) -> Path:
        return project_dir(self.root, self.site)

    @property
    def python(self) -> Path:
        return env_python(self.root, self.site.project_path)

    def problem(self) -> str | None:
        """Why the task cannot run here, in a few words; None when it can."""
        if not self.tree.is_dir():
            return f"no project source ({self.site.project_path} is not under {self.root})"
        target = self.tree / self.site.file_in_project
        if not target.is_file():
            return f"the project has no {self.site.file_in_project}"
        if not self.python.exists():
            failed = self.python.parent.parent.with_name(self.python.parent.parent.name + ".failed")
            if failed.is_file():
                return f"its environment did not build: {failed.read_text().strip()}"
            return f"no environment built for {self.site.project_path}"
        modules = {module_of(name) for name, _ in self.all_tests()}
        missing = sorted(m for m in modules if not (self.tree / m).is_file())
        if missing:
            return f"the project has no {', '.join(missing)}"
        if not self.reference_in_place():
            return (
                f"the reference code is not at lines {self.site.signature_line}-"
                f"{self.site.body_end} of {self.site.file_in_project}: another version"
            )
        return None

    def reference_in_place(self) -> bool:
        """Whether the task's reference code is what the project holds at its lines (by
        content: line endings and trailing blanks aside)."""
        lines = (self.tree / self.site.file_in_project).read_text(errors="replace").splitlines()
        held = lines[self.site.signature_line - 1 : self.site.body_end]
        wanted = self.task.ground_truth.splitlines()
        return [line.rstrip() for line in held] == [line.rstrip() for line in wanted]

    def all_tests(self) -> list[tuple[str, str]]:
        """The task's tests and every instruction's, by pytest id."""
        found = list(self.task.tests.snippets)
        for requirement in self.task.requirements:
            found.extend(requirement.tests.snippets)
        return found

    def run(
        self, code: str, tests: TestSpec, indent: int | None = None, skips_pass: bool = False
    ) -> ProjectRun:
        """What a run of ``code`` against ``tests`` writes over its copy of the project, the
        code indented to ``indent`` (default: where the reference sits)."""
        site = self.site
        original = (self.tree / site.file_in_project).read_text(encoding="utf-8")
        files: dict[str, str] = {site.file_in_project: splice(original, site, code, indent)}
        for module, added in _by_module(tests.snippets).items():
            source = files.get(module)
            if source is None:
                source = (self.tree / module).read_text(encoding="utf-8")
            try:
                files[module] = insert_tests(source, added, module)
            except SyntaxError as exc:
                raise SpliceError(f"{module} of {site.project_path} does not parse: {exc}") from exc
        release = load_releases().get(site.project_path)
        return ProjectRun(
            root=str(self.tree),
            python=str(self.python),
            files=tuple(sorted(files.items())),
            digest=_tree_digest(str(self.tree), str(self.python)),
            pythonpath=release.pythonpath if release else (),
            skips_pass=skips_pass,
        )


def _by_module(tests: Sequence[tuple[str, str]]) -> dict[str, list[tuple[str, str]]]:
    grouped: dict[str, list[tuple[str, str]]] = {}
    for test_id, code in tests:
        if code:  # a test the project holds itself needs nothing written
            grouped.setdefault(module_of(test_id), []).append((test_id, code))
    return grouped


@cache
def _problem(task: Task, root: Path) -> str | None:
    return Checkout(task, root).problem()


def forget_trees() -> None:
    """Forget what was read of every project's tree (whether its tasks can run, its digest):
    once a tree is laid out again, the next look reads it anew, in this process too."""
    _problem.cache_clear()
    _tree_digest.cache_clear()


def task_problem(task: Task, root: Path | None = None) -> str | None:
    """Why a repository task cannot run under the projects root (default: where
    ``projects_root`` finds it); None when it can. Checked once per task and root."""
    return _problem(task, projects_root(root))


def project_request(
    task: Task,
    code: str,
    tests: TestSpec | None = None,
    limits: Limits | None = None,
    root: Path | None = None,
    indent: int | None = None,
    skips_pass: bool = False,
) -> ExecRequest:
    """The execution of ``code`` as ``task``'s function inside its project, against ``tests``
    (default: the task's own), indented to ``indent`` (default: the reference's column);
    ``skips_pass``: a skipped test passes (the authors' harness). Raises
    :class:`ProjectUnavailable` when the project is not usable here."""
    where = projects_root(root)
    problem = _problem(task, where)
    if problem is not None:
        raise ProjectUnavailable(f"{task.id} cannot run here: {problem}; {FETCH_HINT}")
    tests = tests or task.tests
    return ExecRequest(
        code=code,
        tests=tests,
        limits=limits or PROJECT_LIMITS,
        task_id=task.id,
        project=Checkout(task, where).run(code, tests, indent, skips_pass),
    )


def exec_request(task: Task, code: str, limits: Limits | None = None) -> ExecRequest:
    """``code`` against ``task``'s own tests; a repository task's inside its project."""
    if task.site is not None:
        return project_request(task, code, limits=limits)
    return ExecRequest(
        code=code,
        tests=task.tests,
        known_modules=task_modules(task),
        task_imports=task_imports(task),
        limits=limits or Limits(),
        task_id=task.id,
    )
