"""The app's remembered choices (the theme), in one small JSON file:
``$CONVTUI_CONFIG_DIR/tui.json``, else ``$XDG_CONFIG_HOME/convtui/tui.json``, else
``~/.config/convtui/tui.json``. A missing or unreadable file means the defaults."""

from __future__ import annotations

import json
import os
from pathlib import Path

# Where the file is kept; `convtui serve` gives each annotator's app a folder of its own.
CONFIG_DIR = "CONVTUI_CONFIG_DIR"


def settings_path() -> Path:
    if os.environ.get(CONFIG_DIR):
        return Path(os.environ[CONFIG_DIR]) / "tui.json"
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "convtui" / "tui.json"


def load_settings() -> dict:
    try:
        data = json.loads(settings_path().read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_setting(key: str, value: object) -> None:
    """Remember ``key``; a read-only home costs the memory, never the session."""
    data = load_settings()
    data[key] = value
    path = settings_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
        tmp.replace(path)
    except OSError:
        pass
