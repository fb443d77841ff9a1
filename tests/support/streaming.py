"""What a streaming call's ``on_text`` heard, checked the one way every backend owes it."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from convtui.core.models import Completion


def assert_streamed(
    seen: Sequence[str], completion: Completion, plain: Completion | None = None
) -> None:
    """Each text ``on_text`` heard extends the one before, and the last is the answer; with
    ``plain`` (the same call, not streamed), the answer and its token counts are the same as
    that call's: streaming changes how the text arrives, never what it is."""
    assert seen, "on_text heard nothing"
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(seen))
    assert seen[-1] == completion.text
    if plain is not None:
        assert completion.text == plain.text
        assert (completion.input_tokens, completion.output_tokens) == (
            plain.input_tokens,
            plain.output_tokens,
        )
