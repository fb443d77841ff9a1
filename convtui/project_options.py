"""The options of ``convtui projects``, each declared once (as convtui/options.py declares the
shared ones)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def _sha256(value: str | None) -> str | None:
    """``--sha256`` checked as it is parsed: anything but 64 hex digits is one usage error."""
    if value is None:
        return None
    from convtui.core.projects.archive import ArchiveError, parse_sha256

    try:
        return parse_sha256(value)
    except ArchiveError as exc:
        raise typer.BadParameter(str(exc)) from None


ArchiveUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--url",
        metavar="URL",
        help="Where to download DevEval's Source_Code.tar.gz from (default: "
        "$CONVTUI_PROJECTS_URL, a mirror, else the Hugging Face Hub).",
        show_default=False,
    ),
]
ArchiveSha256Opt = Annotated[
    str | None,
    typer.Option(
        "--sha256",
        metavar="HEX",
        help="The archive's SHA-256 (default: the one the Hub sends with it; a mirror that "
        "sends none leaves the archive unverified, and says so).",
        show_default=False,
        callback=_sha256,
    ),
]
KeepArchiveOpt = Annotated[
    bool,
    typer.Option(
        "--keep-archive/--no-keep-archive",
        help="Keep Source_Code.tar.gz under the projects root once unpacked (0.9 GB): a later "
        "fetch checks it and unpacks it again rather than downloading it.",
    ),
]
ProjectsDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--projects",
        help="Where DevEval's projects live: Source_Code/ and envs/ under it "
        "(default: $CONVTUI_PROJECTS_DIR, else ~/.cache/convtui/projects).",
        show_default=False,
    ),
]
ProjectNamesArg = Annotated[
    list[str] | None,
    typer.Argument(
        help="Projects to rebuild, by name (sqlitedict) or DevEval path (Database/sqlitedict); "
        "default: every project with a matching release.",
        show_default=False,
    ),
]
ProjectTreeOpt = Annotated[
    Path | None,
    typer.Option(
        "--tree",
        help="Take the one project named from this folder (a checkout of the commit "
        "releases.toml names) instead of its release on PyPI.",
        show_default=False,
    ),
]
