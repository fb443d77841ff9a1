"""Which code wrote a run: the package version plus, in a git checkout, the commit."""

from __future__ import annotations

from pathlib import Path

import convtui


def _git_commit(root: Path) -> str | None:
    # Read the files instead of running git: no subprocess per run, and no git needed.
    git = root / ".git"
    try:
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head or None
        ref = head[5:]
        loose = git / ref
        if loose.is_file():
            return loose.read_text().strip() or None
        for line in (git / "packed-refs").read_text().splitlines():
            sha, _, name = line.partition(" ")
            if name == ref:
                return sha
    except OSError:
        return None
    return None


def code_version() -> str:
    """``0.1.0`` from an installed package, ``0.1.0+g<commit>`` from a git checkout."""
    commit = _git_commit(Path(convtui.__file__).resolve().parent.parent)
    return f"{convtui.__version__}+g{commit[:12]}" if commit else convtui.__version__
