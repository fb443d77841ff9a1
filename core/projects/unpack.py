"""DevEval's archive unpacked under the projects root, trusting nothing in it.

Every member is checked before it is written: an absolute name, a ``..`` step, or a link
(symbolic or hard) whose target is absolute or lies outside ``Source_Code/`` refuses the whole
archive; members outside ``Source_Code/`` (an archiver's own folders) are left out; and
tarfile's ``data`` filter (no devices, no set-id bits, nothing past the destination) checks
each member again as it is written. The archive unpacks into a folder beside the target
(``.Source_Code.unpacking.*``) that is renamed into place only once whole, so an interrupted
or refused unpack never leaves a tree that looks complete; what a killed unpack left is
removed by the next one. ``Source_Code/.convtui-archive.json`` records the archive's URL,
digest and date, and each project's tree says it came from the archive
(``.convtui-source.json``, as core/projects/rebuild.py reads it).
"""

from __future__ import annotations

import gzip
import json
import posixpath
import shutil
import tarfile
import tempfile
import zlib
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from convtui.core.errors import ConvtuiError
from convtui.core.projects.checkout import SOURCE_DIR
from convtui.core.projects.rebuild import SOURCE_MARKER

ARCHIVE_MARKER = ".convtui-archive.json"  # in Source_Code/: the archive it was unpacked from
STAGING_PREFIX = f".{SOURCE_DIR}.unpacking."
REPLACED_PREFIX = f".{SOURCE_DIR}.replaced."


class UnpackError(ConvtuiError):
    """The archive could not be unpacked here (a full disk, a folder that cannot be
    written): the archive itself may be sound."""


class ArchiveRefused(UnpackError):
    """The archive is not one to unpack: corrupt, hostile, or without ``Source_Code/``."""


def archive_record(root: Path) -> dict[str, Any] | None:
    """What ``root``'s Source_Code/ records about the archive it came from; None when it did
    not come from one (or is not there)."""
    try:
        recorded = json.loads((root / SOURCE_DIR / ARCHIVE_MARKER).read_text())
    except (OSError, ValueError):
        return None
    return recorded if isinstance(recorded, dict) else None


def _inside(path: str) -> bool:
    """Whether a normalised relative name lies within ``Source_Code/``."""
    parts = PurePosixPath(path).parts
    return bool(parts) and parts[0] == SOURCE_DIR and ".." not in parts


def _checked(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """``member`` as it may be written under ``dest``, None to leave it out; raises
    :class:`ArchiveRefused` for a member that would reach outside."""
    name = member.name
    if name.startswith(("/", "\\")) or PurePosixPath(name).is_absolute() or name[1:2] == ":":
        raise ArchiveRefused(f"member {name!r} has an absolute path")
    parts = PurePosixPath(name).parts
    if ".." in parts:
        raise ArchiveRefused(f"member {name!r} climbs out of the archive with '..'")
    if not parts or parts[0] != SOURCE_DIR:
        return None
    if member.issym() or member.islnk():
        target = member.linkname
        if target.startswith(("/", "\\")) or PurePosixPath(target).is_absolute():
            raise ArchiveRefused(f"link {name!r} points at the absolute path {target!r}")
        # A symbolic link's target is relative to its folder, a hard link's to the archive.
        base = posixpath.dirname(posixpath.normpath(name)) if member.issym() else ""
        if not _inside(posixpath.normpath(posixpath.join(base, target))):
            raise ArchiveRefused(f"link {name!r} points outside {SOURCE_DIR}/ ({target!r})")
    try:
        return tarfile.data_filter(member, dest)
    except tarfile.FilterError as exc:
        raise ArchiveRefused(f"member {name!r} refused: {exc}") from exc


def _clear_leftovers(root: Path) -> None:
    for prefix in (STAGING_PREFIX, REPLACED_PREFIX):
        for leftover in root.glob(prefix + "*"):
            shutil.rmtree(leftover, ignore_errors=True)


def _mark_projects(tree: Path, record: dict[str, Any]) -> int:
    """Each project's tree (``<Domain>/<Project>``) marked as the archive's; how many."""
    count = 0
    for domain in sorted(p for p in tree.iterdir() if p.is_dir() and not p.is_symlink()):
        for project in sorted(p for p in domain.iterdir() if p.is_dir() and not p.is_symlink()):
            marker = {"route": "archive", "sha256": record.get("sha256"), "url": record.get("url")}
            (project / SOURCE_MARKER).write_text(json.dumps(marker, indent=1))
            count += 1
    return count


def _swap(new: Path, target: Path) -> None:
    """``new`` renamed to ``target``, an older tree there removed: at no moment is a half
    tree under the target's name."""
    if target.exists() or target.is_symlink():
        old = Path(tempfile.mkdtemp(dir=target.parent, prefix=REPLACED_PREFIX))
        target.rename(old / target.name)
        new.rename(target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        new.rename(target)


def unpack_archive(archive: Path, root: Path, record: dict[str, Any]) -> tuple[Path, int]:
    """``archive``'s ``Source_Code/`` in place under ``root`` (a tree there before is
    replaced), marked with ``record`` (url, sha256, checked) and the date; the tree and how
    many projects it holds. Raises :class:`ArchiveRefused` for an archive that must not be
    unpacked, :class:`UnpackError` when this machine cannot unpack it; either way nothing
    under ``root`` has changed."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        _clear_leftovers(root)
        staging = Path(tempfile.mkdtemp(dir=root, prefix=STAGING_PREFIX))
    except OSError as exc:
        raise UnpackError(f"cannot unpack under {root}: {exc.strerror or exc}") from exc
    try:
        try:
            with tarfile.open(archive, "r:*") as tarred:
                tarred.extractall(staging, filter=_checked)
        except ArchiveRefused as exc:
            raise ArchiveRefused(f"{archive.name} is refused: {exc}; nothing was unpacked") from exc
        except (tarfile.TarError, gzip.BadGzipFile, EOFError, zlib.error) as exc:
            raise ArchiveRefused(f"{archive.name} is not a whole tar.gz archive ({exc})") from exc
        except OSError as exc:
            raise UnpackError(f"cannot unpack {archive.name}: {exc.strerror or exc}") from exc
        tree = staging / SOURCE_DIR
        if not tree.is_dir() or tree.is_symlink():
            raise ArchiveRefused(f"{archive.name} holds no {SOURCE_DIR}/ folder")
        projects = _mark_projects(tree, record)
        written = {**record, "projects": projects, "unpacked": datetime.now(UTC).isoformat()}
        (tree / ARCHIVE_MARKER).write_text(json.dumps(written, indent=1))
        _swap(tree, root / SOURCE_DIR)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return root / SOURCE_DIR, projects
