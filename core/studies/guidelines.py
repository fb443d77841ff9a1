"""A study's guidelines: the Markdown a study file names (``guidelines = "guidelines.md"``),
read once at ``study init`` and kept with the study, text and SHA-256 together.

The app shows the stored text, never the file: the file may have changed or gone since,
and the served app must not open paths the database names. The digest is what a dataset
card cites (sessions/study_card.py) so that a dataset says which instructions its
annotators had."""

from __future__ import annotations

import hashlib
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
        """The file a study file's ``guidelines`` names, relative to the study file."""
        if not isinstance(named, str) or not named.strip():
            raise ConvtuiError(
                "'guidelines' must be the path of a Markdown file, relative to the study file"
            )
        return cls.read(study_file.parent / named.strip())

    @classmethod
    def read(cls, path: Path) -> Guidelines:
        """The file at ``path``; a :class:`ConvtuiError` naming it and the fix when it is
        missing, unreadable, too large, not UTF-8 or empty."""
        try:
            with path.open("rb") as stream:
                data = stream.read(MAX_BYTES + 1)
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
        if len(data) > MAX_BYTES:
            raise ConvtuiError(
                f"guidelines file {path} is over {MAX_BYTES // 1024} KiB: shorten it to what "
                "an annotator reads before their first assignment"
            )
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
