"""Running a test's functions in threads of their own, all at once."""

from __future__ import annotations

import threading
from collections.abc import Callable


def run_together(*targets: Callable[[], None]) -> None:
    """Starts a thread for each of ``targets``, then waits until every one has finished."""
    threads = [threading.Thread(target=target) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
