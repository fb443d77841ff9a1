"""core/ and the headless front end must not drag in Textual; `convtui --help` stays light."""

from __future__ import annotations

import subprocess
import sys

import pytest


def loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


@pytest.mark.parametrize(
    "code",
    [
        "import convtui.core.executor, convtui.core.feedback, convtui.core.loaders, "
        "convtui.core.extract",
        "import convtui.sessions",
        "import convtui.benchmarks.doctor, convtui.benchmarks.views, convtui.benchmarks.check",
    ],
)
def test_library_and_headless_front_end_do_not_import_textual(code):
    assert "textual" not in loaded_after(code)


def test_core_imports_neither_front_end_nor_store():
    loaded = loaded_after(
        "import convtui.core.executor, convtui.core.feedback, "
        "convtui.core.loaders, convtui.core.extract, convtui.core.omega"
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
    heavy = {"textual", "openai", "sqlite_utils", "convtui.core.executor", "asyncio"}
    assert not (heavy | {"http.client", "ssl", "convtui.core.models.base"}) & loaded


def test_importing_the_tui_package_leaves_textual_unloaded_until_the_app_runs():
    assert "textual" not in loaded_after("import convtui.tui")


def test_front_ends_do_not_import_each_other():
    tui = loaded_after("import convtui.tui.app, convtui.tui.launch")
    headless = loaded_after(
        "import convtui.benchmarks.live_command, convtui.benchmarks.sessions_command, "
        "convtui.benchmarks.report_command"
    )
    assert not any(name.startswith("convtui.benchmarks") for name in tui)
    assert not any(name.startswith("convtui.tui") for name in headless)
    assert "textual" not in headless
