"""Ω values as a command line's --feedback leaves them: parsed (the store and the runs take
feedback configurations, never the text)."""

from __future__ import annotations

from convtui.core.settings.omega import FeedbackChoice, FeedbackConfig


def omegas(*texts: str) -> list[FeedbackConfig]:
    """Every configuration the ``--feedback`` values ``texts`` name, in order."""
    return [config for text in texts for config in FeedbackChoice.parse(text).configs]
