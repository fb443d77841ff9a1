"""The command line's choices are the library's: each option enum holds exactly the values of
the Literal (or tuple) it stands for, so typer accepts what the library accepts."""

from __future__ import annotations

from enum import StrEnum
from typing import get_args

import pytest

from convtui.benchmarks.doctor import Solution
from convtui.benchmarks.sessions_command import ExportFormat
from convtui.choices import (
    ContextChoice,
    ExportFormatChoice,
    ExtractChoice,
    IsolationChoice,
    PartialRuleChoice,
    ProtocolChoice,
    SolutionChoice,
    SuiteChoice,
    UserChoice,
    UserKindChoice,
)
from convtui.core.extract import ExtractMode
from convtui.core.feedback import PartialRule
from convtui.core.isolation import ISOLATION_CHOICES
from convtui.core.loaders import SUITES
from convtui.core.session import ContextMode, ProtocolName
from convtui.sessions.records import UserKind
from convtui.tui.controller import USER_MODES

PAIRS = [
    (ProtocolChoice, get_args(ProtocolName)),
    (ContextChoice, get_args(ContextMode)),
    (PartialRuleChoice, get_args(PartialRule)),
    (ExtractChoice, get_args(ExtractMode)),
    (SuiteChoice, (*SUITES, "all")),
    (IsolationChoice, ISOLATION_CHOICES),
    (SolutionChoice, get_args(Solution)),
    (UserChoice, USER_MODES),
    (UserKindChoice, get_args(UserKind)),
    (ExportFormatChoice, get_args(ExportFormat)),
]


@pytest.mark.parametrize(("choice", "values"), PAIRS, ids=[c.__name__ for c, _ in PAIRS])
def test_each_option_enum_holds_exactly_the_library_values(choice: type[StrEnum], values):
    assert sorted(member.value for member in choice) == sorted(values)
