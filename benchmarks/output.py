"""Printing for the headless commands: rich text on the terminal, one JSON object for
scripts, and ``warning: …`` lines on stderr."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.text import Text


def console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False)


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")


def warning_line(text: str) -> Text:
    return Text.assemble(("warning: ", "bold yellow"), text)


def warn(text: str) -> None:
    """One ``warning: …`` line on stderr, unwrapped."""
    console(stderr=True).print(warning_line(text), soft_wrap=True)
