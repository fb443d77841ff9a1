"""How the executor starts its sandboxes: side by side, only the kinds a run needs, heavy
libraries imported once per zygote, and matplotlib's font list built once per machine.

Real zygotes and child processes; each test builds its own executor so the state it checks
(which zygotes run, what they imported) starts empty."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from convtui.core.catalog.loaders import TaskCatalog, load_catalog
from convtui.core.catalog.tasks import TestSpec as Spec
from convtui.core.execution import fontcache
from convtui.core.execution.executor import Executor, _on_demand
from convtui.core.execution.requests import task_imports
from convtui.core.execution.types import ExecRequest, Limits
from convtui.core.projects.checkout import exec_request

LIMITS = Limits(per_test_s=20, wall_s=60)


@pytest.fixture(scope="module")
def catalog() -> TaskCatalog:
    return load_catalog("bigcodebench")


def _zygote_pids() -> set[int]:
    """This process's zygotes: interpreters running sandbox/zygote.py (not the bwrap
    processes around them, whose command lines name it too)."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        argv = cmdline.split(b"\0")
        if (
            b"zygote.py" in cmdline
            and not argv[0].endswith(b"bwrap")
            and str(os.getpid()).encode() in _ancestry(int(entry)).split()
        ):
            found.add(int(entry))
    return found


def _ancestry(pid: int) -> bytes:
    """The parent pids of ``pid`` up to init, as one byte string to search."""
    chain = []
    while pid > 1:
        try:
            stat = Path(f"/proc/{pid}/stat").read_bytes()
        except OSError:
            break
        pid = int(stat[stat.rfind(b")") + 2 :].split()[1])
        chain.append(str(pid).encode())
    return b" ".join(chain)


def _probe(module: str, task_imports: frozenset[str], known: frozenset[str]) -> ExecRequest:
    """A run whose one test passes only if ``module`` was imported before the run began."""
    source = (
        "import sys\nimport unittest\n\n"
        "class TestCases(unittest.TestCase):\n"
        "    def test_preloaded(self):\n"
        f"        self.assertIn({module!r}, PRELOADED)\n\n"
        "PRELOADED = set(sys.modules)\n"
    )
    return ExecRequest(
        code="x = 1\n",
        tests=Spec("unittest", source=source),
        known_modules=known,
        task_imports=task_imports,
        limits=LIMITS,
        task_id="probe",
    )


def test_warm_up_starts_only_the_kinds_asked_for():
    before = _zygote_pids()
    with Executor(jobs=2) as executor:
        executor.warm_up(("light",))
        light = _zygote_pids() - before
        assert len(light) == 2
        executor.warm_up(("light", "full"))
        assert len(_zygote_pids() - before) == 4
    assert _zygote_pids() - before == set()


def test_a_stdlib_task_never_starts_the_full_zygote():
    before = _zygote_pids()
    with Executor(jobs=1) as executor:
        result = executor.run(_probe("json", frozenset(), frozenset({"json", "unittest"})))
        assert result.status == "pass"  # the light zygote preloads json
        assert len(_zygote_pids() - before) == 1


def test_a_task_library_is_imported_in_the_zygote_before_its_run():
    pytest.importorskip("sklearn")
    with Executor(jobs=1) as executor:
        known = frozenset({"sklearn", "unittest"})
        wanted = frozenset({"sklearn.preprocessing"})
        # Without the task naming it, nothing loads sklearn.preprocessing before the run ...
        assert executor.run(_probe("sklearn.preprocessing", frozenset(), known)).status == "fail"
        # ... with it, the zygote imported it before forking, and keeps it for later runs.
        assert executor.run(_probe("sklearn.preprocessing", wanted, known)).status == "pass"
        assert executor.run(_probe("sklearn.preprocessing", wanted, known)).status == "pass"


def test_tasks_without_heavy_libraries_fork_from_a_zygote_without_them():
    """The annex (sandbox/zygote.py) holds what some tasks name; the others keep forking
    from the small zygote, which never imported it."""
    pytest.importorskip("sklearn")
    with Executor(jobs=1) as executor:
        known = frozenset({"sklearn", "unittest"})
        wanted = frozenset({"sklearn.preprocessing"})
        assert executor.run(_probe("sklearn.preprocessing", wanted, known)).status == "pass"
        assert executor.run(_probe("sklearn", frozenset(), known)).status == "fail"
        assert executor.run(_probe("sklearn", wanted, known)).status == "pass"


def test_a_run_that_kills_the_annex_is_a_crash_and_the_next_run_works():
    """At level none, where Landlock's signal scope does not stop it, a run can kill the
    process that forked it; the harness must see a crash, not hang, and start afresh."""
    pytest.importorskip("sklearn")
    killer = (
        "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nimport time\ntime.sleep(5)\n"
    )
    known = frozenset({"sklearn", "unittest"})
    wanted = frozenset({"sklearn.preprocessing"})
    probe = _probe("sklearn.preprocessing", wanted, known)
    with Executor(jobs=1, isolation="none") as executor:
        assert executor.run(probe).status == "pass"
        hostile = ExecRequest(
            code=killer,
            tests=probe.tests,
            known_modules=known,
            task_imports=wanted,
            limits=LIMITS,
            task_id="killer",
        )
        assert executor.run(hostile).status == "crash"
        assert executor.run(probe).status == "pass"


def test_only_libraries_from_the_allow_list_are_imported_ahead():
    with Executor(jobs=1) as executor:
        known = frozenset({"unittest", "numpy"})  # a full-zygote task
        asked = frozenset({"wave"})  # a real module, but not one of ON_DEMAND_ROOTS
        assert executor.run(_probe("wave", asked, known)).status == "fail"


def test_the_font_list_is_built_once_and_then_seeded(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with Executor(jobs=1) as executor:
        executor.warm_up(("full",))
        assert executor.environment_info()["fontcache"] == "miss"
        python = executor.python
    # The miss started a rebuild outside the sandbox; wait for it as a later start would not.
    fontcache.rebuild_in_background(python).join(timeout=120)
    built = list(fontcache.font_cache_dir(python).glob("fontlist-*.json"))
    assert built, "no font list was written to the cache"
    with Executor(jobs=1) as executor:
        executor.warm_up(("full",))
        assert executor.environment_info()["fontcache"] == "hit"


def test_task_imports_come_from_the_header_and_the_tests(catalog):
    task = catalog.get("BigCodeBench/51")  # header: from sklearn.cluster import KMeans
    names = task_imports(task)
    # The header has a def with no body, so it does not parse whole: its lines still count.
    assert {"sklearn.cluster", "sklearn.cluster.KMeans", "matplotlib.pyplot"} <= names
    assert "unittest" in names  # from the tests


def test_heavy_imports_are_what_a_full_zygote_is_asked_for(catalog):
    task = catalog.get("BigCodeBench/51")
    request = exec_request(task, task.ground_truth)
    asked = _on_demand(request)
    assert "sklearn.cluster" in asked
    assert "unittest" not in asked  # standard library: not worth a zygote-wide import
    assert asked == sorted(asked)  # parents before their submodules


def test_a_batch_starts_the_run_that_starts_a_zygote_or_an_import_early():
    # Ordering only (nothing starts here): the first run of each kind of zygote no slot has
    # started, and the first that names a heavy library no slot holds, count their start-up
    # in, so that run_many's longest-first order starts them beside the others, not last.
    light = ExecRequest("def f(): pass\n", Spec(kind="snippets"), known_modules=frozenset({"re"}))
    full = ExecRequest("def f(): pass\n", Spec(kind="snippets"), known_modules=frozenset({"numpy"}))
    heavy = ExecRequest(
        "def f(): pass\n",
        Spec(kind="snippets"),
        known_modules=frozenset({"numpy", "scipy"}),
        task_imports=frozenset({"scipy", "scipy.stats"}),
    )
    with Executor(jobs=2) as ex:
        expected = ex._expected_s(
            [light, light, full, full, heavy, heavy], {i: 0.1 for i in range(5)}
        )
    assert expected[1] == expected[3] == 0.1  # the second of a kind pays nothing more
    assert expected[0] > 0.1
    assert expected[2] > expected[0]  # a full zygote takes longer to start than a light one
    assert expected[4] > 1.0  # SciPy's import, once
    assert 5 not in expected  # an unknown run stays unknown: it goes first anyway
