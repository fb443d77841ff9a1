"""Runs inside a project (CodeIF-Bench's repository tasks): the candidate written over its
function's lines in a copy, the benchmark's tests put into their class, pytest run on the
expected ids in the sandbox, and the project itself never touched.

The project is a small one the test makes (tests/support/projects.py), its environment this
interpreter; the real projects' runs are in tests/projects/."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from support.projects import MODULE, TASK, make_project, with_tests

from convtui.core.catalog.tasks import TestSpec
from convtui.core.execution.executor import Executor
from convtui.core.execution.types import ExecRequest, ExecResult, Limits
from convtui.core.projects.checkout import Checkout, env_python, project_dir
from convtui.core.projects.envs import EnvBuildError, build_env
from convtui.core.projects.splice import SpliceError, insert_tests, splice

BASE_TEST = "tests/test_core.py::CounterTest::test_add"
OWN_TEST = "tests/test_core.py::CounterTest::test_add_negative"
REFUSES_NEGATIVE = (
    "def add(self, amount):\n"
    "    if amount < 0:\n"
    "        raise ValueError('negative')\n"
    "    self.value += amount\n"
    "    return self.value\n"
)
BROKEN = "def add(self, amount):\n    return None\n"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    found = tmp_path_factory.mktemp("projects")
    make_project(found)
    return found


@pytest.fixture(scope="module")
def executor() -> Executor:
    with Executor(jobs=1) as running:
        yield running


def _run(executor: Executor, root: Path, code: str, tests: TestSpec | None = None) -> ExecResult:
    checkout = Checkout(TASK, root)
    tests = tests or TestSpec("pytest", snippets=tuple(checkout.all_tests()))
    request = ExecRequest(
        code=code,
        tests=tests,
        project=checkout.run(code, tests),
        limits=Limits(wall_s=60),
        task_id=TASK.id,
    )
    return executor.run(request)


def _under_each_reading(executor: Executor, root: Path, tests: TestSpec) -> dict[bool, ExecResult]:
    """The reference against ``tests``, a skip not passing (convtui) and passing (the
    authors' reading), keyed by ``skips_pass``."""
    checkout = Checkout(TASK, root)
    found = {}
    for skips_pass in (False, True):
        request = ExecRequest(
            code=TASK.ground_truth,
            tests=tests,
            project=checkout.run(TASK.ground_truth, tests, skips_pass=skips_pass),
            limits=Limits(wall_s=60),
            task_id=TASK.id,
        )
        found[skips_pass] = executor.run(request)
    return found


def _statuses(result: ExecResult) -> dict[str, str]:
    return {t.name: t.status for t in result.tests}


def test_the_candidate_replaces_its_lines_indented_to_the_task() -> None:
    spliced = splice(MODULE, TASK.site, REFUSES_NEGATIVE)  # type: ignore[arg-type]
    lines = spliced.splitlines()
    start = lines.index("    def add(self, amount):")
    assert lines[start - 1] == "" and lines[start + 1] == "        if amount < 0:"
    assert "self.value += amount" in spliced and spliced.count("def add") == 1
    # What came after the function is still there, after the blank line the harness adds.
    assert spliced.endswith("return self.value\n\n\n\ndef double(x):\n    return x * 2\n")


def test_a_test_goes_into_the_class_its_id_names() -> None:
    source = "class A:\n    def test_a(self):\n        pass\n\n\ndef helper():\n    return 1\n"
    added = insert_tests(
        source,
        [
            ("t.py::A::test_b", "def test_b():\n    assert self\n"),
            ("t.py::test_c", "def test_c():\n    assert helper()\n"),
        ],
    )
    namespace: dict = {}
    exec(compile(added, "t.py", "exec"), namespace)
    assert namespace["A"].test_b.__code__.co_varnames[:1] == ("self",)
    namespace["test_c"]()
    with pytest.raises(SpliceError, match="no class Missing"):
        insert_tests(source, [("t.py::Missing::test_x", "def test_x(self):\n    pass\n")])


def test_a_module_level_test_written_with_self_loses_it() -> None:
    """CodeIF/1005's Code Complexity test takes ``self`` under a module-level id: pytest would
    look for a fixture named ``self``; the authors' copies ran it as a plain function."""
    source = "def helper():\n    return 1\n"
    added = insert_tests(
        source,
        [
            ("t.py::test_a", "def test_a(self):\n    assert helper() == 1\n"),
            ("t.py::test_b", "def test_b(self, tmp_path):\n    assert tmp_path\n"),
        ],
    )
    assert "def test_a():" in added and "def test_b(tmp_path):" in added
    namespace: dict = {}
    exec(compile(added, "t.py", "exec"), namespace)
    namespace["test_a"]()


def test_a_project_says_why_a_task_cannot_run_here(tmp_path: Path, root: Path) -> None:
    assert Checkout(TASK, root).problem() is None
    assert "no project source" in (Checkout(TASK, tmp_path).problem() or "")
    moved = tmp_path / "moved"
    make_project(moved)
    core = project_dir(moved, TASK.site) / "tiny" / "core.py"  # type: ignore[arg-type]
    core.write_text("# a line more\n" + core.read_text())
    assert "not at lines 8-10" in (Checkout(TASK, moved).problem() or "")


def test_the_reference_passes_its_tests_and_a_broken_body_fails(
    executor: Executor, root: Path
) -> None:
    truth = _run(executor, root, TASK.ground_truth)
    # The reference passes the project's test, not the instruction it was not written for.
    assert _statuses(truth) == {BASE_TEST: "pass", OWN_TEST: "fail"}
    assert truth.isolation.startswith(executor.isolation.label.split("+")[0])
    both = _run(executor, root, REFUSES_NEGATIVE)
    assert both.status == "pass" and _statuses(both) == {BASE_TEST: "pass", OWN_TEST: "pass"}
    broken = _run(executor, root, BROKEN)
    assert broken.status == "fail" and _statuses(broken)[BASE_TEST] == "fail"
    assert "tests/test_core.py:9: AssertionError" in next(
        t.traceback for t in broken.tests if t.name == BASE_TEST
    )


def test_code_that_does_not_load_fails_every_test_without_running_them(
    executor: Executor, root: Path
) -> None:
    result = _run(executor, root, "def add(self, amount)\n    return 1\n")
    assert result.status == "error"
    assert set(_statuses(result).values()) == {"not_run"}
    assert "SyntaxError" in result.error_traceback or "SyntaxError" in result.detail


def test_an_id_no_module_defines_errs_alone_and_the_other_tests_still_run(
    executor: Executor, root: Path
) -> None:
    """pytest, given such an id, stops before running any test; the authors' harness ran
    each id apart, so only that one errs there."""
    missing = "tests/test_core.py::CounterTest::test_not_there"
    result = _run(executor, root, TASK.ground_truth, with_tests(TASK, BASE_TEST, missing).tests)
    assert result.status != "pass"
    assert _statuses(result) == {BASE_TEST: "pass", missing: "error"}
    assert "not found" in next(t.traceback for t in result.tests if t.name == missing)


def test_a_coroutine_test_no_plugin_runs_is_a_skip_even_where_warnings_are_errors(
    executor: Executor, root: Path, tmp_path: Path
) -> None:
    """Jinja2 makes every warning an error, so pytest's "async def functions are not
    natively supported" failed its async tests. The authors' published verdicts pass them
    (268 of 272 rows of CodeIF/1004 agree so): their pytest skipped them, and a skip passes
    under their reading."""
    strict = tmp_path / "strict"
    make_project(strict)
    (project_dir(strict, TASK.site) / "setup.cfg").write_text(  # type: ignore[arg-type]
        "[tool:pytest]\nfilterwarnings =\n    error\n"
    )
    coroutine = "tests/test_core.py::test_later"
    tests = TestSpec(
        "pytest", snippets=((BASE_TEST, ""), (coroutine, "async def test_later():\n    pass\n"))
    )
    found = {k: _statuses(v) for k, v in _under_each_reading(executor, strict, tests).items()}
    assert found[True] == {BASE_TEST: "pass", coroutine: "pass"}
    assert found[False][BASE_TEST] == "pass" and found[False][coroutine] != "pass"


def test_a_hostile_candidate_is_contained(executor: Executor, root: Path, tmp_path: Path) -> None:
    """The candidate tries to write into the project's own tree, into a folder of the host and
    to reach a server on the host's loopback; its copy is the one place it may write."""
    outside = tmp_path / "outside"
    outside.mkdir()
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    accepted: list[object] = []

    def serve() -> None:
        listener.settimeout(15)
        with contextlib.suppress(OSError):
            accepted.append(listener.accept())

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    tree = project_dir(root, TASK.site)  # type: ignore[arg-type]
    original = (tree / "tiny" / "core.py").read_text()
    hostile = (
        "def add(self, amount):\n"
        "    import os, socket\n"
        f"    for target in ({str(tree / 'tiny' / 'core.py')!r}, {str(outside / 'x')!r},\n"
        f"                   {str(tree / 'planted.py')!r}):\n"
        "        try:\n"
        "            with open(target, 'a') as fh:\n"
        "                fh.write('pwned')\n"
        "        except OSError:\n"
        "            pass\n"
        "    try:\n"
        f"        socket.create_connection(('127.0.0.1', {port}), timeout=1).close()\n"
        "    except OSError:\n"
        "        pass\n"
        "    with open('written_in_the_copy.txt', 'w') as fh:\n"
        "        fh.write('fine')\n"
        "    self.value += amount\n"
        "    return self.value\n"
    )
    try:
        result = _run(executor, root, hostile, with_tests(TASK, BASE_TEST).tests)
    finally:
        listener.close()
        server.join(timeout=20)
    assert result.status == "pass"  # what it does is contained, not what it computes
    assert (tree / "tiny" / "core.py").read_text() == original
    assert not (tree / "planted.py").exists() and not (outside / "x").exists()
    assert not list(tree.rglob("written_in_the_copy.txt"))
    if executor.isolation.level in ("bwrap", "namespaces"):
        assert accepted == []


def test_a_module_the_added_tests_use_without_importing_is_imported_for_them() -> None:
    source = "import os\n\n\nclass A:\n    x = 1\n"
    added = insert_tests(
        source,
        [("t.py::A::test_c", "def test_c(self):\n    assert inspect.isclass(A) and os.sep\n")],
    )
    assert added.rstrip().endswith("import inspect")
    assert "import os\n" not in added[len(source) :]  # the module has it already
    namespace: dict = {}
    exec(compile(added, "t.py", "exec"), namespace)
    namespace["A"]().test_c()


def test_the_codeif_protocol_indents_as_the_row_says_and_convtui_as_the_reference_sits() -> None:
    site = replace(TASK.site, indent=8)  # type: ignore[type-var]
    as_recorded = splice(MODULE, site, REFUSES_NEGATIVE, site.indent).splitlines()
    assert "        def add(self, amount):" in as_recorded  # column 8: does not compile
    where_it_was = splice(MODULE, site, REFUSES_NEGATIVE).splitlines()
    assert "    def add(self, amount):" in where_it_was
    compile("\n".join(where_it_was), "core.py", "exec")


def test_an_environment_that_does_not_build_is_the_reason_a_task_cannot_run(
    tmp_path: Path,
) -> None:
    """A requirement pip cannot install (a name no index has): the build fails in one line,
    leaves nothing that looks ready, and the task's problem says why."""
    make_project(tmp_path)
    python = env_python(tmp_path, TASK.site.project_path)  # type: ignore[union-attr]
    python.unlink()
    with pytest.raises(EnvBuildError, match="installing Demo/tiny's requirements") as failed:
        build_env(tmp_path, "Demo/tiny", ["convtui-no-such-distribution-anywhere==0.0.1"])
    assert "\n" not in str(failed.value)
    assert not python.exists()
    assert not list((tmp_path / "envs").glob("*.building"))
    problem = Checkout(TASK, tmp_path).problem() or ""
    assert problem.startswith("its environment did not build: installing Demo/tiny")


def test_a_project_that_reads_its_own_version_is_installed_into_its_environment(
    tmp_path: Path,
) -> None:
    """install_version (bentoml's case): the project's tree is installed as that version,
    which setuptools-scm cannot read from a tree without its history."""
    make_project(tmp_path)
    tree = project_dir(tmp_path, TASK.site)  # type: ignore[arg-type]
    (tree / "pyproject.toml").write_text(
        "[build-system]\n"
        'requires = ["setuptools>=64", "setuptools-scm>=8"]\n'
        'build-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "tiny"\ndynamic = ["version"]\n\n'
        '[tool.setuptools]\npackages = ["tiny"]\n\n[tool.setuptools_scm]\n'
    )
    env_python(tmp_path, "Demo/tiny").unlink()
    build_env(tmp_path, "Demo/tiny", install_version="9.8.7")
    shown = subprocess.run(
        [
            env_python(tmp_path, "Demo/tiny"),
            "-c",
            "import importlib.metadata as m; print(m.version('tiny'))",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert shown.stdout.strip() == "9.8.7", shown.stderr


def test_a_skipped_test_passes_only_under_the_authors_reading(
    executor: Executor, root: Path
) -> None:
    """Their harness reads pytest's exit status, 0 when nothing failed: a skipped test passes
    there; convtui's rule is that it did not."""
    skipped = "tests/test_core.py::CounterTest::test_skipped"
    tests = TestSpec(
        "pytest",
        snippets=(
            (BASE_TEST, ""),
            (skipped, "def test_skipped(self):\n    import pytest\n    pytest.skip('no')\n"),
        ),
    )
    found = _under_each_reading(executor, root, tests)
    assert _statuses(found[False])[skipped] == "skipped" and not found[False].passed
    assert _statuses(found[True])[skipped] == "pass" and found[True].passed


def test_each_test_records_the_time_it_ran_not_its_setups(executor: Executor, root: Path) -> None:
    """pytest reports a test's setup, call and teardown apart; the setup's report comes first
    and, passing as the call passes, was the one kept: every test read 0.000 s in `check`."""
    slow = "tests/test_core.py::CounterTest::test_slow"
    tests = TestSpec(
        "pytest",
        snippets=(
            (BASE_TEST, ""),
            (slow, "def test_slow(self):\n    import time\n    time.sleep(0.3)\n"),
        ),
    )
    result = _run(executor, root, TASK.ground_truth, tests)
    seconds = {t.name: t.duration_s for t in result.tests}
    assert _statuses(result) == {BASE_TEST: "pass", slow: "pass"}
    assert 0.3 <= seconds[slow] < result.duration_s, seconds
    assert seconds[BASE_TEST] < 0.3, seconds
