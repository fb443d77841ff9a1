"""Write ``--help`` of convtui and of every command and subcommand, one file each, as a user
sees it in a 100-column terminal: compare two trees' dumps with ``diff -r`` to show that a
refactoring left every help text byte-identical.

    python scripts/help_dump.py help-before   # on the old tree
    python scripts/help_dump.py help-after    # on the new one
    diff -r help-before help-after

Each file is ``convtui_<command>_<subcommand>.txt``; the help is taken from
``python -m convtui … --help`` in a child process with ``COLUMNS=100`` (rich reads it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import typer.main

from convtui.cli import app


def commands(group: object, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command path under ``group``, itself first."""
    found = [path]
    # Typer vendors its own click: a group is whatever has subcommands.
    children = getattr(group, "commands", {})
    for name in sorted(children):
        found += commands(children[name], (*path, name))
    return found


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit("usage: python scripts/help_dump.py OUT_DIR")
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    paths = commands(typer.main.get_command(app))
    for path in paths:
        done = subprocess.run(
            [sys.executable, "-m", "convtui", *path, "--help"],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        name = "_".join(("convtui", *path)) + ".txt"
        (out / name).write_text(f"exit {done.returncode}\n{done.stdout}{done.stderr}", "utf-8")
    print(f"{len(paths)} help texts in {out}")


if __name__ == "__main__":
    main()
