"""Commands' help as flowing paragraphs. Docstrings are wrapped at 100 columns in the source,
and typer's rich help keeps those line breaks, so in an 80-column terminal every source line
wraps again and a paragraph turns ragged. Joining each paragraph's lines lets rich wrap it to
the terminal; lists and blocks marked for click with a lone ``\\b`` keep their lines."""

from __future__ import annotations

from typing import Any


def flowing_help(command: Any) -> None:
    """Join the lines of each prose paragraph of ``command``'s help and its subcommands'."""
    help_text = getattr(command, "help", None)
    if help_text:
        command.help = "\n\n".join(_flow(p) for p in help_text.split("\n\n"))
    for sub in getattr(command, "commands", {}).values():
        flowing_help(sub)


def _flow(paragraph: str) -> str:
    lines = paragraph.splitlines()
    if any(line.lstrip().startswith(("- ", "* ", "\b", "|")) for line in lines):
        return paragraph
    return " ".join(line.strip() for line in lines)
