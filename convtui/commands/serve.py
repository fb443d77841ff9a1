"""`convtui serve`: a study's app for annotators in a browser."""

from __future__ import annotations

import asyncio
import ipaddress
import sys
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from convtui.commands.study import open_study
from convtui.core.errors import ConvtuiError


@dataclass(frozen=True)
class ServeOptions:
    db: Path
    host: str
    port: int
    # This host's own settings for the apps it starts, passed on as `session` takes them.
    data: Path | None = None
    model_name: str | None = None
    chat_template: Path | None = None
    python: str | None = None
    jobs: int | None = None
    isolation: str = "auto"

    def session_flags(self) -> tuple[str, ...]:
        given: list[tuple[str, object]] = [
            ("--data", self.data and self.data.resolve()),
            ("--model-name", self.model_name),
            ("--chat-template", self.chat_template and self.chat_template.resolve()),
            ("--python", self.python),
            ("--jobs", self.jobs),
            ("--isolation", None if self.isolation == "auto" else self.isolation),
        ]
        return tuple(item for flag, value in given if value for item in (flag, str(value)))


def serve_command(options: ServeOptions) -> None:
    try:
        from convtui.tui.web.gate import StudyGate
        from convtui.tui.web.server import AppCommand, StudyServer, serve_until_stopped
    except ImportError as exc:
        raise ConvtuiError(
            f"convtui serve needs the study extra ({exc.name} is missing): "
            "pip install -e '.[study]'"
        ) from None
    console = Console(stderr=True, highlight=False)
    with open_study(options.db) as (store, study):
        command = AppCommand(options.db.resolve(), sys.executable, options.session_flags())
        server = StudyServer(StudyGate(store, study), command)
        url = f"http://{_url_host(options.host)}:{options.port}/"
        if not _loopback(options.host):
            console.print(
                f"[yellow]warning:[/yellow] serving on {options.host} without TLS: tokens "
                "cross the network in clear unless a reverse proxy with TLS is in front "
                "(README, Studies)"
            )
        ready = [
            f"Serving study {study.name!r} at {url}",
            "Annotators open it and give their token; Ctrl+C stops the server "
            "(every finished turn is already recorded).",
        ]
        try:
            asyncio.run(serve_until_stopped(server, options.host, options.port, ready))
        except OSError as exc:
            raise ConvtuiError(
                f"cannot serve on {options.host}:{options.port} ({exc.strerror or exc}): "
                "choose another --port or --host"
            ) from None


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
