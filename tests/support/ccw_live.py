"""Scripted replies of ConvCodeWorld sessions played end to end (`bench live --protocol
convcodeworld`, `bench static`).

Turn 0 goes through BigCodeBench's sanitize, which keeps only code that parses: broken code
reaches a feedback turn from turn 1's reply, so these sessions check turn 2."""

from __future__ import annotations

FAILING = "```python\ndef task_func(LETTERS):\n    return {}\n```"
BROKEN = "fix it.\nCode: ```python\ndef task_func(LETTERS):\n    return {\n```"
STILL_BROKEN = "fix it.\nCode: ```python\ndef task_func(LETTERS):\n    return [\n```"
HINT = "help.\nUser Feedback: Every letter should be a key, sorted by the mean."


def fixed(code: str) -> str:
    """A reply in DSPy's chain-of-thought shape: the rest of the "Reasoning:" line, then the
    "Code:" field (core/ccw/template.py parses it as DSPy 2.4 would)."""
    return f"fix it.\nCode: ```python\n{code}\n```"
