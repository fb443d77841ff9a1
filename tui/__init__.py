"""convtui.tui: the Textual front end (``convtui session``, ``convtui serve``). Importing this
package does not import Textual: ``make_app`` builds the app (ConvTuiApp, or StudyApp for a
study) and ``run_tui`` runs it, each loading Textual only when called. The entry points of the
commands are in entry.py (session) and web/serve_study.py (serve)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from convtui.tui.app import ConvTuiApp
    from convtui.tui.controller import AppServices
    from convtui.tui.launch import Launch


def run_tui(services: Any, launch: Any) -> int:
    """Run the app until the person quits, then print each session opened and the command
    that resumes it; returns the exit code."""
    from convtui.core.printable import printable
    from convtui.tui.heap import settle_heap

    app = make_app(services, launch)
    settle_heap()
    app.run()
    # After the app has given the terminal back: the ids it showed are gone with its screen.
    for line in app.farewell():
        print(printable(line))
    return app.return_code or 0


def make_app(services: AppServices, launch: Launch) -> ConvTuiApp:
    """The app the CLI runs and the tests drive: every dependency comes in here."""
    from convtui.tui.app import ConvTuiApp

    if launch.study is not None:
        from convtui.tui.study_app import StudyApp

        return StudyApp(services, launch)
    return ConvTuiApp(services, launch)
