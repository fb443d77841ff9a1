"""convtui.tui: the Textual front end (``convtui session``). Importing this package does not
import Textual; ``run_tui`` loads the app only when it runs."""

from __future__ import annotations

from typing import Any


def run_tui(services: Any, launch: Any) -> int:
    """Run the app until the person quits, then print each session opened and the command
    that resumes it; returns the exit code."""
    from convtui.core.printable import printable
    from convtui.tui.app import make_app
    from convtui.tui.heap import settle_heap

    app = make_app(services, launch)
    settle_heap()
    app.run()
    # After the app has given the terminal back: the ids it showed are gone with its screen.
    for line in app.farewell():
        print(printable(line))
    return app.return_code or 0
