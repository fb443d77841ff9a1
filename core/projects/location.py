"""Where the projects live: ``--projects DIR``, else ``$CONVTUI_PROJECTS_DIR``, else the user
cache (``<cache>/convtui/projects``). Under it, ``Source_Code/`` in DevEval's layout and
``envs/``, one environment per project (core/projects/checkout.py)."""

from __future__ import annotations

import os
from pathlib import Path

from convtui.core.catalog.datasets import cache_dir

ENV_PROJECTS_DIR = "CONVTUI_PROJECTS_DIR"


def projects_root(explicit: Path | str | None = None) -> Path:
    """The projects root (not created here)."""
    if explicit is not None and str(explicit).strip():
        return Path(os.path.abspath(Path(explicit).expanduser()))
    from_env = os.environ.get(ENV_PROJECTS_DIR, "").strip()
    if from_env:
        return Path(os.path.abspath(Path(from_env).expanduser()))
    return cache_dir() / "projects"
