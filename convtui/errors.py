"""How the command line reports bad input: one ``error: …`` line on stderr and exit code 2,
whether typer refused an option or the library raised a ConvtuiError (README: bad input is
one line and exit code 2)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer
import typer.core
from typer.core import TyperGroup

from convtui.help_text import flowing_help

# click's exceptions as typer raises them: recent typers ship their own copy of click
# (typer._click), older ones use click itself.
_click: Any = getattr(typer.core, "_click", None)
if _click is None:  # pragma: no cover - typer before its bundled click
    import click as _click


def print_error(message: str) -> None:
    """``error: …`` on stderr, one line however narrow the terminal."""
    from rich.text import Text

    from convtui.benchmarks.output import console

    line = " ".join(message.split())
    console(stderr=True).print(Text.assemble(("error: ", "bold red"), line), soft_wrap=True)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the library's input errors into one clear line and exit code 2."""
    from convtui.core.errors import ConvtuiError

    try:
        yield
    except ConvtuiError as exc:
        print_error(str(exc))
        raise typer.Exit(2) from None


class OneLineErrors(TyperGroup):
    """click reports a bad option value, an unknown option or a missing argument as a usage
    box of several lines; here it becomes the same ``error: …`` line as the library's own
    errors, with the ``--help`` to read, and exit code 2. Runs for every command, and under
    typer's CliRunner too (it calls ``main``)."""

    def main(  # type: ignore[override]
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        bare_flags(self)
        flowing_help(self)
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except _click.exceptions.ClickException as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":
                sys.exit(exc.exit_code)  # the help was printed as the error was made
            print_error(click_message(exc))
            sys.exit(exc.exit_code)
        except typer.Abort:
            print_error("aborted")
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def bare_flags(command: Any) -> None:
    """Give every flag of ``command`` and its subcommands, ``--help`` included, an empty
    metavar: typer's help shows each option's type after its name, ``<bool>`` for a flag,
    which reads as if ``--json`` took a value. An option's own metavar is kept."""
    ctx = _click.Context(command)  # read for the help option's names only
    for param in [*command.params, command.get_help_option(ctx)]:
        if param is not None and getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    for sub in getattr(command, "commands", {}).values():
        bare_flags(sub)


def click_message(exc: Any) -> str:
    """click's message, lower-cased as ours are, with the help that lists what is accepted:
    ``invalid value for '--protocol': 'ccw' is not one of 'convcodeworld', 'convtui' (see
    convtui bench live --help)``."""
    message = exc.format_message().strip().rstrip(".")
    # Typers that check values with pydantic prefix its error type to the reason.
    message = message.replace(": Value error, ", ": ")
    if message[:1].isupper() and message[1:2].islower():
        message = message[0].lower() + message[1:]
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, _click.exceptions.UsageError) and ctx is not None:
        message = f"{message} (see {ctx.command_path} --help)"
    return message
