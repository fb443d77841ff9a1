"""A person's feedback given in advance, for turn loops driven without the app."""

from __future__ import annotations

from convtui.core.feedback.simulators import Ask, FeedbackRequest, VerbalFeedback


class Says:
    """A person who answers every turn with the same words."""

    source = "human"

    def __init__(self, text: str) -> None:
        self.text = text

    async def feedback(self, request: FeedbackRequest, ask: Ask) -> VerbalFeedback | None:
        return VerbalFeedback(self.text, self.source)
