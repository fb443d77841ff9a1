"""``--executor local|ray[:ADDRESS]``: where candidates run. Light on purpose (no Ray here):
the command line parses the choice before anything is opened, and a run with the local
executor never imports Ray."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from convtui.core.errors import ConvtuiError

ExecutorKind = Literal["local", "ray"]
EXECUTOR_FORMS = "local, ray (a cluster on this machine), ray:auto or ray:HOST:PORT"


@dataclass(frozen=True)
class ExecutorChoice:
    """``kind`` and, for ``ray``, the cluster's ``address`` (None: ray.init() finds or
    starts one; ``auto``, ``HOST:PORT`` or ``ray://HOST:PORT`` as Ray takes them)."""

    kind: ExecutorKind = "local"
    address: str | None = None

    @property
    def label(self) -> str:
        if self.kind == "local":
            return "local"
        return f"ray:{self.address}" if self.address else "ray"

    def __str__(self) -> str:  # as the option's default shows in --help
        return self.label


LOCAL = ExecutorChoice()  # the default: this machine's cores


def parse_executor(text: str) -> ExecutorChoice:
    """``local``, ``ray``, ``ray:``, ``ray:auto``, ``ray:HOST:PORT`` or ``ray:ray://HOST:PORT``;
    anything else is a ConvtuiError naming the forms."""
    spec = text.strip()
    if spec == "local":
        return ExecutorChoice()
    kind, colon, address = spec.partition(":")
    if kind == "ray" and (not colon or not address):
        return ExecutorChoice("ray")
    if kind == "ray" and (address == "auto" or host_port(address) is not None):
        return ExecutorChoice("ray", address)
    raise ConvtuiError(f"unknown --executor {text!r}: use {EXECUTOR_FORMS}")


def host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of ``HOST:PORT`` or ``ray://HOST:PORT``; None for anything else
    (``auto``)."""
    bare = address.removeprefix("ray://")
    host, colon, port = bare.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host.strip("[]"), int(port)
