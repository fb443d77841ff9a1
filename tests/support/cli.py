"""The command line in tests: in process through typer's CliRunner (the default: no
interpreter start, no import of the whole package per call), or as a real ``python -m
convtui`` process where the process is the point (a kill, the real entry point's exit code,
no terminal, import hygiene).

Both answer a ``subprocess.CompletedProcess``, so a test reads ``returncode``, ``stdout`` and
``stderr`` the same way whichever it runs."""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
from collections.abc import Mapping

from support.data import DATA


def convtui_argv(*args: str) -> list[str]:
    """The argv of a real ``convtui`` process."""
    return [sys.executable, "-m", "convtui", *args]


def env(**extra: str) -> dict[str, str]:
    """The environment of a real process: the data folder, no progress bars nor progress
    lines (a slow machine would add one to what a test reads), 120 columns."""
    return {
        **os.environ,
        "CONVTUI_DATA_DIR": str(DATA),
        "CI": "true",
        "CONVTUI_PROGRESS_EVERY": "0",
        "COLUMNS": "120",
        **extra,
    }


def run_process(
    *args: str, stdin: str | None = None, environ: Mapping[str, str] | None = None, timeout=900
) -> subprocess.CompletedProcess[str]:
    """``convtui ARGS`` as a real process."""
    return subprocess.run(
        convtui_argv(*args),
        capture_output=True,
        text=True,
        env=dict(environ) if environ is not None else env(),
        input=stdin,
        timeout=timeout,
        check=False,
    )


def invoke(
    *args: str, stdin: str | None = None, environ: Mapping[str, str | None] | None = None
) -> subprocess.CompletedProcess[str]:
    """``convtui ARGS`` in this process, as a real process would answer it: the exit code
    that ``convtui/errors.py`` gives (typer's exits, ``sys.exit``), stdout and stderr apart,
    and an unexpected exception's traceback on stderr with exit code 1 (as Python prints it).
    ``environ`` is laid over this process's environment for the call (None unsets);
    by default the data folder, CI, no progress lines and 120 columns, as ``env()``."""
    from typer.testing import CliRunner

    from convtui.cli import app

    overrides: dict[str, str | None] = {
        "CONVTUI_DATA_DIR": str(DATA),
        "CI": "true",
        "CONVTUI_PROGRESS_EVERY": "0",
        "COLUMNS": "120",
        **(environ or {}),
    }
    result = CliRunner().invoke(
        app, list(args), input=stdin, env=overrides, prog_name="convtui", catch_exceptions=True
    )
    stderr = result.stderr
    code = result.exit_code
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        exc = result.exception
        stderr += "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        code = 1
    return subprocess.CompletedProcess(
        ["convtui", *args], code, stdout=result.stdout, stderr=stderr
    )


def convtui(
    *args: str, stdin: str | None = None, columns: int = 100
) -> subprocess.CompletedProcess[str]:
    """``convtui ARGS`` in process, in a terminal of ``columns`` (CI as this process has it):
    what the command-line tests call."""
    return invoke(*args, stdin=stdin, environ={"COLUMNS": str(columns), "CI": os.environ.get("CI")})


def assert_one_line_error(done: subprocess.CompletedProcess[str], *words: str) -> None:
    """Bad input as the README promises it: exit code 2, one ``error: …`` line on stderr
    naming ``words``, no traceback."""
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ")
    for word in words:
        assert word in lines[0]
    assert "Traceback" not in done.stderr
