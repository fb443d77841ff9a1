"""Joining the Ray cluster that ``--executor ray[:ADDRESS]`` names, with one clear line when
Ray is not installed or the cluster cannot be reached: Ray itself retries an address nothing
answers at for minutes, printing a warning every few seconds while it does."""

from __future__ import annotations

import logging
import os
import socket
from types import ModuleType

from convtui.core.errors import ConvtuiError
from convtui.core.execution.choice import host_port
from convtui.core.extras import install_hint

RAY_MISSING = f"--executor ray needs Ray, which is not installed here: {install_hint('ray')}"
_REACH_TIMEOUT_S = 5.0


def import_ray() -> ModuleType:
    """The ray module, or a ConvtuiError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ConvtuiError(RAY_MISSING) from None
    return ray


def connect(address: str | None) -> bool:
    """Make this process a driver of the cluster at ``address`` (None: the one ray.init()
    finds, else a new one on this machine). True when this call connected, so the caller
    disconnects (ray.shutdown) when done; False when the process already was a driver."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    given = address if address not in (None, "auto") else os.environ.get("RAY_ADDRESS")
    target = _bootstrap_address(address)
    problem = unreachable(target) if target is not None else None
    if problem is not None:
        if given:
            raise ConvtuiError(f"cannot reach the Ray cluster at {given}: {problem}")
        # What Ray found is the address a cluster killed without `ray stop` left in its
        # temp folder. `ray` alone starts a cluster here instead; ray:auto has none to join.
        if address == "auto":
            raise ConvtuiError(
                f"no Ray cluster runs on this machine (the last one, at {target}, is gone): "
                "start one with `ray start --head`, or pass --executor ray to start one here"
            )
        address = "local"
    try:
        ray.init(
            address=address,
            # Our actors print nothing worth reading; Ray's INFO lines would bury the
            # command's own output, and --json needs stdout to itself.
            log_to_driver=False,
            logging_level=logging.ERROR,
        )
    except ConnectionError:  # ray:auto where no cluster ever ran
        raise ConvtuiError(
            "no Ray cluster runs on this machine: start one with `ray start --head`, or "
            "pass --executor ray to start one here"
        ) from None
    return True


def unreachable(address: str) -> str | None:
    """Why nothing answers at ``address`` (connection refused, timed out, unknown host);
    None when something listens there, or when it is not a HOST:PORT to try."""
    where = host_port(address)
    if where is None:
        return None
    try:
        with socket.create_connection(where, timeout=_REACH_TIMEOUT_S):
            return None
    except OSError as exc:
        reason = (exc.strerror or str(exc) or type(exc).__name__).lower()
        return (
            f"{reason} (is `ray start --head` running there, and is this its GCS port, "
            "6379 by default?)"
        )


def disconnect() -> None:
    import ray

    ray.shutdown()


def _bootstrap_address(address: str | None) -> str | None:
    """The address ray.init(address) will connect to: $RAY_ADDRESS, else for None and
    ``auto`` the cluster `ray start` last made on this machine; None when it will start
    one. Ray's own reading where this Ray has it (a private function), else the address."""
    try:
        from ray._private.services import canonicalize_bootstrap_address
    except ImportError:
        return os.environ.get("RAY_ADDRESS") or address
    try:
        return canonicalize_bootstrap_address(address)  # type: ignore[arg-type]
    except (ConnectionError, ValueError):  # auto with no cluster; an address Ray cannot read
        return None if address in (None, "auto") else address
