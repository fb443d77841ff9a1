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


# convtui/: the typer commands and the options they declare, nothing else; no front end and not
# the store imports them.
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
    "convtui.help_text",
}
COMMAND_BODIES = {
    "convtui.benchmarks.commands",
    "convtui.benchmarks.runs",
    "convtui.benchmarks.reports",
    "convtui.tui.entry",
    "convtui.tui.web.serve_study",
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
    tui = loaded_after(
        "import convtui.tui.app, convtui.tui.launch, convtui.tui.study_app, convtui.tui.entry, "
        "convtui.tui.web.serve_study"
    )
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
        "import convtui.benchmarks.commands.catalog.tasks, "
        "convtui.benchmarks.commands.catalog.projects, "
        "convtui.benchmarks.commands.records.sessions, "
        "convtui.benchmarks.commands.records.imports, "
        "convtui.benchmarks.commands.records.merge, "
        "convtui.benchmarks.commands.study.study_admin, "
        "convtui.benchmarks.commands.study.study_export"
    )
    assert not under(loaded, {"convtui.tui", "textual"})


def test_the_store_imports_no_front_end_and_prints_nothing():
    """Every module of sessions/, the ConvCodeWorld import that bench static shares with
    sessions import included: no front end, no command line, no rich."""
    loaded = loaded_after(
        "import importlib, pkgutil\nimport convtui.sessions as store\n"
        "for found in pkgutil.walk_packages(store.__path__, 'convtui.sessions.'):\n"
        "    importlib.import_module(found.name)"
    )
    assert "convtui.sessions.exchange.ccw_import" in loaded
    assert not under(loaded, {"convtui.tui", "convtui.benchmarks", "textual", "rich", "typer"})
    assert not under(loaded, COMMAND_LINE)


ROOT = Path(__file__).parents[1]
CORE = ROOT / "core"
SESSIONS = ROOT / "sessions"


def run_time_imports(path: Path) -> list[str]:
    """The modules ``path`` imports at run time, absolute: imports under ``if TYPE_CHECKING``
    do not count, imports inside functions do."""
    tree = ast.parse(path.read_text())
    typing_only = {
        id(node)
        for branch in ast.walk(tree)
        if isinstance(branch, ast.If) and "TYPE_CHECKING" in ast.unparse(branch.test)
        for node in ast.walk(branch)
    }
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
            found.extend(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
    return found


def package_imports(root: Path, package: str) -> dict[str, set[str]]:
    """Which of ``root``'s subpackages (imported as ``package.<name>``) each one imports; the
    modules at ``root``'s top are left out."""
    imports: dict[str, set[str]] = defaultdict(set)
    prefix = package.split(".")
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).parts
        if len(parts) < 2:
            continue
        for module in run_time_imports(path):
            name = module.split(".")
            inside = name[: len(prefix)] == prefix and len(name) > len(prefix)
            sub = name[len(prefix)] if inside else ""
            if inside and (root / sub).is_dir() and sub != parts[0]:
                imports[parts[0]].add(sub)
    return imports


def core_package_imports() -> dict[str, set[str]]:
    """Which of core/'s subpackages each one imports (at run time)."""
    return package_imports(CORE, "convtui.core")


def loops_among(imports: dict[str, set[str]]) -> list[list[str]]:
    """The import loops among subpackages, each as the path that closes it."""

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

    return [found for start in sorted(imports) if (found := loop_from(start))]


def test_core_subpackages_form_layers_without_a_cycle():
    """A subpackage that imports another is above it: no two import each other, directly or
    round a longer loop (a reader can take core/ from the bottom up)."""
    imports = core_package_imports()
    assert "settings" in imports and "execution" in imports["settings"]  # the walk sees imports
    loops = loops_among(imports)
    assert not loops, " ; ".join(" -> ".join(loop) for loop in loops)


def test_sessions_subpackages_form_layers_without_a_cycle():
    """sessions/ is grouped by job the same way: the store at the bottom, what reads,
    exchanges, merges and studies above it, no two importing each other round a loop; and
    each subpackage says in its docstring what it holds and what it may import."""
    imports = package_imports(SESSIONS, "convtui.sessions")
    assert "database" in imports["reading"]  # the walk sees imports
    loops = loops_among(imports)
    assert not loops, " ; ".join(" -> ".join(loop) for loop in loops)
    assert not imports["database"]  # the store builds on core/ alone
    for package in (p for p in SESSIONS.iterdir() if (p / "__init__.py").is_file()):
        doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text()))
        assert doc and "May import" in doc, package.name


def test_sessions_keeps_at_most_eight_modules_at_its_top():
    top = [p.name for p in SESSIONS.glob("*.py") if p.name != "__init__.py"]
    assert len(top) <= 8, top


@pytest.mark.parametrize(
    ("folder", "forbidden"),
    [
        ("core", ("convtui.sessions", "convtui.tui", "convtui.benchmarks", *COMMAND_LINE)),
        ("sessions", ("convtui.tui", "convtui.benchmarks", "textual", "typer", *COMMAND_LINE)),
        ("benchmarks", ("convtui.tui", "textual", "typer", *COMMAND_LINE)),
        ("tui", ("convtui.benchmarks", "typer", *COMMAND_LINE)),
    ],
)
def test_lower_layers_never_import_upwards(folder, forbidden):
    """Read from the source, so an import inside a function that no test calls counts too:
    core/ imports no store, no front end and no command line; sessions/ no front end and no
    command line; neither front end imports the other or the command line."""
    upward = sorted(
        f"{path.relative_to(ROOT)}: {module}"
        for path in (ROOT / folder).rglob("*.py")
        for module in run_time_imports(path)
        if any(module == name or module.startswith(f"{name}.") for name in forbidden)
    )
    assert not upward, upward


def test_convtui_holds_only_the_command_line():
    """convtui/ parses: the typer commands (cli/) and the options they declare. Every
    command's body is a front end's (benchmarks/commands/, the app's in tui/), so no body
    module or package comes back here (convtui/commands/ was one)."""
    folder = ROOT / "convtui"
    packages = {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
    modules = {f"convtui.{p.stem}" for p in folder.glob("*.py")} - {
        "convtui.__init__",
        "convtui.__main__",
    }
    assert packages == {"cli"}
    assert modules <= COMMAND_LINE, sorted(modules - COMMAND_LINE)


PRODUCT = {
    "convtui": "convtui",
    "core": "convtui.core",
    "sessions": "convtui.sessions",
    "tui": "convtui.tui",
    "benchmarks": "convtui.benchmarks",
}


def module_imports() -> dict[str, set[str]]:
    """Every product module (by its import name) -> the product modules it imports, read from
    the source: at the top, inside functions and under ``if TYPE_CHECKING`` alike.
    ``from package import name`` is an import of the module ``package.name`` where there is
    one, else of the package."""
    files = {}
    for folder, package in PRODUCT.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            files[".".join([package, *parts])] = path
    imports = {}
    for name, path in files.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    found.add(full if full in files else node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
        imports[name] = {m for m in found if m in files and m != name}
    return imports


def test_no_module_of_the_product_imports_itself_round_a_loop():
    """Modules form layers too: no two import each other, directly or round a longer loop,
    not even for type checking. A result type lives in a module of its own that the body
    computing it and the views showing it both import (benchmarks/commands/study/)."""
    imports = module_imports()
    # The walk sees imports of every kind: at the top, in a function, for type checking.
    assert "convtui.tui.app" in imports["convtui.tui"]
    assert "convtui.core.models.chat_template" in imports["convtui.core.models.base"]
    assert (
        "convtui.benchmarks.commands.study.study_report_result"
        in imports["convtui.benchmarks.commands.study.study_report_views"]
    )
    loops = loops_among(defaultdict(set, imports))
    assert not loops, " ; ".join(" -> ".join(loop) for loop in loops)
