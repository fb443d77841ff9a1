"""matplotlib's font list, built once per task interpreter outside the sandbox.

Inside a sandbox matplotlib finds no writable home and rebuilds its font list at every
import: about a second of each zygote's start-up. The harness builds the list once, into the
user cache, by importing matplotlib in the task interpreter (trusted library code, no
candidate involved); each zygote copies it into its own config dir (sandbox/zygote.py) and
says whether it matched. A miss (first use, or matplotlib upgraded) rebuilds it in the
background, so only the next zygote benefits and no start waits for it."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from convtui.core.catalog.datasets import cache_dir
from convtui.core.execution.isolation import zygote_env

ENV_NAME = "CONVTUI_FONT_CACHE"
_BUILD_TIMEOUT_S = 300
_lock = threading.Lock()
_building: dict[str, threading.Thread] = {}


def font_cache_dir(python: str) -> Path:
    """Where the font list of ``python``'s matplotlib is kept: one folder per interpreter."""
    key = hashlib.sha256(os.path.realpath(python).encode()).hexdigest()[:12]
    return cache_dir() / "matplotlib" / key


def seed_env(python: str) -> dict[str, str]:
    """What a zygote's environment needs to find the font list (see sandbox/zygote.py)."""
    return {ENV_NAME: str(font_cache_dir(python))}


def rebuild_in_background(python: str) -> threading.Thread:
    """Build the font list of ``python`` in a daemon thread, unless one is already at it;
    returns the thread doing it (a caller that must wait joins it)."""
    with _lock:
        running = _building.get(python)
        if running is not None:
            return running
        thread = threading.Thread(target=_build, args=(python,), name="convtui-fontcache")
        thread.daemon = True
        _building[python] = thread
        thread.start()
    return thread


def _build(python: str) -> None:
    target = font_cache_dir(python)
    try:
        target.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="convtui_mpl_") as scratch:
            env = {**zygote_env(python), "MPLCONFIGDIR": scratch}
            done = subprocess.run(
                [python, "-I", "-c", "import matplotlib.font_manager"],
                env=env,
                capture_output=True,
                timeout=_BUILD_TIMEOUT_S,
                check=False,
            )
            if done.returncode != 0:
                return  # no matplotlib in the task environment: zygotes build nothing either
            for entry in Path(scratch).glob("fontlist-*.json"):
                # Copied beside the target, then renamed: a zygote never reads half a file.
                partial = target / f".{entry.name}.partial"
                shutil.copyfile(entry, partial)
                os.replace(partial, target / entry.name)
    except (OSError, subprocess.TimeoutExpired):
        return  # a cache that cannot be written only costs speed
    finally:
        with _lock:
            _building.pop(python, None)
