"""Scripted models (``mock:FILE``, core/models/mock.py): the JSONL files that fix every reply."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path


def script(
    path: Path, generate: Sequence[str], simulate: Sequence[str] = (), delay_s: float = 0.0
) -> str:
    """A ``mock:`` spec: turn i of every session gets ``generate[i]`` (the last repeating),
    simulated users answer with ``simulate`` in order. ``delay_s`` only where a test must act
    while a call runs (a kill inside a model call)."""
    rows = [("generate", text) for text in generate] + [("simulate", text) for text in simulate]
    path.write_text(
        "".join(
            json.dumps({"purpose": purpose, "text": text, "delay_s": delay_s}) + "\n"
            for purpose, text in rows
        )
    )
    return f"mock:{path}"
