"""Joining the Ray cluster that ``--executor ray[:ADDRESS]`` names, with one clear line when
Ray is not installed or the cluster cannot be reached (Ray itself retries an unreachable
address for minutes, and prints a warning every few seconds while it does)."""

from __future__ import annotations

import logging
import os
import socket
from types import ModuleType

from convtui.core.errors import ConvtuiError
from convtui.core.executor_choice import host_port

RAY_MISSING = (
    "--executor ray needs Ray, which is not installed here: pip install -e '.[ray]' "
    "(or pip install 'convtui[ray]')"
)
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
    target = address or os.environ.get("RAY_ADDRESS")
    if target:
        reachable(target)
    try:
        ray.init(
            address=address,
            # Our actors print nothing worth reading; Ray's INFO lines would bury the
            # command's own output, and --json needs stdout to itself.
            log_to_driver=False,
            logging_level=logging.ERROR,
        )
    except ConnectionError as exc:
        # ray:auto on a machine where no `ray start` ran; Ray's own words name its flags.
        where = "on this machine" if target in (None, "auto") else f"at {target}"
        raise ConvtuiError(
            f"no Ray cluster runs {where} ({_first_line(exc).split('. ')[0]}): start one "
            "with `ray start --head`, or pass --executor ray to start one here"
        ) from None
    return True


def reachable(address: str) -> None:
    """A ConvtuiError unless something listens at ``address`` (``auto`` is left to Ray,
    which answers at once when it finds no cluster)."""
    where = host_port(address)
    if where is None:
        return
    try:
        with socket.create_connection(where, timeout=_REACH_TIMEOUT_S):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise ConvtuiError(
            f"cannot reach the Ray cluster at {address}: {reason.lower()} (is `ray start "
            "--head` running there, and is this its GCS port, 6379 by default?)"
        ) from None


def disconnect() -> None:
    import ray

    ray.shutdown()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
