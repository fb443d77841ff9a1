"""The layering of docs/design.md#architecture: core/, the store and the headless front end
never drag in Textual, neither front end nor the store imports the other layers or convtui/,
and `convtui --help` stays light."""

from __future__ import annotations

import subprocess
import sys

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
        "convtui.core.catalog.loaders, convtui.core.turns.extract",
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
        "convtui.core.catalog.loaders, convtui.core.turns.extract, convtui.core.settings.omega"
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
        "convtui.benchmarks.commands.check, convtui.benchmarks.commands.doctor"
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
