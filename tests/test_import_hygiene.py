"""The layering of docs/design.md#architecture: core/, the store and the headless front end
never drag in Textual, neither front end nor the store imports the other layers or convtui/,
and `convtui --help` stays light."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from support.data import needs_bigcodebench


def loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def under(loaded: set[str], packages: set[str]) -> set[str]:
    """The modules of ``loaded`` that are one of ``packages`` or inside one."""
    return {name for name in loaded for p in packages if name == p or name.startswith(f"{p}.")}


# convtui/: the typer commands, the bodies of the catalog's and the store's commands, and
# the Ctrl+C report of the bench commands; no front end and not the store imports them.
COMMAND_LINE = {
    "convtui.cli",
    "convtui.options",
    "convtui.option_groups",
    "convtui.play_options",
    "convtui.bench_options",
    "convtui.record_options",
    "convtui.compare_options",
    "convtui.project_options",
    "convtui.study_options",
    "convtui.errors",
    "convtui.commands",
    "convtui.interrupted",
}
COMMAND_BODIES = {
    "convtui.commands",
    "convtui.interrupted",
    "convtui.benchmarks.commands",
    "convtui.benchmarks.runs",
    "convtui.benchmarks.reports",
}


@pytest.mark.parametrize(
    "code",
    [
        "import convtui.core.execution.executor, convtui.core.feedback.render, "
        "convtui.core.catalog.loaders, convtui.core.models.extract",
        "import convtui.sessions",
        "import convtui.benchmarks.runs.doctor, convtui.benchmarks.runs.check, "
        "convtui.benchmarks.views",
    ],
)
def test_library_and_headless_front_end_do_not_import_textual(code):
    assert "textual" not in loaded_after(code)


def test_core_imports_neither_front_end_nor_store():
    loaded = loaded_after(
        "import convtui.core.execution.executor, convtui.core.feedback.render, "
        "convtui.core.catalog.loaders, convtui.core.models.extract, convtui.core.settings.omega"
    )
    assert (
        not {"convtui.tui", "convtui.benchmarks", "convtui.sessions", "sqlite_utils", "typer"}
        & loaded
    )


def test_help_does_not_load_heavy_modules():
    loaded = loaded_after(
        "import sys\nsys.argv = ['convtui', '--help']\n"
        "from convtui.cli import app\ntry:\n    app()\nexcept SystemExit:\n"
        "    pass"
    )
    # Nor the network (a download or a model call) and asyncio (the model backends): typer
    # builds every command for --help, so what their options' choices import counts.
    heavy = {
        "textual",
        "openai",
        "sqlite_utils",
        "convtui.core.execution.executor",
        "asyncio",
        "ray",
    }
    assert not (heavy | {"http.client", "ssl", "convtui.core.models.base"}) & loaded
    # The command bodies load when their command runs, never for --help.
    assert not under(loaded, COMMAND_BODIES)


@needs_bigcodebench
def test_a_run_on_the_local_executor_never_imports_ray(tmp_path):
    """--executor ray's Ray is loaded by that executor alone: a check on this machine's
    cores (the default) runs without it, however Ray is installed."""
    truth = tmp_path / "truth.py"
    truth.write_text("import random\n\ndef task_func(*a, **k):\n    return None\n")
    loaded = loaded_after(
        "import sys\nsys.argv = ['convtui', 'check', '--task', 'BigCodeBench/1', '--code', "
        f"{str(truth)!r}, '--executor', 'local']\n"
        "from convtui.cli import app\ntry:\n    app()\nexcept SystemExit:\n    pass"
    )
    assert "convtui.core.execution.executor" in loaded  # it did run the candidate
    assert not under(loaded, {"ray", "convtui.core.execution.cluster"})


def test_importing_the_tui_package_leaves_textual_unloaded_until_the_app_runs():
    assert "textual" not in loaded_after("import convtui.tui")


def test_front_ends_do_not_import_each_other_nor_the_command_line():
    tui = loaded_after("import convtui.tui.app, convtui.tui.launch, convtui.tui.study")
    headless = loaded_after(
        "import convtui.benchmarks.commands.live, convtui.benchmarks.commands.static, "
        "convtui.benchmarks.commands.codeif, convtui.benchmarks.commands.report, "
        "convtui.benchmarks.commands.check, convtui.benchmarks.commands.doctor, "
        "convtui.benchmarks.commands.compare"
    )
    assert not under(tui, {"convtui.benchmarks", *COMMAND_LINE})
    assert not under(headless, {"convtui.tui", "textual", *COMMAND_LINE})


def test_the_tasks_sessions_and_study_commands_do_not_load_the_tui():
    loaded = loaded_after(
        "import convtui.commands.tasks, convtui.commands.sessions, convtui.commands.imports, "
        "convtui.commands.study, convtui.commands.study_export"
    )
    assert not under(loaded, {"convtui.tui", "textual"})


def test_the_store_imports_no_front_end_and_prints_nothing():
    """Every module of sessions/, the ConvCodeWorld import that bench static shares with
    sessions import included: no front end, no command line, no rich."""
    loaded = loaded_after(
        "import importlib, pkgutil\nimport convtui.sessions as store\n"
        "for found in pkgutil.iter_modules(store.__path__):\n"
        "    importlib.import_module(f'convtui.sessions.{found.name}')"
    )
    assert "convtui.sessions.ccw_import" in loaded
    assert not under(loaded, {"convtui.tui", "convtui.benchmarks", "textual", "rich", "typer"})
    assert not under(loaded, COMMAND_LINE)


CORE = Path(__file__).parents[1] / "core"


def core_package_imports() -> dict[str, set[str]]:
    """Which of core/'s subpackages each one imports (at run time: imports under
    ``if TYPE_CHECKING`` do not count, imports inside functions do)."""
    imports: dict[str, set[str]] = defaultdict(set)
    for path in CORE.rglob("*.py"):
        parts = path.relative_to(CORE).parts
        if len(parts) < 2:
            continue
        tree = ast.parse(path.read_text())
        typing_only = {
            id(node)
            for branch in ast.walk(tree)
            if isinstance(branch, ast.If) and "TYPE_CHECKING" in ast.unparse(branch.test)
            for node in ast.walk(branch)
        }
        for node in ast.walk(tree):
            if id(node) in typing_only or not isinstance(node, ast.ImportFrom):
                continue
            name = (node.module or "").split(".")
            inside = name[:2] == ["convtui", "core"] and len(name) > 2
            if inside and (CORE / name[2]).is_dir() and name[2] != parts[0]:
                imports[parts[0]].add(name[2])
    return imports


def test_core_subpackages_form_layers_without_a_cycle():
    """A subpackage that imports another is above it: no two import each other, directly or
    round a longer loop (a reader can take core/ from the bottom up)."""
    imports = core_package_imports()
    assert "settings" in imports and "execution" in imports["settings"]  # the walk sees imports

    def loop_from(start: str) -> list[str] | None:
        path, seen = [start], set()
        while path:
            last = path[-1]
            nxt = next((n for n in sorted(imports[last]) if (last, n) not in seen), None)
            if nxt is None:
                path.pop()
                continue
            seen.add((last, nxt))
            if nxt == start:
                return [*path, nxt]
            if nxt not in path:
                path.append(nxt)
        return None

    loops = [found for start in sorted(imports) if (found := loop_from(start))]
    assert not loops, " ; ".join(" -> ".join(loop) for loop in loops)
