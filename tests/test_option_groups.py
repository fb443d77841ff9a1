"""Option groups: a command that names a group gets its options on the command line, in the
group's order, and the group back as one typed value."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from convtui.core.execution.choice import LOCAL
from convtui.option_groups import (
    CONVCODEWORLD_TURNS,
    ExecutorGroup,
    ModelGroup,
    TurnGroup,
    takes_groups,
)
from convtui.options import JsonOpt


def _app(command: object) -> typer.Typer:
    app = typer.Typer()
    app.command()(command)  # type: ignore[arg-type]
    return app


def test_a_group_arrives_whole_with_the_values_given() -> None:
    seen: list[object] = []

    @takes_groups
    def run(*, model: ModelGroup, executor: ExecutorGroup, as_json: JsonOpt = False) -> None:
        seen.extend([model, executor, as_json])

    result = CliRunner().invoke(
        _app(run), ["--model", "mock:x.jsonl", "--jobs", "3", "--isolation", "none", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert seen == [
        ModelGroup(model="mock:x.jsonl"),
        ExecutorGroup(python=None, jobs=3, isolation="none", executor=LOCAL),
        True,
    ]


def test_a_default_instance_sets_the_command_s_defaults() -> None:
    seen: list[TurnGroup] = []

    @takes_groups
    def run(*, turn: TurnGroup = CONVCODEWORLD_TURNS) -> None:
        seen.append(turn)

    assert CliRunner().invoke(_app(run), []).exit_code == 0
    assert CliRunner().invoke(_app(run), ["--turns", "2"]).exit_code == 0
    assert seen == [
        TurnGroup(protocol="convcodeworld"),
        TurnGroup(protocol="convcodeworld", turns=2),
    ]
    help_text = CliRunner().invoke(_app(run), ["--help"], env={"COLUMNS": "200"}).output
    # The group's options in its own order, with this command's default.
    names = ["--protocol", "--turns", "--context", "--partial-rule", "--extract"]
    assert [help_text.index(n) for n in names] == sorted(help_text.index(n) for n in names)
    assert "convcodeworld" in help_text.split("--protocol", 1)[1].split("--turns", 1)[0]


def test_two_groups_naming_one_option_are_refused() -> None:
    def run(*, executor: ExecutorGroup, python: str | None = None) -> None:
        """--python twice: once alone, once in the executor group."""

    with pytest.raises(TypeError, match="named twice"):
        takes_groups(run)
