"""How the CodeIF-Bench checking scripts (``codeif_parity.py``, ``codeif_repo_tables.py``) run
convtui: ``python -m convtui`` in this interpreter, and its ``bench codeif --score-only`` of
the authors' published completions. Imported from beside them (``python scripts/….py`` puts
this folder first on the path)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def convtui(*args: str) -> subprocess.CompletedProcess[str]:
    """``convtui ARGS`` in this interpreter, its output captured; the caller reads its exit
    status."""
    return subprocess.run(
        [sys.executable, "-m", "convtui", *args], capture_output=True, text=True, check=False
    )


def score_only(
    completions: Path, data: Path, db: Path, protocol: str = "codeif"
) -> subprocess.CompletedProcess[str]:
    """``bench codeif --score-only`` of ``completions`` (tasks from ``data``) under
    ``protocol`` (the authors' by default), recorded in ``db``; on success its JSON summary
    (``run_id`` …) is on stdout."""
    return convtui(
        "bench", "codeif", "--score-only", str(completions), "--data", str(data),
        "--protocol", protocol, "--db", str(db), "--json",
    )  # fmt: skip
