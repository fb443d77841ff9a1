"""A study's guidelines: the Markdown a study file names (``guidelines = "guidelines.md"``),
read once at ``study init`` and kept with the study, text and SHA-256 together.

The app shows the stored text, never the file: the file may have changed or gone since,
and the served app must not open paths the database names. The digest is what a dataset
card cites (sessions/studies/study_card.py) so that a dataset says which instructions its
annotators had.

What is read is shown to every annotator and exported, so the path is confined: relative to
the study file, inside its folder once symbolic links are followed, a regular file (never a
FIFO, which would hang ``study init``, nor a device or a file of /proc, which would put the
organiser's environment in front of every annotator), and no larger than :data:`MAX_BYTES`.
A study file shared by someone else can then name nothing but what sits beside it."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convtui.core.errors import ConvtuiError

# A few dozen pages of Markdown. More would be slow to draw in the app and is no longer
# something a person reads before their first assignment.
MAX_BYTES = 128 * 1024


@dataclass(frozen=True)
class Guidelines:
    """The guidelines' text, exactly as the file's bytes decode (no newline translation),
    and the SHA-256 of those bytes, in hex."""

    text: str
    sha256: str

    @classmethod
    def of(cls, text: str) -> Guidelines:
        return cls(text, digest(text))

    @classmethod
    def named_by(cls, study_file: Path, named: Any) -> Guidelines:
        """The file a study file's ``guidelines`` names, relative to the study file and
        inside its folder."""
        if not isinstance(named, str) or not named.strip():
            raise ConvtuiError(
                "'guidelines' must be the path of a Markdown file, relative to the study file"
            )
        shown = study_file.parent / named.strip()
        return cls.read(confined(study_file, named.strip()), shown)

    @classmethod
    def read(cls, real: Path, path: Path | None = None) -> Guidelines:
        """The regular file at ``real`` (a path without symbolic links), named ``path`` in
        what is said of it; a :class:`ConvtuiError` naming it and the fix when it is missing,
        not a regular file, unreadable, too large, not UTF-8 or empty. Its type and size are
        looked at before it is opened and what was opened is checked to be the same file, so
        a FIFO or a device put in its place is never read."""
        path = real if path is None else path
        try:
            before = os.stat(real)
            _check_kind(path, before)
            descriptor = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            raise ConvtuiError(
                f"guidelines file {path} does not exist: write it, or correct the "
                "'guidelines' path (it is relative to the study file)"
            ) from None
        except OSError as exc:
            raise ConvtuiError(
                f"cannot read guidelines file {path} ({exc.strerror or exc}): "
                "'guidelines' must name a readable Markdown file"
            ) from None
        with os.fdopen(descriptor, "rb") as stream:
            opened = os.fstat(stream.fileno())
            if (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino):
                raise ConvtuiError(
                    f"guidelines file {path} was replaced while it was read: run study init again"
                )
            data = stream.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise _too_large(path)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConvtuiError(
                f"guidelines file {path} is not UTF-8 text (byte {exc.start}): save it as UTF-8"
            ) from None
        if not text.strip():
            raise ConvtuiError(
                f"guidelines file {path} is empty: write the guidelines in it, or remove the "
                "'guidelines' key from the study file"
            )
        return cls.of(text)

    @classmethod
    def from_stored(cls, value: Any) -> Guidelines:
        """The guidelines as a stored spec holds them (``{"text": ..., "sha256": ...}``);
        a text that does not match its digest is refused."""
        if not isinstance(value, Mapping) or not isinstance(value.get("text"), str):
            raise ConvtuiError(
                "'guidelines' must be the path of a Markdown file, relative to the study file"
            )
        found = cls.of(value["text"])
        if value.get("sha256") != found.sha256:
            raise ConvtuiError("the stored guidelines do not match their SHA-256 digest")
        return found


def digest(text: str) -> str:
    """SHA-256 of ``text`` as UTF-8, in hex: of the file's own bytes, for a text read from it."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def confined(study_file: Path, named: str) -> Path:
    """The path ``named`` relative to ``study_file``, every symbolic link followed; refused
    unless it stays inside the study file's folder (or a folder below it)."""
    folder = study_file.parent
    path = folder / named
    try:
        root, real = folder.resolve(), path.resolve()
    except (OSError, RuntimeError) as exc:  # a symbolic link that loops
        raise ConvtuiError(
            f"cannot follow guidelines path {path} ({exc}): name a Markdown file in the study "
            "file's folder"
        ) from None
    if not real.is_relative_to(root):
        through = f" (it leads to {real})" if real != path.absolute() else ""
        raise ConvtuiError(
            f"guidelines file {path} is outside the study file's folder {root}{through}: copy "
            "the guidelines into that folder and name them relative to the study file"
        )
    return real


_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
)


def _check_kind(path: Path, found: os.stat_result) -> None:
    if not stat.S_ISREG(found.st_mode):
        kind = next((name for test, name in _KINDS if test(found.st_mode)), "not a file")
        raise ConvtuiError(
            f"guidelines file {path} is {kind}, not a regular file: name a Markdown file"
        )
    if found.st_size > MAX_BYTES:
        raise _too_large(path)


def _too_large(path: Path) -> ConvtuiError:
    return ConvtuiError(
        f"guidelines file {path} is over {MAX_BYTES // 1024} KiB: shorten it to what "
        "an annotator reads before their first assignment"
    )
