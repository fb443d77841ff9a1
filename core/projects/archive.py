"""DevEval's archive of its projects (``Source_Code.tar.gz``, about 0.9 GB, in the Hugging
Face dataset LJ0815/DevEval): downloaded where a network allows, resumable and checksum
checked, then unpacked under the projects root (core/projects/unpack.py).

Resuming. The body is written to ``<root>/Source_Code.tar.gz.part``; a later try asks for the
rest with an HTTP Range request. A server that answers 200 instead of 206 sends the whole
file, and the part starts over; a 416 on a part that holds every byte (its Content-Range
names the part's size) means the part is complete. The part becomes ``Source_Code.tar.gz``
only once whole and checked.

The expected SHA-256 is the one the caller gives (``--sha256``), else the server's: the Hub
sends an LFS file's SHA-256 as ``X-Linked-Etag`` on its redirect to the CDN (huggingface_hub
reads it the same way), and a mirror may send it as ``ETag``; a tag that is not 64 hex digits
is no SHA-256 and is ignored. With neither, the digest computed is reported as not verified
and the archive is still unpacked, since the unpack trusts nothing in it. A file whose digest
differs is deleted, part and all: resuming it could only give the same wrong bytes, so the
next try starts clean.

``$CONVTUI_PROJECTS_URL`` replaces the Hub with a mirror, as ``$CONVTUI_DATA_URL`` does for
the datasets (core/catalog/datasets.py): a base URL under which ``Source_Code.tar.gz`` is
fetched, or the archive's own URL when it ends in ``.tar.gz``.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Any, Literal

from convtui.core.errors import ConvtuiError
from convtui.core.projects.checkout import SOURCE_DIR
from convtui.core.projects.unpack import ArchiveRefused, archive_record, unpack_archive

ARCHIVE_NAME = "Source_Code.tar.gz"
ARCHIVE_URL = f"https://huggingface.co/datasets/LJ0815/DevEval/resolve/main/{ARCHIVE_NAME}"
ENV_PROJECTS_URL = "CONVTUI_PROJECTS_URL"
# Per socket operation, not the whole transfer: a stalled connection fails in a minute and
# the next try resumes.
DEFAULT_TIMEOUT_S = 60.0
_CHUNK = 1 << 20
_HEX64 = re.compile(r"[0-9a-f]{64}")
_CONTENT_RANGE = re.compile(r"bytes\s+(?:(\d+)-\d+|\*)/(\d+|\*)")
NO_NETWORK_HINT = (
    f"check the network, or point --url or ${ENV_PROJECTS_URL} at a mirror, "
    "or rebuild the projects from PyPI with `convtui projects rebuild`"
)

# Where the expected digest came from: the caller, the server, or nowhere.
DigestSource = Literal["given", "server", "unchecked"]
Stage = Literal["download", "unpack"]


class ArchiveError(ConvtuiError):
    """DevEval's archive could not be had; the message says what failed and what to do."""


@dataclass(frozen=True)
class Step:
    """How far a fetch has got: bytes held of the archive (``total`` None while unknown), or
    the unpack beginning."""

    stage: Stage
    done: int = 0
    total: int | None = None


OnStep = Callable[[Step], None]


@dataclass(frozen=True)
class Downloaded:
    """The archive, whole: its SHA-256, what it was checked against, and how many of its
    bytes an earlier try had already fetched."""

    path: Path
    sha256: str
    checked: DigestSource
    resumed_from: int


@dataclass(frozen=True)
class Fetched:
    """The projects under their root: the tree, the archive's digest and its check, how many
    projects it held, and the archive when kept. ``already``: they were there before."""

    tree: Path
    sha256: str
    checked: DigestSource
    projects: int
    archive: Path | None = None
    resumed_from: int = 0
    already: bool = False


def parse_sha256(text: str) -> str:
    """A SHA-256 as 64 lower-case hex digits; raises :class:`ArchiveError` otherwise."""
    value = text.strip().lower()
    if not _HEX64.fullmatch(value):
        raise ArchiveError(f"{text!r} is not a SHA-256 (64 hex digits)")
    return value


def archive_url() -> str:
    """Where the archive is downloaded from: the ``$CONVTUI_PROJECTS_URL`` mirror, else the
    Hub."""
    mirror = os.environ.get(ENV_PROJECTS_URL, "").strip()
    if not mirror:
        return ARCHIVE_URL
    if mirror.endswith((".tar.gz", ".tgz")):
        return mirror
    return mirror.rstrip("/") + "/" + ARCHIVE_NAME


def part_path(dest: Path) -> Path:
    """Where the download of ``dest`` collects its bytes until whole and checked."""
    return dest.with_name(dest.name + ".part")


def size_text(count: int | None) -> str:
    """A byte count as people read it: ``905.1 MB``, ``12.0 kB``, ``300 bytes``."""
    if count is None:
        return "?"
    if count >= 1_000_000:
        return f"{count / 1e6:.1f} MB"
    return f"{count / 1e3:.1f} kB" if count >= 1000 else f"{count} bytes"


def _server_digest(seen: list[Message]) -> str | None:
    """The SHA-256 the server gave, if any: an ``X-Linked-Etag`` of 64 hex digits on any
    response of the chain (the Hub's redirect first), else such an ``ETag``."""
    for header in ("X-Linked-Etag", "ETag"):
        for headers in seen:
            tag = (headers.get(header) or "").strip()
            tag = tag.removeprefix("W/").strip('"').lower()
            if _HEX64.fullmatch(tag):
                return tag
    return None


def _content_range(headers: Message) -> tuple[int | None, int | None]:
    """(first byte, total size) of a ``Content-Range`` header; None where not given."""
    found = _CONTENT_RANGE.fullmatch((headers.get("Content-Range") or "").strip())
    if found is None:
        return None, None
    start, total = found.groups()
    return (int(start) if start else None), (int(total) if total and total != "*" else None)


def _sha256_of(path: Path) -> Any:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest


class _Restart(Exception):
    """The part is not a beginning of the file the server has: drop it and ask again."""


def _transfer(
    url: str, part: Path, seen: list[Message], on_step: OnStep | None, timeout: float
) -> Any:
    """Bring ``part`` up to the whole file; the SHA-256 object of its bytes. Raises
    :class:`_Restart` when the part must go, urllib's and socket errors as they come."""
    import http.client
    import urllib.error
    import urllib.request

    class Recording(urllib.request.HTTPRedirectHandler):
        def redirect_request(
            self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
        ) -> Any:
            seen.append(headers)
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    offset = part.stat().st_size if part.exists() else 0
    headers = {"User-Agent": "convtui"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    opener = urllib.request.build_opener(Recording())
    try:
        response = opener.open(urllib.request.Request(url, headers=headers), timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code != 416 or not offset:
            raise
        seen.append(exc.headers)
        exc.close()
        _, total = _content_range(exc.headers)
        if total is not None and total != offset:
            raise _Restart from None
        if on_step is not None:
            on_step(Step("download", offset, offset))
        return _sha256_of(part)
    with response:
        seen.append(response.headers)
        start, total = _content_range(response.headers)
        if response.status == 206:
            if start != offset:
                raise _Restart
        else:  # the whole file, whatever was asked: start over
            offset = 0
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
        digest = _sha256_of(part) if offset else hashlib.sha256()
        held = offset
        with part.open("ab" if offset else "wb") as out:
            if on_step is not None:
                on_step(Step("download", held, total))
            try:
                while chunk := response.read(_CHUNK):
                    out.write(chunk)
                    digest.update(chunk)
                    held += len(chunk)
                    if on_step is not None:
                        on_step(Step("download", held, total))
            except http.client.IncompleteRead:
                pass  # what did arrive is kept; the count below says it is short
        if total is not None and held < total:
            raise ConnectionError("the connection closed early")
    return digest


def download_archive(
    url: str,
    dest: Path,
    *,
    sha256: str | None = None,
    on_step: OnStep | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> Downloaded:
    """The archive at ``url`` saved as ``dest``, resuming what an earlier try left in its
    ``.part`` and checked against ``sha256`` (else the server's digest). An archive already
    at ``dest`` is checked again, by ``sha256`` alone when given, else through the server.
    Raises :class:`ArchiveError`; an interrupted try keeps its part for the next one."""
    import http.client
    import urllib.error

    part = part_path(dest)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArchiveError(f"cannot create {dest.parent}: {exc.strerror or exc}") from exc
    if dest.is_file() and sha256 is not None and _sha256_of(dest).hexdigest() == sha256:
        return Downloaded(dest, sha256, "given", dest.stat().st_size)
    if dest.is_file() and not part.exists():
        os.replace(dest, part)  # a kept archive is a part that may be whole
    resumed_from = part.stat().st_size if part.exists() else 0
    seen: list[Message] = []
    try:
        try:
            digest = _transfer(url, part, seen, on_step, timeout)
        except _Restart:
            part.unlink(missing_ok=True)
            resumed_from = 0
            digest = _transfer(url, part, seen, on_step, timeout)
    except _Restart:
        raise ArchiveError(
            f"{url} answers ranges that do not match {part}; delete it and try again"
        ) from None
    except urllib.error.HTTPError as exc:
        raise ArchiveError(f"{url}: HTTP {exc.code} {exc.reason}; {NO_NETWORK_HINT}") from exc
    except urllib.error.URLError as exc:
        raise ArchiveError(f"cannot reach {url}: {exc.reason}; {NO_NETWORK_HINT}") from exc
    except (OSError, ValueError, http.client.HTTPException) as exc:
        held = part.stat().st_size if part.exists() else 0
        raise ArchiveError(
            f"the download of {url} stopped at {size_text(held)} ({exc}); run the same "
            f"command again to resume from {part}"
        ) from exc
    got = digest.hexdigest()
    expected, checked = _expected(sha256, _server_digest(seen))
    if expected is not None and got != expected:
        part.unlink(missing_ok=True)
        where = "the digest asked for" if checked == "given" else "the server's ETag"
        raise ArchiveError(
            f"the archive from {url} is corrupt: its SHA-256 is {got}, not {expected} "
            f"({where}); it was deleted, so fetch again (or check the digest or the mirror)"
        )
    os.replace(part, dest)
    return Downloaded(dest, got, checked, resumed_from)


def _expected(given: str | None, server: str | None) -> tuple[str | None, DigestSource]:
    if given is not None:
        return given, "given"
    if server is not None:
        return server, "server"
    return None, "unchecked"


def fetch_projects(
    root: Path,
    *,
    url: str | None = None,
    sha256: str | None = None,
    keep_archive: bool = False,
    on_step: OnStep | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> Fetched:
    """DevEval's projects under ``root``/Source_Code, from its archive (``url``, default
    :func:`archive_url`). Nothing is done when a tree from the archive is there already (and
    has ``sha256``, when given). The archive is deleted once unpacked unless ``keep_archive``,
    and always when it is refused: it would be refused again."""
    record = archive_record(root)
    if record is not None and sha256 in (None, record.get("sha256")):
        return Fetched(
            tree=root / SOURCE_DIR,
            sha256=str(record.get("sha256", "")),
            checked=record.get("checked", "unchecked"),
            projects=int(record.get("projects", 0)),
            already=True,
        )
    url = url or archive_url()
    got = download_archive(
        url, root / ARCHIVE_NAME, sha256=sha256, on_step=on_step, timeout=timeout
    )
    if on_step is not None:
        on_step(Step("unpack"))
    try:
        tree, projects = unpack_archive(
            got.path, root, {"url": url, "sha256": got.sha256, "checked": got.checked}
        )
    except ArchiveRefused as exc:
        got.path.unlink(missing_ok=True)
        raise ArchiveError(f"{exc}; the archive was deleted") from exc
    if not keep_archive:
        got.path.unlink(missing_ok=True)
    return Fetched(
        tree=tree,
        sha256=got.sha256,
        checked=got.checked,
        projects=projects,
        archive=got.path if keep_archive else None,
        resumed_from=got.resumed_from,
    )
