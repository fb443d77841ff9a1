"""`convtui serve`: a study's app for annotators in a browser."""

from __future__ import annotations

import asyncio
import ipaddress
import sys
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from convtui.core.errors import ConvtuiError
from convtui.core.extras import install_hint
from convtui.sessions.studies.study_rows import open_study
from convtui.tui.launch import MachineOptions
from convtui.tui.web.connections import Caps
from convtui.tui.web.lifeline import DEFAULT_APP_MEMORY_MB, limit_apps_memory
from convtui.tui.web.limits import APP_OPENS_PER_MINUTE


@dataclass(frozen=True)
class ServeOptions:
    db: Path
    host: str
    port: int
    machine: MachineOptions  # passed on to each annotator's app
    max_apps: int = 32
    max_starting: int | None = None  # None: one per core
    connections: Caps = field(default_factory=Caps)  # tui/web/connections.py
    app_opens_per_minute: int = APP_OPENS_PER_MINUTE
    # Each app's memory (MiB of data, RLIMIT_DATA) that the kernel allows; 0: no limit.
    app_memory_mb: int = DEFAULT_APP_MEMORY_MB
    # Names besides addresses, localhost and this machine's a request's Host may give.
    allow_hosts: tuple[str, ...] = ()


def serve_command(options: ServeOptions) -> None:
    try:
        from convtui.tui.web.gate import StudyGate
        from convtui.tui.web.hosts import AllowedHosts
        from convtui.tui.web.server import AppCommand, StudyServer, serve_until_stopped
    except ImportError as exc:
        raise ConvtuiError(
            f"convtui serve needs the study extra ({exc.name} is missing): {install_hint('study')}"
        ) from None
    console = Console(stderr=True, highlight=False)
    with open_study(options.db) as (store, study):
        command = AppCommand(options.db.resolve(), sys.executable, options.machine.as_flags())
        server = StudyServer(
            StudyGate(store, study),
            command,
            max_apps=options.max_apps,
            max_starting=options.max_starting,
            caps=options.connections,
            hosts=AllowedHosts.for_server((options.host, *options.allow_hosts)),
            app_opens_per_minute=options.app_opens_per_minute,
        )
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
        limit_apps_memory(options.app_memory_mb)  # before any app starts: they inherit it
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
