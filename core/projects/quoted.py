"""DevEval's copy of the files CodeIF-Bench's rows quote whole, rebuilt from the quotes.

An L-3 row quotes its function's own file (``intra_context``, the function itself replaced by
a marker) and the other modules it needs (``cross_context``, by a dotted name the module
defines). Where DevEval's copy differs from every release (it moved some imports into
function bodies, which shifts lines), laying these quotes over a release gives DevEval's
lines back; releases.toml names the files (``quoted_files``) for the projects that need it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from convtui.core.catalog.tasks import Task

# Where a quoted file leaves its function out: at a line's start, and sometimes with the
# next source line run onto it.
MARKER = re.compile(r"###The function: [^#\n]*###")


def module_file(tree: Path, dotted: str) -> str | None:
    """The file under ``tree`` that defines the dotted name: the longest module prefix of it
    found as ``a/b.py`` or ``a/b/__init__.py`` anywhere below (the shortest path wins)."""
    names = [p.relative_to(tree).as_posix() for p in tree.rglob("*.py")]
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        stem = "/".join(parts[:end])
        for tail in (f"{stem}.py", f"{stem}/__init__.py"):
            hits = sorted((n for n in names if n == tail or n.endswith("/" + tail)), key=len)
            if hits:
                return hits[0]
    return None


def quoted_files(tree: Path, tasks: Iterable[Task]) -> dict[str, str]:
    """Path (relative to the project's root) -> DevEval's text of it, for every file the
    tasks quote whole: a row's own file, its function put back where the marker is, and the
    modules of its cross-file context."""
    files: dict[str, str] = {}
    for task in tasks:
        site = task.site
        if site is None:
            continue
        if site.intra_context:
            code = task.ground_truth.rstrip("\n") + "\n"
            at = MARKER.search(site.intra_context)
            text = site.intra_context
            files[site.file_in_project] = (
                text if at is None else text[: at.start()] + code + text[at.end() :]
            )
        for dotted, source in site.cross_context:
            path = module_file(tree, dotted)
            if path is not None and path not in files:
                files[path] = source
    return files
