"""The command line's choices are the library's: every choice option's ``--help`` lists exactly
the values of the Literal (or tuple) that the code behind it reads, and a value outside them is
one usage error that names them all.

The values are taken from the consumer, not from the alias convtui/options.py annotates with:
where that alias is a light copy (``convtui --help`` must not import the app or the store),
this is what keeps the two equal."""

from __future__ import annotations

import itertools
import re
from typing import get_args

import pytest
from support.cli import assert_one_line_error, invoke
from support.data import needs_bigcodebench

from convtui.benchmarks.reports.codeif_report import DEFINITIONS
from convtui.benchmarks.settings import ExportFormat
from convtui.core.catalog.loaders import SUITES
from convtui.core.codeif.conversation import MODES, PROMPTINGS
from convtui.core.codeif.programs import CodeifProtocol
from convtui.core.execution.isolation import ISOLATION_CHOICES
from convtui.core.execution.requests import Solution
from convtui.core.models.extract import ExtractMode
from convtui.core.settings.config import ContextMode, ProtocolName
from convtui.core.settings.omega import PartialRule
from convtui.sessions.database.records import UserKind
from convtui.sessions.reading.log_sets import UserFilter
from convtui.tui.controller import USER_MODES

SUITE = (*SUITES, "all")
PROTOCOL = get_args(ProtocolName)
CONTEXT = get_args(ContextMode)
PARTIAL_RULE = get_args(PartialRule)
EXTRACT = get_args(ExtractMode)

# The choice options of the option groups (convtui/option_groups.py), as every command that
# takes the group lists them: the turn protocol's, and the tasks' and executor's.
TURN_CHOICES = {
    "--protocol": PROTOCOL,
    "--context": CONTEXT,
    "--partial-rule": PARTIAL_RULE,
    "--extract": EXTRACT,
}
RUN_CHOICES = {"--suite": SUITE, "--isolation": ISOLATION_CHOICES}
# command -> option -> the values the code behind the option accepts.
BY_COMMAND: dict[str, dict[str, tuple[str, ...]]] = {
    "tasks list": {"--suite": SUITE},
    "tasks show": {"--suite": SUITE},
    "check": {"--protocol": PROTOCOL, "--partial-rule": PARTIAL_RULE, "--extract": EXTRACT}
    | RUN_CHOICES,
    "doctor": {"--solution": get_args(Solution)} | RUN_CHOICES,
    "session": {"--user": USER_MODES} | TURN_CHOICES | RUN_CHOICES,
    "bench codeif": {
        "--mode": MODES,
        "--protocol": get_args(CodeifProtocol),
        "--isolation": ISOLATION_CHOICES,
        "--metrics": DEFINITIONS,
        "--prompting": PROMPTINGS,
    },
    "bench live": TURN_CHOICES | RUN_CHOICES,
    "bench static": {
        "--protocol": PROTOCOL,
        "--context": CONTEXT,
        "--user": get_args(UserFilter),
        "--isolation": ISOLATION_CHOICES,
    },
    "report": {"--metrics": DEFINITIONS},
    "sessions list": {"--user": get_args(UserKind)},
    "sessions export": {"--format": get_args(ExportFormat), "--user": get_args(UserKind)},
}
# (command, option) -> the values the code behind the option accepts.
CHOICES: dict[tuple[str, str], tuple[str, ...]] = {
    (command, option): values
    for command, options in BY_COMMAND.items()
    for option, values in options.items()
}
# What a command needs besides the option under test, so that the option is what is refused.
REQUIRED = {"check": ["--task", "BigCodeBench/0", "--code", "-"], "bench static": ["--logs", "x"]}
COMMANDS = (
    "tasks list",
    "tasks show",
    "check",
    "doctor",
    "session",
    "bench codeif",
    "bench live",
    "bench static",
    "report",
    "sessions list",
    "sessions show",
    "sessions import",
    "sessions export",
)
# An option's name, then its choices as typer shows them: ``--protocol  <convcodeworld|convtui>``.
_CHOICE_METAVAR = re.compile(r"(--[a-z][a-z-]*)\s+(?:-\w\s+)?<([^<>\s]*\|[^<>\s]*)>")


def listed_choices(command: str) -> dict[str, tuple[str, ...]]:
    """Option -> the values ``convtui COMMAND --help`` lists for it."""
    done = invoke(*command.split(), "--help", environ={"COLUMNS": "250"})
    assert done.returncode == 0, done.stderr
    return {m[1]: tuple(m[2].split("|")) for m in _CHOICE_METAVAR.finditer(done.stdout)}


@pytest.mark.parametrize("command", COMMANDS)
def test_help_lists_exactly_the_values_each_choice_option_accepts(command: str) -> None:
    listed = listed_choices(command)
    expected = {option: values for (cmd, option), values in CHOICES.items() if cmd == command}
    assert listed.keys() == expected.keys(), "a choice option without a consumer to check"
    for option, values in listed.items():
        assert len(set(values)) == len(values), option
        assert set(values) == set(expected[option]), option


@pytest.mark.parametrize(("command", "option"), list(CHOICES), ids=" ".join)
def test_a_value_outside_the_choices_is_one_usage_error_naming_them(
    command: str, option: str
) -> None:
    done = invoke(*command.split(), *REQUIRED.get(command, []), option, "bogus")
    assert_one_line_error(done, f"invalid value for '{option}'", f"convtui {command} --help")
    assert done.stdout == ""
    named = re.search(r"'bogus' is not one of (.*) \(see ", done.stderr)
    assert named is not None, done.stderr
    assert set(re.findall(r"'([^']*)'", named[1])) == set(CHOICES[command, option])


@pytest.mark.parametrize(
    ("args", "reached"),
    [
        # Each refusal comes from the command, after the upper-case value was taken as its own.
        (
            ["bench", "codeif", "--mode", "DYNAMIC", "--score-only", "scores.jsonl"],
            "--score-only scores static conversations",
        ),
        (["report", "--metrics", "PAPER", "--db", "missing.db"], "no results database"),
        pytest.param(
            ["tasks", "show", "NoSuchSuite/1", "--suite", "BigCodeBench"],
            "NoSuchSuite/1",
            marks=needs_bigcodebench,
        ),
    ],
    ids=["mode", "metrics", "suite"],
)
def test_options_that_ignore_case_take_any_case(args: list[str], reached: str) -> None:
    done = invoke(*args)
    assert_one_line_error(done, reached)
    assert "invalid value" not in done.stderr


def test_an_option_that_minds_case_refuses_another() -> None:
    done = invoke("bench", "live", "--protocol", "CONVTUI")
    assert_one_line_error(done, "invalid value for '--protocol'", "'CONVTUI'")


def every_command() -> list[tuple[str, ...]]:
    """Every leaf command's words: ``("study", "reassign")``."""
    from typer.main import get_command

    from convtui.cli import app

    found: list[tuple[str, ...]] = []

    def walk(command, words: tuple[str, ...]) -> None:
        subs = getattr(command, "commands", None)
        if not subs:
            found.append(words)
        for name, sub in (subs or {}).items():
            walk(sub, (*words, name))

    walk(get_command(app), ())
    return found


def test_each_help_paragraph_flows_to_the_terminal_width() -> None:
    """Docstrings are wrapped at 100 columns in the source; in an 80-column terminal each of
    their lines used to wrap again, leaving a short line every other line."""
    for words in every_command():
        shown = invoke(*words, "--help", environ={"COLUMNS": "80"}).stdout
        description = shown.split("╭")[0].split("Usage:")[1].split("\n", 1)[1]
        lines = [line.strip() for line in description.splitlines()]
        paragraphs = "\n".join(lines).split("\n\n")
        for paragraph in paragraphs:
            # A line ends short only where its paragraph ends (or before an unbreakable word).
            within = paragraph.strip("\n").splitlines()
            ragged = [
                line
                for line, after in itertools.pairwise(within)
                if len(line) + 1 + len(after.split()[0]) <= 78
            ]
            assert not ragged, f"convtui {' '.join(words)} --help: {ragged}"
