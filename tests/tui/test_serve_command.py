"""The command line `convtui serve` starts for each annotator: their name from the token goes
in as one quoted word, and this host's own settings go with it as `session` takes them."""

from __future__ import annotations

import shlex
from pathlib import Path

from convtui.tui.launch import MachineOptions
from convtui.tui.web.server import AppCommand


def test_the_annotators_app_is_one_exec_d_command_with_the_hosts_settings(tmp_path: Path) -> None:
    machine = MachineOptions(data=Path("data"), isolation="landlock", jobs=2)
    command = AppCommand(tmp_path / "study.db", "/usr/bin/python3", machine.as_flags())
    line = command.for_annotator("ana; rm -rf ~")
    assert line.startswith("exec ")  # the app is the server's own child, and ends with it
    argv = shlex.split(line)[1:]
    assert argv[:6] == [
        "/usr/bin/python3",
        "-m",
        "convtui",
        "session",
        "--study",
        str(tmp_path / "study.db"),
    ]
    assert argv[6:8] == ["--annotator", "ana; rm -rf ~"]  # one word, never shell syntax
    assert argv[8:] == [
        "--data",
        str(Path("data").resolve()),
        "--jobs",
        "2",
        "--isolation",
        "landlock",
    ]


def test_a_host_that_decides_nothing_adds_no_flags() -> None:
    assert MachineOptions().as_flags() == ()
