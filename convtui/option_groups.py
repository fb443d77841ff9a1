"""Option groups: options that travel together (where candidates run, which model, which
tasks, the turn protocol), each declared once as a typed dataclass. A command names the groups
it takes as parameters annotated with the group's class; :func:`takes_groups` spreads a group's
fields into the command's options, in the group's order, and hands the command the group back
as one typed value. A command that wants other defaults gives a group instance as the
parameter's default (``turn: TurnGroup = CONVCODEWORLD_TURNS``)."""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, get_type_hints

from convtui.core.execution.choice import LOCAL
from convtui.options import (
    ChatTemplateOpt,
    ContextOpt,
    DataOpt,
    ExecutorOpt,
    ExtractOpt,
    IdsOpt,
    IsolationOpt,
    JobsOpt,
    LibOpt,
    ModelNameOpt,
    ModelOpt,
    PartialRuleOpt,
    ProtocolOpt,
    PythonOpt,
    StdlibOpt,
    SuiteOpt,
    TurnsOpt,
)

if TYPE_CHECKING:
    from pathlib import Path

    from convtui.benchmarks.settings import ExecutorSettings, ModelSettings, TaskSelection
    from convtui.tui.launch import MachineOptions


@dataclass(frozen=True)
class ExecutorGroup:
    """Where and how candidates run: --python, --jobs, --isolation, --executor."""

    python: PythonOpt = None
    jobs: JobsOpt = None
    isolation: IsolationOpt = "auto"
    executor: ExecutorOpt = LOCAL

    def settings(self) -> ExecutorSettings:
        """The bench front end's settings."""
        from convtui.benchmarks.settings import ExecutorSettings

        return ExecutorSettings(self.python, self.jobs, self.isolation, self.executor)

    def machine(
        self, suite: str, data: Path | None, model_name: str | None, chat_template: Path | None
    ) -> MachineOptions:
        """The app's machine options: these and the tasks and model server the command names."""
        from convtui.tui.launch import MachineOptions

        return MachineOptions(
            suite,
            data,
            model_name,
            chat_template,
            self.python,
            self.jobs,
            self.isolation,
            self.executor,
        )


@dataclass(frozen=True)
class ModelGroup:
    """Which model writes the code: --model, --model-name, --chat-template."""

    model: ModelOpt = "local:smollm2"
    model_name: ModelNameOpt = None
    chat_template: ChatTemplateOpt = None

    def settings(self, max_tokens: int | None) -> ModelSettings:
        """The bench front end's settings, with the command's --max-tokens."""
        from convtui.benchmarks.settings import ModelSettings

        return ModelSettings(self.model, self.model_name, self.chat_template, max_tokens)


@dataclass(frozen=True)
class SelectionGroup:
    """Which tasks: --suite, --data, --ids, --lib, --stdlib-only."""

    suite: SuiteOpt = "bigcodebench"
    data: DataOpt = None
    ids: IdsOpt = None
    lib: LibOpt = None
    stdlib_only: StdlibOpt = False

    def settings(self) -> TaskSelection:
        """The bench front end's selection."""
        from convtui.benchmarks.settings import TaskSelection

        return TaskSelection(self.suite, self.data, self.ids, self.lib or (), self.stdlib_only)


@dataclass(frozen=True)
class TurnGroup:
    """How turns are played: --protocol and what it decides unless told (--turns, --context,
    --partial-rule, --extract)."""

    protocol: ProtocolOpt = "convtui"
    turns: TurnsOpt = 10
    context: ContextOpt = None
    partial_rule: PartialRuleOpt = None
    extract: ExtractOpt = None


# bench live plays ConvCodeWorld's protocol unless told otherwise.
CONVCODEWORLD_TURNS = TurnGroup(protocol="convcodeworld")

GROUPS: tuple[type, ...] = (ExecutorGroup, ModelGroup, SelectionGroup, TurnGroup)

F = TypeVar("F", bound=Callable[..., Any])
# typer passes every value by name; keyword-only lets a group sit between other options.
KEYWORD = inspect.Parameter.KEYWORD_ONLY


def takes_groups(command: F) -> F:
    """``command`` as typer should see it: each parameter annotated with a group becomes the
    group's options (keyword parameters, defaults from the parameter's default instance or the
    group's own), and each call gets the group built back from them."""
    hints = get_type_hints(command, include_extras=True)
    signature = inspect.signature(command)
    parameters: list[inspect.Parameter] = []
    spread: dict[str, type] = {}
    for name, parameter in signature.parameters.items():
        group = hints.get(name)
        if group not in GROUPS:
            annotation = hints.get(name, parameter.annotation)
            parameters.append(parameter.replace(kind=KEYWORD, annotation=annotation))
            continue
        assert isinstance(group, type)
        spread[name] = group
        defaults = parameter.default if isinstance(parameter.default, group) else group()
        field_hints = get_type_hints(group, include_extras=True)
        parameters += [
            inspect.Parameter(
                field.name,
                KEYWORD,
                default=getattr(defaults, field.name),
                annotation=field_hints[field.name],
            )
            for field in dataclasses.fields(group)
        ]
    names = [p.name for p in parameters]
    if len(set(names)) != len(names):
        raise TypeError(f"{command.__name__}: an option is named twice among its groups")

    @functools.wraps(command)
    def call(**values: Any) -> Any:
        for name, group in spread.items():
            fields = [f.name for f in dataclasses.fields(group)]
            values[name] = group(**{f: values.pop(f) for f in fields})
        return command(**values)

    # typer reads the signature and the type hints: both name the spread options.
    call.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    call.__annotations__ = {p.name: p.annotation for p in parameters}
    return call  # type: ignore[return-value]
